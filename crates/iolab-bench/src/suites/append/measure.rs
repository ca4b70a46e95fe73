//! The `append` suite's measurement: iolab's strategies run in this process, one at a
//! time, in interleaved rounds; the timer covers the library's append loop and the final
//! flush or sync ([`iolab::lab::append::append_records`] hands it over without the `open`), and
//! the thread's write-family system calls are read around it.

use std::fs;
use std::io;
use std::path::Path;
use std::time::Instant;

use super::data::Records;
use super::fstream::{self, FSTREAM, Fstream};
use super::verify::{WRONG, verify};
use super::{Section, Strategy, rows};
use crate::context::Context;
use crate::error::Result;
use crate::file_bench::CannotWin;
use crate::interrupt;
use crate::progress::Progress;
use crate::results::Row;
use crate::runner::schedule;
use crate::workdir::WorkDir;
use iolab::lab::append::{Syncs, append_records};

/// One run's figures.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sample {
    pub(super) wall_s: f64,
    pub(super) user_s: f64,
    pub(super) sys_s: f64,
    /// Write-family system calls, when `/proc/thread-self/io` can be read.
    pub(super) write_calls: Option<u64>,
}

/// What a row's runs gathered.
#[derive(Default)]
pub(super) struct Accumulator {
    pub(super) wall: Vec<f64>,
    pub(super) user: Vec<f64>,
    pub(super) sys: Vec<f64>,
    pub(super) write_calls: Vec<u64>,
    pub(super) calls_unknown: bool,
    pub(super) error: Option<String>,
    pub(super) wrong: Option<String>,
    pub(super) checked: usize,
    /// Its fastest run so far, warm-up included.
    pub(super) fastest: Option<f64>,
    /// Stopped early: it cannot win ([`CANNOT_WIN`](crate::file_bench::CANNOT_WIN)).
    pub(super) stopped: bool,
}

/// A job of a section: one of ours, or the baseline.
#[derive(Clone, Copy)]
pub(super) enum Contender<'a> {
    Ours(Strategy),
    Baseline(&'a Fstream),
}

impl Contender<'_> {
    pub(super) fn name(&self) -> &'static str {
        match self {
            Contender::Ours(s) => s.name(),
            Contender::Baseline(_) => FSTREAM,
        }
    }
}

pub(super) fn section(
    ctx: &mut Context<'_>,
    work: &mut WorkDir,
    section: &Section,
    strategies: &[Strategy],
    baseline: Option<&Fstream>,
) -> Result<Vec<Row>> {
    let config = ctx.config;
    let mut contenders: Vec<Contender<'_>> =
        strategies.iter().map(|&s| Contender::Ours(s)).collect();
    contenders.extend(baseline.map(Contender::Baseline));
    let records = Records::new(section.payload);
    let rounds = config.warmup + config.runs;
    let order = schedule(contenders.len(), rounds);
    let mut acc: Vec<Accumulator> = contenders.iter().map(|_| Accumulator::default()).collect();
    let mut rule = CannotWin::new(config.sweep);
    let progress = Progress::section(
        &format!("append {}B {}", section.payload, section.sync.name()),
        order.len() as u64,
        contenders.len(),
        config.progress,
    );
    for (round, j) in order {
        if interrupt::interrupted() {
            break;
        }
        progress.inc();
        let a = &mut acc[j];
        let contender = contenders[j];
        let ours = matches!(contender, Contender::Ours(_));
        if a.error.is_some() || a.stopped {
            continue;
        }
        if ours && rule.stops(a.fastest, a.wall.len()) {
            a.stopped = true;
            continue;
        }
        progress.set_message(format!(
            "round {}/{rounds}: {}",
            round + 1,
            contender.name()
        ));
        let path = work.file(&format!("{}-{round}", contender.name()));
        let outcome = match contender {
            Contender::Ours(strategy) => run_strategy(strategy, &path, section, &records)
                .map_err(|e| format!("{}: {}", path.display(), iolab::lab::error::describe_io(&e))),
            Contender::Baseline(fstream) => fstream::run(ctx, fstream, &path, section)?,
        };
        if interrupt::interrupted() {
            work.remove(&path);
            break;
        }
        let checked = outcome.and_then(|sample| verify(&path, section, &records).map(|()| sample));
        work.remove(&path);
        match checked {
            Ok(sample) => {
                a.checked += 1;
                a.fastest = Some(a.fastest.map_or(sample.wall_s, |f| f.min(sample.wall_s)));
                if ours {
                    rule.saw(sample.wall_s);
                }
                if round < config.warmup {
                    continue;
                }
                a.wall.push(sample.wall_s);
                a.user.push(sample.user_s);
                a.sys.push(sample.sys_s);
                match sample.write_calls {
                    Some(calls) => a.write_calls.push(calls),
                    None => a.calls_unknown = true,
                }
            }
            Err(e) if e.starts_with(WRONG) => a.wrong = Some(e),
            Err(e) => a.error = Some(e),
        }
    }
    progress.finish();
    Ok(contenders
        .iter()
        .zip(acc)
        .map(|(c, a)| rows::to_row(section, c, a))
        .collect())
}

