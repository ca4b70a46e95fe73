//! The append suite's `durable` section: what an acknowledged record costs. Each job opens
//! a fresh [`Log`](iolab::lab::durable::Log) (preallocated outside the timer), starts `writers`
//! threads that share [`RECORDS_PER_RUN`] records (at least [`MIN_PER_WRITER`] each) with
//! [`append_durable`](iolab::lab::durable::Log::append_durable), and times from the first
//! append to the last acknowledgement; every call's latency is kept for p50 / p99. Then the
//! log is read back with [`read_records`] and must hold exactly every record, intact.
//!
//! **Grid**: every [`Policy`] × record size ([`RECORD_SIZES`]) × writers ([`WRITERS`]) with
//! group commit, and each policy at [`ALONE_WRITERS`] writers and 512-byte records
//! *without* group commit (each writer syncs alone: the baseline group commit must beat).
//! That whole grid is `--sweep`'s; by default the section measures what the verdict needs
//! (512-byte records from 8 writers, grouped and alone; 8 KiB records and 8 KiB frames
//! from one; about 25 s), and `--quick` keeps 512-byte records, 1 and 8 writers.
//!
//! **Peer**: PostgreSQL's `pg_test_fsync` (when installed; Debian `postgresql-15`), run on
//! a file in the same folder in the same interleaved schedule: its "one 8kB write" rows
//! (`open_datasync`, `fdatasync`, …), which overwrite a preallocated file.
//!
//! All jobs run in one interleaved schedule ([`schedule`]).

use std::path::Path;
use std::sync::Barrier;
use std::time::Instant;

use serde_json::json;

use super::SUITE;
use super::durable_goals;
use super::pg_test_fsync::{self, PG_ROUNDS, PG_TEST_FSYNC, pg_version, run_pg_test_fsync};
use crate::context::Context;
use crate::interrupt;
use crate::progress::{self, Progress};
use crate::results::Row;
use crate::runner::schedule;
use crate::workdir::WorkDir;
use iolab::lab::durable::{HEADER_LEN, LogOptions, Policy, read_records};

/// Record payload sizes: a tiny record, a typical one, and PostgreSQL's 8 KiB page.
pub const RECORD_SIZES: [usize; 3] = [8, 512, 8 << 10];
/// Writer threads (`--sweep`; by default 8 for 512-byte records and 1 for 8 KiB).
pub const WRITERS: [usize; 5] = [1, 2, 4, 8, 16];
/// Frame size of the single-writer rows matched to `pg_test_fsync`'s 8 KiB write: a
/// payload of 8 KiB less the frame header, so each record is one 8 KiB write as the
/// peer's (an 8 KiB payload frames to 8 200 bytes, which spans three 4 KiB blocks).
pub const PEER_FRAME_BYTES: usize = 8 << 10;
/// Writers of the rows without group commit.
pub const ALONE_WRITERS: usize = 8;
/// Records per run, shared by the writers: about 0.1 s at one writer on a fast virtual
/// disk, long enough that a run is not one unlucky moment of the device.
pub const RECORDS_PER_RUN: u64 = 1000;
/// Records each writer appends at least (so 16 writers append 1 600).
pub const MIN_PER_WRITER: u64 = 60;
/// `--quick`: records per run, and per writer at least.
const QUICK_RECORDS_PER_RUN: u64 = 100;
const QUICK_MIN_PER_WRITER: u64 = 10;
/// Records appended before the timer starts, by a writer of their own.
const WARMUP_RECORDS: u64 = 10;
/// The warm-up records' writer number (no timed writer has it).
const WARMUP_WRITER: usize = 255;
/// One job of the section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Job {
    Log {
        policy: Policy,
        record_bytes: usize,
        writers: usize,
        group: bool,
    },
    PgTestFsync,
}

/// What a job's counted runs gathered.
#[derive(Default)]
struct Gathered {
    wall: Vec<f64>,
    user: Vec<f64>,
    sys: Vec<f64>,
    latencies_ns: Vec<u64>,
    syncs: Vec<u64>,
    error: Option<String>,
    checked: usize,
    /// pg_test_fsync: its test name → ops/s of each run.
    pg: Vec<(String, Vec<f64>)>,
}

