//! The findings: the write-ups' pitfalls, recognised in a trace, each with its evidence,
//! what its calls cost here (the time measured in them, plus the round trip into the
//! kernel that each call makes), what the same work would cost with the fix (from
//! [`Costs`]), and the fix.
//!
//! The rules look at targets as a user names them: the inodes a path had during the run
//! (a journal made anew for each transaction) are one target ([`group`]).
//!
//! | finding | when | fix | module |
//! |---|---|---|---|
//! | `small-writes` | at least [`MIN_CALLS`] writes to one pipe, terminal or file, [`SMALL_SHARE`] of them under [`SMALL_WRITE`] bytes; with a source read in as many calls of the same bytes, a copy loop | a buffered writer, or bigger blocks for a copy | [`writes`] |
//! | `small-direct-writes` | at least [`MIN_DIRECT`] `O_DIRECT` writes of one file, under [`FIX_BUFFER`] each on average, appending | bigger aligned blocks, `O_DIRECT` kept | [`writes`] |
//! | `open-churn` | at least [`MIN_OPENS`] opens of one file (one life: not a file made anew each time), one per [`CHURN`] reads or writes or more, [`ONE_PROCESS`] of its calls by one process | open once | [`writes`] |
//! | `sync-per-record` | at least [`MIN_SYNCS`] syncs (or `O_SYNC`/`O_DSYNC` writes) of one file, under [`SMALL_SYNC_UNIT`] written per sync; or of one folder | group commit | [`syncs`] |
//! | `small-reads` | at least [`MIN_CALLS`] reads of one file of at least [`LARGE_FILE`], [`SMALL_SHARE`] of them under [`SMALL_READ`] bytes, [`SEQUENTIAL`] of them sequential | bigger reads | [`reads`] |
//! | `random-reads` | at least [`MIN_CALLS`] reads of one file at scattered offsets ([`SCATTERED`] of the reads that moved data; repeats at one offset and empty reads are not scattered), one at a time | reads in flight together, or a map | [`reads`] |
//! | `whole-file-rewrite` | a file of at least [`MIN_REWRITE`] read whole, then replaced whole: by a new file renamed over it, or truncated and written again | same size: in place; else a streamed rewrite into a new file renamed over it | [`rewrite`] |
//! | `read-twice` | a file of at least [`MIN_REWRITE`] read sequentially [`TWICE`] times over or more | read it once and keep the bytes, or map it | [`reads`] |
//! | `stat-storm` | at least [`MIN_CALLS`] lookups (`stat`, `statx`, `access`, …), [`REPEATED`] of them of a path asked before | keep the answer | [`lookups`] |
//! | `failed-opens` | at least [`MIN_FAILED`] opens that failed (a search path probed) | a shorter search path | [`lookups`] |
//! | `mmap-faults` | at least [`MIN_FAULTS`] faults on the maps of one file, [`SCATTERED`] of them far from the previous, each reading [`WASTE`] folios or more, [`MIN_FAULT_BYTES`] in all (eBPF) | `madvise(MADV_RANDOM)` | [`lookups`] |
//! | `rename-before-sync`, `unsynced-directory`, `rewrite-in-place` | the order of the calls ([`durability`]) | sync, rename, sync the directory | [`durability`] |
//!
//! Where the fix makes fewer calls, the program's own work that goes with each call it
//! removes counts too ([`add_own`]): an interpreter's work around each flush (Python's,
//! calibrated with its own interpreter, at most the time between its calls:
//! [`writes::own_work`]), SQLite's work between the calls of each transaction and the
//! removal of its journal ([`lookups`]); a pipe's reader's reads (and its writes of each
//! piece on), when the reader was traced ([`writes::reader_work`]). docs/trace.md,
//! "Estimates".
//!
//! A finding is shown in the summary when its saving is at least [`SHOWN_SHARE`] of the
//! run's wall time; the others are in the JSON (`shown: false`). The durability findings
//! are about what a crash would do, not time: they are always shown, with their `risk`.

mod durability;
mod lookups;
pub mod programs;
mod reads;
mod rewrite;
mod syncs;
mod whole;
mod writes;

