//! Writes made the slow way: small ones (`small-writes`; with a source read in the same
//! steps, a copy loop), small `O_DIRECT` ones (`small-direct-writes`), and a file opened
//! and closed around each write or read (`open-churn`).
//!
//! - `small-writes`: the calls' time is what the fix removes, except waiting (a slow reader
//!   of a pipe), so the saving counts at most what the calibration says the same writes
//!   cost; the fix costs a buffered writer's 64 KiB writes of the same bytes (and, for a
//!   copy, 1 MiB reads of them). A pipe's reader, when traced, makes fewer reads with
//!   the fix too ([`reader_work`]): its reads count the reader's calibrated CPU time each,
//!   not their measured time (a read of an empty pipe waits for the writer, whatever the
//!   writer does meanwhile).
//! - `small-direct-writes`: `O_DIRECT` is kept (the program chose it); the fix costs
//!   writes of [`FIX_BLOCK`] with `O_DIRECT` in the same folder.
//! - `open-churn`: the opens, closes, `dup`s and `fcntl`s of the file (and, in the same
//!   numbers, of other descriptors: a shell saving and restoring its standard output
//!   around each redirected command) go; the fix keeps one open.
//!
//! The program's own work around each write the buffered fix removes ([`own_work`]): what
//! its interpreter spends on a flush beyond the call (calibrated with the traced
//! interpreter, [`Need::Runtime`]: Python), at most the mean time between its calls (all it
//! did between them). A native program's flush is its C library's few instructions: the
//! calibration's own calls, made by native code, stand for them, and nothing is added.

use std::path::{Path, PathBuf};

use super::{
    CHURN, Estimate, FIX_BLOCK, FIX_BUFFER, FindingKind, Group, MIN_CALLS, MIN_DIRECT, MIN_OPENS,
    MIN_SYNCS, ONE_PROCESS, Pattern, SEQUENTIAL, SMALL_SHARE, SMALL_SYNC_UNIT, SMALL_WRITE,
    calls_text, folder, in_calls,
};
use crate::costs::{Costs, Figure, Idiom, Need, seconds};
use crate::model::{Kind, Target, Trace};
use crate::program::Program;
use crate::syscalls::Sys;
use iolab_lab::append::Strategy as AppendStrategy;
use iolab_lab::snippet;
use iolab_lab::write::Method as WriteMethod;

/// Calls that open, close or duplicate a descriptor: what an open per write costs.
const CHURN_CALLS: [Sys; 7] = [
    Sys::Openat,
    Sys::Openat2,
    Sys::Close,
    Sys::Dup,
    Sys::Dup2,
    Sys::Dup3,
    Sys::Fcntl,
];

/// Words of a `small-writes` finding's evidence (read by [`super::programs`]): the process
/// that writes the file did not open it (a shell did: its standard output or error).
pub const INHERITED: &str = "a file it did not open (its standard output or error)";
/// Likewise, for a pipe: no traced process read it, so the reader's calls the fix would
/// remove too are not counted.
pub const UNTRACED_READER: &str =
    "its reader was not traced: the reads the fix would save it are not counted";
/// Likewise: the process that writes it loaded Python's `logging` package.
pub const LOGGING: &str = "its process loaded Python's logging module";
/// Likewise, for `open-churn`: each open truncated the file (a replace, not an append).
pub const TRUNCATED: &str = "each open truncated it (O_TRUNC: the file replaced)";
/// Likewise: the opens appended (`O_APPEND`).
pub const APPENDED: &str = "opened to append (O_APPEND)";

/// The process that made most of the calls on `t`.
fn writer(t: &Target) -> Option<u32> {
    t.by_process
        .iter()
        .max_by_key(|(pid, u)| (u.calls, std::cmp::Reverse(**pid)))
        .map(|(pid, _)| *pid)
}

/// Whether `pid` writes `t` as its standard output or error: `t` was never opened in the
/// trace, or was duplicated onto another descriptor (`dup2(fd, 1)`), or `pid` made little
/// more than its reads and writes on it while another process (a shell redirecting) made
/// the rest.
fn inherited(t: &Target, pid: u32) -> bool {
    let own = t.by_process.get(&pid).map_or(0, |u| u.calls);
    let dups = [Sys::Dup2, Sys::Dup3].map(|s| t.calls_of(s).calls);
    t.opens == 0
        || dups.iter().sum::<u64>() > 0
        || (t.by_process.len() > 1 && own <= t.write.calls + t.read.calls + 4)
}

