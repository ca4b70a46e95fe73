//! Reads made the slow way: small sequential reads of a large file (`small-reads`), and
//! reads at scattered offsets one at a time (`random-reads`).
//!
//! - `small-reads`: the fix reads the same bytes in [`FIX_BLOCK`] pieces; a read's time may
//!   hold a wait for the disk that bigger reads keep, so the saving counts at most what the
//!   calibration says the same reads of a cached file cost.
//! - `random-reads`: only the scattered reads count (a header read again at one offset,
//!   and reads that moved nothing, are not scattered); the fix keeps many in flight
//!   (`uring` at depth 32) or maps the file: the random suite's winner, from its results
//!   or calibrated (cold: with `O_DIRECT` in the file's folder).

use super::{
    COLD_READ_NS, Estimate, FindingKind, Group, LARGE_FILE, MIN_CALLS, MIN_REWRITE,
    RANDOM_READ_MAX, SCATTERED, SEQUENTIAL, SMALL_READ, SMALL_SHARE, TWICE, calls_text, folder,
    in_calls,
};
use crate::costs::{Costs, Need};
use crate::model::{Kind, Target};
use iolab_lab::snippet;

/// Reads of `t` that moved data.
fn moved(t: &Target) -> u64 {
    t.read.calls - t.read.empty()
}

pub(super) fn detect(groups: &[Group], exact_times: bool, out: &mut Vec<super::Pattern>) {
    for (g, group) in groups.iter().enumerate() {
        let t = &group.target;
        let r = &t.read;
        if t.kind_or_other() != Kind::File || r.calls < MIN_CALLS {
            continue;
        }
        let large = t.size.max(r.bytes) >= LARGE_FILE;
        if large && r.share_below(SMALL_READ) >= SMALL_SHARE && r.sequential_share() >= SEQUENTIAL {
            out.push(super::Pattern::new(FindingKind::SmallReads, g));
        }
        let scattered = r.scattered();
        let average = r.bytes as f64 / moved(t).max(1) as f64;
        if scattered >= MIN_CALLS
            && scattered as f64 >= SCATTERED * moved(t) as f64
            && average <= RANDOM_READ_MAX
        {
            let per_read = r.ns as f64 / r.calls as f64;
            let mut p = super::Pattern::new(FindingKind::RandomReads, g);
            p.cold = exact_times && per_read > COLD_READ_NS;
            out.push(p);
        }
    }
}

pub(super) fn needs(p: &super::Pattern, t: &Target) -> Vec<Need> {
    match p.kind {
        FindingKind::SmallReads => vec![
            Need::SmallRead {
                size: t.read.average().round() as u64,
            },
            Need::BigRead,
        ],
        _ => {
            let dir = folder(&t.path);
            vec![
                Need::RandomRead {
                    cold: p.cold,
                    dir: dir.clone(),
                },
                Need::BestRandomRead { cold: p.cold, dir },
            ]
        }
    }
}

pub(super) fn small_reads<'a>(t: &Target, costs: &'a Costs) -> Estimate<'a> {
    let r = &t.read;
    let small = costs.get(&Need::SmallRead {
        size: r.average().round() as u64,
    });
    let big = costs.get(&Need::BigRead);
    let mut e = Estimate {
        calls: r.calls,
        bytes: r.bytes,
        evidence: format!(
            "{} of a {} file, {:.0}% sequential, {}",
            calls_text(r.calls, "read", r.bytes),
            iolab_lab::units::format_bytes(t.size.max(r.bytes)),
            r.sequential_share() * 100.0,
            in_calls(r.ns)
        ),
        measured_ns: r.ns,
        measured_calls: r.calls,
        calibrated: small.map(|f| f.cost(r.calls, r.bytes)),
        bounded: true,
        fixed: big.map(|f| f.cost(0, r.bytes)),
        figures: [small, big].into_iter().flatten().collect(),
        warnings: Vec::new(),
        fix: "read in large pieces (128 KiB or more per call), or with the count suite's winner"
            .into(),
        cli: "iolab count FILE".into(),
        library: snippet::big_reads(128 << 10),
    };
    if let Some(f) = big {
        if let Some(c) = &f.cli {
            e.cli.clone_from(c);
        }
        if let Some(l) = &f.library {
            e.library.clone_from(l);
        }
    }
    e
}

