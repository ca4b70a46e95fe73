//! The durable section's measurement on the round driver: each log job appends durably
//! from its writer threads to a fresh [`Log`](iolab_lab::durable::Log), timed from the
//! first append to the last acknowledgement with every call's latency kept, then read back
//! and checked; the peer runs on a file beside it.

use std::path::Path;
use std::sync::Barrier;
use std::time::Instant;

use super::jobs::Job;
use super::pg_test_fsync::{self, PG_ROUNDS, PG_TEST_FSYNC};
use super::{WARMUP_RECORDS, WARMUP_WRITER};
use crate::context::Context;
use crate::error::Result;
use crate::rounds::{Entry, Role, Rounds, Run, Tally, Times, Turn, drive};
use crate::workdir::WorkDir;
use iolab_lab::durable::{FRAME_HEADER_LEN, LogOptions, LogPolicy, read_records};

/// One run of a job.
pub(super) enum Sample {
    Log(LogSample),
    /// `pg_test_fsync`: its test name → ops/s.
    Pg(Vec<(String, f64)>),
}

impl Sample {
    pub(super) fn log(&self) -> Option<&LogSample> {
        match self {
            Sample::Log(s) => Some(s),
            Sample::Pg(_) => None,
        }
    }

    pub(super) fn pg(&self) -> Option<&Vec<(String, f64)>> {
        match self {
            Sample::Pg(r) => Some(r),
            Sample::Log(_) => None,
        }
    }
}

/// Runs `jobs` in interleaved rounds in `work` (`pg`: the peer's executable, when found);
/// returns each job's tally.
pub(super) fn measure(
    ctx: &mut Context<'_>,
    work: &mut WorkDir,
    jobs: &[Job],
    pg: Option<&Path>,
    per_writer: impl Fn(usize) -> u64,
) -> Result<Vec<Tally<Sample>>> {
    let config = ctx.config;
    let rounds = Rounds::section("append durable", config)
        .every_run()
        .without_line();
    let entries: Vec<Entry> = jobs
        .iter()
        .map(|job| match job {
            Job::Log { policy, .. } => Entry::new(policy.name(), Role::Method),
            Job::PgTestFsync => Entry::new(PG_TEST_FSYNC, Role::Baseline).capped(PG_ROUNDS),
        })
        .collect();
    // Whether each policy can run here, probed once before the rounds: the probe makes and
    // removes a file in the folder, which must not fall between two timed runs.
    let unavailable: Vec<Option<String>> = jobs
        .iter()
        .map(|job| match job {
            Job::Log { policy, .. } => policy.availability_for(work.path()).err(),
            Job::PgTestFsync => None,
        })
        .collect();
    drive(
        ctx,
        &rounds,
        &entries,
        &mut |_: &mut Context<'_>, turn: Turn| {
            if let Some(reason) = &unavailable[turn.job] {
                return Ok(Run::Unavailable(reason.clone()));
            }
            let path = work.file(&format!("durable-{}-{}", turn.job, turn.round));
            let run = run_once(jobs[turn.job], &path, pg, &per_writer);
            work.remove(&path);
            Ok(run)
        },
    )
}

/// Runs `job` once on a new file at `path`.
fn run_once(
    job: Job,
    path: &Path,
    pg: Option<&Path>,
    per_writer: &impl Fn(usize) -> u64,
) -> Run<Sample> {
    let done = match job {
        Job::Log {
            policy,
            record_bytes,
            writers,
            group,
        } => run_log(
            path,
            policy,
            record_bytes,
            writers,
            group,
            per_writer(writers),
        )
        .map(|s| (s.times.wall_s, Sample::Log(s))),
        Job::PgTestFsync => {
            let exe = pg.expect("a pg_test_fsync job only when it was found");
            pg_test_fsync::run_pg_test_fsync(exe, path).map(|r| (0.0, Sample::Pg(r)))
        }
    };
    match done {
        Ok((wall_s, sample)) => Run::done(sample, wall_s),
        Err(e) => Run::Failed(e),
    }
}