/// Whether `pid` read a module of Python's `logging` package.
fn loaded_logging(groups: &[Group], pid: u32) -> bool {
    groups.iter().any(|g| {
        let p = &g.target.path;
        (p.contains("/logging/__init__.py") || p.contains("/logging/__pycache__/__init__."))
            && g.target.by_process.contains_key(&pid)
    })
}

/// Notes, on each `small-writes` pattern made by a Python, its interpreter and how it
/// wrote (through `logging`, or flushing records itself), for [`own_work`].
pub(super) fn attach_runtimes(trace: &Trace, groups: &[Group], patterns: &mut [Pattern]) {
    let env = std::env::var_os("PYTHONUNBUFFERED").is_some_and(|v| !v.is_empty());
    for p in patterns
        .iter_mut()
        .filter(|p| p.kind == FindingKind::SmallWrites)
    {
        let t = &groups[p.group].target;
        let Some(process) = writer(t).and_then(|pid| trace.seen.process(pid)) else {
            continue;
        };
        let args = process.args.get(1..).unwrap_or_default();
        if crate::program::recognise(Path::new(&process.exe), args, env).program != Program::Python
        {
            continue;
        }
        let idiom = if loaded_logging(groups, process.pid) {
            Idiom::PythonLogging
        } else {
            Idiom::PythonFlush
        };
        p.runtime = Some((PathBuf::from(&process.exe), idiom));
    }
}

/// The figure of the interpreter's own work per write, for a pattern that has one.
fn runtime_need(p: &Pattern, t: &Target) -> Option<Need> {
    let (exe, idiom) = p.runtime.as_ref()?;
    Some(Need::Runtime {
        exe: exe.clone(),
        idiom: *idiom,
        size: t.write.average().round() as u64,
    })
}

/// The program's own work with the writes a buffered writer removes (all but one per
/// [`FIX_BUFFER`]): per write, its interpreter's own work on a flush (calibrated), at most
/// the mean time between its calls here. `None` without the figure.
pub(super) fn own_work(p: &Pattern, groups: &[Group], costs: &Costs) -> Option<(f64, String)> {
    let t = &groups[p.group].target;
    let figure = costs.get(&runtime_need(p, t)?)?;
    let w = &t.write;
    let removed = w.calls.saturating_sub(w.bytes.div_ceil(FIX_BUFFER));
    let gap = if w.gaps > 0 {
        w.mean_gap() * 1e-9
    } else {
        f64::INFINITY
    };
    let each = figure.per_call_s.min(gap);
    let between = if gap.is_finite() {
        format!("{} between its calls here, their mean", seconds(gap))
    } else {
        "no time between its calls seen".into()
    };
    Some((
        removed as f64 * each,
        format!(
            "{}; with each of the {removed} writes the fix removes goes {} of the program's own work (the smaller of that and {between})",
            figure.basis,
            seconds(each)
        ),
    ))
}

/// Whether `t` syncs per record (then the syncs are its cost, not its writes).
pub(super) fn syncs_per_record(t: &Target) -> bool {
    let units = t.sync_units();
    units >= MIN_SYNCS && (t.write.bytes as f64 / units as f64) < SMALL_SYNC_UNIT
}

/// Whether most of `t`'s writes went through `O_DIRECT`.
fn direct(t: &Target) -> bool {
    t.write.direct * 2 > t.write.calls
}

/// The source of a copy loop writing to `groups[g]`: another target read in as many calls
/// (±1%) as `g` was written, the same bytes (±1%).
fn copy_source(groups: &[Group], g: usize) -> Option<usize> {
    let w = &groups[g].target.write;
    let near = |a: u64, b: u64| a.abs_diff(b) as f64 <= 0.01 * b as f64;
    groups
        .iter()
        .enumerate()
        .filter(|&(i, s)| {
            i != g && near(s.target.read.calls, w.calls) && near(s.target.read.bytes, w.bytes)
        })
        .min_by_key(|(_, s)| s.target.read.calls.abs_diff(w.calls))
        .map(|(i, _)| i)
}