pub(super) fn random_reads<'a>(p: &super::Pattern, t: &Target, costs: &'a Costs) -> Estimate<'a> {
    let r = &t.read;
    let n = r.scattered();
    let dir = folder(&t.path);
    let one = costs.get(&Need::RandomRead {
        cold: p.cold,
        dir: dir.clone(),
    });
    let best = costs.get(&Need::BestRandomRead { cold: p.cold, dir });
    // The scattered reads' share of the time (the others are not what the fix changes).
    let ns = (r.ns as f64 * n as f64 / r.calls.max(1) as f64) as u64;
    let mut e = Estimate {
        calls: n,
        bytes: r.bytes,
        evidence: format!(
            "{} of {}, {n} of them at scattered offsets ({} where the last read ended, {} again where it started, {} empty), one at a time, {}{}",
            calls_text(r.calls, "read", r.bytes),
            iolab_lab::units::format_bytes(t.size),
            r.sequential,
            r.repeated,
            r.empty(),
            in_calls(r.ns),
            if p.cold { ", missing the page cache" } else { "" }
        ),
        measured_ns: ns,
        measured_calls: n,
        calibrated: one.map(|f| f.cost(n, 0)),
        bounded: false,
        fixed: best.map(|f| f.cost(n, 0)),
        figures: [one, best].into_iter().flatten().collect(),
        warnings: Vec::new(),
        fix: "issue the reads together (io_uring at depth) or map the file, as the random suite's winner does".into(),
        cli: "iolab random --method uring --queue-depth 32 FILE".into(),
        library: snippet::random(iolab_lab::random::Method::Pread, 4096, 1, 1),
    };
    if let Some(f) = best {
        if let Some(c) = &f.cli {
            e.cli.clone_from(c);
        }
        if let Some(l) = &f.library {
            e.library.clone_from(l);
        }
    }
    e
}

/// `read-twice`: files read sequentially [`TWICE`] times over or more.
pub(super) fn detect_twice(groups: &[Group], out: &mut Vec<super::Pattern>) {
    for (g, group) in groups.iter().enumerate() {
        let t = &group.target;
        let r = &t.read;
        if t.kind_or_other() == Kind::File
            && t.size >= MIN_REWRITE
            && r.bytes as f64 >= TWICE * t.size as f64
            // One process reading it again (many compilers each reading a header once is
            // not a program to fix).
            && t.by_process.len() <= 1
            && r.sequential as f64 >= SEQUENTIAL * moved(t) as f64
        {
            out.push(super::Pattern::new(FindingKind::ReadTwice, g));
        }
    }
}

/// `read-twice`: the passes after the first are what the fix saves.
pub(super) fn read_twice<'a>(t: &Target) -> Estimate<'a> {
    let r = &t.read;
    let extra = 1.0 - t.size as f64 / r.bytes.max(1) as f64;
    let calls = (r.calls as f64 * extra).round() as u64;
    Estimate {
        calls: r.calls,
        bytes: r.bytes,
        evidence: format!(
            "{} of a {} file: {:.1} times over, {:.0}% sequential, through {} opens; {}",
            calls_text(r.calls, "read", r.bytes),
            iolab_lab::units::format_bytes(t.size),
            r.bytes as f64 / t.size.max(1) as f64,
            r.sequential as f64 * 100.0 / moved(t).max(1) as f64,
            t.opens,
            in_calls(r.ns)
        ),
        measured_ns: (r.ns as f64 * extra) as u64,
        measured_calls: calls,
        calibrated: None,
        bounded: false,
        fixed: Some(0.0),
        figures: Vec::new(),
        warnings: Vec::new(),
        fix: "read the file once and keep its bytes (or map it once and read the map again)".into(),
        cli: "iolab count FILE".into(),
        library: "let bytes = std::fs::read(path)?; // once; every pass reads `bytes`".into(),
    }
}
