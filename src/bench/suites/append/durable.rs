//! The append suite's `durable` section: what an acknowledged record costs. Each job opens
//! a fresh [`Log`](crate::durable::Log) (preallocated outside the timer), starts `writers`
//! threads that share [`RECORDS_PER_RUN`] records (at least [`MIN_PER_WRITER`] each) with
//! [`append_durable`](crate::durable::Log::append_durable), and times from the first
//! append to the last acknowledgement; every call's latency is kept for p50 / p99. Then the
//! log is read back with [`read_records`] and must hold exactly every record, intact.
//!
//! **Grid**: every [`Policy`] × record size ([`RECORD_SIZES`]) × writers ([`WRITERS`]) with
//! group commit, and each policy at [`ALONE_WRITERS`] writers and 512-byte records
//! *without* group commit (each writer syncs alone: the baseline group commit must beat).
//! `--quick` keeps 512-byte records, 1 and 8 writers.
//!
//! **Peer**: PostgreSQL's `pg_test_fsync` (when installed; Debian `postgresql-15`), run on
//! a file in the same folder in the same interleaved schedule: its "one 8kB write" rows
//! (`open_datasync`, `fdatasync`, …), which overwrite a preallocated file.
//!
//! All jobs run in one interleaved schedule ([`schedule`]).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Barrier;
use std::time::Instant;

use serde_json::json;

use super::SUITE;
use super::data::WorkDir;
use crate::bench::progress::Progress;
use crate::bench::results::Row;
use crate::bench::runner::schedule;
use crate::bench::{Context, interrupt};
use crate::durable::{HEADER_LEN, LogOptions, Policy, read_records};

