//! The rules on made-up traces: each pattern fires on its shape and not on the
//! well-behaved one next to it, and the estimates do their arithmetic.

use super::*;
use crate::costs::{Figure, Idiom, SyncCall};
use crate::model::{CallStat, Flow, Place, TargetKey};
use crate::syscalls::Sys;

fn target(kind: Kind, path: &str, ino: u64) -> Target {
    Target::new(
        Some(TargetKey {
            major: 254,
            minor: 0,
            ino,
            life: 0,
        }),
        Some(kind),
        path,
    )
}

/// `calls` calls of `each` bytes, the first `sequential` of them sequential, one per µs
/// from `start` µs on, 1 µs each.
fn flow_at(calls: u64, each: u64, sequential: u64, start: u64) -> Flow {
    let mut f = Flow::default();
    for i in 0..calls {
        let place = if i < sequential {
            Place::Sequential
        } else {
            Place::Scattered
        };
        f.add(each, 1000, (start + i) * 1000, place);
    }
    f
}

fn flow(calls: u64, each: u64, sequential: u64) -> Flow {
    flow_at(calls, each, sequential, 0)
}

fn trace(targets: Vec<Target>) -> Trace {
    Trace {
        targets,
        ..Trace::default()
    }
}

/// The findings of `a` over a run of `wall` whose command is of no known program.
fn findings(a: &Analysis, costs: &Costs, wall: Duration) -> Vec<Finding> {
    let trace = Trace::default();
    let program = crate::program::recognise(std::path::Path::new(""), &[], false);
    a.findings(
        costs,
        &super::Run {
            trace: &trace,
            wall,
            program: &program,
            unbuffered_env: false,
        },
    )
}

fn kinds(trace: &Trace) -> Vec<FindingKind> {
    Analysis::new(trace, true)
        .patterns
        .iter()
        .map(|p| p.kind)
        .collect()
}

#[test]
fn small_writes_to_a_pipe_but_not_big_ones() {
    let mut small = target(Kind::Pipe, "pipe:[1]", 1);
    small.write = flow(5000, 9, 0);
    let mut big = target(Kind::Pipe, "pipe:[22]", 2);
    big.write = flow(5000, 65536, 0);
    let mut few = target(Kind::Pipe, "pipe:[333]", 3);
    few.write = flow(999, 9, 0);
    let a = Analysis::new(&trace(vec![small, big, few]), true);
    assert_eq!(a.patterns.len(), 1);
    assert_eq!(
        (a.patterns[0].kind, a.patterns[0].group),
        (FindingKind::SmallWrites, 0)
    );
    assert!(a.patterns[0].partners.is_empty());
}

#[test]
fn a_copy_loop_pairs_the_small_writes_with_their_source() {
    let mut zero = target(Kind::Device, "/dev/zero", 1);
    zero.read = flow(20_000, 512, 0);
    let mut out = target(Kind::File, "/tmp/out", 2);
    out.write = flow(20_000, 512, 20_000);
    let a = Analysis::new(&trace(vec![zero, out]), true);
    assert_eq!(a.patterns.len(), 1);
    assert_eq!(a.patterns[0].kind, FindingKind::SmallWrites);
    assert_eq!(a.patterns[0].partners, [0]);
    let f = findings(&a, &Costs::default(), Duration::from_secs(1));
    assert_eq!(f[0].calls, 40_000);
    assert!(
        f[0].evidence.starts_with("a copy loop"),
        "{}",
        f[0].evidence
    );
    assert!((f[0].measured_s - 0.04).abs() < 1e-9, "{}", f[0].measured_s);
}

#[test]
fn a_sync_per_record_of_a_file_or_a_folder_replaces_small_writes() {
    let mut log = target(Kind::File, "/tmp/log", 1);
    log.write = flow(200, 100, 200);
    log.syncs = 200;
    log.calls.insert(
        Sys::Fsync,
        CallStat {
            calls: 200,
            ..CallStat::default()
        },
    );
    let mut dir = target(Kind::Directory, "/tmp", 2);
    dir.syncs = 150;
    assert_eq!(
        kinds(&trace(vec![log.clone(), dir.clone()])),
        [FindingKind::SyncPerRecord, FindingKind::SyncPerRecord]
    );
    assert_eq!(syncs::needs(&log)[0], {
        Need::Sync {
            dir: PathBuf::from("/tmp"),
            call: SyncCall::Fsync,
            record: 100,
            every: 1,
        }
    });
    // One sync at the end of many writes is fine; so is a folder synced a few times.
    log.write = flow(5000, 4096, 5000);
    log.syncs = 1;
    dir.syncs = 3;
    assert!(kinds(&trace(vec![log, dir])).is_empty());
}

