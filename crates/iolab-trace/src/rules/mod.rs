//! The findings: the write-ups' pitfalls, recognised in a trace, each with its evidence,
//! what it costs here now and with the fix (from [`Costs`]), and the fix as an `iolab`
//! command and a library call.
//!
//! | finding | when | fix |
//! |---|---|---|
//! | `small-writes` | at least [`MIN_CALLS`] writes to one pipe, terminal or file, [`SMALL_SHARE`] of them under [`SMALL_WRITE`] bytes (Rust's line-buffered stdout into a pipe) | a buffered writer: `StdoutWriter`, `AppendFile` |
//! | `sync-per-record` | at least [`MIN_SYNCS`] syncs (or `O_SYNC`/`O_DSYNC` writes) of one file, under [`SMALL_SYNC_UNIT`] written per sync | group commit: `durable::Log`, or a sync per batch |
//! | `small-reads` | at least [`MIN_CALLS`] reads of one file of at least [`LARGE_FILE`], [`SMALL_SHARE`] of them under [`SMALL_READ`] bytes, [`SEQUENTIAL`] of them sequential | bigger reads: the count suite's winner |
//! | `random-reads` | at least [`MIN_CALLS`] reads of one file, most of them not where the last one ended, one at a time | the random suite's winner (io_uring at depth, mmap) |
//! | `whole-file-rewrite` | a file of at least [`MIN_REWRITE`] read whole and written whole again, to a new file renamed over it (`sed -i`) or truncated in place, with the same size give or take [`REWRITE_SLACK`] | an in-place edit: `iolab edit` |
//!
//! A target with `sync-per-record` gets no `small-writes` (the syncs are its cost).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::costs::{Costs, Need, seconds};
use crate::model::{Kind, Target, Trace};

/// Calls on one target before a pattern counts: fewer cannot cost much.
pub const MIN_CALLS: u64 = 1000;
/// Writes under this many bytes are small (a line, a record).
pub const SMALL_WRITE: u64 = 1024;
/// The share of a target's calls that must be small for the pattern.
pub const SMALL_SHARE: f64 = 0.8;
/// Syncs of one file before `sync-per-record` counts.
pub const MIN_SYNCS: u64 = 100;
/// Bytes written per sync under which each sync is "per record".
pub const SMALL_SYNC_UNIT: f64 = 64.0 * 1024.0;
/// Reads under this many bytes are small.
pub const SMALL_READ: u64 = 16 << 10;
/// A file this large (or read this much) is large.
pub const LARGE_FILE: u64 = 1 << 20;
/// Share of reads that start where the previous one ended for reads to be sequential.
pub const SEQUENTIAL: f64 = 0.8;
/// Share of reads that do not, for reads to be scattered.
pub const SCATTERED: f64 = 0.5;
/// Reads above this size on average are not "random small reads".
pub const RANDOM_READ_MAX: f64 = 64.0 * 1024.0;
/// Smallest file whose whole rewrite counts.
pub const MIN_REWRITE: u64 = 64 << 10;
/// How far the rewritten size may be from the original's.
pub const REWRITE_SLACK: f64 = 0.1;
/// A read slower than this (as the eBPF backend times it) missed the page cache.
pub const COLD_READ_NS: f64 = 50_000.0;
/// The buffer the fixes use: `AppendFile`'s and `StdoutWriter`'s 64 KiB.
pub const FIX_BUFFER: u64 = 64 << 10;

iolab::named_enum! {
    /// A pitfall.
    pub enum FindingKind: "finding" {
        /// Many small writes to one target.
        SmallWrites = "small-writes",
        /// A sync per small record.
        SyncPerRecord = "sync-per-record",
        /// Small sequential reads of a large file.
        SmallReads = "small-reads",
        /// Reads at scattered offsets, one at a time.
        RandomReads = "random-reads",
        /// A whole file read and written again for a change that keeps its size.
        WholeFileRewrite = "whole-file-rewrite",
    }
}

/// A pitfall recognised in a trace, before its estimate.
#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    /// Which.
    pub kind: FindingKind,
    /// The target (an index into the trace's targets).
    pub target: usize,
    /// The other file of a rewrite (the new copy), if any.
    pub partner: Option<usize>,
    /// Whether the reads missed the page cache (random reads).
    pub cold: bool,
}

