//! The `append` suite's measurement: iolab's strategies run in this process, one at a
//! time, in interleaved rounds; the timer covers the library's append loop and the final
//! flush or sync ([`iolab_lab::append::append_records`] hands it over without the `open`), and
//! the thread's write-family system calls are read around it.

use std::fs;
use std::io;
use std::path::Path;

use super::data::Records;
use super::fstream::{self, FSTREAM, Fstream};
use super::verify::{WRONG, verify};
use super::{Contender, Sample, Section, Strategy, rows};
use crate::context::Context;
use crate::error::Result;
use crate::results::Row;
use crate::rounds::{Entry, Role, Rounds, Run, Times, Turn, drive};
use crate::workdir::WorkDir;
use iolab_lab::append::{Syncs, append_file_records, append_records};
use iolab_lab::units::format_bytes;

/// Measures `strategies` (and the `fstream` baseline, when given) on `section`: warm-up
/// rounds, then counted rounds, interleaved; every run's file is verified, then removed.
pub(super) fn section(
    ctx: &mut Context<'_>,
    work: &mut WorkDir,
    section: &Section,
    (strategies, sizes): (&[Strategy], &[usize]),
    baseline: Option<&Fstream>,
) -> Result<Vec<Row>> {
    let config = ctx.config;
    let mut contenders: Vec<Contender<'_>> =
        strategies.iter().map(|&s| Contender::Ours(s)).collect();
    contenders.extend(sizes.iter().map(|&bytes| Contender::Sized(bytes)));
    contenders.extend(baseline.map(Contender::Baseline));
    let records = Records::new(section.payload);
    let title = format!("append {}B {}", section.payload, section.sync.name());
    let rounds = Rounds::section(title, config);
    let entries: Vec<Entry> = contenders
        .iter()
        .map(|c| match c {
            Contender::Ours(s) => Entry::new(s.name(), Role::Method),
            Contender::Sized(bytes) => Entry::new(
                format!("{} {}", c.name(), format_bytes(*bytes as u64)),
                Role::Method,
            ),
            Contender::Baseline(_) => Entry::new(FSTREAM, Role::Baseline),
        })
        .collect();
    let tallies = drive(
        ctx,
        &rounds,
        &entries,
        &mut |ctx: &mut Context<'_>, turn: Turn| {
            let contender = contenders[turn.job];
            let path = work.file(&format!("{}-{}", contender.name(), turn.round));
            let outcome = match contender {
                Contender::Ours(strategy) => run_strategy(Ok(strategy), &path, section, &records)
                    .map_err(|e| {
                        format!("{}: {}", path.display(), iolab_lab::error::describe_io(&e))
                    }),
                Contender::Sized(bytes) => run_strategy(Err(bytes), &path, section, &records)
                    .map_err(|e| {
                        format!("{}: {}", path.display(), iolab_lab::error::describe_io(&e))
                    }),
                Contender::Baseline(fstream) => fstream::run(ctx, fstream, &path, section)?,
            };
            let checked =
                outcome.and_then(|sample| verify(&path, section, &records).map(|()| sample));
            work.remove(&path);
            Ok(match checked {
                Ok(sample) => Run::done(sample, sample.times.wall_s),
                Err(e) if e.starts_with(WRONG) => Run::Wrong(e),
                Err(e) => Run::Failed(e),
            })
        },
    )?;
    Ok(contenders
        .iter()
        .zip(tallies)
        .map(|(c, t)| rows::to_row(section, c, t))
        .collect())
}

/// Appends `section.records` records to a new file at `path` with `strategy` (or, `Err`,
/// `AppendFile` with a buffer of that many bytes) and times it.
fn run_strategy(
    strategy: std::result::Result<Strategy, usize>,
    path: &Path,
    section: &Section,
    records: &Records,
) -> io::Result<Sample> {
    let syncs = Syncs::every(section.records, section.sync.interval());
    match strategy {
        Ok(strategy) => append_records(strategy, path, syncs, |i| records.get(i), timed),
        Err(bytes) => append_file_records(Some(bytes), path, syncs, |i| records.get(i), timed),
    }
}

/// Runs `work` and measures it: wall time, this thread's CPU times and write calls.
fn timed(work: &mut dyn FnMut() -> io::Result<()>) -> io::Result<Sample> {
    let calls_before = thread_write_calls();
    let (done, times) = Times::in_process(libc::RUSAGE_THREAD, work);
    done?;
    let calls_after = thread_write_calls();
    Ok(Sample {
        times,
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
            let sized = crate::suites::append::BUFFER_SWEEP.map(Err);
            for strategy in Strategy::ALL.map(Ok).into_iter().chain(sized) {
                let path = dir.path().join(format!("{strategy:?}-{}", sync.name()));
                let sample = run_strategy(strategy, &path, &section, &records).unwrap();
                verify(&path, &section, &records).unwrap();
                if let Some(calls) = sample.write_calls {
                    match strategy {
                        Ok(Strategy::WritePerRecord) => assert_eq!(calls, section.records),
                        _ => assert!(calls < section.records / 10, "{strategy:?}: {calls}"),
                    }
                }
            }
        }
    }
}