#[test]
fn small_direct_writes_keep_o_direct_and_are_not_small_writes() {
    let mut f = target(Kind::File, "/tmp/direct", 1);
    f.write = flow(5000, 512, 5000);
    f.write.direct = 5000;
    assert_eq!(
        kinds(&trace(vec![f.clone()])),
        [FindingKind::SmallDirectWrites]
    );
    let a = Analysis::new(&trace(vec![f]), true);
    let e = findings(&a, &Costs::default(), Duration::from_secs(1));
    assert!(e[0].fix.contains("keep O_DIRECT"), "{}", e[0].fix);
}

#[test]
fn an_open_per_write_is_churn_with_the_shells_save_and_restore() {
    let mut f = target(Kind::File, "/tmp/lf", 1);
    f.write = flow(2000, 5, 2000);
    f.opens = 2000;
    for (sys, n) in [(Sys::Openat, 2000), (Sys::Close, 2000), (Sys::Dup2, 2000)] {
        f.calls.insert(
            sys,
            CallStat {
                calls: n,
                errors: 0,
                ns: n * 1500,
            },
        );
    }
    let mut stdout = target(Kind::Pipe, "pipe:[9]", 2);
    stdout.calls.insert(
        Sys::Fcntl,
        CallStat {
            calls: 6000,
            errors: 0,
            ns: 6000 * 200,
        },
    );
    let mut other = target(Kind::Pipe, "pipe:[10]", 3);
    other.calls.insert(
        Sys::Close,
        CallStat {
            calls: 7,
            ..CallStat::default()
        },
    );
    let a = Analysis::new(&trace(vec![f, stdout, other]), true);
    let churn: Vec<&Pattern> = a
        .patterns
        .iter()
        .filter(|p| p.kind == FindingKind::OpenChurn)
        .collect();
    assert_eq!(churn.len(), 1);
    assert_eq!(churn[0].partners, [1]);
    let found = findings(&a, &Costs::default(), Duration::from_secs(1));
    let f = found
        .iter()
        .find(|f| f.kind == FindingKind::OpenChurn)
        .unwrap();
    // 3 × 2000 × 1.5 µs on the file, 6000 × 0.2 µs on the pipe.
    assert!((f.measured_s - 0.0102).abs() < 1e-9, "{}", f.measured_s);
    assert_eq!(f.calls, 12_000);
    assert!(f.fix.contains("redirect the whole loop"), "{}", f.fix);
}

#[test]
fn small_sequential_reads_of_a_large_file_and_scattered_ones() {
    let mut seq = target(Kind::File, "/data/big", 1);
    seq.read = flow(4096, 4096, 4096);
    seq.size = 16 << 20;
    let mut scattered = target(Kind::File, "/data/table", 2);
    scattered.read = flow(4096, 4096, 10);
    scattered.size = 1 << 30;
    let mut cat = target(Kind::File, "/data/bigger", 3);
    cat.read = flow(1024, 128 << 10, 1024);
    cat.size = 128 << 20;
    let a = Analysis::new(&trace(vec![seq, scattered, cat]), true);
    let got: Vec<(FindingKind, usize)> = a.patterns.iter().map(|p| (p.kind, p.group)).collect();
    assert_eq!(
        got,
        [(FindingKind::SmallReads, 0), (FindingKind::RandomReads, 1)]
    );
}

#[test]
fn repeats_at_one_offset_and_empty_reads_are_not_scattered() {
    // SQLite: a 24-byte header read again and again at one offset, and empty reads of a
    // journal.
    let mut db = target(Kind::File, "/data/t.db", 1);
    db.size = 1 << 20;
    for i in 0..3000 {
        db.read.add(24, 1000, i, Place::Repeated);
    }
    let mut journal = target(Kind::File, "/data/t.db-journal", 2);
    for i in 0..3000 {
        journal.read.add(0, 1000, i, Place::Scattered);
    }
    assert!(kinds(&trace(vec![db, journal])).is_empty());
}