/// A finding: the pattern, its evidence, its cost now and with the fix, and the fix.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// Which pitfall.
    pub kind: FindingKind,
    /// The target's path.
    pub path: String,
    /// The target's kind.
    pub target_kind: Kind,
    /// The calls that make the pattern.
    pub calls: u64,
    /// The bytes they moved.
    pub bytes: u64,
    /// What was seen, in a sentence.
    pub evidence: String,
    /// What those calls cost here (seconds), by the basis.
    pub estimated_s: Option<f64>,
    /// What the same work would cost with the fix.
    pub estimated_fixed_s: Option<f64>,
    /// Where the estimates come from, one entry per figure.
    pub basis: Vec<String>,
    /// The fix, in words.
    pub fix: String,
    /// The `iolab` command that measures or does it.
    pub cli: String,
    /// The library call.
    pub library: String,
}

/// The patterns in `trace`. `exact_times`: the per-call times are the kernel's (eBPF), so
/// a slow read means a cache miss.
pub fn detect(trace: &Trace, exact_times: bool) -> Vec<Pattern> {
    let mut found = Vec::new();
    for (i, t) in trace.targets.iter().enumerate() {
        let kind = t.kind_or_other();
        let pattern = |kind| Pattern {
            kind,
            target: i,
            partner: None,
            cold: false,
        };
        let synced = sync_units(t);
        let sync_pattern = kind == Kind::File
            && synced >= MIN_SYNCS
            && (t.write.bytes as f64 / synced as f64) < SMALL_SYNC_UNIT;
        if sync_pattern {
            found.push(pattern(FindingKind::SyncPerRecord));
        }
        if !sync_pattern
            && matches!(kind, Kind::File | Kind::Pipe | Kind::Tty)
            && t.write.calls >= MIN_CALLS
            && t.write.share_below(SMALL_WRITE) >= SMALL_SHARE
        {
            found.push(pattern(FindingKind::SmallWrites));
        }
        let r = &t.read;
        if kind == Kind::File && r.calls >= MIN_CALLS {
            let large = t.size.max(r.bytes) >= LARGE_FILE;
            if large
                && r.share_below(SMALL_READ) >= SMALL_SHARE
                && r.sequential_share() >= SEQUENTIAL
            {
                found.push(pattern(FindingKind::SmallReads));
            }
            if 1.0 - r.sequential_share() >= SCATTERED && r.average() <= RANDOM_READ_MAX {
                let per_read = r.ns as f64 / r.calls as f64;
                found.push(Pattern {
                    cold: exact_times && per_read > COLD_READ_NS,
                    ..pattern(FindingKind::RandomReads)
                });
            }
        }
    }
    found.extend(rewrites(trace));
    found
}

/// Syncs of a target: sync calls and synced writes.
fn sync_units(t: &Target) -> u64 {
    t.sync_units()
}

/// Whether `t` was read whole (its size at least [`MIN_REWRITE`]).
fn read_whole(t: &Target) -> bool {
    t.kind == Some(Kind::File)
        && t.size >= MIN_REWRITE
        && t.read.bytes as f64 >= 0.99 * t.size as f64
}

fn near(a: u64, b: u64) -> bool {
    (a as f64 - b as f64).abs() <= REWRITE_SLACK * b as f64
}

/// Whole-file rewrites: a file read whole whose path now names a file that was written
/// whole (the copy renamed over it), or a file read whole and written whole again after
/// an `O_TRUNC` open.
fn rewrites(trace: &Trace) -> Vec<Pattern> {
    let mut found = Vec::new();
    for (i, r) in trace.targets.iter().enumerate() {
        if !read_whole(r) {
            continue;
        }
        if r.open_flags.trunc > 0 && near(r.write.bytes, r.size) {
            found.push(Pattern {
                kind: FindingKind::WholeFileRewrite,
                target: i,
                partner: None,
                cold: false,
            });
            continue;
        }
        let Ok(now) = std::fs::metadata(&r.path) else {
            continue;
        };
        let renamed_over = trace.targets.iter().position(|w| {
            w.key.is_some_and(|k| {
                k.ino == now.ino()
                    && libc::makedev(k.major, k.minor) == now.dev()
                    && Some(k) != r.key
            }) && near(w.write.bytes, r.size)
        });
        if let Some(w) = renamed_over {
            found.push(Pattern {
                kind: FindingKind::WholeFileRewrite,
                target: i,
                partner: Some(w),
                cold: false,
            });
        }
    }
    found
}

/// The folder of a target's path, for the sync figures (the cwd when unknown).
fn folder(path: &str) -> PathBuf {
    Path::new(path)
        .parent()
        .filter(|p| p.is_absolute() && p.is_dir())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")))
}

