//! The terminal summary: at most about 45 lines, findings first (at most
//! [`MAX_FINDINGS`], each with its evidence, its estimate and basis, and the fix), then the
//! busiest targets that moved data, as many as fit in [`LINES`] (at least [`MIN_TARGETS`],
//! at most [`MAX_TARGETS`]). The JSON has everything.

use std::fmt::Write;

use super::Report;
use crate::costs::seconds;
use crate::model::Target;
use crate::rules::{Finding, SHOWN_SHARE};

/// Findings shown in full.
pub const MAX_FINDINGS: usize = 3;
/// Targets shown, at most.
pub const MAX_TARGETS: usize = 8;
/// Targets shown, at least (when there are that many).
pub const MIN_TARGETS: usize = 3;
/// The lines the summary aims to stay within.
pub const LINES: usize = 44;

fn bytes(n: u64) -> String {
    if n == 0 {
        "0".to_string()
    } else {
        iolab::lab::units::format_bytes(n)
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The path, shortened from the left to `width` characters.
fn short(path: &str, width: usize) -> String {
    let n = path.chars().count();
    if n <= width {
        path.to_string()
    } else {
        let tail: String = path.chars().skip(n - (width - 1)).collect();
        format!("…{tail}")
    }
}

/// The command, cut at the end to `width` characters.
fn short_end(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_string()
    } else {
        let head: String = text.chars().take(width - 1).collect();
        format!("{head}…")
    }
}

fn target_row(out: &mut String, t: &Target) {
    let _ = writeln!(
        out,
        "  {:<9} {:>9} {:>10} {:>9} {:>10} {:>6} {:>8}  {}",
        t.kind_or_other().name(),
        t.read.calls,
        bytes(t.read.bytes),
        t.write.calls,
        bytes(t.write.bytes),
        t.sync_units(),
        seconds(t.total_ns() as f64 * 1e-9),
        short(&t.path, 60)
    );
}

/// "17 targets", or "17 targets (2016 inodes)" when paths named several inodes during the
/// run (a journal made anew per transaction: the table and the findings count it once).
fn targets_text(report: &Report) -> String {
    let inodes = report.outcome.trace.targets.len() as u64;
    let targets = report.groups.len() as u64;
    let mut text = plural(targets, "target", "targets");
    if inodes != targets {
        text.push_str(&format!(" ({inodes} inodes)"));
    }
    text
}

/// The summary's text.
pub fn render(report: &Report) -> String {
    let o = &report.outcome;
    let trace = &o.trace;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "iolab trace: {}: {} after {}",
        short_end(&report.display, 80),
        report.ending(),
        seconds(o.wall.as_secs_f64())
    );
    if let Some(sig) = o.interrupted {
        let _ = writeln!(
            out,
            "interrupted (signal {sig}): what was seen until the command ended"
        );
    }
    let _ = writeln!(
        out,
        "backend: {} ({}, ready in {}; {})",
        o.backend,
        o.detail,
        seconds(o.setup.as_secs_f64()),
        o.reason
    );
    let _ = writeln!(
        out,
        "seen: {}, {}, {}; {} on {}",
        plural(trace.tasks.processes, "process", "processes"),
        plural(trace.tasks.threads, "thread", "threads"),
        plural(trace.tasks.execs, "exec", "execs"),
        plural(trace.total_calls(), "I/O call", "I/O calls"),
        targets_text(report)
    );
    for w in trace.warnings.iter().chain(&report.notes) {
        let _ = writeln!(out, "note: {w}");
    }
    out.push('\n');
    let shown: Vec<&Finding> = report.findings.iter().filter(|f| f.shown).collect();
    let minor = report.findings.len() - shown.len();
    let minor_text = || {
        format!(
            "{} that would save under {:.0}% of the run each (in --json)",
            plural(minor as u64, "finding", "findings"),
            SHOWN_SHARE * 100.0
        )
    };
    if shown.is_empty() {
        let what = if trace.lost.is_none() {
            "none of the write-ups' pitfalls in these calls".to_string()
        } else {
            "none in the calls that were kept, but the trace is incomplete (see the notes)"
                .to_string()
        };
        let _ = writeln!(out, "no findings: {what}");
        if minor > 0 {
            let _ = writeln!(out, "  ({})", minor_text());
        }
    } else {
        let _ = write!(out, "{}", plural(shown.len() as u64, "finding", "findings"));
        if minor > 0 {
            let _ = write!(out, " (and {})", minor_text());
        }
        out.push('\n');
    }
    for (i, f) in shown.iter().take(MAX_FINDINGS).enumerate() {
        write_finding(&mut out, i + 1, f);
    }
    if shown.len() > MAX_FINDINGS {
        let _ = writeln!(out, "   ({} more in --json)", shown.len() - MAX_FINDINGS);
    }
    // The terminal shows the targets that moved data or were synced; the JSON has all.
    let all = report.groups_by_time();
    let targets: Vec<&Target> = all
        .iter()
        .copied()
        .filter(|t| t.read.calls + t.write.calls + t.sync_units() > 0)
        .collect();
    // What is left of the budget after the findings and the closing lines (3) goes to
    // the targets: their title, header and rows take 3 + rows.
    let used = out.lines().count() + if shown.is_empty() { 0 } else { 3 };
    let rows = LINES
        .saturating_sub(used + 3)
        .clamp(MIN_TARGETS, MAX_TARGETS)
        .min(targets.len());
    if !targets.is_empty() {
        let _ = writeln!(
            out,
            "\ntargets ({} of the {} that moved data, of {} in all; by time in their calls)",
            rows,
            targets.len(),
            all.len()
        );
        let _ = writeln!(
            out,
            "  {:<9} {:>9} {:>10} {:>9} {:>10} {:>6} {:>8}  path",
            "kind", "reads", "read", "writes", "written", "syncs", "time"
        );
        for t in targets.iter().take(rows) {
            target_row(&mut out, t);
        }
    }
    if !shown.is_empty() {
        write_sources(&mut out, report);
    }
    out
}