/// Where the reader of pipe `groups[g]` copies each read on to: a target written in as
/// many calls (±1%) as the pipe was read, the same bytes (±1%).
fn copy_sink(groups: &[Group], g: usize) -> Option<usize> {
    let r = &groups[g].target.read;
    let near = |a: u64, b: u64| a.abs_diff(b) as f64 <= 0.01 * b as f64;
    if r.calls < MIN_CALLS {
        return None;
    }
    groups
        .iter()
        .enumerate()
        .filter(|&(i, s)| {
            i != g && near(s.target.write.calls, r.calls) && near(s.target.write.bytes, r.bytes)
        })
        .min_by_key(|(_, s)| s.target.write.calls.abs_diff(r.calls))
        .map(|(i, _)| i)
}

/// Churn calls of a target: (calls, nanoseconds).
fn churn(t: &Target) -> (u64, u64) {
    CHURN_CALLS
        .iter()
        .map(|&s| t.calls_of(s))
        .fold((0, 0), |(c, ns), s| (c + s.calls, ns + s.ns))
}

/// Other targets whose churn calls come in multiples (1 to 8) of `opens`, ±2%: the shell's
/// save and restore of a descriptor around each redirected command.
fn churn_partners(groups: &[Group], g: usize, opens: u64) -> Vec<usize> {
    groups
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != g)
        .filter(|(_, p)| {
            let (calls, _) = churn(&p.target);
            calls >= opens
                && (1..=8).any(|k| calls.abs_diff(k * opens) as f64 <= 0.02 * (k * opens) as f64)
        })
        .map(|(i, _)| i)
        .collect()
}

/// Whether one file of the group (one life: not a file made anew each time, as a
/// replace by rename makes one) was opened again and again around its reads and writes,
/// by one process (not one open by each of many processes).
fn churned(trace: &Trace, group: &Group) -> bool {
    group.members.iter().any(|&m| {
        let t = &trace.targets[m];
        let data_calls = t.read.calls + t.write.calls;
        let calls: u64 = t.by_process.values().map(|u| u.calls).sum();
        let one = t.by_process.values().map(|u| u.calls).max().unwrap_or(0);
        t.opens >= MIN_OPENS
            && data_calls >= MIN_OPENS
            && t.opens as f64 >= CHURN * data_calls as f64
            && one as f64 >= ONE_PROCESS * calls as f64
    })
}

/// Whether `t` is written in small pieces: a `small-writes` finding of its own.
fn written_small(t: &Target) -> bool {
    let w = &t.write;
    matches!(t.kind_or_other(), Kind::File | Kind::Pipe | Kind::Tty)
        && w.calls >= MIN_CALLS
        && w.share_below(SMALL_WRITE) >= SMALL_SHARE
        && !syncs_per_record(t)
        && !direct(t)
}

pub(super) fn detect(trace: &Trace, groups: &[Group], out: &mut Vec<Pattern>) {
    for (g, group) in groups.iter().enumerate() {
        let t = &group.target;
        let kind = t.kind_or_other();
        let w = &t.write;
        if written_small(t) {
            let mut p = Pattern::new(FindingKind::SmallWrites, g);
            p.partners.extend(copy_source(groups, g));
            if kind == Kind::Pipe {
                p.downstream = copy_sink(groups, g);
            }
            out.push(p);
        }
        if kind == Kind::File
            && w.calls >= MIN_DIRECT
            && direct(t)
            && w.average() < FIX_BUFFER as f64
            && w.sequential_share() >= SEQUENTIAL
            && !syncs_per_record(t)
        {
            out.push(Pattern::new(FindingKind::SmallDirectWrites, g));
        }
        if kind == Kind::File && churned(trace, group) {
            let mut p = Pattern::new(FindingKind::OpenChurn, g);
            p.partners = churn_partners(groups, g, t.opens);
            out.push(p);
        }
    }
}