/// Appends `section.records` records to a new file at `path` with `strategy` and times it.
fn run_strategy(
    strategy: Strategy,
    path: &Path,
    section: &Section,
    records: &Records,
) -> io::Result<Sample> {
    let syncs = Syncs::every(section.records, section.sync.interval());
    append_records(strategy, path, syncs, |i| records.get(i), timed)
}

/// Runs `work` and measures it: wall time, this thread's CPU times and write calls.
fn timed(work: &mut dyn FnMut() -> io::Result<()>) -> io::Result<Sample> {
    let calls_before = thread_write_calls();
    let cpu_before = thread_cpu_s();
    let start = Instant::now();
    work()?;
    let wall_s = start.elapsed().as_secs_f64();
    let cpu_after = thread_cpu_s();
    let calls_after = thread_write_calls();
    Ok(Sample {
        wall_s,
        user_s: cpu_after.0 - cpu_before.0,
        sys_s: cpu_after.1 - cpu_before.1,
        write_calls: calls_after
            .zip(calls_before)
            .map(|(after, before)| after.saturating_sub(before)),
    })
}

/// This thread's `syscw`: the write-family system calls it has made (reading the file
/// makes only `read`-family calls, so it does not count itself).
pub(super) fn thread_write_calls() -> Option<u64> {
    let text = fs::read_to_string("/proc/thread-self/io").ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix("syscw:"))
        .and_then(|v| v.trim().parse().ok())
}

/// This thread's user and system CPU seconds.
fn thread_cpu_s() -> (f64, f64) {
    cpu_s(libc::RUSAGE_THREAD)
}

/// User and system CPU seconds of `who` (`RUSAGE_THREAD` or `RUSAGE_SELF`, the whole
/// process: every thread, living or joined).
pub(super) fn cpu_s(who: libc::c_int) -> (f64, f64) {
    // SAFETY: all-zero is a valid `rusage`.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is valid for writes; RUSAGE_THREAD is supported since Linux 2.6.26.
    let rc = unsafe { libc::getrusage(who, &mut usage) };
    if rc != 0 {
        return (0.0, 0.0);
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(usage.ru_utime), s(usage.ru_stime))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::append::{SYNC_EVERY_K, SyncPolicy};

    #[test]
    fn every_strategy_writes_exactly_the_records_and_counts_its_write_calls() {
        let dir = tempfile::tempdir().unwrap();
        for sync in [SyncPolicy::None, SyncPolicy::EveryK] {
            let section = Section {
                payload: 7,
                records: SYNC_EVERY_K + 3,
                sync,
            };
            let records = Records::new(section.payload);
            for strategy in Strategy::ALL {
                let path = dir
                    .path()
                    .join(format!("{}-{}", strategy.name(), sync.name()));
                let sample = run_strategy(strategy, &path, &section, &records).unwrap();
                verify(&path, &section, &records).unwrap();
                if let Some(calls) = sample.write_calls {
                    match strategy {
                        Strategy::WritePerRecord => assert_eq!(calls, section.records),
                        _ => assert!(calls < section.records / 10, "{strategy:?}: {calls}"),
                    }
                }
            }
        }
    }
}