/// Finding number `n`: what, the evidence, the estimate and its basis, the fix.
fn write_finding(out: &mut String, n: usize, f: &Finding) {
    let _ = writeln!(
        out,
        "{}. {}: {} ({})",
        n,
        f.kind,
        short(&f.path, 70),
        f.target_kind.name()
    );
    let _ = writeln!(out, "   {}", f.evidence);
    if let Some(p) = f.processes.first() {
        let more = f.processes.len() - 1;
        let _ = writeln!(
            out,
            "   by: pid {} {} ({}){}",
            p.pid,
            short_end(&command_line(&p.exe, &p.args), 60),
            plural(p.use_.calls, "call", "calls"),
            if more > 0 {
                format!(
                    " and {}",
                    plural(more as u64, "other process", "other processes")
                )
            } else {
                String::new()
            }
        );
    }
    if let Some(s) = f.stacks.first() {
        let _ = writeln!(out, "   at: {}", frames_text(s));
    }
    match (f.estimated_fixed_s, f.saving_s) {
        _ if f.risk.is_some() => {
            let _ = writeln!(out, "   risk: {}", f.risk.as_deref().unwrap_or_default());
        }
        (Some(fixed), Some(saving)) => {
            let _ = writeln!(
                out,
                "   costs ≈ {} here; with the fix ≈ {}: saves ≈ {}{}",
                seconds(f.estimated_s),
                seconds(fixed),
                seconds(saving),
                f.share
                    .map(|s| format!(", {:.0}% of the run", s * 100.0))
                    .unwrap_or_default()
            );
        }
        _ => {
            let _ = writeln!(
                out,
                "   costs ≈ {} here; the fix was not measured (see --json's costs)",
                seconds(f.estimated_s)
            );
        }
    }
    for b in &f.basis {
        let _ = writeln!(out, "     basis: {b}");
    }
    for w in &f.warnings {
        let _ = writeln!(out, "   note: {w}");
    }
    match f.program {
        crate::program::Program::Unknown => {
            let _ = writeln!(out, "   fix: {}", f.fix);
        }
        program => {
            let _ = writeln!(out, "   fix ({}): {}", program.name(), f.fix);
        }
    }
    let _ = writeln!(out, "     {}", f.cli);
    // The library call is the fix for a Rust program (and the best guess for an unknown
    // one); another program's fix is its own, above.
    if f.program.takes_iolab() {
        for line in f.library.lines() {
            let _ = writeln!(out, "     {line}");
        }
    }
}

/// A process's command line on one line: its arguments (a line break in one shown as
/// `\n`), or its executable when it has none.
fn command_line(exe: &str, args: &[String]) -> String {
    let line = if args.is_empty() {
        exe.to_string()
    } else {
        args.join(" ")
    };
    line.chars()
        .flat_map(|c| match c {
            '\n' => vec!['\\', 'n'],
            c if c.is_control() => vec![' '],
            c => vec![c],
        })
        .collect()
}

/// The top frames of a stack: the first in the program's own code and the two around it,
/// "f (prog.c:12) ← main (prog.c:30)".
fn frames_text(s: &crate::origin::Stack) -> String {
    let at = s
        .own_frame()
        .and_then(|o| s.frames.iter().position(|f| f == o))
        .unwrap_or(0);
    s.frames
        .iter()
        .skip(at)
        .take(3)
        .map(|f| {
            let place = match (&f.file, f.line) {
                (Some(file), Some(line)) => {
                    let name = std::path::Path::new(file)
                        .file_name()
                        .map_or(file.clone(), |n| n.to_string_lossy().into_owned());
                    format!(" ({name}:{line})")
                }
                _ => String::new(),
            };
            format!(
                "{}{place}",
                f.function.as_deref().unwrap_or(f.address.as_str())
            )
        })
        .collect::<Vec<_>>()
        .join(" ← ")
        + if s.frames.iter().all(|f| f.function.is_none()) {
            " (the executable has no symbols)"
        } else {
            ""
        }
}