/// The figures `pattern` needs: what it costs now, and with the fix.
pub fn needs(pattern: &Pattern, trace: &Trace) -> [Need; 2] {
    let t = &trace.targets[pattern.target];
    match pattern.kind {
        FindingKind::SmallWrites => {
            let size = t.write.average().round() as u64;
            let kind = t.kind_or_other();
            [
                Need::SmallWrite { kind, size },
                Need::BufferedWrite { kind, size },
            ]
        }
        FindingKind::SyncPerRecord => {
            let dir = folder(&t.path);
            [
                Need::SyncedRecord { dir: dir.clone() },
                Need::GroupCommit { dir },
            ]
        }
        FindingKind::SmallReads => [
            Need::SmallRead {
                size: t.read.average().round() as u64,
            },
            Need::BestRead,
        ],
        FindingKind::RandomReads => [
            Need::RandomRead { cold: pattern.cold },
            Need::BestRandomRead { cold: pattern.cold },
        ],
        FindingKind::WholeFileRewrite => [
            Need::SmallRead {
                size: t.read.average().round() as u64,
            },
            Need::InPlaceEdit,
        ],
    }
}

/// `n` calls, `b` bytes of `size` each: "100000 writes of 512 B (49 MiB)".
fn calls_text(n: u64, what: &str, bytes: u64) -> String {
    let each = bytes.checked_div(n).unwrap_or(0);
    format!(
        "{n} {what}{} of {} ({})",
        if n == 1 { "" } else { "s" },
        iolab::units::format_bytes(each),
        iolab::units::format_bytes(bytes)
    )
}