#[test]
fn one_path_is_one_target_whatever_its_inodes() {
    // A journal made anew for each transaction: 3 inodes, one path, one finding.
    let journals: Vec<Target> = (0..3)
        .map(|i| {
            let mut j = target(Kind::File, "/data/t.db-journal", 10 + i);
            j.write = flow(100, 512, 100);
            j.syncs = 100;
            j
        })
        .collect();
    let a = Analysis::new(&trace(journals), true);
    assert_eq!(a.groups.len(), 1);
    assert_eq!(a.groups[0].members, [0, 1, 2]);
    assert_eq!(a.groups[0].target.syncs, 300);
    assert_eq!(
        a.patterns
            .iter()
            .filter(|p| p.kind == FindingKind::SyncPerRecord)
            .count(),
        1
    );
}

#[test]
fn a_file_read_then_truncated_and_rewritten_whole_but_not_written_then_read() {
    let mut f = target(Kind::File, "/nonexistent/iolab-test/config", 1);
    f.size = 1 << 20;
    f.read = flow_at(256, 4096, 256, 0);
    f.write = flow_at(256, 4096, 256, 1000);
    f.open_flags.trunc = 1;
    assert_eq!(
        kinds(&trace(vec![f.clone()])),
        [FindingKind::WholeFileRewrite]
    );
    let a = Analysis::new(&trace(vec![f.clone()]), true);
    let found = findings(&a, &Costs::default(), Duration::from_secs(1));
    assert!(
        found[0].warnings.iter().any(|w| w.contains("truncated")),
        "{:?}",
        found[0].warnings
    );
    assert!(found[0].fix.contains("in place"), "{}", found[0].fix);
    // `seq 1 100000 > f; wc -l f`: written first, then read.
    f.write = flow_at(256, 4096, 256, 0);
    f.read = flow_at(256, 4096, 256, 1000);
    assert!(kinds(&trace(vec![f])).is_empty());
}

#[test]
fn a_rewrite_at_another_size_is_a_streamed_rewrite() {
    let mut f = target(Kind::File, "/nonexistent/iolab-test/config", 1);
    f.size = 900 << 10;
    f.read = flow_at(256, 4096, 256, 0);
    f.write = flow_at(225, 4096, 225, 1000);
    f.open_flags.trunc = 1;
    let a = Analysis::new(&trace(vec![f]), true);
    assert_eq!(a.needs()[1], Need::BigRead);
    let found = findings(&a, &Costs::default(), Duration::from_secs(1));
    assert!(found[0].fix.contains("rename it over"), "{}", found[0].fix);
}

#[test]
fn estimates_use_the_figures_and_say_their_basis() {
    let mut small = target(Kind::Pipe, "pipe:[1]", 1);
    small.write = flow(10_000, 9, 0);
    let a = Analysis::new(&trace(vec![small]), true);
    let costs = Costs::with_figures(vec![
        (
            Need::SmallWrite {
                kind: Kind::Pipe,
                size: 9,
            },
            Figure::new(2e-6, 0.0, "made up: 2 µs a write"),
        ),
        (
            Need::BufferedWrite {
                kind: Kind::Pipe,
                size: 9,
            },
            Figure::new(0.0, 1e-10, "made up: 10 GB/s"),
        ),
        (
            Need::Syscall,
            Figure::new(1e-7, 0.0, "made up: 100 ns a round trip"),
        ),
    ]);
    let f = &findings(&a, &costs, Duration::from_millis(100))[0];
    // Measured: 10 000 × 1 µs; plus 10 000 round trips of 100 ns.
    assert!((f.measured_s - 0.01).abs() < 1e-9);
    assert!((f.estimated_s - 0.011).abs() < 1e-9);
    // The fix: 90 000 bytes at 10 GB/s (a figure of whole calls: no round trip added).
    let fixed = 9e-6;
    assert!((f.estimated_fixed_s.unwrap() - fixed).abs() < 1e-12);
    assert!((f.saving_s.unwrap() - (0.011 - fixed)).abs() < 1e-12);
    assert!(f.shown, "11 ms of a 0.1 s run");
    assert_eq!(
        f.basis,
        [
            "made up: 2 µs a write",
            "made up: 10 GB/s",
            "made up: 100 ns a round trip"
        ]
    );
    assert!(f.library.contains("StdoutWriter"), "{}", f.library);
    // The same finding in a run of 1 s is a minor one (1.1%).
    let f = &findings(&a, &costs, Duration::from_secs(1))[0];
    assert!(!f.shown);
}