pub use whole::Run;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::costs::{Costs, Figure, Idiom, Need, seconds};
use crate::model::{Kind, Target, TargetKey, Trace};

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
/// Share of the reads that moved data that were scattered, for `random-reads`.
pub const SCATTERED: f64 = 0.5;
/// Reads above this size on average are not "random small reads".
pub const RANDOM_READ_MAX: f64 = 64.0 * 1024.0;
/// Smallest file whose whole rewrite counts.
pub const MIN_REWRITE: u64 = 64 << 10;
/// A read slower than this (as the eBPF backend times it) missed the page cache.
pub const COLD_READ_NS: f64 = 50_000.0;
/// The buffer the buffered fixes use: `AppendFile`'s and `StdoutWriter`'s 64 KiB.
pub const FIX_BUFFER: u64 = 64 << 10;
/// The block of the big-read and direct-write fixes.
pub const FIX_BLOCK: u64 = 1 << 20;
/// `O_DIRECT` writes of one file before `small-direct-writes` counts.
pub const MIN_DIRECT: u64 = 100;
/// Opens of one file before `open-churn` counts.
pub const MIN_OPENS: u64 = 100;
/// Opens per read or write from which a file is opened for each.
pub const CHURN: f64 = 0.5;
/// Share of a file's calls one process must make for its opens to be that process's churn.
pub const ONE_PROCESS: f64 = 0.9;
/// How the fix of a map synced per record starts (no program's own fix replaces it).
pub const MSYNC_FIX: &str = "msync the map once per batch of records";
/// Records per sync in the group-commit fix.
pub const GROUP: u64 = 1000;
/// Share of the run's wall time a finding must save to be shown in the summary.
pub const SHOWN_SHARE: f64 = 0.02;
/// How many times over a file is read sequentially for `read-twice`.
pub const TWICE: f64 = 2.0;
/// Share of lookups that ask a path asked before, for `stat-storm`.
pub const REPEATED: f64 = 0.5;
/// Failed opens before `failed-opens` counts.
pub const MIN_FAILED: u64 = 200;
/// Faults on one file's maps before `mmap-faults` counts.
pub const MIN_FAULTS: u64 = 32;
/// Folios read into the page cache per fault from which each fault reads a whole
/// read-ahead window (128 KiB and more).
pub const WASTE: f64 = 32.0;
/// What the faults must have read in for `mmap-faults`.
pub const MIN_FAULT_BYTES: u64 = 64 << 20;
/// How far observation and calibration may differ (either way) before a finding says so.
pub const DISAGREE: f64 = 2.0;

iolab_lab::named::named_enum! {
    /// A pitfall.
    pub enum FindingKind: "finding" {
        /// Many small writes to one target.
        SmallWrites = "small-writes",
        /// Many small `O_DIRECT` writes appended to one file.
        SmallDirectWrites = "small-direct-writes",
        /// A file opened and closed around each read or write.
        OpenChurn = "open-churn",
        /// A sync per small record, of a file or of a folder.
        SyncPerRecord = "sync-per-record",
        /// Small sequential reads of a large file.
        SmallReads = "small-reads",
        /// Reads at scattered offsets, one at a time.
        RandomReads = "random-reads",
        /// A whole file read and written again.
        WholeFileRewrite = "whole-file-rewrite",
        /// A file read sequentially more than once.
        ReadTwice = "read-twice",
        /// The same paths looked up again and again.
        StatStorm = "stat-storm",
        /// Opens that failed: a search path probed.
        FailedOpens = "failed-opens",
        /// Scattered page faults on a map, each reading ahead what is not used.
        MmapFaults = "mmap-faults",
        /// A file renamed before its data was synced.
        RenameBeforeSync = "rename-before-sync",
        /// A name made or renamed whose directory is never synced after.
        UnsyncedDirectory = "unsynced-directory",
        /// An existing file truncated and written again in place.
        RewriteInPlace = "rewrite-in-place",
    }
}

impl FindingKind {
    /// Whether it is about what a crash would do (shown always, with its risk) rather
    /// than time.
    pub fn durability(self) -> bool {
        matches!(
            self,
            FindingKind::RenameBeforeSync
                | FindingKind::UnsyncedDirectory
                | FindingKind::RewriteInPlace
        )
    }
}

