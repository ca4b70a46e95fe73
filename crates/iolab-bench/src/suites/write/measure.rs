//! The `write` suite's measurement: the rows of one sink in interleaved rounds, each run a
//! child process timed until it exits and the pipe is drained, and its delivered bytes
//! checked (the verification).

use super::{ConsumerKind, Entry, Facts, Sink, to_row};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::interrupt;
use crate::progress::Progress;
use crate::results::Row;
use crate::runner::{Outcome, schedule};
use iolab::lab::units::format_bytes;
use iolab::lab::write::Destination;
use std::fs;
use std::io;

/// Per-entry accumulation over the rounds.
#[derive(Default)]
pub(super) struct Accumulator {
    pub(super) wall: Vec<f64>,
    pub(super) user: Vec<f64>,
    pub(super) sys: Vec<f64>,
    pub(super) delivered: Vec<u64>,
    /// The writer's stderr of each run (its `--verbose` report).
    pub(super) reports: Vec<String>,
    /// Context switches per counted run: the writer's, the reader's (voluntary + involuntary).
    pub(super) writer_switches: Vec<f64>,
    pub(super) reader_switches: Vec<f64>,
    pub(super) unavailable: Option<String>,
    pub(super) error: Option<String>,
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
    let rounds = config.warmup + config.runs;
    let order = schedule(entries.len(), rounds);
    let mut acc: Vec<Accumulator> = entries.iter().map(|_| Accumulator::default()).collect();
    let progress = Progress::section(
        &format!("write {}", sink.name()),
        order.len() as u64,
        entries.len(),
        config.progress,
    );
    for (round, j) in order {
        if interrupt::interrupted() {
            break;
        }
        progress.inc();
        let a = &mut acc[j];
        if a.unavailable.is_some() || a.error.is_some() {
            continue;
        }
        let entry = &entries[j];
        progress.set_message(format!(
            "round {}/{rounds}: {}{}",
            round + 1,
            entry.job.name,
            entry
                .buffer
                .map_or(String::new(), |b| format!(" {}", format_bytes(b as u64)))
        ));
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
        if interrupt::interrupted() {
            break;
        }
        let ended_by_reader = entry.endless && outcome.signal == Some(libc::SIGPIPE);
        if !outcome.success() && !ended_by_reader {
            match outcome.unavailable_reason() {
                Some(reason) => a.unavailable = Some(reason),
                None => a.error = Some(outcome.failure_reason()),
            }
            continue;
        }
        let delivered = match delivered(sink, bytes, &outcome) {
            Some(n) => n,
            None => {
                a.error = Some(format!(
                    "cannot tell how many bytes reached {}",
                    sink.name()
                ));
                continue;
            }
        };
        a.delivered.push(delivered);
        a.reports.push(outcome.stderr.clone());
        if round < config.warmup {
            continue;
        }
        a.wall.push(outcome.wall_s);
        a.user.push(outcome.user_s);
        a.sys.push(outcome.sys_s);
        a.writer_switches.push(outcome.switches.total() as f64);
        if let Some(reader) = &outcome.reader {
            a.reader_switches.push(reader.switches.total() as f64);
        }
    }
    progress.finish();
    Ok(entries
        .iter()
        .zip(acc)
        .map(|(e, a)| to_row(sink, bytes, e, a, facts, destination))
        .collect())
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