/// One run's figures.
pub(super) struct LogSample {
    pub(super) times: Times,
    /// Each append's latency.
    pub(super) latencies_ns: Vec<u64>,
    /// The syncs the log made.
    pub(super) syncs: u64,
}

/// Record `(t, i)` of `len` bytes: the writer, the index, then bytes derived from both.
fn payload(t: usize, i: u64, len: usize) -> Vec<u8> {
    let mut p: Vec<u8> = (0..len)
        .map(|j| (t * 131 + i as usize * 7 + j) as u8)
        .collect();
    let head = [t as u8, i as u8, (i >> 8) as u8];
    let n = head.len().min(len);
    p[..n].copy_from_slice(&head[..n]);
    p
}

/// One run of a log job; verified.
pub(super) fn run_log(
    path: &Path,
    policy: LogPolicy,
    record_bytes: usize,
    writers: usize,
    group: bool,
    per_writer: u64,
) -> Result<LogSample, String> {
    // The log's errors name its path.
    let show = |e: iolab::Error| e.to_string();
    let total = writers as u64 * per_writer;
    let bytes = total * (FRAME_HEADER_LEN + record_bytes) as u64;
    let log = LogOptions::new()
        .policy(policy)
        .group_commit(group)
        .prealloc_chunk(bytes.next_multiple_of(1 << 20))
        .open(path)
        .map_err(show)?;
    // A log in use, not a file just created: a few records before the timer, as
    // pg_test_fsync writes its file before it times anything.
    for i in 0..WARMUP_RECORDS {
        log.append_durable(&payload(WARMUP_WRITER, i, record_bytes))
            .map_err(show)?;
    }
    let warmup_syncs = log.syncs();
    let barrier = Barrier::new(writers + 1);
    let ((wall_s, latencies), times) = Times::in_process(libc::RUSAGE_SELF, || {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..writers)
                .map(|t| {
                    let (log, barrier) = (&log, &barrier);
                    s.spawn(move || -> Result<Vec<u64>, iolab::Error> {
                        let records: Vec<Vec<u8>> = (0..per_writer)
                            .map(|i| payload(t, i, record_bytes))
                            .collect();
                        let mut lat = Vec::with_capacity(records.len());
                        barrier.wait();
                        for r in &records {
                            let start = Instant::now();
                            log.append_durable(r)?;
                            lat.push(start.elapsed().as_nanos() as u64);
                        }
                        Ok(lat)
                    })
                })
                .collect();
            barrier.wait();
            let start = Instant::now();
            let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            (start.elapsed().as_secs_f64(), results)
        })
    });
    let mut latencies_ns = Vec::with_capacity(total as usize);
    for l in latencies {
        latencies_ns.extend(l.map_err(show)?);
    }
    let syncs = log.syncs() - warmup_syncs;
    drop(log);
    // Every record, each once, intact; each writer's in order.
    let got = read_records(path).map_err(show)?;
    let warmup = WARMUP_RECORDS as usize;
    if got.records.len() < warmup
        || got.records[..warmup]
            .iter()
            .enumerate()
            .any(|(i, r)| *r != payload(WARMUP_WRITER, i as u64, record_bytes))
    {
        return Err(format!("{}: the warm-up records are wrong", path.display()));
    }
    let got_records = &got.records[warmup..];
    if got_records.len() as u64 != total {
        return Err(format!(
            "{}: {} records read back, {total} appended",
            path.display(),
            got_records.len()
        ));
    }
    let mut next = vec![0u64; writers];
    for r in got_records {
        let t = r.first().map_or(0, |&b| b as usize) % writers.max(1);
        let i = next[t];
        if *r != payload(t, i, record_bytes) {
            return Err(format!("{}: a record read back is wrong", path.display()));
        }
        next[t] += 1;
    }
    Ok(LogSample {
        // From the first append to the last acknowledgement, not the threads' start.
        times: Times { wall_s, ..times },
        latencies_ns,
        syncs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_name_their_writer() {
        for len in [0, 1, 8, 512] {
            let p = payload(3, 300, len);
            assert_eq!(p.len(), len);
            if len > 0 {
                assert_eq!(p[0], 3);
            }
        }
    }
}
