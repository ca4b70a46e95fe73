//! The `write` suite's rows: timings, the sink's keys and the buffer notes.

use super::measure::WriteSample;
use super::{Entry, Facts, SUITE, Sink};
use crate::results::{Row, keys};
use crate::rounds::{Tally, set_times};
use crate::runner::{self, CpuPlacement};
use iolab_lab::units::format_bytes;
use iolab_lab::write::{self, Destination, DestinationKind, Method, RECORD_SIZE};
use serde_json::json;

pub(super) fn to_row(
    sink: &Sink,
    bytes: u64,
    entry: &Entry,
    t: Tally<WriteSample>,
    facts: &Facts,
    destination: &Destination,
) -> Row {
    let mut row = sink_row(
        sink,
        bytes,
        &entry.job.name,
        entry.buffer,
        entry.job.baseline,
        t.unavailable.clone(),
    );
    row.version = entry.version.clone();
    if entry.method == Some(Method::Bufwriter) {
        row.extra.insert("record_bytes".into(), json!(RECORD_SIZE));
    }
    if entry.method == Some(Method::RawFd) {
        // Not the default's job either: `StdoutWriter` copies each record a program makes.
        row.extra.insert(
            keys::NARROWER.into(),
            json!(
                "it writes one buffer that is already full (zeros) over and over: no byte is \
                 copied in user space, where a program's records are copied into its writer's \
                 buffer (docs/findings/write.md)"
            ),
        );
    }
    if entry.method == Some(Method::Vmsplice) {
        // Not the default's job: the default lends the pipe its own buffers' pages too, but
        // copies a program's records into them first.
        row.extra.insert(
            keys::NARROWER.into(),
            json!(
                "it hands the pipe one region of zeros that is never written again; the \
                 default lends its pages the same way, after copying the program's records \
                 into them"
            ),
        );
    }
    if row.unavailable.is_some() {
        return row;
    }
    match entry.buffer {
        Some(buffer) => row.notes.push(buffer_note(buffer, facts, destination)),
        None if entry.method.is_some() => {
            row.extra.insert("auto_buffer".into(), json!(true));
            let reports: Vec<String> = t
                .warmup
                .iter()
                .chain(&t.counted)
                .map(|s| s.report.clone())
                .collect();
            let (note, buffer) = default_note(entry, &reports, facts, destination);
            if let Some(b) = buffer {
                row.extra.insert("buffer_bytes".into(), json!(b));
            }
            row.notes.push(note);
        }
        None => {}
    }
    row.error = t.error;
    set_times(&mut row, t.counted.iter().map(|s| s.times));
    // Context switches per GiB moved, median over the counted runs: how often each side
    // slept on the pipe (or was preempted); the module docs explain what they show.
    let per_gib = |runs: &[f64]| {
        crate::stats::Summary::of(runs)
            .map(|s| (s.median * (1u64 << 30) as f64 / bytes as f64).round())
    };
    let writer: Vec<f64> = t.counted.iter().map(|s| s.writer_switches).collect();
    let reader: Vec<f64> = t.counted.iter().filter_map(|s| s.reader_switches).collect();
    if let Some(w) = per_gib(&writer) {
        row.extra.insert("writer_switches_per_gib".into(), json!(w));
    }
    if let Some(r) = per_gib(&reader) {
        row.extra.insert("reader_switches_per_gib".into(), json!(r));
    }
    let delivered: Vec<u64> = t
        .warmup
        .iter()
        .chain(&t.counted)
        .map(|s| s.delivered)
        .collect();
    let wrong = delivered.iter().find(|&&n| n != bytes);
    row.verified = !t.counted.is_empty() && wrong.is_none();
    row.result = delivered.last().map(|n| n.to_string());
    if let Some(bad) = wrong {
        row.error.get_or_insert(format!(
            "wrong result: {bad} bytes reached {}, expected {bytes}",
            sink.name()
        ));
    }
    row
}

