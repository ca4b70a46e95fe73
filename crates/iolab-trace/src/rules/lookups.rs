//! Calls the rules could not see before: lookups of the same paths again and again
//! (`stat-storm`), opens that fail while a search path is probed (`failed-opens`), and
//! scattered page faults on a map that each read ahead what is not used (`mmap-faults`,
//! eBPF only: ptrace sees no faults).
//!
//! - `stat-storm`: the saving is the time of the lookups that asked a path asked before
//!   (their own measured time and round trips): a program that keeps the answer makes
//!   only the first. SQLite in autocommit ([`super::syncs::sqlite`]) looks its journal and
//!   WAL up in each transaction: there the fix is one transaction, and the saving is what
//!   it removes beside the syncs (which `sync-per-record` counts) — every call SQLite made
//!   on the database, its journals and its folder, and its lookups of their paths, in all
//!   transactions but one, each with its round trip and SQLite's own work before it (the
//!   mean time between a call and the one before, measured on the reads and writes).
//! - `failed-opens`: the saving is the failed opens' time: a search path that starts
//!   where the files are makes none.
//! - `mmap-faults`: faults have no exit the tracer sees, so their time is not measured;
//!   the finding is shown when it counts at least [`MIN_FAULTS`] faults.

use std::collections::BTreeMap;

use super::syncs::Sqlite;
use super::{
    Estimate, FindingKind, Group, MIN_CALLS, MIN_FAILED, MIN_FAULT_BYTES, MIN_FAULTS, Pattern,
    REPEATED, SCATTERED, WASTE, in_calls,
};
use crate::costs::{Costs, Need, seconds};
use crate::model::Trace;
use crate::model::events::PathTable;
use crate::syscalls::Sys;

/// The calls that sync: a `sync-per-record` finding counts them, not the transaction.
const SYNC_CALLS: [Sys; 5] = [
    Sys::Fsync,
    Sys::Fdatasync,
    Sys::SyncFileRange,
    Sys::Msync,
    Sys::Syncfs,
];