/// A target as the rules see it: every inode that one path named during the run, merged.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// The merged target (its key is the first inode's).
    pub target: Target,
    /// The trace's targets it holds.
    pub members: Vec<usize>,
    /// Their keys.
    pub keys: Vec<TargetKey>,
}

/// The trace's targets grouped by path: files and folders by their path, everything else
/// (pipes, sockets, devices, which `/proc` names uniquely) as it is.
pub fn group(trace: &Trace) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    let mut by_path: std::collections::HashMap<(Kind, &str), usize> = Default::default();
    for (i, t) in trace.targets.iter().enumerate() {
        let kind = t.kind_or_other();
        let named = matches!(kind, Kind::File | Kind::Directory) && t.path.starts_with('/');
        if named && let Some(&g) = by_path.get(&(kind, t.path.as_str())) {
            groups[g].target.merge(t);
            groups[g].members.push(i);
            groups[g].keys.extend(t.key);
            continue;
        }
        if named {
            by_path.insert((kind, t.path.as_str()), groups.len());
        }
        groups.push(Group {
            target: t.clone(),
            members: vec![i],
            keys: t.key.into_iter().collect(),
        });
    }
    groups
}

/// A pitfall recognised in a trace, before its estimate.
#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    /// Which.
    pub kind: FindingKind,
    /// The group it is about.
    pub group: usize,
    /// Other groups it involves: a rewrite's new file, a copy loop's source, the targets
    /// of an open churn's other calls.
    pub partners: Vec<usize>,
    /// Where the reader of a pipe written in small pieces copies each piece on to (`cat`
    /// into a file): its writes shrink with the fix too.
    pub downstream: Option<usize>,
    /// Whether the reads missed the page cache (random reads).
    pub cold: bool,
    /// The evidence, for the patterns that make it when they find it (durability,
    /// lookups).
    pub note: String,
    /// How many times it was seen (names waiting for one directory's sync), or how many
    /// calls make it (lookups).
    pub count: u64,
    /// Nanoseconds measured in those calls (lookups).
    pub ns: u64,
    /// The path the finding names, when not its group's (a file renamed: its new name).
    pub path: Option<String>,
    /// The interpreter that made the calls and how, when its own work around each call
    /// is calibrated ([`Need::Runtime`]: Python).
    pub runtime: Option<(PathBuf, Idiom)>,
    /// The program's own work the fix removes with the calls, as the trace shows it
    /// (seconds), and how it was counted (SQLite's work between its calls per
    /// transaction).
    pub own: Option<(f64, String)>,
    /// The fix, when the rule knows it in the program's terms from its files (SQLite's).
    pub fix: Option<String>,
}

impl Pattern {
    fn new(kind: FindingKind, group: usize) -> Pattern {
        Pattern {
            kind,
            group,
            partners: Vec::new(),
            downstream: None,
            cold: false,
            note: String::new(),
            count: 1,
            ns: 0,
            path: None,
            runtime: None,
            own: None,
            fix: None,
        }
    }
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
    /// The time measured in those calls, from their entries to their exits (the reads of
    /// a pipe count at most as long as its writes, per call: the rest is the reader
    /// waiting for the writer).
    pub measured_s: f64,
    /// What those calls cost here: the time measured in them, plus an empty system call's
    /// round trip for each (when it was measured).
    pub estimated_s: f64,
    /// What the same work would cost with the fix, when its figures could be had.
    pub estimated_fixed_s: Option<f64>,
    /// `estimated_s - estimated_fixed_s`.
    pub saving_s: Option<f64>,
    /// The saving's share of the run's wall time.
    pub share: Option<f64>,
    /// Whether the summary shows it (its saving is at least [`SHOWN_SHARE`] of the run).
    pub shown: bool,
    /// Where the estimates come from, one entry per figure.
    pub basis: Vec<String>,
    /// Where observation and calibration disagree, and what the estimate did about it.
    pub warnings: Vec<String>,
    /// The fix, in words: in the program's own terms where it was recognised
    /// ([`programs::fix`]), else iolab's.
    pub fix: String,
    /// The program that made the calls, as far as it was recognised (the command's own).
    pub program: crate::program::Program,
    /// The `iolab` command that measures or does it.
    pub cli: String,
    /// The library call.
    pub library: String,
    /// For the durability findings: what a crash could do.
    pub risk: Option<String>,
    /// The processes that made its calls, the busiest first.
    pub processes: Vec<crate::origin::ProcessUse>,
    /// Sampled stacks of its calls, symbolized.
    pub stacks: Vec<crate::origin::Stack>,
    /// The targets (inodes) it is about.
    pub keys: Vec<TargetKey>,
}