pub(super) fn needs(p: &Pattern, groups: &[Group]) -> Vec<Need> {
    let t = &groups[p.group].target;
    let kind = t.kind_or_other();
    let size = t.write.average().round() as u64;
    match p.kind {
        FindingKind::SmallWrites => {
            let mut n = vec![
                Need::SmallWrite { kind, size },
                Need::BufferedWrite { kind, size },
            ];
            if let Some(&s) = p.partners.first() {
                let src = &groups[s].target;
                // A device (`/dev/zero`) hands over memory as a cached file does: the
                // cached file's reads stand for its reads.
                if matches!(src.kind_or_other(), Kind::File | Kind::Device) {
                    n.push(Need::SmallRead {
                        size: src.read.average().round() as u64,
                    });
                }
                n.push(Need::BigRead);
            }
            n.extend(runtime_need(p, t));
            if kind == Kind::Pipe && t.read.calls > 0 {
                n.push(pipe_read(p, groups));
            }
            n
        }
        FindingKind::OpenChurn => vec![Need::Churn {
            dir: folder(&t.path),
        }],
        FindingKind::SmallDirectWrites => {
            let dir = folder(&t.path);
            vec![
                Need::DirectWrite {
                    dir: dir.clone(),
                    size,
                },
                Need::DirectWrite {
                    dir,
                    size: FIX_BLOCK,
                },
            ]
        }
        _ => Vec::new(),
    }
}

pub(super) fn small_writes<'a>(p: &Pattern, groups: &[Group], costs: &'a Costs) -> Estimate<'a> {
    let t = &groups[p.group].target;
    let kind = t.kind_or_other();
    let w = &t.write;
    let size = w.average().round() as u64;
    let small = costs.get(&Need::SmallWrite { kind, size });
    let buffered = costs.get(&Need::BufferedWrite { kind, size });
    let mut figures: Vec<&Figure> = [small, buffered].into_iter().flatten().collect();
    let mut e = Estimate {
        calls: w.calls,
        bytes: w.bytes,
        evidence: format!(
            "{} to {}, {}",
            calls_text(w.calls, "write", w.bytes),
            kind.article(),
            in_calls(w.ns)
        ),
        measured_ns: w.ns,
        measured_calls: w.calls,
        calibrated: small.map(|f| f.cost(w.calls, w.bytes)),
        bounded: true,
        fixed: buffered.map(|f| f.cost(w.calls, w.bytes)),
        figures: Vec::new(),
        warnings: Vec::new(),
        fix: String::new(),
        cli: String::new(),
        library: String::new(),
    };
    if let Some(&s) = p.partners.first() {
        // A copy loop: each write follows a read of the same size; bigger blocks fix both.
        let src = &groups[s].target;
        let r = &src.read;
        let small_read = matches!(src.kind_or_other(), Kind::File | Kind::Device)
            .then(|| {
                costs.get(&Need::SmallRead {
                    size: r.average().round() as u64,
                })
            })
            .flatten();
        let big = costs.get(&Need::BigRead);
        figures.extend([small_read, big].into_iter().flatten());
        e.calls += r.calls;
        e.measured_ns += r.ns;
        e.measured_calls += r.calls;
        e.evidence = format!(
            "a copy loop: {} from {}, {}, each one followed by a write of it to {}: {}",
            calls_text(r.calls, "read", r.bytes),
            src.path,
            in_calls(r.ns),
            t.path,
            e.evidence
        );
        // Without a calibration of the source's reads, the check covers the writes alone.
        e.calibrated = match small_read {
            Some(f) => e.calibrated.map(|c| c + f.cost(r.calls, r.bytes)),
            None => None,
        };
        e.fixed = match (e.fixed, big) {
            (Some(f), Some(b)) => Some(f + b.cost(0, r.bytes)),
            _ => None,
        };
        e.fix = format!(
            "copy in blocks of {} or more: a read and a write per block, not per {} (dd bs=1M; a 1 MiB buffer)",
            iolab_lab::units::format_bytes(FIX_BUFFER),
            iolab_lab::units::format_bytes(size)
        );
        e.cli = "iolab bench append --methods write-per-record,append-file".into();
        e.library = snippet::copy(FIX_BUFFER);
    } else if kind == Kind::File {
        let pid = writer(t);
        if pid.is_some_and(|pid| inherited(t, pid)) {
            e.evidence.push_str(&format!(" ({INHERITED})"));
        }
        if pid.is_some_and(|pid| loaded_logging(groups, pid)) {
            e.evidence.push_str(&format!("; {LOGGING}"));
        }
        e.fix = format!(
            "buffer the records: one write per {} (a BufWriter of 64 KiB, iolab::AppendFile)",
            iolab_lab::units::format_bytes(FIX_BUFFER)
        );
        e.cli = "iolab bench append --methods write-per-record,append-file".into();
        e.library = snippet::append(AppendStrategy::AppendFile, None);
    } else {
        e.fix = format!(
            "write through a buffer, not a line at a time: StdoutWriter writes {} and more per call",
            iolab_lab::units::format_bytes(8 << 10)
        );
        e.cli = "iolab write --method bufwriter | READER".into();
        e.library = snippet::write(WriteMethod::Bufwriter, None);
    }
    if kind == Kind::Pipe {
        reader(&mut e, p, groups);
    }
    if let Some(l) = buffered.and_then(|f| f.library.as_ref()) {
        e.library.clone_from(l);
    }
    e.figures = figures;
    e
}