#[test]
fn a_saving_counts_at_most_what_the_calibration_says_when_the_calls_waited() {
    // Writes into a pipe whose reader was slow: 50 µs each, where the calibration says 2.
    let mut slow = target(Kind::Pipe, "pipe:[1]", 1);
    for i in 0..10_000 {
        slow.write.add(9, 50_000, i, Place::Stream);
    }
    let a = Analysis::new(&trace(vec![slow]), true);
    let costs = Costs::with_figures(vec![
        (
            Need::SmallWrite {
                kind: Kind::Pipe,
                size: 9,
            },
            Figure::new(2e-6, 0.0, "made up"),
        ),
        (
            Need::BufferedWrite {
                kind: Kind::Pipe,
                size: 9,
            },
            Figure::new(0.0, 0.0, "made up"),
        ),
    ]);
    let f = &findings(&a, &costs, Duration::from_secs(1))[0];
    assert!((f.estimated_s - 0.5).abs() < 1e-9);
    assert!(
        (f.saving_s.unwrap() - 0.02).abs() < 1e-9,
        "{:?}",
        f.saving_s
    );
    assert!(f.warnings[0].contains("25.0× longer"), "{:?}", f.warnings);
}

/// A pipe written in 1500 writes of 2 bytes, 1 µs each; with `reader`, read in 600 reads
/// of 5 bytes, one of which waited 2 s while the writer slept before it closed the pipe.
fn pipe_of_small_writes(reader: bool) -> Target {
    let mut pipe = target(Kind::Pipe, "pipe:[1]", 1);
    for i in 0..1500 {
        pipe.write.add(2, 1000, i, Place::Stream);
    }
    for i in (0..600).filter(|_| reader) {
        let ns = if i == 599 { 2_000_000_000 } else { 1000 };
        pipe.read.add(5, ns, i, Place::Stream);
    }
    pipe
}

#[test]
fn a_pipes_reader_counts_its_calibrated_reads_not_its_waits() {
    let a = Analysis::new(&trace(vec![pipe_of_small_writes(true)]), true);
    let read = Need::PipeRead {
        size: 2,
        onward: false,
    };
    assert!(a.needs().contains(&read), "{:?}", a.needs());
    // Without the reader's figure: told of, not counted.
    let f = &findings(&a, &Costs::default(), Duration::from_secs(2))[0];
    assert_eq!((f.kind, f.calls), (FindingKind::SmallWrites, 1500));
    assert!((f.measured_s - 0.0015).abs() < 1e-9, "{f:?}");
    assert_eq!(f.estimated_s, f.measured_s);
    assert!(!f.shown, "1.5 ms of a 2 s run");
    assert!(
        f.evidence
            .ends_with("its reader took them in 600 reads of 5 B (2.93 KiB)"),
        "{}",
        f.evidence
    );
    // With it: 2 µs of the reader's CPU time a read, 5 bytes a read at the calibration's
    // pace (as the traced reader). All reads but one go (3000 bytes: one 64 KiB read), at
    // 2 µs each, not their measured 2 s.
    let figures = |per_byte: f64| {
        Costs::with_figures(vec![
            (
                Need::BufferedWrite {
                    kind: Kind::Pipe,
                    size: 2,
                },
                Figure::new(0.0, 0.0, "made up"),
            ),
            (
                read.clone(),
                Figure::new(2e-6, per_byte, "made up: 2 µs a read"),
            ),
        ])
    };
    let f = &findings(&a, &figures(2e-6 / 5.0), Duration::from_secs(2))[0];
    let reader = 599.0 * 2e-6;
    assert!((f.estimated_s - (0.0015 + reader)).abs() < 1e-9, "{f:?}");
    assert!(
        (f.saving_s.unwrap() - (0.0015 + reader)).abs() < 1e-9,
        "{f:?}"
    );
    let basis = f.basis.last().unwrap();
    assert!(basis.starts_with("made up: 2 µs a read"), "{basis}");
    assert!(
        basis.contains("the fix removes 599 reads of the pipe by its reader, which made 600"),
        "{basis}"
    );
    // A calibration whose reader took 20 bytes a read: the traced reader, slowed with its
    // writer by the tracer, made more reads than it would have untraced; 150 count.
    let f = &findings(&a, &figures(2e-6 / 20.0), Duration::from_secs(2))[0];
    let reader = 149.0 * 2e-6;
    assert!(
        (f.saving_s.unwrap() - (0.0015 + reader)).abs() < 1e-9,
        "{f:?}"
    );
}