/// What a rule says about one pattern, before the common arithmetic of [`Analysis::finding`].
struct Estimate<'a> {
    calls: u64,
    bytes: u64,
    evidence: String,
    /// Nanoseconds measured in the calls the fix changes, and how many calls those are.
    measured_ns: u64,
    measured_calls: u64,
    /// The same calls as the calibration (or the bench) made them, when it could: the
    /// check against the observation.
    calibrated: Option<f64>,
    /// Whether the saving counts at most what the calibration says the calls cost: their
    /// measured time may hold waiting the fix keeps (a slow reader, a disk).
    bounded: bool,
    /// The fix's cost (its figures are whole calls' times), when they could be had.
    fixed: Option<f64>,
    /// The figures used.
    figures: Vec<&'a Figure>,
    /// Remarks the rule adds (how the fix keeps a crash from losing the file).
    warnings: Vec<String>,
    fix: String,
    cli: String,
    library: String,
}

/// The folder of a path, for the figures measured in the traced file's file system (the
/// temporary folder when the path names none).
fn folder(path: &str) -> PathBuf {
    Path::new(path)
        .parent()
        .filter(|p| p.is_absolute() && p.is_dir())
        .map(Path::to_path_buf)
        .unwrap_or_else(std::env::temp_dir)
}

/// `n` calls, `b` bytes of `size` each: "100000 writes of 512 B (49 MiB)".
fn calls_text(n: u64, what: &str, bytes: u64) -> String {
    let each = bytes.checked_div(n).unwrap_or(0);
    format!(
        "{n} {what}{} of {} ({})",
        if n == 1 { "" } else { "s" },
        iolab_lab::units::format_bytes(each),
        iolab_lab::units::format_bytes(bytes)
    )
}

/// "2.1 ms in the calls".
fn in_calls(ns: u64) -> String {
    format!("{} in the calls", seconds(ns as f64 * 1e-9))
}

/// The patterns of a trace and the targets they are about.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// The targets, grouped by path.
    pub groups: Vec<Group>,
    /// The pitfalls found.
    pub patterns: Vec<Pattern>,
    /// Whether the calls' times are the kernel's own (eBPF), or a tracer's estimate of them
    /// (ptrace: some of its stops stay in).
    pub exact_times: bool,
    /// What the rules could not judge, and why (for the report's notes).
    pub notes: Vec<String>,
}

impl Analysis {
    /// Finds the patterns in `trace`. `exact_times`: the per-call times are the kernel's
    /// (eBPF), so a slow read means a cache miss.
    pub fn new(trace: &Trace, exact_times: bool) -> Analysis {
        let groups = group(trace);
        let mut patterns = Vec::new();
        writes::detect(trace, &groups, &mut patterns);
        syncs::detect(&groups, &mut patterns);
        reads::detect(&groups, exact_times, &mut patterns);
        rewrite::detect(&groups, &mut patterns);
        reads::detect_twice(&groups, &mut patterns);
        lookups::detect(trace, &groups, &mut patterns);
        let mut notes = Vec::new();
        if trace.seen.events_lost > 0 {
            notes.push(format!(
                "{} changes to files were lost (a full ring): the durability rules were not \
                 applied, since a lost sync could make a synced file look unsynced",
                trace.seen.events_lost
            ));
        } else {
            durability::detect(trace, &groups, &mut patterns);
        }
        writes::attach_runtimes(trace, &groups, &mut patterns);
        Analysis {
            groups,
            patterns,
            exact_times,
            notes,
        }
    }