/// The note of a method's default row, and the buffer it used most: the adaptive split as
/// the writer reported it (`iolab write --verbose`), else the default rule's size.
fn default_note(
    entry: &Entry,
    reports: &[String],
    facts: &Facts,
    destination: &Destination,
) -> (String, Option<usize>) {
    if let Some(split) = reports.iter().rev().find_map(|r| reported_sizes(r)) {
        let [(small, sp), (large, lp)] = split;
        let most = if sp >= lp { small } else { large };
        let note = format!(
            "iolab default: adaptive writes, {} for {sp}% of the bytes, {} for {lp}% (last run)",
            format_bytes(small as u64),
            format_bytes(large as u64)
        );
        return (note, Some(most));
    }
    let lends = reports.iter().any(|r| r.contains("; lent pages: "));
    let buffer = match entry.method {
        // `StdoutWriter::new()` into a pipe lends its pages in vmsplice's chunks.
        Some(Method::Vmsplice | Method::Bufwriter)
            if destination.kind == DestinationKind::Pipe
                && (lends || entry.method == Some(Method::Vmsplice)) =>
        {
            let capacity = facts.pipe_max.map_or(destination.pipe_capacity, |m| {
                Some(m.min(write::vmsplice::DEFAULT_PIPE_CAPACITY))
            });
            write::vmsplice::default_chunk(&Destination {
                pipe_capacity: capacity,
                ..*destination
            })
        }
        _ => write::default_buffer(destination).0,
    };
    let how = match lends {
        true => "pages lent to the pipe (vmsplice), ",
        false => "",
    };
    (
        format!("iolab default: {how}buffer {}", format_bytes(buffer as u64)),
        Some(buffer),
    )
}

/// The adaptive split `iolab write --verbose` reports (`adaptive writes: 8192 bytes for
/// 97%, 65536 for 3%`): each size and its share of the bytes in percent.
pub(crate) fn reported_sizes(stderr: &str) -> Option<[(usize, u64); 2]> {
    let rest = stderr.split("adaptive writes: ").nth(1)?;
    let numbers: Vec<u64> = rest
        .split(|c: char| !c.is_ascii_digit())
        .filter(|t| !t.is_empty())
        .take(4)
        .map(|t| t.parse().ok())
        .collect::<Option<_>>()?;
    match numbers[..] {
        [s, sp, l, lp] => Some([(s as usize, sp), (l as usize, lp)]),
        _ => None,
    }
}

/// `buffer 32.0 KiB = L1d`: the size and what it coincides with. (The defaults have rows
/// of their own, [`default_note`].)
pub(super) fn buffer_note(buffer: usize, facts: &Facts, destination: &Destination) -> String {
    let mut marks = Vec::new();
    if facts.l1d == Some(buffer as u64) {
        marks.push("L1d".to_string());
    }
    if destination.block_size > 0 && destination.block_size * 32 == buffer as u64 {
        marks.push("st_blksize × 32".to_string());
    }
    let size = format_bytes(buffer as u64);
    if marks.is_empty() {
        format!("buffer {size}")
    } else {
        format!("buffer {size} = {}", marks.join(", "))
    }
}

/// A row of the sink with its keys, not yet measured.
pub(super) fn sink_row(
    sink: &Sink,
    bytes: u64,
    method: &str,
    buffer: Option<usize>,
    baseline: bool,
    unavailable: Option<String>,
) -> Row {
    let mut row = Row {
        suite: SUITE.into(),
        method: method.into(),
        baseline,
        bytes,
        unavailable,
        ..Row::default()
    };
    row.extra.insert("sink".into(), json!(sink.name()));
    if let Some(b) = buffer {
        row.extra.insert("buffer_bytes".into(), json!(b));
    }
    match sink {
        Sink::Pipe { capacity, cpus, .. } => {
            if let Some(c) = capacity {
                row.extra.insert("pipe_capacity_bytes".into(), json!(c));
            }
            row.extra
                .insert("reader".into(), json!(runner::PIPE_READER));
            row.extra.insert("cpus".into(), json!(cpus.name()));
        }
        Sink::Consumer(kind) => {
            row.extra.insert("reader".into(), json!(kind.command()));
            row.extra
                .insert("cpus".into(), json!(CpuPlacement::Free.name()));
        }
        Sink::Null | Sink::File(_) => {}
    }
    if sink.diagnostic() {
        row.extra.insert("role".into(), json!("diagnostic"));
    }
    row
}
