//! The rules on made-up traces: each pattern fires on its shape and not on the
//! well-behaved one next to it.

use super::*;
use crate::costs::Figure;
use crate::model::{Flow, Place, TargetKey};

fn target(kind: Kind, path: &str) -> Target {
    Target::new(
        Some(TargetKey {
            major: 254,
            minor: 0,
            ino: path.len() as u64,
        }),
        Some(kind),
        path,
    )
}

fn flow(calls: u64, each: u64, sequential: u64) -> Flow {
    let mut f = Flow::default();
    for i in 0..calls {
        let place = if i < sequential {
            Place::Sequential
        } else {
            Place::Scattered
        };
        f.add(each, 1000, i * 2000, place);
    }
    f
}

fn kinds(trace: &Trace) -> Vec<FindingKind> {
    detect(trace, true).iter().map(|p| p.kind).collect()
}

#[test]
fn small_writes_to_a_pipe_but_not_big_ones() {
    let mut small = target(Kind::Pipe, "pipe:[1]");
    small.write = flow(5000, 9, 0);
    let mut big = target(Kind::Pipe, "pipe:[22]");
    big.write = flow(5000, 65536, 0);
    let mut few = target(Kind::Pipe, "pipe:[333]");
    few.write = flow(999, 9, 0);
    let trace = Trace {
        targets: vec![small, big, few],
        ..Trace::default()
    };
    let found = detect(&trace, true);
    assert_eq!(found.len(), 1);
    assert_eq!(
        (found[0].kind, found[0].target),
        (FindingKind::SmallWrites, 0)
    );
}

#[test]
fn a_sync_per_record_replaces_small_writes() {
    let mut log = target(Kind::File, "/tmp/log");
    log.write = flow(200, 100, 200);
    log.syncs = 200;
    let trace = Trace {
        targets: vec![log.clone()],
        ..Trace::default()
    };
    assert_eq!(kinds(&trace), [FindingKind::SyncPerRecord]);
    // One sync at the end of many writes is fine.
    log.write = flow(5000, 4096, 5000);
    log.syncs = 1;
    let trace = Trace {
        targets: vec![log],
        ..Trace::default()
    };
    assert!(kinds(&trace).is_empty());
}

#[test]
fn small_sequential_reads_of_a_large_file_and_scattered_ones() {
    let mut seq = target(Kind::File, "/data/big");
    seq.read = flow(4096, 4096, 4096);
    seq.size = 16 << 20;
    let mut scattered = target(Kind::File, "/data/table");
    scattered.read = flow(4096, 4096, 10);
    scattered.size = 1 << 30;
    let mut cat = target(Kind::File, "/data/bigger");
    cat.read = flow(1024, 128 << 10, 1024);
    cat.size = 128 << 20;
    let trace = Trace {
        targets: vec![seq, scattered, cat],
        ..Trace::default()
    };
    let found = detect(&trace, true);
    let got: Vec<(FindingKind, usize)> = found.iter().map(|p| (p.kind, p.target)).collect();
    assert_eq!(
        got,
        [(FindingKind::SmallReads, 0), (FindingKind::RandomReads, 1)]
    );
}

#[test]
fn a_file_truncated_and_rewritten_whole() {
    let mut f = target(Kind::File, "/nonexistent/iolab-test/config");
    f.size = 1 << 20;
    f.read = flow(256, 4096, 256);
    f.write = flow(256, 4096, 256);
    f.open_flags.trunc = 1;
    let trace = Trace {
        targets: vec![f],
        ..Trace::default()
    };
    assert_eq!(kinds(&trace), [FindingKind::WholeFileRewrite]);
}

#[test]
fn estimates_use_the_figures_and_say_their_basis() {
    let mut small = target(Kind::Pipe, "pipe:[1]");
    small.write = flow(10_000, 9, 0);
    let trace = Trace {
        targets: vec![small],
        ..Trace::default()
    };
    let patterns = detect(&trace, true);
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
    ]);
    let f = findings(&patterns, &trace, &costs);
    assert_eq!(f.len(), 1);
    assert!((f[0].estimated_s.unwrap() - 0.02).abs() < 1e-9);
    assert!((f[0].estimated_fixed_s.unwrap() - 9e-6).abs() < 1e-12);
    assert_eq!(f[0].basis, ["made up: 2 µs a write", "made up: 10 GB/s"]);
    assert!(f[0].library.contains("StdoutWriter"), "{}", f[0].library);
}