    /// Every figure the patterns' estimates need, for [`Costs::gather`].
    pub fn needs(&self) -> Vec<Need> {
        if self.patterns.is_empty() {
            return Vec::new();
        }
        let mut out = vec![Need::Syscall];
        for p in &self.patterns {
            let t = &self.groups[p.group].target;
            let more = match p.kind {
                FindingKind::SmallWrites
                | FindingKind::SmallDirectWrites
                | FindingKind::OpenChurn => writes::needs(p, &self.groups),
                FindingKind::SyncPerRecord => syncs::needs(t),
                FindingKind::SmallReads | FindingKind::RandomReads => reads::needs(p, t),
                FindingKind::WholeFileRewrite => rewrite::needs(p, &self.groups),
                FindingKind::StatStorm => lookups::needs(p, &self.groups),
                _ => Vec::new(),
            };
            out.extend(more);
        }
        out
    }

    /// The findings of `run`, estimated with `costs` and made whole (processes, stacks,
    /// the program and its own fix), the largest saving first.
    pub fn findings(&self, costs: &Costs, run: &Run<'_>) -> Vec<Finding> {
        let mut whole = whole::Assembler::new(run);
        let mut out: Vec<Finding> = self
            .patterns
            .iter()
            .map(|p| {
                let mut f = self.finding(p, costs, run.wall);
                whole.complete(&mut f);
                f
            })
            .collect();
        let key = |f: &Finding| f.saving_s.unwrap_or(f.estimated_s);
        out.sort_by(|a, b| key(b).total_cmp(&key(a)).then(b.calls.cmp(&a.calls)));
        out
    }

    fn finding(&self, p: &Pattern, costs: &Costs, wall: Duration) -> Finding {
        let t = &self.groups[p.group].target;
        let e = match p.kind {
            FindingKind::SmallWrites => writes::small_writes(p, &self.groups, costs),
            FindingKind::SmallDirectWrites => {
                writes::small_direct_writes(t, costs, self.exact_times)
            }
            FindingKind::OpenChurn => writes::open_churn(p, &self.groups, costs, self.exact_times),
            FindingKind::SyncPerRecord => syncs::estimate(p, t, costs),
            FindingKind::SmallReads => reads::small_reads(t, costs),
            FindingKind::RandomReads => reads::random_reads(p, t, costs),
            FindingKind::WholeFileRewrite => rewrite::estimate(p, &self.groups, costs),
            FindingKind::ReadTwice => reads::read_twice(t),
            FindingKind::StatStorm | FindingKind::FailedOpens | FindingKind::MmapFaults => {
                lookups::estimate(p, &self.groups, costs, self.exact_times)
            }
            kind => Estimate {
                calls: p.count,
                bytes: 0,
                evidence: p.note.clone(),
                measured_ns: 0,
                measured_calls: 0,
                calibrated: None,
                bounded: false,
                fixed: None,
                figures: Vec::new(),
                warnings: Vec::new(),
                fix: durability::fix(kind).into(),
                cli: "iolab bench durable".into(),
                library: iolab_lab::snippet::durable_replace(),
            },
        };
        let mut f = finish(p, t, e, costs, wall);
        let own = match p.kind {
            FindingKind::SmallWrites => writes::own_work(p, &self.groups, costs),
            FindingKind::StatStorm => lookups::own_work(p, &self.groups, costs),
            _ => p.own.clone(),
        };
        if let Some((own_s, basis)) = own {
            add_own(&mut f, own_s, basis, wall);
        }
        if p.kind == FindingKind::SmallWrites
            && let Some((reader_s, basis)) = writes::reader_work(p, &self.groups, costs)
        {
            add_own(&mut f, reader_s, basis, wall);
        }
        if let Some(fix) = &p.fix {
            f.fix.clone_from(fix);
        }
        // Lookups and failed opens name no target: their processes are the run's.
        if !matches!(p.kind, FindingKind::StatStorm | FindingKind::FailedOpens) {
            f.keys.clone_from(&self.groups[p.group].keys);
        }
        if let Some(path) = &p.path {
            f.path.clone_from(path);
        }
        // Lookups and failed opens name paths, not the target the pattern hangs on.
        if matches!(p.kind, FindingKind::StatStorm | FindingKind::FailedOpens) {
            f.target_kind = Kind::File;
        }
        if p.kind.durability() {
            f.risk = Some(durability::risk(p.kind).into());
            f.shown = true;
        }
        if p.kind == FindingKind::MmapFaults {
            f.shown = true;
        }
        f
    }
}