/// The jobs, in order.
fn jobs(grid: Grid, policies: &[Policy], pg: bool) -> Vec<Job> {
    let quick = grid == Grid::Quick;
    // (record bytes, writers) with group commit.
    let cells: Vec<(usize, usize)> = match grid {
        Grid::Quick => vec![(512, 1), (512, ALONE_WRITERS)],
        Grid::Answer => vec![(512, ALONE_WRITERS), (8 << 10, 1)],
        Grid::Sweep => RECORD_SIZES
            .iter()
            .flat_map(|&b| WRITERS.iter().map(move |&w| (b, w)))
            .collect(),
    };
    let mut out = Vec::new();
    for &policy in policies {
        for &(record_bytes, w) in &cells {
            out.push(Job::Log {
                policy,
                record_bytes,
                writers: w,
                group: true,
            });
        }
        out.push(Job::Log {
            policy,
            record_bytes: 512,
            writers: ALONE_WRITERS,
            group: false,
        });
        if !quick {
            out.push(Job::Log {
                policy,
                record_bytes: PEER_FRAME_BYTES - HEADER_LEN,
                writers: 1,
                group: true,
            });
        }
    }
    if pg {
        out.push(Job::PgTestFsync);
    }
    out
}

/// How much of the grid a run measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Grid {
    /// `--quick`: 512-byte records, 1 and [`ALONE_WRITERS`] writers.
    Quick,
    /// By default, what the verdict and the goals need: 512-byte records from
    /// [`ALONE_WRITERS`] writers (and the same writers syncing alone), 8 KiB from one
    /// (and the peer-sized frames).
    Answer,
    /// `--sweep`: every record size × every writer count.
    Sweep,
}

/// Runs the section; returns its rows.
pub(super) fn section(ctx: &mut Context<'_>, work: &mut WorkDir) -> Vec<Row> {
    let config = ctx.config;
    let policies: Vec<Policy> = Policy::ALL
        .into_iter()
        .filter(|p| config.wants(p.name()))
        .collect();
    let pg = if config.baselines && config.wants(PG_TEST_FSYNC) {
        let found = pg_test_fsync::find();
        if found.is_none() {
            ctx.notes.push(
                "append durable: peer `pg_test_fsync` skipped: not installed \
                 (apt-get install postgresql-15)"
                    .into(),
            );
        }
        found
    } else {
        None
    };
    let (per_run, min_per_writer) = if config.quick {
        (QUICK_RECORDS_PER_RUN, QUICK_MIN_PER_WRITER)
    } else {
        (RECORDS_PER_RUN, MIN_PER_WRITER)
    };
    let per_writer = |writers: usize| (per_run / writers as u64).max(min_per_writer);
    let grid = if config.quick {
        Grid::Quick
    } else if config.sweep {
        Grid::Sweep
    } else {
        Grid::Answer
    };
    let jobs = jobs(grid, &policies, pg.is_some());
    let rounds = config.warmup + config.runs;
    let order = schedule(jobs.len(), rounds);
    let mut gathered: Vec<Gathered> = jobs.iter().map(|_| Gathered::default()).collect();
    for (i, job) in jobs.iter().enumerate() {
        if let Job::Log { policy, .. } = job
            && let Err(reason) = policy.availability_for(work.path())
        {
            gathered[i].error = Some(format!("unavailable: {reason}"));
        }
    }
    let progress = Progress::new("append durable", order.len() as u64, config.progress);
    let mut spent = vec![0.0; jobs.len()];
    for (round, j) in order {
        if interrupt::interrupted() {
            break;
        }
        progress.inc();
        if gathered[j].error.is_some() {
            continue;
        }
        if jobs[j] == Job::PgTestFsync
            && (round < config.warmup
                || gathered[j]
                    .pg
                    .first()
                    .is_some_and(|(_, v)| v.len() >= PG_ROUNDS))
        {
            continue;
        }
        let counted = round >= config.warmup;
        let started = Instant::now();
        let path = work.file(&format!("durable-{j}-{round}"));
        let g = &mut gathered[j];
        match jobs[j] {
            Job::Log {
                policy,
                record_bytes,
                writers,
                group,
            } => match run_log(
                &path,
                policy,
                record_bytes,
                writers,
                group,
                per_writer(writers),
            ) {
                Ok(sample) => {
                    g.checked += 1;
                    if counted {
                        g.wall.push(sample.wall_s);
                        g.user.push(sample.user_s);
                        g.sys.push(sample.sys_s);
                        g.latencies_ns.extend(sample.latencies_ns);
                        g.syncs.push(sample.syncs);
                    }
                }
                Err(e) => g.error = Some(e),
            },
            Job::PgTestFsync => match run_pg_test_fsync(pg.as_deref().expect("found"), &path) {
                Ok(results) if counted => {
                    for (test, ops) in results {
                        match g.pg.iter_mut().find(|(t, _)| *t == test) {
                            Some((_, v)) => v.push(ops),
                            None => g.pg.push((test, vec![ops])),
                        }
                    }
                }
                Ok(_) => {}
                Err(e) => g.error = Some(e),
            },
        }
        work.remove(&path);
        spent[j] += started.elapsed().as_secs_f64();
    }
    progress.finish();
    let version = pg.as_deref().and_then(pg_version);
    let rows = rows_with_sections(config.progress, &jobs, gathered, spent, |job, g| {
        rows(job, g, per_writer, version.as_deref())
    });
    ctx.notes.extend(durable_goals::goals(&rows));
    rows
}