/// Says how the reader of a pipe written in small pieces took them: one by one (and
/// perhaps copying each on to another target, `cat > file`), or that it was not traced.
fn reader(e: &mut Estimate<'_>, p: &Pattern, groups: &[Group]) {
    let r = &groups[p.group].target.read;
    if r.calls == 0 {
        e.evidence.push_str(&format!("; {UNTRACED_READER}"));
        return;
    }
    e.evidence.push_str(&format!(
        "; its reader took them in {}",
        calls_text(r.calls, "read", r.bytes)
    ));
    if let Some(d) = p.downstream {
        let down = &groups[d].target;
        e.evidence.push_str(&format!(
            " and wrote each on to {} ({})",
            down.path,
            calls_text(down.write.calls, "write", down.write.bytes)
        ));
    }
}

/// The figure of the reads of `p`'s pipe by its reader, each with its write on
/// ([`Pattern::downstream`]) unless that makes a `small-writes` finding of its own (`cat >
/// file`), which counts it.
fn pipe_read(p: &Pattern, groups: &[Group]) -> Need {
    Need::PipeRead {
        size: groups[p.group].target.write.average().round() as u64,
        onward: p
            .downstream
            .is_some_and(|d| !written_small(&groups[d].target)),
    }
}

/// The reader's calls the fix removes with the writes, when the pipe's reader was traced:
/// with 64 KiB writes it reads 64 KiB at a time, so all its reads but one per
/// [`FIX_BUFFER`] go, each with its sleep on the empty pipe, its wake-up and its write on
/// ([`pipe_read`]), as the calibration measured them ([`Need::PipeRead`]): the reader's CPU
/// time per read (its waits for the writer left out), times the share of it the writer
/// beside it waited for a CPU (the reader's work is the run's wall clock only where it
/// takes the writer's CPU: with one free, it runs beside); at most as many reads as the
/// calibration's reader made of the same bytes. Its own work on the bytes stays: a reader
/// that works per line works per line whatever it reads at a time.
pub(super) fn reader_work(p: &Pattern, groups: &[Group], costs: &Costs) -> Option<(f64, String)> {
    let t = &groups[p.group].target;
    let r = &t.read;
    if t.kind_or_other() != Kind::Pipe || r.calls == 0 {
        return None;
    }
    let figure = costs.get(&pipe_read(p, groups))?;
    // A tracer slows the writer, so the traced reader found less in the pipe at each read
    // than it would untraced: its reads count at most as many as the calibration's reader
    // made of the same bytes, at the pace of a writer as fast as its calls allow.
    let at_pace = if figure.per_byte_s > 0.0 {
        (r.bytes as f64 * figure.per_byte_s / figure.per_call_s).round()
    } else {
        f64::INFINITY
    };
    let reads = ((r.calls as f64).min(at_pace) as u64).saturating_sub(r.bytes.div_ceil(FIX_BUFFER));
    let saved = reads as f64 * figure.per_call_s;
    let basis = format!(
        "{}; the fix removes {reads} reads of the pipe by its reader, which made {} (the fewer of those and the calibration's reads of the same bytes, less one per {}: a tracer slows the writer, so the traced reader found less at each read)",
        figure.basis,
        r.calls,
        iolab_lab::units::format_bytes(FIX_BUFFER)
    );
    Some((saved, basis))
}