/// Adds work that the fix removes with the calls beyond their own time (`own_s` seconds;
/// how it was counted in `basis`): the program's own work, a pipe's reader's calls. The
/// calls cost that much more here, and the fix saves it.
fn add_own(f: &mut Finding, own_s: f64, basis: String, wall: Duration) {
    if own_s <= 0.0 || !own_s.is_finite() {
        return;
    }
    f.estimated_s += own_s;
    f.saving_s = f.saving_s.map(|s| s + own_s);
    f.estimated_fixed_s = f.saving_s.map(|s| f.estimated_s - s);
    f.share = f.saving_s.map(|s| s / wall.as_secs_f64().max(1e-9));
    f.shown = f.shown
        || f.share
            .unwrap_or(f.estimated_s / wall.as_secs_f64().max(1e-9))
            >= SHOWN_SHARE;
    f.basis.push(basis);
}

/// The common arithmetic: the round trips, the check, the saving and its share.
///
/// A measured time runs from a call's entry to its exit: the round trip into the kernel
/// and back is added for each call. A calibrated or benchmarked figure is the whole
/// call's time as a program sees it, round trip included: nothing is added to it.
fn finish(p: &Pattern, t: &Target, e: Estimate<'_>, costs: &Costs, wall: Duration) -> Finding {
    let syscall = costs.get(&Need::Syscall);
    let o = syscall.map_or(0.0, |f| f.per_call_s);
    let measured = e.measured_ns as f64 * 1e-9;
    let estimated_s = measured + e.measured_calls as f64 * o;
    let mut warnings = Vec::new();
    let mut now_for_saving = estimated_s;
    if let Some(cal) = e.calibrated
        && cal > 0.0
        && estimated_s > 0.0
    {
        let ratio = estimated_s / cal;
        if !(1.0 / DISAGREE..=DISAGREE).contains(&ratio) {
            warnings.push(format!(
                "the calls took {:.1}× {} than the same calls made by the calibration ({} against {}){}",
                if ratio > 1.0 { ratio } else { 1.0 / ratio },
                if ratio > 1.0 { "longer" } else { "less" },
                seconds(estimated_s),
                seconds(cal),
                if e.bounded && ratio > 1.0 {
                    ": they waited on something the fix keeps (a slow reader, a disk), so the saving counts the calibrated cost"
                } else {
                    ""
                }
            ));
        }
        if e.bounded {
            now_for_saving = estimated_s.min(cal);
        }
    }
    let saving_s = e
        .fixed
        .map(|f| (now_for_saving - f).clamp(0.0, estimated_s));
    let share = saving_s.map(|s| s / wall.as_secs_f64().max(1e-9));
    let shown = share.unwrap_or(estimated_s / wall.as_secs_f64().max(1e-9)) >= SHOWN_SHARE;
    let mut basis: Vec<String> = e.figures.iter().map(|f| f.basis.clone()).collect();
    if let Some(s) = syscall {
        basis.push(s.basis.clone());
    }
    basis.dedup();
    warnings.extend(e.warnings);
    Finding {
        kind: p.kind,
        path: t.path.clone(),
        target_kind: t.kind_or_other(),
        calls: e.calls,
        bytes: e.bytes,
        evidence: e.evidence,
        measured_s: measured,
        estimated_s,
        estimated_fixed_s: saving_s.map(|s| estimated_s - s),
        saving_s,
        share,
        shown,
        basis,
        warnings,
        fix: e.fix,
        program: crate::program::Program::Unknown,
        cli: e.cli,
        library: e.library,
        risk: None,
        processes: Vec::new(),
        stacks: Vec::new(),
        keys: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