/// The rows of every job (`make`), and one section line per table of results.md — a
/// record size — with the time its jobs took (a job's time goes to the table of its first
/// row: pg_test_fsync's rows share one).
fn rows_with_sections(
    show: bool,
    jobs: &[Job],
    gathered: Vec<Gathered>,
    spent: Vec<f64>,
    make: impl Fn(&Job, Gathered) -> Vec<Row>,
) -> Vec<Row> {
    let record_bytes = |r: &Row| {
        r.extra
            .get("record_bytes")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0) as usize
    };
    let mut tables: Vec<(usize, usize, f64)> = Vec::new();
    let mut rows_out = Vec::new();
    for ((job, g), seconds) in jobs.iter().zip(gathered).zip(spent) {
        let made = make(job, g);
        for r in &made {
            let bytes = record_bytes(r);
            match tables.iter_mut().find(|t| t.0 == bytes) {
                Some(t) => t.1 += 1,
                None => tables.push((bytes, 1, 0.0)),
            }
        }
        if let Some(t) = made
            .first()
            .and_then(|r| tables.iter_mut().find(|t| t.0 == record_bytes(r)))
        {
            t.2 += seconds;
        }
        rows_out.extend(made);
    }
    for (bytes, n, seconds) in tables {
        progress::print_section_line(show, &format!("append durable {bytes}B"), n, seconds);
    }
    rows_out
}