pub(super) fn small_direct_writes<'a>(t: &Target, costs: &'a Costs, exact: bool) -> Estimate<'a> {
    let w = &t.write;
    let size = w.average().round() as u64;
    let dir = folder(&t.path);
    let small = costs.get(&Need::DirectWrite {
        dir: dir.clone(),
        size,
    });
    let big = costs.get(&Need::DirectWrite {
        dir,
        size: FIX_BLOCK,
    });
    let blocks = w.bytes.div_ceil(FIX_BLOCK);
    Estimate {
        calls: w.calls,
        bytes: w.bytes,
        evidence: format!(
            "{} through O_DIRECT ({} of them), {:.0}% sequential, {}: each one a trip to the device",
            calls_text(w.calls, "write", w.bytes),
            w.direct,
            w.sequential_share() * 100.0,
            in_calls(w.ns)
        ),
        measured_ns: w.ns,
        measured_calls: w.calls,
        calibrated: small.map(|f| f.cost(w.calls, 0)),
        // The calls' time is what the fix removes: measured exactly by eBPF; under ptrace,
        // whose times keep some of its stops, bounded by the same writes calibrated.
        bounded: !exact,
        fixed: big.map(|f| f.cost(blocks, 0)),
        figures: [small, big].into_iter().flatten().collect(),
        warnings: Vec::new(),
        fix: format!(
            "write bigger aligned blocks ({} each) and keep O_DIRECT (dd oflag=direct bs=1M); or, if each block need not reach the device on its own, write through the page cache and sync once",
            iolab_lab::units::format_bytes(FIX_BLOCK)
        ),
        cli: "iolab bench append".into(),
        library: snippet::direct_writes(FIX_BLOCK),
    }
}

pub(super) fn open_churn<'a>(
    p: &Pattern,
    groups: &[Group],
    costs: &'a Costs,
    exact: bool,
) -> Estimate<'a> {
    let t = &groups[p.group].target;
    let figure = costs.get(&Need::Churn {
        dir: folder(&t.path),
    });
    let (mut calls, mut ns) = churn(t);
    let mut others = Vec::new();
    for &i in &p.partners {
        let (c, n) = churn(&groups[i].target);
        calls += c;
        ns += n;
        others.push(format!("{c} on {}", groups[i].target.path));
    }
    let data = t.read.calls + t.write.calls;
    let how = if t.open_flags.trunc * 2 > t.opens {
        format!(", {TRUNCATED}")
    } else if t.open_flags.append * 2 > t.opens {
        format!(", {APPENDED}")
    } else {
        String::new()
    };
    let also = if others.is_empty() {
        String::new()
    } else {
        format!(
            "; and, in the same numbers, {} (a shell saving and restoring a descriptor around each redirected command)",
            others.join(", ")
        )
    };
    Estimate {
        calls,
        bytes: t.read.bytes + t.write.bytes,
        evidence: format!(
            "{} opens of the file{how} for {data} reads and writes ({:.1} per open): opened and closed around each, {} opens, closes, dups and fcntls{also}, {}",
            t.opens,
            data as f64 / t.opens.max(1) as f64,
            churn(t).0,
            in_calls(ns)
        ),
        measured_ns: ns,
        measured_calls: calls,
        // Under ptrace a call's time keeps some of the tracer's stops: the calibrated
        // redirection bounds what the fix saves there.
        calibrated: figure.map(|f| f.cost(calls, 0)),
        bounded: !exact,
        // One open stays: nothing worth counting.
        fixed: Some(0.0),
        figures: figure.into_iter().collect(),
        warnings: Vec::new(),
        fix: "open the file once and keep it open for all the writes (in a shell, redirect the whole loop: `for …; do …; done >> FILE`, not each command)".into(),
        cli: "iolab bench append --methods write-per-record,append-file".into(),
        library: snippet::open_once(),
    }
}
