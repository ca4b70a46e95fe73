//! The `write` suite's measurement: the rows of one sink in interleaved rounds, each run a
//! child process timed until it exits and the pipe is drained, and its delivered bytes
//! checked (the verification).

use super::{ConsumerKind, Entry, Facts, Sink, to_row};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::results::Row;
use crate::rounds::{Entry as RoundEntry, Role, Rounds, Run, Times, Turn, drive};
use crate::runner::Outcome;
use iolab_lab::units::format_bytes;
use iolab_lab::write::Destination;
use std::fs;
use std::io;

/// One run of a writer.
pub(super) struct WriteSample {
    pub(super) times: Times,
    /// The bytes that reached the sink.
    pub(super) delivered: u64,
    /// The writer's stderr (its `--verbose` report).
    pub(super) report: String,
    /// Context switches (voluntary + involuntary) of the writer, and of the reader.
    pub(super) writer_switches: f64,
    pub(super) reader_switches: Option<f64>,
}

/// Warm-up rounds, then counted rounds, interleaved; every run's delivered bytes checked.
pub(super) fn measure(
    ctx: &mut Context<'_>,
    sink: &Sink,
    bytes: u64,
    entries: &[Entry],
    facts: &Facts,
    destination: &Destination,
) -> Result<Vec<Row>> {
    let config = ctx.config;
    let rounds = Rounds::section(format!("write {}", sink.name()), config).every_run();
    let labels: Vec<RoundEntry> = entries
        .iter()
        .map(|e| {
            let label = match e.buffer {
                Some(b) => format!("{} {}", e.job.name, format_bytes(b as u64)),
                None => e.job.name.clone(),
            };
            let role = if e.job.baseline {
                Role::Baseline
            } else {
                Role::Method
            };
            RoundEntry::new(label, role)
        })
        .collect();
    let tallies = drive(
        ctx,
        &rounds,
        &labels,
        &mut |ctx: &mut Context<'_>, turn: Turn| run_once(ctx, sink, bytes, &entries[turn.job]),
    )?;
    Ok(entries
        .iter()
        .zip(tallies)
        .map(|(e, t)| to_row(sink, bytes, e, t, facts, destination))
        .collect())
}

/// Runs `entry`'s writer once into `sink` (a fresh file for a file sink) and reads how
/// many bytes reached it.
fn run_once(
    ctx: &mut Context<'_>,
    sink: &Sink,
    bytes: u64,
    entry: &Entry,
) -> Result<Run<WriteSample>> {
    if let Sink::File(path) = sink {
        // Fresh file per run (module docs); it is ours, made by SinkFile.
        match fs::remove_file(path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                return Err(Error::io("cannot remove the write suite's sink file", e));
            }
            _ => {}
        }
    }
    let outcome = ctx
        .executor
        .execute(&entry.job)
        .map_err(|e| Error::io("cannot run a benchmark job", e))?;
    let ended_by_reader = entry.endless && outcome.signal == Some(libc::SIGPIPE);
    if !outcome.success() && !ended_by_reader {
        return Ok(match outcome.unavailable_reason() {
            Some(reason) => Run::Unavailable(reason),
            None => Run::Failed(outcome.failure_reason()),
        });
    }
    let Some(delivered) = delivered(sink, bytes, &outcome) else {
        return Ok(Run::Failed(format!(
            "cannot tell how many bytes reached {}",
            sink.name()
        )));
    };
    Ok(Run::Done {
        wall_s: outcome.wall_s,
        right: delivered == bytes,
        sample: WriteSample {
            times: Times::of(&outcome),
            delivered,
            report: outcome.stderr.clone(),
            writer_switches: outcome.switches.total() as f64,
            reader_switches: outcome.reader.as_ref().map(|r| r.switches.total() as f64),
        },
    })
}

/// The bytes that reached the sink in one run.
///
/// `head -c N` counts nothing, so there the writer's report stands, and an endless writer
/// ended by `SIGPIPE` delivered N: `head` closes the pipe only after N bytes (at end of
/// file it would exit without closing early, and the writer would have ended by itself).
pub(super) fn delivered(sink: &Sink, bytes: u64, outcome: &Outcome) -> Option<u64> {
    let reader = outcome.reader.as_ref();
    match sink {
        Sink::Consumer(ConsumerKind::Head) => {
            if reader?.code != Some(0) {
                return None;
            }
            if outcome.signal == Some(libc::SIGPIPE) {
                return Some(bytes);
            }
            reported_bytes(&outcome.stderr)
        }
        Sink::Consumer(_) => reader.and_then(|r| reported_bytes(&r.stderr)),
        Sink::Pipe { .. } => outcome.stdout.trim().parse().ok(),
        Sink::File(path) => fs::metadata(path).ok().map(|m| m.len()),
        Sink::Null => reported_bytes(&outcome.stderr),
    }
}

/// The byte count a writer reports on stderr: `iolab: wrote N bytes …` (`iolab write
/// --verbose`), `N bytes (…) copied, …` (`dd`), or a bare `N` (`pv -n -b`); the last such
/// line wins.
pub fn reported_bytes(stderr: &str) -> Option<u64> {
    stderr.lines().rev().find_map(|line| {
        let line = line.trim();
        let number = match line.strip_prefix("iolab: wrote ") {
            Some(rest) => rest.split_whitespace().next()?,
            None => line.split_whitespace().next()?,
        };
        number.parse().ok()
    })
}