#[test]
fn a_pipes_untraced_reader_is_said_and_not_counted() {
    let a = Analysis::new(&trace(vec![pipe_of_small_writes(false)]), true);
    assert!(
        !a.needs().iter().any(|n| matches!(n, Need::PipeRead { .. })),
        "{:?}",
        a.needs()
    );
    let costs = Costs::with_figures(vec![
        (
            Need::BufferedWrite {
                kind: Kind::Pipe,
                size: 2,
            },
            Figure::new(0.0, 0.0, "made up"),
        ),
        (
            Need::PipeRead {
                size: 2,
                onward: false,
            },
            Figure::new(2e-6, 4e-7, "made up: 2 µs a read"),
        ),
    ]);
    let f = &findings(&a, &costs, Duration::from_secs(2))[0];
    assert!((f.saving_s.unwrap() - 0.0015).abs() < 1e-9, "{f:?}");
    assert!(
        f.evidence.ends_with(writes::UNTRACED_READER),
        "{}",
        f.evidence
    );
    assert_eq!(f.basis, ["made up"], "nothing of the reader's");
}

#[test]
fn a_rename_over_a_file_finds_the_new_file_even_when_its_inode_number_was_used_before() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    std::fs::write(&path, vec![b'x'; 1 << 20]).unwrap();
    let now = std::fs::metadata(&path).unwrap();
    let key = TargetKey::from_stat(now.dev(), now.ino());
    let with_key = |path: &str| {
        let mut t = target(Kind::File, path, 0);
        t.key = Some(key);
        t.size = 1 << 20;
        t
    };
    // The old file, read whole from 1 ms on.
    let mut old = target(Kind::File, &path.display().to_string(), 1);
    old.size = 1 << 20;
    old.read = flow_at(256, 4096, 256, 1000);
    // A file deleted before the run's end, whose inode number the new file was given.
    let mut deleted = with_key("/nonexistent/iolab-test/deleted");
    deleted.write = flow_at(256, 4096, 256, 0);
    // The new file, written whole after the old one was read, then renamed over it.
    let mut new = with_key("/nonexistent/iolab-test/sedXYZ");
    new.write = flow_at(256, 4096, 256, 2000);
    let a = Analysis::new(&trace(vec![old, deleted, new]), true);
    let rewrite: Vec<&Pattern> = a
        .patterns
        .iter()
        .filter(|p| p.kind == FindingKind::WholeFileRewrite)
        .collect();
    assert_eq!(rewrite.len(), 1, "{:?}", a.patterns);
    assert_eq!((rewrite[0].group, &rewrite[0].partners[..]), (0, &[2][..]));
}

/// A trace whose process 7 runs `exe` and made every call on `targets`.
fn trace_of(exe: &str, mut targets: Vec<Target>) -> Trace {
    for t in &mut targets {
        let calls = t.total_calls().max(t.write.calls + t.read.calls);
        t.by_process.insert(
            7,
            crate::model::Use {
                calls,
                bytes: 0,
                ns: 0,
            },
        );
    }
    let mut trace = trace(targets);
    trace.seen.processes.insert(
        7,
        crate::model::Process {
            pid: 7,
            parent: None,
            exe: exe.into(),
            args: vec![exe.into(), "job.py".into()],
            code: (0, 0),
        },
    );
    trace
}