/// The processes the command ran, with their calls, bytes and time on every target
/// (`--verbose`).
pub fn processes(report: &Report) -> String {
    let mut out = String::from(
        "
processes (calls, bytes and time on every target)
",
    );
    let _ = writeln!(
        out,
        "  {:>8} {:>8} {:>10} {:>10} {:>8}  command",
        "pid", "parent", "calls", "bytes", "time"
    );
    for (p, u) in report.processes() {
        let _ = writeln!(
            out,
            "  {:>8} {:>8} {:>10} {:>10} {:>8}  {}",
            p.pid,
            p.parent.map_or("-".to_string(), |x| x.to_string()),
            u.calls,
            bytes(u.bytes),
            seconds(u.ns as f64 * 1e-9),
            short_end(&command_line(&p.exe, &p.args), 60)
        );
    }
    out
}

/// Where the estimates came from, and what the times include.
fn write_sources(out: &mut String, report: &Report) {
    let s = &report.sources;
    let mut line = String::from("\nestimates: ");
    match (&s.results, s.calibration) {
        (Some(r), Some(c)) => {
            let _ = write!(
                line,
                "iolab bench results {}, and a calibration that ran here for {} for the rest",
                r.display(),
                seconds(c.as_secs_f64())
            );
        }
        (Some(r), None) => {
            let _ = write!(line, "iolab bench results {}", r.display());
        }
        (None, Some(c)) => {
            let _ = write!(
                line,
                "a calibration that ran here for {} ({}; `iolab bench` measures more)",
                seconds(c.as_secs_f64()),
                s.no_results.as_deref().unwrap_or("no results")
            );
        }
        (None, None) => line.push_str("none measured"),
    }
    let _ = writeln!(out, "{line}");
    let _ = writeln!(out, "times: {}", report.outcome.timing_note);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Backend, Outcome};
    use crate::costs::Sources;
    use crate::model::{Exit, Kind, Target, Trace};
    use crate::rules::FindingKind;
    use std::time::Duration;

    fn report(findings: usize, targets: usize) -> Report {
        let mut trace = Trace::default();
        for i in 0..targets {
            let mut t = Target::new(None, Some(Kind::File), format!("/data/file{i}"));
            t.read
                .add(100, 1000 * i as u64, 0, crate::model::Place::Sequential);
            trace.targets.push(t);
        }
        let groups = trace.targets.clone();
        let finding = |i: usize| Finding {
            kind: FindingKind::SmallWrites,
            path: format!("/data/file{i}"),
            target_kind: Kind::File,
            calls: 5000,
            bytes: 50_000,
            evidence: "5000 writes of 10 B".into(),
            measured_s: 0.009,
            estimated_s: 0.01,
            estimated_fixed_s: Some(0.0001),
            saving_s: Some(0.0099),
            share: Some(0.99),
            shown: i != 4,
            basis: vec!["made up: 2 µs a write".into(), "made up: 10 GB/s".into()],
            warnings: vec![],
            fix: "buffer".into(),
            program: crate::program::Program::Unknown,
            cli: "iolab bench append".into(),
            library: iolab::lab::snippet::append(iolab::lab::append::Strategy::AppendFile, None),
            risk: None,
            processes: Vec::new(),
            stacks: Vec::new(),
            keys: Vec::new(),
        };
        Report {
            command: vec!["prog".into()],
            display: "prog".into(),
            program: crate::program::recognise(std::path::Path::new("prog"), &[], false),
            outcome: Outcome {
                backend: Backend::Ptrace,
                reason: "asked for".into(),
                detail: "ptrace".into(),
                trace,
                exit: Exit::Code(0),
                wall: Duration::from_millis(10),
                setup: Duration::from_millis(1),
                interrupted: None,
                timing_note: "test".into(),
                stop_round_trip: None,
                user_cpu: None,
            },
            findings: (0..findings).map(finding).collect(),
            groups,
            sources: Sources {
                calibration: Some(Duration::from_millis(300)),
                ..Sources::default()
            },
            notes: vec![],
        }
    }

    #[test]
    fn a_command_line_stays_on_one_line() {
        let args = [
            "python3".to_string(),
            "-c".into(),
            "import os\nprint(1)\t".into(),
        ];
        assert_eq!(
            command_line("/usr/bin/python3", &args),
            "python3 -c import os\\nprint(1) "
        );
        assert_eq!(command_line("/bin/x", &[]), "/bin/x");
    }

    #[test]
    fn the_summary_stays_within_its_line_budget() {
        for (findings, targets) in [(0, 50), (1, 50), (3, 50), (5, 50), (5, 0)] {
            let text = render(&report(findings, targets));
            let lines = text.lines().count();
            assert!(
                lines <= LINES + 2,
                "{findings} findings, {targets} targets: {lines} lines\n{text}"
            );
            if targets > 0 {
                assert!(text.contains("targets ("), "{text}");
            }
        }
        let text = render(&report(5, 50));
        assert!(text.contains("(1 more in --json)"), "{text}");
        assert!(
            text.contains(
                "4 findings (and 1 finding that would save under 2% of the run each (in --json))"
            ),
            "{text}"
        );
        assert!(text.contains("basis: made up"), "{text}");
    }
}