/// The finding for `pattern`, estimated with `costs`.
pub fn finding(pattern: &Pattern, trace: &Trace, costs: &Costs) -> Finding {
    let t = &trace.targets[pattern.target];
    let kind = t.kind_or_other();
    let [now_need, fix_need] = needs(pattern, trace);
    let now_fig = costs.get(&now_need);
    let fix_fig = costs.get(&fix_need);
    let mut basis: Vec<String> = [now_fig, fix_fig]
        .iter()
        .flatten()
        .map(|f| f.basis.clone())
        .collect();
    let in_calls = |ns: u64| format!("{} in the calls", seconds(ns as f64 * 1e-9));
    let (calls, bytes, evidence, now, fixed, fix, mut cli, mut library) = match pattern.kind {
        FindingKind::SmallWrites => {
            let w = &t.write;
            let (fix, cli, library) = if kind == Kind::File {
                (
                    format!(
                        "buffer the records: one write per {} (AppendFile, or a BufWriter of 64 KiB)",
                        iolab::units::format_bytes(FIX_BUFFER)
                    ),
                    "iolab bench append --methods write-per-record,append-file".to_string(),
                    "iolab::AppendFile::create(path)?, then .append(record)? for each record"
                        .to_string(),
                )
            } else {
                (
                    format!(
                        "write through a buffer, not a line at a time: StdoutWriter writes {} and more per call",
                        iolab::units::format_bytes(8 << 10)
                    ),
                    "iolab write --method bufwriter | READER".to_string(),
                    "iolab::StdoutWriter::new()?, then write_all(line)? (flushed on drop)"
                        .to_string(),
                )
            };
            (
                w.calls,
                w.bytes,
                format!(
                    "{} to {}, {}",
                    calls_text(w.calls, "write", w.bytes),
                    kind.article(),
                    in_calls(w.ns)
                ),
                now_fig.map(|f| f.cost(w.calls, w.bytes)),
                fix_fig.map(|f| f.cost(w.calls, w.bytes)),
                fix,
                cli,
                library,
            )
        }
        FindingKind::SyncPerRecord => {
            let units = sync_units(t);
            let how = if t.write.synced > t.syncs {
                format!("{} writes through O_SYNC/O_DSYNC", t.write.synced)
            } else {
                format!("{} syncs (fsync, fdatasync, msync)", t.syncs)
            };
            (
                units,
                t.write.bytes,
                format!(
                    "{how} for {}: a sync per {} written, {} in the syncs and synced writes",
                    calls_text(t.write.calls, "write", t.write.bytes),
                    iolab::units::format_bytes(t.write.bytes / units.max(1)),
                    seconds(
                        (t.sync_ns + if t.write.synced > 0 { t.write.ns } else { 0 }) as f64
                            * 1e-9
                    )
                ),
                now_fig.map(|f| f.cost(units, 0)),
                fix_fig.map(|f| f.cost(units, 0)),
                "group commit: one sync for many records (durable::Log shares a sync among the writers waiting; a single writer syncs once per batch)".to_string(),
                "iolab bench append (its synced rows and its durable section)".to_string(),
                "iolab::durable::LogOptions::new().open(path)?, then log.append_durable(record)? from every writer".to_string(),
            )
        }
        FindingKind::SmallReads => {
            let r = &t.read;
            (
                r.calls,
                r.bytes,
                format!(
                    "{} of a {} file, {:.0}% sequential, {}",
                    calls_text(r.calls, "read", r.bytes),
                    iolab::units::format_bytes(t.size.max(r.bytes)),
                    r.sequential_share() * 100.0,
                    in_calls(r.ns)
                ),
                now_fig.map(|f| f.cost(r.calls, r.bytes)),
                fix_fig.map(|f| f.cost(r.calls, r.bytes)),
                "read in large pieces (128 KiB or more per call), or with the count suite's winner"
                    .to_string(),
                "iolab count FILE".to_string(),
                "iolab::count_lines(Method::Auto, &Input::open(path)?, &ReadOptions::new())"
                    .to_string(),
            )
        }
        FindingKind::RandomReads => {
            let r = &t.read;
            (
                r.calls,
                r.bytes,
                format!(
                    "{} at scattered offsets ({:.0}% not where the last read ended), one at a time, {}{}",
                    calls_text(r.calls, "read", r.bytes),
                    (1.0 - r.sequential_share()) * 100.0,
                    in_calls(r.ns),
                    if pattern.cold { ", missing the page cache" } else { "" }
                ),
                now_fig.map(|f| f.cost(r.calls, 0)),
                fix_fig.map(|f| f.cost(r.calls, 0)),
                "issue the reads together (io_uring at depth) or map the file, as the random suite's winner does".to_string(),
                "iolab random --method uring --queue-depth 32 FILE".to_string(),
                "iolab::RandomAccessFile::open(path)?.read_at(offset, &mut buf)".to_string(),
            )
        }
        FindingKind::WholeFileRewrite => {
            let r = &t.read;
            let w = pattern
                .partner
                .map_or(&t.write, |p| &trace.targets[p].write);
            let how = match pattern.partner {
                Some(p) => format!(
                    "into a new file ({}) renamed over it",
                    trace.targets[p].path
                ),
                None => "after truncating it".to_string(),
            };
            let write_now = costs.get(&Need::SmallWrite {
                kind: Kind::File,
                size: w.average().round() as u64,
            });
            if let Some(f) = write_now {
                basis.push(f.basis.clone());
            }
            (
                r.calls + w.calls,
                r.bytes + w.bytes,
                format!(
                    "the whole file ({}) read in {} and written again in {} {how}, {} in the calls",
                    iolab::units::format_bytes(t.size),
                    calls_text(r.calls, "read", r.bytes),
                    calls_text(w.calls, "write", w.bytes),
                    seconds((r.ns + w.ns) as f64 * 1e-9)
                ),
                now_fig.map(|f| {
                    f.cost(r.calls, r.bytes) + write_now.map_or(0.0, |g| g.cost(w.calls, w.bytes))
                }),
                fix_fig.map(|f| f.cost(0, t.size)),
                "edit in place: rewrite only the bytes that change".to_string(),
                "iolab edit replace --from X --to Y FILE".to_string(),
                "iolab::edit::replace_byte(path, from, to, Strategy::Mmap)".to_string(),
            )
        }
    };
    if let Some(f) = fix_fig {
        if let Some(c) = &f.cli {
            cli.clone_from(c);
        }
        if let Some(l) = &f.library {
            library.clone_from(l);
        }
    }
    basis.dedup();
    Finding {
        kind: pattern.kind,
        path: t.path.clone(),
        target_kind: kind,
        calls,
        bytes,
        evidence,
        estimated_s: now,
        estimated_fixed_s: fixed,
        basis,
        fix,
        cli,
        library,
    }
}

/// Every need of `patterns`, for [`Costs::gather`].
pub fn all_needs(patterns: &[Pattern], trace: &Trace) -> Vec<Need> {
    let mut out = Vec::new();
    for p in patterns {
        out.extend(needs(p, trace));
        if p.kind == FindingKind::WholeFileRewrite {
            let w = p
                .partner
                .map_or(&trace.targets[p.target].write, |i| &trace.targets[i].write);
            out.push(Need::SmallWrite {
                kind: Kind::File,
                size: w.average().round() as u64,
            });
        }
    }
    out
}

/// The findings of `patterns`, the largest saving first.
pub fn findings(patterns: &[Pattern], trace: &Trace, costs: &Costs) -> Vec<Finding> {
    let mut out: Vec<Finding> = patterns.iter().map(|p| finding(p, trace, costs)).collect();
    let saving = |f: &Finding| match (f.estimated_s, f.estimated_fixed_s) {
        (Some(a), Some(b)) => a - b,
        _ => 0.0,
    };
    out.sort_by(|a, b| saving(b).total_cmp(&saving(a)).then(b.calls.cmp(&a.calls)));
    out
}

#[cfg(test)]
mod tests;