#[test]
fn a_pythons_own_work_per_flush_counts_at_most_its_time_between_calls() {
    // 10 000 records of 9 B written one by one, 1 µs each, 3 µs of the program's own
    // work between them; the process loaded logging.
    let mut log = target(Kind::File, "/data/app.log", 1);
    for i in 0..10_000 {
        log.write.add(9, 1000, i * 4000, Place::Sequential);
        log.write.add_gap(3000);
    }
    log.opens = 1;
    let mut module = target(
        Kind::File,
        "/usr/lib/python3.11/logging/__pycache__/__init__.cpython-311.pyc",
        2,
    );
    module.read = flow(2, 40_000, 2);
    let trace = trace_of("/usr/bin/python3.11", vec![log, module]);
    let a = Analysis::new(&trace, true);
    let p = &a.patterns[0];
    assert_eq!(p.kind, FindingKind::SmallWrites);
    let runtime = Need::Runtime {
        exe: "/usr/bin/python3.11".into(),
        idiom: Idiom::PythonLogging,
        size: 9,
    };
    assert!(a.needs().contains(&runtime), "{:?}", a.needs());
    let figures = |own: f64| {
        Costs::with_figures(vec![
            (
                Need::SmallWrite {
                    kind: Kind::File,
                    size: 9,
                },
                Figure::new(1e-6, 0.0, "made up: 1 µs a write"),
            ),
            (
                Need::BufferedWrite {
                    kind: Kind::File,
                    size: 9,
                },
                Figure::new(0.0, 0.0, "made up: free"),
            ),
            (runtime.clone(), Figure::new(own, 0.0, "made up: a flush")),
        ])
    };
    let wall = Duration::from_secs(1);
    let f = &findings(&a, &figures(2e-6), wall)[0];
    // The calls: 10 ms; the fix leaves 2 writes of 64 KiB: 9998 flushes of 2 µs go.
    let own = 9998.0 * 2e-6;
    assert!((f.estimated_s - (0.01 + own)).abs() < 1e-9, "{f:?}");
    assert!((f.saving_s.unwrap() - (0.01 + own)).abs() < 1e-9, "{f:?}");
    assert!(f.evidence.contains(writes::LOGGING), "{}", f.evidence);
    assert!(
        f.basis
            .last()
            .unwrap()
            .contains("2.0 µs of the program's own work"),
        "{:?}",
        f.basis
    );
    // A flush dearer than all the time between the calls counts that time.
    let f = &findings(&a, &figures(9e-6), wall)[0];
    assert!((f.saving_s.unwrap() - (0.01 + 9998.0 * 3e-6)).abs() < 1e-9);
    // Without the figure (no calibration), only the calls.
    let f = &findings(&a, &Costs::default(), wall)[0];
    assert_eq!(f.estimated_s, f.measured_s);
    // A native program's flush is not calibrated: nothing is added.
    let native = trace_of("/usr/bin/awk", trace.targets.clone());
    let a = Analysis::new(&native, true);
    assert!(a.patterns[0].runtime.is_none());
}

/// SQLite in autocommit: `n` transactions on /db/t.db, each a journal of its own with 7
/// writes (8720 B, 0.5 µs between calls) and `journal_syncs` syncs; the folder synced `dir_syncs`
/// times, the database once, per transaction; 6 lookups per transaction.
fn sqlite_trace(n: u64, journal_syncs: u64, dir_syncs: u64) -> Trace {
    let mut db = target(Kind::File, "/db/t.db", 1);
    let mut dir = target(Kind::Directory, "/db", 2);
    let mut targets = Vec::new();
    for i in 0..n {
        let mut j = target(Kind::File, "/db/t.db-journal", 100 + i);
        j.opens = 1;
        // SQLite's journal: a header, page numbers and pages (5 of 7 writes small).
        for size in [512, 4, 4096, 4, 4, 4096, 4] {
            j.write.add(size, 2000, i * 50_000, Place::Sequential);
            j.write.add_gap(500);
            j.count(Sys::Pwrite64, 2000, false);
        }
        j.count(Sys::Openat, 5000, false);
        for _ in 0..journal_syncs {
            j.count(Sys::Fdatasync, 100_000, false);
            j.syncs += 1;
        }
        targets.push(j);
        db.count(Sys::Fcntl, 300, false);
        db.write.add(4096, 1000, i * 50_000, Place::Sequential);
        db.write.add_gap(500);
        db.count(Sys::Pwrite64, 1000, false);
        if journal_syncs > 0 {
            db.count(Sys::Fdatasync, 100_000, false);
            db.syncs += 1;
        }
        for _ in 0..dir_syncs {
            dir.count(Sys::Fsync, 50_000, false);
            dir.syncs += 1;
        }
    }
    targets.extend([db, dir]);
    let mut trace = trace(targets);
    for _ in 0..n {
        for path in ["/db/t.db", "/db/t.db", "/db/t.db-journal", "/db/t.db-wal"] {
            trace.seen.lookups.add(Some(path), 400, 0);
        }
    }
    trace
}