/// The most asked paths of `t`, as "PATH (N)" for the evidence.
fn most_asked(t: &PathTable, n: usize) -> String {
    let mut v: Vec<(&String, u64)> = t.paths.iter().map(|(p, c)| (p, c.calls)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v.iter()
        .take(n)
        .map(|(p, c)| format!("{p} ({c})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The names the failed opens looked for, the most looked for first: "NAME (in N
/// places)", and how many folders were probed.
fn probed(t: &PathTable, n: usize) -> (usize, String) {
    let mut names: BTreeMap<String, u64> = BTreeMap::new();
    let mut dirs = std::collections::BTreeSet::new();
    for (p, _) in t.paths.iter().filter(|(_, c)| probing(c)) {
        let path = std::path::Path::new(p);
        dirs.insert(path.parent().map(|d| d.to_path_buf()));
        let name = path
            .file_name()
            .map_or_else(|| p.clone(), |f| f.to_string_lossy().into_owned());
        *names.entry(name).or_default() += 1;
    }
    let mut v: Vec<(String, u64)> = names.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let text = v
        .iter()
        .take(n)
        .map(|(name, c)| format!("{name} (in {c} places)"))
        .collect::<Vec<_>>()
        .join(", ");
    (dirs.len(), text)
}

/// Whether the failed opens of one path are a search path's probing: it was not there
/// (`ENOENT`), or a folder on the way was not one (`ENOTDIR`); an `EEXIST` lock retried, an
/// `EACCES`, is not.
fn probing(c: &crate::model::events::PathCalls) -> bool {
    c.errors > 0 && matches!(c.errno, libc::ENOENT | libc::ENOTDIR)
}

/// The most common error of the failed calls, as its name (`ENOENT`).
fn errno_name(t: &PathTable) -> String {
    let mut by: BTreeMap<i32, u64> = BTreeMap::new();
    for c in t.paths.values().filter(|c| c.errors > 0) {
        *by.entry(c.errno).or_default() += c.errors;
    }
    let errno = by.into_iter().max_by_key(|&(_, n)| n).map_or(0, |(e, _)| e);
    match errno {
        libc::ENOENT => "ENOENT".into(),
        libc::ENOTDIR => "ENOTDIR".into(),
        libc::EACCES => "EACCES".into(),
        e => format!("errno {e}"),
    }
}

/// A group standing for calls that name no target: the busiest group (the finding's
/// processes and stacks are then the command's own).
fn anchor(groups: &[Group]) -> Option<usize> {
    (0..groups.len()).max_by_key(|&g| groups[g].target.total_calls())
}

pub(super) fn detect(trace: &Trace, groups: &[Group], out: &mut Vec<Pattern>) {
    let seen = &trace.seen;
    let lookups = seen.lookups.calls();
    let distinct = seen.lookups.paths.len() as u64;
    let repeated = lookups.saturating_sub(distinct + seen.lookups.unnamed.calls);
    if lookups >= MIN_CALLS
        && repeated as f64 >= REPEATED * lookups as f64
        && let Some(g) = anchor(groups)
    {
        let mut p = Pattern::new(FindingKind::StatStorm, g);
        p.count = repeated;
        p.path = seen
            .lookups
            .paths
            .iter()
            .max_by_key(|(_, c)| c.calls)
            .map(|(path, _)| path.clone());
        p.ns = (seen.lookups.ns() as f64 * repeated as f64 / lookups as f64) as u64;
        p.note = format!(
            "{lookups} lookups (stat, statx, access, …) of {distinct} paths, {repeated} of them \
             of a path asked before; the most asked: {}; {}",
            most_asked(&seen.lookups, 3),
            in_calls(seen.lookups.ns())
        );
        if let Some(s) = super::syncs::sqlite(groups).filter(|s| {
            let db = &groups[s.db].target.path;
            p.path
                .as_deref()
                .is_some_and(|asked| asked.starts_with(db.as_str()))
        }) {
            transactions(trace, groups, &s, &mut p);
        }
        out.push(p);
    }
    let failed = &seen.failed_opens;
    let probes: Vec<(&String, &crate::model::events::PathCalls)> =
        failed.paths.iter().filter(|(_, c)| probing(c)).collect();
    let probe_calls: u64 = probes.iter().map(|(_, c)| c.errors).sum();
    let (n, names) = probed(failed, 3);
    // A search path: many opens that found nothing, of several paths in several folders.
    if probe_calls >= MIN_FAILED
        && probes.len() >= 10
        && n >= 3
        && let Some(g) = anchor(groups)
    {
        let first = probes
            .first()
            .map(|(p, _)| p.to_string())
            .unwrap_or_default();
        let mut p = Pattern::new(FindingKind::FailedOpens, g);
        p.count = probe_calls;
        p.ns = probes.iter().map(|(_, c)| c.ns).sum();
        p.path = Some(first.clone());
        p.note = format!(
            "{probe_calls} opens found nothing ({} mostly) at {} paths in {n} folders, looking \
             for {names} (the first: {first}); {}",
            errno_name(failed),
            probes.len(),
            in_calls(p.ns)
        );
        out.push(p);
    }
    for f in &seen.faults {
        let far = f.far as f64 >= SCATTERED * f.faults as f64;
        let waste = f.pages_read as f64 >= WASTE * f.faults as f64;
        let volume = f.pages_read * 4096 >= MIN_FAULT_BYTES;
        if f.faults < MIN_FAULTS || !far || !waste || !volume {
            continue;
        }
        let Some(g) = groups.iter().position(|g| g.keys.contains(&f.target)) else {
            continue;
        };
        let mut p = Pattern::new(FindingKind::MmapFaults, g);
        p.count = f.faults;
        p.note = format!(
            "{} page faults on the map of {}, {} of them far from the previous one; they \
             added {} folios (at least {}) to the page cache, {:.0} per fault: each scattered \
             fault read a read-ahead window",
            f.faults,
            groups[g].target.path,
            f.far,
            f.pages_read,
            iolab_lab::units::format_bytes(f.pages_read * 4096),
            f.pages_read as f64 / f.faults as f64
        );
        out.push(p);
    }
}

/// Makes a stat storm of SQLite's hot-journal checks the transactions' cost: all but one
/// transaction's calls on the database, its journals and its folder (syncs aside), its
/// lookups of their paths, and its own work before each call.
fn transactions(trace: &Trace, groups: &[Group], s: &Sqlite, p: &mut Pattern) {
    let n = s.transactions.max(1);
    let share = (n - 1) as f64 / n as f64;
    let db = groups[s.db].target.path.as_str();
    let (mut calls, mut ns, mut flow_calls, mut flow_gap_ns) = (0u64, 0u64, 0u64, 0u64);
    for g in s.groups() {
        let t = &groups[g].target;
        for (_, c) in t.calls.iter().filter(|(sys, _)| !SYNC_CALLS.contains(sys)) {
            calls += c.calls;
            ns += c.ns;
        }
        for f in [&t.read, &t.write] {
            flow_calls += f.gaps;
            flow_gap_ns += f.gap_ns;
        }
    }
    for c in trace
        .seen
        .lookups
        .paths
        .iter()
        .filter(|(path, _)| path.starts_with(db))
        .map(|(_, c)| c)
    {
        calls += c.calls;
        ns += c.ns;
    }
    // Each read and write has its own gap; the other calls get their mean.
    let mean_gap = flow_gap_ns as f64 / flow_calls.max(1) as f64;
    let own_ns = flow_gap_ns as f64 + calls.saturating_sub(flow_calls) as f64 * mean_gap;
    let per = |x: f64| x / n as f64;
    let own_text = if flow_calls == 0 {
        "SQLite's own work between them not measured".to_string()
    } else {
        format!(
            "{} of SQLite's own work between them",
            seconds(per(own_ns) * 1e-9)
        )
    };
    p.note = format!(
        "{}: per transaction {:.0} calls on the database, its journal and its folder, lookups \
         included ({} in them), and {own_text}; {}",
        s.text(groups),
        per(calls as f64),
        seconds(per(ns as f64) * 1e-9),
        p.note
    );
    p.count = (calls as f64 * share).round() as u64;
    p.ns = (ns as f64 * share).round() as u64;
    p.own = Some(if flow_calls == 0 {
        (
            0.0,
            "SQLite's own work between its calls: not counted (not measured: the ptrace \
             backend measures no time between calls)"
                .to_string(),
        )
    } else {
        (
            own_ns * 1e-9 * share,
            format!(
                "seen here: SQLite's own work before each call it made for the transactions, {} \
             (the mean time from the call before, measured on its {flow_calls} reads and writes \
             of the database and its journals), {} per transaction, in the {} transactions one \
             removes",
                seconds(mean_gap * 1e-9),
                seconds(per(own_ns) * 1e-9),
                n - 1
            ),
        )
    });
    p.fix = Some(super::programs::sqlite_fix(s.level, s.transactions));
    p.partners = vec![s.journal];
}

/// The journal of a SQLite stat storm: its folder and size, for its removal's figure; and
/// the redirection in that folder that bounds its calls under ptrace.
pub(super) fn needs(p: &Pattern, groups: &[Group]) -> Vec<Need> {
    match (p.own.as_ref(), p.partners.first()) {
        (Some(_), Some(&j)) => {
            let journal = &groups[j];
            let dir = super::folder(&journal.target.path);
            vec![
                Need::Unlink {
                    dir: dir.clone(),
                    size: journal.target.write.bytes / journal.members.len().max(1) as u64,
                },
                Need::Churn { dir },
            ]
        }
        _ => Vec::new(),
    }
}

/// The redirection figure of a SQLite stat storm ([`estimate`]).
fn sqlite_churn(p: &Pattern, groups: &[Group]) -> Option<Need> {
    needs(p, groups).into_iter().nth(1)
}

/// SQLite's own work between its calls in the transactions one removes ([`Pattern::own`]),
/// and the removal of each of their journals, which the tracer does not see (calibrated).
pub(super) fn own_work(p: &Pattern, groups: &[Group], costs: &Costs) -> Option<(f64, String)> {
    let (seen, basis) = p.own.clone()?;
    let Some(unlink) = needs(p, groups).first().and_then(|n| costs.get(n)) else {
        return Some((seen, basis));
    };
    let removed = p
        .partners
        .first()
        .map_or(0, |&j| groups[j].members.len().saturating_sub(1));
    Some((
        seen + unlink.cost(removed as u64, 0),
        format!(
            "{basis}; and each of their {removed} journals removed: {}",
            unlink.basis
        ),
    ))
}

/// `exact`: the calls' times are the kernel's (eBPF). Under ptrace, whose times less the
/// stops ran 0.4–3× the kernel's for SQLite's calls as the load went (28 Nov 2026, the
/// Intel VM, `sqlite-sync-off`: 46–52 ms at load 5 against eBPF's 37–46 ms; 0.17 s of
/// predicted saving at load 1 against 0.057 s measured), its transactions' calls count at
/// most [`super::DISAGREE`]× as many calls of a shell's redirection (opens, `fcntl`s,
/// `dup2`s, closes, calibrated: about 0.4 µs a call here, eBPF's were 0.8 µs); bounded at
/// 1×, the prediction was 0.36× the measured saving at load 4.
pub(super) fn estimate<'a>(
    p: &Pattern,
    groups: &[Group],
    costs: &'a Costs,
    exact: bool,
) -> Estimate<'a> {
    let churn = sqlite_churn(p, groups).and_then(|n| costs.get(&n));
    let (fix, fixed) = match p.kind {
        FindingKind::StatStorm => (
            "keep what a lookup answered instead of asking again (a cache of the paths' \
             metadata, or fstat on a descriptor already open)",
            Some(0.0),
        ),
        FindingKind::FailedOpens => (
            "put the folders that hold the files first in the search path, or drop the ones \
             that never do",
            Some(0.0),
        ),
        _ => (
            "when the reads touch a small part of the file, advise the map: madvise(addr, \
             len, MADV_RANDOM) (each fault then reads the page it needs, not a read-ahead \
             window), or read the pieces with pread; measure both on the file with `iolab \
             random --method mmap` and `--method mmap-random`",
            None,
        ),
    };
    let calls = p.count;
    // Under ptrace, SQLite's calls count at most DISAGREE× as many of a shell's redirection:
    // their times less the stops run 0.4–3× their eBPF times as the load goes.
    let ns = match churn.filter(|_| !exact) {
        Some(f) => p.ns.min((super::DISAGREE * f.cost(calls, 0) * 1e9) as u64),
        None => p.ns,
    };
    Estimate {
        calls,
        bytes: 0,
        evidence: p.note.clone(),
        measured_ns: ns,
        measured_calls: if p.kind == FindingKind::MmapFaults {
            0
        } else {
            calls
        },
        calibrated: churn.map(|f| f.cost(calls, 0)),
        bounded: false,
        fixed,
        figures: churn.into_iter().collect(),
        warnings: Vec::new(),
        fix: fix.into(),
        cli: match p.kind {
            FindingKind::MmapFaults => "iolab random --method mmap-random FILE".into(),
            _ => "iolab trace --json FILE -- COMMAND (the paths are in failed_opens and lookups)"
                .into(),
        },
        library: match p.kind {
            FindingKind::MmapFaults => "let file = iolab::RandomAccessFile::open(path)?;".into(),
            _ => String::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Kind, Target};

    fn trace_with(failed: &[(&str, i64)], times: usize) -> (Trace, Vec<Group>) {
        let mut trace = Trace::default();
        trace
            .targets
            .push(Target::new(None, Some(Kind::File), "/bin/x"));
        for (path, ret) in failed {
            for _ in 0..times {
                trace.seen.failed_opens.add(Some(path), 1000, *ret);
            }
        }
        let groups = super::super::group(&trace);
        (trace, groups)
    }

    #[test]
    fn a_search_path_probed_is_found_and_a_lock_retried_is_not() {
        let paths: Vec<String> = (0..40)
            .map(|i| format!("/opt/lib{}/libc.so.6", i % 8 + i / 8 * 100))
            .collect();
        let probes: Vec<(&str, i64)> = paths.iter().map(|p| (p.as_str(), -2)).collect();
        let (trace, groups) = trace_with(&probes, 10);
        let mut out = Vec::new();
        detect(&trace, &groups, &mut out);
        let p = out
            .iter()
            .find(|p| p.kind == FindingKind::FailedOpens)
            .unwrap();
        assert_eq!(p.count, 400);
        assert!(p.note.contains("libc.so.6 (in 40 places)"), "{}", p.note);
        // 400 retries of one lock file (EEXIST) are no search path.
        let (trace, groups) = trace_with(&[("/run/x.lock", -libc::EEXIST as i64)], 400);
        let mut out = Vec::new();
        detect(&trace, &groups, &mut out);
        assert!(out.is_empty(), "{out:?}");
    }
}