/// Record payload sizes: a tiny record, a typical one, and PostgreSQL's 8 KiB page.
pub const RECORD_SIZES: [usize; 3] = [8, 512, 8 << 10];
/// Writer threads.
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
/// Where Debian installs `pg_test_fsync`.
const PG_TEST_FSYNC_PATHS: [&str; 3] = [
    "/usr/lib/postgresql/17/bin/pg_test_fsync",
    "/usr/lib/postgresql/16/bin/pg_test_fsync",
    "/usr/lib/postgresql/15/bin/pg_test_fsync",
];
/// Counted rounds of `pg_test_fsync` at most (about 5 s each), without a warm-up.
const PG_ROUNDS: usize = 3;
/// The method name of `pg_test_fsync`'s rows: `pg_test_fsync <its test>`.
pub const PG_TEST_FSYNC: &str = "pg_test_fsync";

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
fn jobs(quick: bool, policies: &[Policy], pg: bool) -> Vec<Job> {
    let (sizes, writers): (&[usize], &[usize]) = if quick {
        (&[512], &[1, ALONE_WRITERS])
    } else {
        (&RECORD_SIZES, &WRITERS)
    };
    let mut out = Vec::new();
    for &policy in policies {
        for &record_bytes in sizes {
            for &w in writers {
                out.push(Job::Log {
                    policy,
                    record_bytes,
                    writers: w,
                    group: true,
                });
            }
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

/// Runs the section; returns its rows.
pub(super) fn section(ctx: &mut Context<'_>, work: &mut WorkDir) -> Vec<Row> {
    let config = ctx.config;
    let policies: Vec<Policy> = Policy::ALL
        .into_iter()
        .filter(|p| config.wants(p.name()))
        .collect();
    let pg = if config.baselines && config.wants(PG_TEST_FSYNC) {
        let found = PG_TEST_FSYNC_PATHS
            .iter()
            .map(PathBuf::from)
            .find(|p| p.exists());
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
    let jobs = jobs(config.quick, &policies, pg.is_some());
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
    }
    progress.finish();
    let version = pg.as_deref().and_then(pg_version);
    let rows: Vec<Row> = jobs
        .iter()
        .zip(gathered)
        .flat_map(|(job, g)| rows(job, g, per_writer, version.as_deref()))
        .collect();
    ctx.notes.extend(goals(&rows));
    rows
}

/// The records per second of a row.
fn rate(r: &Row) -> Option<f64> {
    r.extra
        .get("records_per_s")
        .and_then(serde_json::Value::as_f64)
}

/// Whether row `r` has `value` at `key`.
fn has(r: &Row, key: &str, value: serde_json::Value) -> bool {
    r.extra.get(key) == Some(&value)
}

fn met(ok: bool) -> &'static str {
    if ok { "met" } else { "missed" }
}

/// The goals, checked on this run's rows: the single-writer `fdatasync` policy
/// against `pg_test_fsync`'s `fdatasync`, the best single-writer policy against its best
/// (with 8 KiB payloads, and with 8 KiB frames: one 8 KiB write as the peer's), and group
/// commit at 8 writers against 8 writers that sync alone.
fn goals(rows: &[Row]) -> Vec<String> {
    let single = |bytes: usize| {
        move |r: &&Row| has(r, "record_bytes", json!(bytes)) && has(r, "writers", json!(1))
    };
    let peer: Vec<&Row> = rows
        .iter()
        .filter(|r| r.baseline)
        .filter(single(8 << 10))
        .collect();
    let mut notes = Vec::new();
    for (bytes, what) in [
        (8 << 10, "8 KiB records"),
        (
            PEER_FRAME_BYTES - HEADER_LEN,
            "8 KiB frames (one 8 KiB write, as the peer's)",
        ),
    ] {
        let ours: Vec<&Row> = rows
            .iter()
            .filter(|r| !r.baseline)
            .filter(single(bytes))
            .collect();
        notes.extend(peer_goals(&ours, &peer, what));
    }
    notes.extend(group_goals(rows));
    notes
}

/// The goals against the peer for one record size: `fdatasync` ≥ 0.9× its `fdatasync`,
/// the best policy ≥ 1.0× its best.
fn peer_goals(ours: &[&Row], peer: &[&Row], what: &str) -> Vec<String> {
    let best = |set: &[&Row]| {
        set.iter()
            .filter_map(|r| Some((rate(r)?, r.method.clone())))
            .max_by(|a, b| a.0.total_cmp(&b.0))
    };
    let mut notes = Vec::new();
    let ours_fdatasync = ours
        .iter()
        .find(|r| r.method == "fdatasync")
        .and_then(|r| rate(r));
    let peer_fdatasync = peer
        .iter()
        .find(|r| has(r, "policy", json!("fdatasync")))
        .and_then(|r| rate(r));
    if let (Some(a), Some(b)) = (ours_fdatasync, peer_fdatasync) {
        notes.push(format!(
            "append durable goal: 1 writer, {what}: fdatasync {a:.0} records/s = {:.2}× \
             pg_test_fsync fdatasync {b:.0} ops/s (goal ≥ 0.9×: {})",
            a / b,
            met(a / b >= 0.9)
        ));
    }
    if let (Some((a, am)), Some((b, bm))) = (best(ours), best(peer)) {
        notes.push(format!(
            "append durable goal: 1 writer, {what}: best policy {am} {a:.0} records/s = \
             {:.2}× the best of pg_test_fsync, {bm} {b:.0} ops/s (goal ≥ 1.0×: {})",
            a / b,
            met(a >= b)
        ));
    }
    notes
}

/// Group commit at [`ALONE_WRITERS`] writers and 512-byte records against as many
/// writers that each sync alone, per policy (goal ≥ 4×).
fn group_goals(rows: &[Row]) -> Vec<String> {
    let mut notes = Vec::new();
    for policy in Policy::ALL {
        let at8 = |alone: bool| {
            rows.iter()
                .find(|r| {
                    !r.baseline
                        && has(r, "policy", json!(policy.name()))
                        && has(r, "writers", json!(ALONE_WRITERS))
                        && has(r, "record_bytes", json!(512))
                        && has(r, "group_commit", json!(!alone))
                })
                .and_then(rate)
        };
        if let (Some(g), Some(a)) = (at8(false), at8(true)) {
            notes.push(format!(
                "append durable goal: {policy}, {ALONE_WRITERS} writers, 512 B: group commit \
                 {g:.0} records/s = {:.1}× syncing alone {a:.0} (goal ≥ 4×: {})",
                g / a,
                met(g / a >= 4.0)
            ));
        }
    }
    notes
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
    let show = |e: crate::file::Error| format!("{}: {e}", path.display());
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
                s.spawn(move || -> Result<Vec<u64>, crate::file::Error> {
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

/// Runs `pg_test_fsync` for one second per test on `path` and stops it once its "one 8kB
/// write" block is printed (the rest of its tests take another ten seconds and are not
/// compared); returns that block's results as (test, ops/s).
fn run_pg_test_fsync(exe: &Path, path: &Path) -> Result<Vec<(String, f64)>, String> {
    let mut child = Command::new(exe)
        .arg("-f")
        .arg(path)
        .args(["-s", "1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let mut stdout = String::new();
    let mut blocks = 0;
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let Ok(line) = line else { break };
        if line.starts_with("Compare") {
            blocks += 1;
            if blocks == 2 {
                break;
            }
        }
        stdout.push_str(&line);
        stdout.push('\n');
    }
    let _ = child.kill();
    let status = child.wait().map_err(|e| e.to_string())?;
    let parsed = parse_pg_test_fsync(&stdout);
    if parsed.is_empty() {
        let mut stderr = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut stderr);
        }
        return Err(format!(
            "{PG_TEST_FSYNC} gave no 8kB-write figures ({status}): {}",
            stderr.trim()
        ));
    }
    Ok(parsed)
}

/// The `(test, ops/s)` lines of `pg_test_fsync`'s "one 8kB write" block.
fn parse_pg_test_fsync(stdout: &str) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in stdout.lines() {
        if line.starts_with("Compare") {
            inside = line.contains("one 8kB write");
            continue;
        }
        if !inside {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if let Some(k) = words.iter().position(|w| *w == "ops/sec")
            && k >= 2
            && let Ok(ops) = words[k - 1].parse::<f64>()
        {
            out.push((words[0].to_string(), ops));
        }
    }
    out
}

/// `pg_test_fsync --version`'s line.
fn pg_version(exe: &Path) -> Option<String> {
    let out = Command::new(exe).arg("--version").output().ok()?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string()).filter(|s| !s.is_empty())
}

/// The median of `v`.
fn median(v: &[f64]) -> Option<f64> {
    crate::bench::stats::Summary::of(v).map(|s| s.median)
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
    fn pg_test_fsync_output_is_parsed() {
        let out = "\
Compare file sync methods using one 8kB write:
(in wal_sync_method preference order, except fdatasync is Linux's default)
        open_datasync                      8917.123 ops/sec     112 usecs/op
        fdatasync                          8000.456 ops/sec     125 usecs/op
        fsync_writethrough                              n/a

Compare file sync methods using two 8kB writes:
        open_datasync                      4000.000 ops/sec     250 usecs/op
";
        assert_eq!(
            parse_pg_test_fsync(out),
            vec![
                ("open_datasync".to_string(), 8917.123),
                ("fdatasync".to_string(), 8000.456)
            ]
        );
    }

    #[test]
    fn the_grid_has_every_policy_size_and_writer_count() {
        let j = jobs(false, &Policy::ALL, true);
        assert_eq!(
            j.len(),
            Policy::ALL.len() * (RECORD_SIZES.len() * WRITERS.len() + 2) + 1
        );
        assert_eq!(jobs(true, &Policy::ALL, false).len(), Policy::ALL.len() * 3);
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