/// One run's figures.
struct Sample {
    wall_s: f64,
    user_s: f64,
    sys_s: f64,
    latencies_ns: Vec<u64>,
    syncs: u64,
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
fn run_log(
    path: &Path,
    policy: Policy,
    record_bytes: usize,
    writers: usize,
    group: bool,
    per_writer: u64,
) -> Result<Sample, String> {
    let show = |e: iolab::Error| format!("{}: {e}", path.display());
    let total = writers as u64 * per_writer;
    let bytes = total * (HEADER_LEN + record_bytes) as u64;
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
    let before = super::measure::cpu_s(libc::RUSAGE_SELF);
    let (wall_s, latencies) = std::thread::scope(|s| {
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
    });
    let after = super::measure::cpu_s(libc::RUSAGE_SELF);
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
    Ok(Sample {
        wall_s,
        user_s: after.0 - before.0,
        sys_s: after.1 - before.1,
        latencies_ns,
        syncs,
    })
}

/// The median of `v`.
fn median(v: &[f64]) -> Option<f64> {
    crate::stats::Summary::of(v).map(|s| s.median)
}

/// A job's rows: one for a log job, one per test for `pg_test_fsync`.
fn rows(
    job: &Job,
    g: Gathered,
    per_writer: impl Fn(usize) -> u64,
    version: Option<&str>,
) -> Vec<Row> {
    let base = |method: String| {
        let mut row = Row {
            suite: SUITE.to_string(),
            method,
            ..Row::default()
        };
        row.extra.insert("section".into(), json!("durable"));
        row
    };
    match *job {
        Job::Log {
            policy,
            record_bytes,
            writers,
            group,
        } => {
            let mut row = base(if group {
                policy.name().to_string()
            } else {
                format!("{policy} alone")
            });
            let records = writers as u64 * per_writer(writers);
            // Per record, so the rows compare with each other and with pg_test_fsync's
            // seconds per operation whatever the writer count.
            row.bytes = record_bytes as u64;
            for (k, v) in [
                ("policy", json!(policy.name())),
                ("record_bytes", json!(record_bytes)),
                ("writers", json!(writers)),
                ("group_commit", json!(group)),
                ("records", json!(records)),
            ] {
                row.extra.insert(k.into(), v);
            }
            let per_record = |v: &[f64]| v.iter().map(|x| x / records as f64).collect::<Vec<_>>();
            row.set_timings(
                &per_record(&g.wall),
                &per_record(&g.user),
                &per_record(&g.sys),
            );
            row.verified = g.error.is_none() && !g.wall.is_empty();
            match g.error {
                Some(e) => match e.strip_prefix("unavailable: ") {
                    Some(reason) => row.unavailable = Some(reason.to_string()),
                    None => row.error = Some(e),
                },
                None if g.checked > 0 => {
                    row.result = Some(format!("{records} records of {record_bytes} bytes"));
                }
                None => {}
            }
            if let Some(m) = row.median_s {
                row.extra.insert("records_per_s".into(), json!(1.0 / m));
            }
            let mut lat = g.latencies_ns;
            lat.sort_unstable();
            if !lat.is_empty() {
                let at = |q: f64| lat[((lat.len() - 1) as f64 * q).round() as usize] as f64 / 1e3;
                row.extra.insert("p50_us".into(), json!(at(0.50)));
                row.extra.insert("p99_us".into(), json!(at(0.99)));
            }
            let syncs: Vec<f64> = g.syncs.iter().map(|&s| s as f64).collect();
            if let Some(s) = median(&syncs) {
                row.extra
                    .insert("syncs_per_record".into(), json!(s / records as f64));
            }
            vec![row]
        }
        Job::PgTestFsync => {
            if let Some(e) = g.error {
                let mut row = base(PG_TEST_FSYNC.to_string());
                row.baseline = true;
                row.error = Some(e);
                return vec![row];
            }
            g.pg.into_iter()
                .map(|(test, ops)| {
                    let mut row = base(format!("{PG_TEST_FSYNC} {test}"));
                    row.baseline = true;
                    row.version = version.map(str::to_string);
                    // Seconds per operation, so the row's statistics read like the others'.
                    let secs: Vec<f64> = ops.iter().map(|o| 1.0 / o).collect();
                    row.bytes = 8 << 10;
                    row.set_timings(&secs, &[], &[]);
                    row.verified = true;
                    row.result = Some("one 8kB write + sync per op".into());
                    for (k, v) in [
                        ("policy", json!(test)),
                        ("record_bytes", json!(8 << 10)),
                        ("writers", json!(1)),
                        ("group_commit", json!(false)),
                    ] {
                        row.extra.insert(k.into(), v);
                    }
                    if let Some(m) = median(&ops) {
                        row.extra.insert("records_per_s".into(), json!(m));
                        row.extra.insert("p50_us".into(), json!(1e6 / m));
                    }
                    row
                })
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_has_every_policy_size_and_writer_count() {
        let j = jobs(Grid::Sweep, &Policy::ALL, true);
        assert_eq!(
            j.len(),
            Policy::ALL.len() * (RECORD_SIZES.len() * WRITERS.len() + 2) + 1
        );
        assert_eq!(
            jobs(Grid::Quick, &Policy::ALL, false).len(),
            Policy::ALL.len() * 3
        );
        assert_eq!(
            jobs(Grid::Answer, &Policy::ALL, false).len(),
            Policy::ALL.len() * (2 + 2)
        );
    }

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