#[test]
fn sqlite_in_autocommit_is_known_by_its_files_and_its_level_by_its_syncs() {
    for (journal, dir, level) in [
        (0, 0, "synchronous=OFF"),
        (1, 1, "synchronous=NORMAL"),
        (2, 1, "synchronous=FULL"),
        (2, 2, "synchronous=EXTRA"),
    ] {
        let a = Analysis::new(&sqlite_trace(300, journal, dir), true);
        let f = findings(&a, &Costs::default(), Duration::from_secs(1));
        assert!(!f.is_empty(), "{level}");
        for f in &f {
            assert!(f.fix.starts_with(programs::SQLITE), "{level}: {}", f.fix);
            assert!(f.evidence.contains(level), "{level}: {}", f.evidence);
        }
        let kinds: Vec<_> = f.iter().map(|f| f.kind).collect();
        let syncs = kinds.contains(&FindingKind::SyncPerRecord);
        assert_eq!(syncs, journal > 0, "{level}: {kinds:?}");
        assert!(
            kinds.contains(&FindingKind::StatStorm),
            "{level}: {kinds:?}"
        );
    }
    // One journal for the whole run: no SQLite in autocommit.
    let mut one = target(Kind::File, "/db/t.db-journal", 100);
    one.write = flow(3000, 1000, 3000);
    let groups = group(&trace(vec![target(Kind::File, "/db/t.db", 1), one]));
    assert!(syncs::sqlite(&groups).is_none());
}

#[test]
fn one_transaction_saves_every_call_of_the_others_and_sqlites_work_between_them() {
    let n = 300;
    let a = Analysis::new(&sqlite_trace(n, 0, 0), true);
    let unlink = Need::Unlink {
        dir: std::path::PathBuf::from("/"),
        size: 8720,
    };
    let p = a
        .patterns
        .iter()
        .find(|p| p.kind == FindingKind::StatStorm)
        .unwrap();
    assert!(
        matches!(
            &a.needs()[..],
            [
                Need::Syscall,
                Need::Unlink { size: 8720, .. },
                Need::Churn { .. }
            ]
        ),
        "{:?}",
        a.needs()
    );
    // Per transaction: 8 calls on the journal (its syncs aside), 2 on the database, 4
    // lookups: 14 calls, 21.9 µs in them; 14 gaps of 0.5 µs (the writes' own, the
    // others' their mean).
    let share = (n - 1) as f64 / n as f64;
    assert_eq!(p.count, (14.0 * n as f64 * share).round() as u64);
    let own = p.own.as_ref().unwrap().0;
    assert!(
        (own - 14.0 * 500e-9 * n as f64 * share).abs() < 1e-9,
        "{own}"
    );
    let dir = folder("/db/t.db-journal");
    let unlink = match unlink {
        Need::Unlink { size, .. } => Need::Unlink { dir, size },
        _ => unreachable!(),
    };
    let costs = Costs::with_figures(vec![(unlink, Figure::new(5e-6, 0.0, "made up: 5 µs"))]);
    let f = findings(&a, &costs, Duration::from_secs(1))
        .into_iter()
        .find(|f| f.kind == FindingKind::StatStorm)
        .unwrap();
    let calls_s = 21.9e-6 * n as f64 * share;
    let want = calls_s + own + 5e-6 * (n - 1) as f64;
    assert!((f.saving_s.unwrap() - want).abs() < 1e-9, "{f:?} {want}");
    assert!(
        f.basis.iter().any(|b| b.contains("made up: 5 µs")),
        "{:?}",
        f.basis
    );
    // Under ptrace the calls count at most twice as many of a shell's redirection
    // (calibrated).
    let count = p.count;
    let churn = Need::Churn {
        dir: folder("/db/t.db-journal"),
    };
    let bound = Costs::with_figures(vec![(churn, Figure::new(1e-7, 0.0, "made up: 0.1 µs"))]);
    let a = Analysis::new(&sqlite_trace(n, 0, 0), false);
    let f = findings(&a, &bound, Duration::from_secs(1))
        .into_iter()
        .find(|f| f.kind == FindingKind::StatStorm)
        .unwrap();
    let want = 2.0 * count as f64 * 1e-7 + own;
    assert!((f.saving_s.unwrap() - want).abs() < 1e-9, "{f:?} {want}");
}
