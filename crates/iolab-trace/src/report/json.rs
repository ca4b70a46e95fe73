//! The JSON document `--json FILE` writes (its keys are documented in
//! `docs/results-format.md`, "`iolab trace --json`"). Estimates carry two significant
//! digits, as the terminal does.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::Report;
use crate::costs::round2;
use crate::model::{Exit, Flow, Target};
use crate::rules::Finding;

/// The version of this document's layout.
pub const SCHEMA_VERSION: u32 = 3;

fn sizes(f: &Flow) -> Value {
    let mut m = Map::new();
    for (floor, n) in f.histogram() {
        m.insert(floor.to_string(), json!(n));
    }
    Value::Object(m)
}

fn target(t: &Target) -> Value {
    json!({
        "kind": t.kind_or_other().name(),
        "path": t.path,
        "size": t.size,
        "reads": t.read.calls,
        "read_bytes": t.read.bytes,
        "read_s": t.read.ns as f64 * 1e-9,
        "read_sizes": sizes(&t.read),
        "sequential_reads": t.read.sequential,
        "writes": t.write.calls,
        "write_bytes": t.write.bytes,
        "write_s": t.write.ns as f64 * 1e-9,
        "write_sizes": sizes(&t.write),
        "sequential_writes": t.write.sequential,
        "syncs": t.syncs,
        "sync_s": t.sync_ns as f64 * 1e-9,
        "synced_writes": t.write.synced,
        "opens": t.opens,
        "open_flags": {
            "direct": t.open_flags.direct,
            "sync": t.open_flags.sync,
            "dsync": t.open_flags.dsync,
            "append": t.open_flags.append,
            "trunc": t.open_flags.trunc,
        },
        "seeks": t.seeks,
        "mmaps": t.mmaps,
        "mmap_bytes": t.mmap_bytes,
        "ring_enters": t.ring_enters,
        "ring_submissions": t.ring_submissions,
        "errors": t.errors,
        "calls": t.calls.iter().map(|(s, c)| (s.name(), c.calls)).collect::<BTreeMap<_, _>>(),
        "call_s": t.calls.iter().map(|(s, c)| (s.name(), c.ns as f64 * 1e-9)).collect::<BTreeMap<_, _>>(),
        "repeated_reads": t.read.repeated,
        "direct_reads": t.read.direct,
        "direct_writes": t.write.direct,
        "first_read_s": t.read.first_ns.map(|n| n as f64 * 1e-9),
        "first_write_s": t.write.first_ns.map(|n| n as f64 * 1e-9),
    })
}

fn finding(f: &Finding) -> Value {
    json!({
        "kind": f.kind.name(),
        "path": f.path,
        "target_kind": f.target_kind.name(),
        "calls": f.calls,
        "bytes": f.bytes,
        "evidence": f.evidence,
        "measured_s": round2(f.measured_s),
        "estimated_s": round2(f.estimated_s),
        "estimated_fixed_s": f.estimated_fixed_s.map(round2),
        "saving_s": f.saving_s.map(round2),
        "share": f.share.map(round2),
        "shown": f.shown,
        "basis": f.basis,
        "warnings": f.warnings,
        "fix": f.fix,
        "program": f.program.name(),
        "cli": f.cli,
        "library": f.library,
        "risk": f.risk,
        "processes": f.processes.iter().map(process_use).collect::<Vec<_>>(),
        "stack": f.stacks.first().map(|s| &s.frames),
        "stacks": f.stacks,
    })
}

fn process_use(p: &crate::origin::ProcessUse) -> Value {
    json!({
        "pid": p.pid,
        "exe": p.exe,
        "args": p.args,
        "calls": p.use_.calls,
        "bytes": p.use_.bytes,
        "time_s": p.use_.ns as f64 * 1e-9,
    })
}

/// Every process the command ran, with its calls, bytes and time on all targets.
fn processes(report: &Report) -> Vec<Value> {
    report
        .processes()
        .into_iter()
        .map(|(p, u)| {
            json!({
                "pid": p.pid,
                "parent": p.parent,
                "exe": p.exe,
                "args": p.args,
                "calls": u.calls,
                "bytes": u.bytes,
                "time_s": u.ns as f64 * 1e-9,
            })
        })
        .collect()
}

fn path_table(t: &crate::model::events::PathTable) -> Value {
    let mut m = Map::new();
    for (path, c) in &t.paths {
        m.insert(
            path.clone(),
            json!({"calls": c.calls, "errors": c.errors, "errno": c.errno, "time_s": c.ns as f64 * 1e-9}),
        );
    }
    json!({
        "calls": t.calls(),
        "time_s": t.ns() as f64 * 1e-9,
        "paths": m,
        "unnamed_calls": t.unnamed.calls,
    })
}

/// The document.
pub fn render(report: &Report) -> Value {
    let o = &report.outcome;
    let s = &report.sources;
    json!({
        "schema_version": SCHEMA_VERSION,
        "iolab_version": env!("CARGO_PKG_VERSION"),
        "command": report.command,
        "program": {
            "name": report.program.program.name(),
            "how": report.program.how,
            "python_unbuffered": report.program.unbuffered,
        },
        "exit_code": report.exit_code(),
        "signal": match o.exit { Exit::Signal(s) => Some(s), Exit::Code(_) => None },
        "interrupted_by": o.interrupted,
        "wall_s": o.wall.as_secs_f64(),
        "setup_s": o.setup.as_secs_f64(),
        "backend": o.backend.name(),
        "backend_reason": o.reason,
        "backend_detail": o.detail,
        "timing": o.timing_note,
        "tasks": {
            "processes": o.trace.tasks.processes,
            "threads": o.trace.tasks.threads,
            "execs": o.trace.tasks.execs,
        },
        "calls": o.trace.total_calls(),
        "targets": report.targets_by_time().into_iter().map(target).collect::<Vec<_>>(),
        "other_calls": o.trace.other_calls.iter().map(|(s, c)| (s.name(), c.calls)).collect::<BTreeMap<_, _>>(),
        "failed_calls": o.trace.other_calls.iter().filter(|(_, c)| c.errors > 0).map(|(s, c)| (s.name(), c.errors)).collect::<BTreeMap<_, _>>(),
        "lost": {
            "calls": o.trace.lost.calls,
            "tasks": o.trace.lost.tasks,
        },
        "findings": report.findings.iter().map(finding).collect::<Vec<_>>(),
        "processes": processes(report),
        "lookups": path_table(&o.trace.seen.lookups),
        "failed_opens": path_table(&o.trace.seen.failed_opens),
        "page_faults": if o.trace.seen.faults_seen {
            Value::Array(o.trace.seen.faults.iter().map(|f| json!({
                "path": report.path_of(f.target),
                "faults": f.faults,
                "folios_added": f.pages_read,
                "far": f.far,
            })).collect())
        } else {
            Value::Null
        },
        "events_lost": o.trace.seen.events_lost,
        "costs": {
            "results": s.results.as_ref().map(|p| p.display().to_string()),
            "no_results": s.no_results,
            "calibration_s": s.calibration.map(|d| d.as_secs_f64()),
            "missing": s.missing,
            "interrupted_by": s.interrupted,
        },
        "warnings": o.trace.warnings,
        "notes": report.notes,
    })
}
