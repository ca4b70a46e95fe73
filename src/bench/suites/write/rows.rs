//! The `write` suite's rows: timings, the sink's keys and the buffer notes.

use super::*;

pub(super) fn to_row(
    sink: &Sink,
    bytes: u64,
    entry: &Entry,
    a: Accumulator,
    facts: &Facts,
    destination: &Destination,
) -> Row {
    let mut row = sink_row(
        sink,
        bytes,
        &entry.job.name,
        entry.buffer,
        entry.job.baseline,
        a.unavailable,
    );
    row.version = entry.version.clone();
    if entry.method == Some(Method::Bufwriter) {
        row.extra.insert("record_bytes".into(), json!(RECORD_SIZE));
    }
    if row.unavailable.is_some() {
        return row;
    }
    if let Some(buffer) = entry.buffer {
        row.notes
            .push(buffer_note(buffer, entry, facts, destination));
    }
    row.error = a.error;
    row.set_timings(&a.wall, &a.user, &a.sys);
    let wrong = a.delivered.iter().find(|&&n| n != bytes);
    row.verified = !a.wall.is_empty() && wrong.is_none();
    row.result = a.delivered.last().map(|n| n.to_string());
    if let Some(bad) = wrong {
        row.error.get_or_insert(format!(
            "wrong result: {bad} bytes reached {}, expected {bytes}",
            sink.name()
        ));
    }
    row
}

/// `buffer 32.0 KiB = L1d, iolab default`: the size and what it coincides with.
pub(super) fn buffer_note(
    buffer: usize,
    entry: &Entry,
    facts: &Facts,
    destination: &Destination,
) -> String {
    let mut marks = Vec::new();
    if facts.l1d == Some(buffer as u64) {
        marks.push("L1d".to_string());
    }
    if destination.block_size > 0 && destination.block_size * 32 == buffer as u64 {
        marks.push("st_blksize × 32".to_string());
    }
    if entry.method.is_some() && write::default_buffer_size(destination) == buffer {
        marks.push("iolab default".to_string());
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
    if let Sink::Pipe { capacity, cpus, .. } = sink {
        if let Some(c) = capacity {
            row.extra.insert("pipe_capacity_bytes".into(), json!(c));
        }
        row.extra
            .insert("reader".into(), json!(runner::PIPE_READER));
        row.extra.insert("cpus".into(), json!(cpus.name()));
    }
    row
}
