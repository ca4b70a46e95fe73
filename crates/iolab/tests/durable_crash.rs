//! Crash safety of `iolab_lab::durable::Log` with group commit: a child process appends from
//! four threads and is killed with `SIGKILL` at a random moment, many times, for the
//! group-committed policies with and without preallocation. Reopening must find a prefix
//! of complete, intact records that holds every acknowledged one, and nothing else.
//!
//! **The child** is this test binary, re-executed with `--exact crash_child` and
//! [`CHILD_DIR_ENV`] set. Thread `t` appends records `(t, 0), (t, 1), …`; after
//! `append_durable` *returns*, it writes `t i` to an `acks` file with one `O_APPEND`
//! `write`, so an acknowledgement can lag the log, never lead it.
//!
//! **The check**: [`read_records`] (the log's own recovery) must return only records whose
//! payload is exactly the one derived from their `(t, i)`, each once, each thread's in
//! increasing order, and every acknowledged `(t, i)` among them. Reopening with
//! [`LogOptions::open`] must agree on the end and accept a new record after it.

use iolab_testkit as common;

use std::collections::HashSet;
use std::ffi::OsStr;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use iolab_lab::durable::{LogOptions, LogPolicy, read_records};

/// Set (to the folder holding `log` and `acks`) for the re-executed child.
const CHILD_DIR_ENV: &str = "IOLAB_DURABLE_CHILD_DIR";
/// The child's policy name.
const CHILD_POLICY_ENV: &str = "IOLAB_DURABLE_CHILD_POLICY";
/// Kills per policy.
const ITERATIONS: u64 = 25;
/// Writer threads in the child.
const THREADS: u64 = 4;
/// A thread stops after this many records (and waits to be killed).
const MAX_RECORDS: u64 = 20_000;
const MAX_KILL_DELAY_US: u64 = 30_000;

/// Record `(t, i)`'s payload: `t`, `i`, then 0..2000 bytes derived from them.
fn payload(t: u64, i: u64) -> Vec<u8> {
    let len = ((t * 7919 + i * 104_729) % 2000) as usize;
    let mut p = Vec::with_capacity(16 + len);
    p.extend_from_slice(&t.to_le_bytes());
    p.extend_from_slice(&i.to_le_bytes());
    p.extend((0..len).map(|j| (t as usize * 13 + i as usize * 7 + j) as u8));
    p
}

/// The child half: does nothing unless re-executed by the test.
#[test]
fn crash_child() {
    let Some(dir) = std::env::var_os(CHILD_DIR_ENV) else {
        return;
    };
    let dir = Path::new(&dir);
    let policy: LogPolicy = std::env::var(CHILD_POLICY_ENV).unwrap().parse().unwrap();
    let log = LogOptions::new()
        .policy(policy)
        .prealloc_chunk(1 << 20)
        .open(dir.join("log"))
        .unwrap();
    let acks = OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("acks"))
        .unwrap();
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (log, acks) = (&log, &acks);
            s.spawn(move || {
                for i in 0..MAX_RECORDS {
                    log.append_durable(&payload(t, i)).unwrap();
                    (&*acks).write_all(format!("{t} {i}\n").as_bytes()).unwrap();
                }
            });
        }
    });
    std::thread::sleep(Duration::from_secs(60));
}

/// Checks one killed child's folder; returns how many records were recovered.
fn check(dir: &Path, policy: LogPolicy) -> Result<usize, String> {
    let got = read_records(dir.join("log")).map_err(|e| e.to_string())?;
    let mut seen = HashSet::new();
    let mut next = [0u64; THREADS as usize];
    for (k, p) in got.records.iter().enumerate() {
        if p.len() < 16 {
            return Err(format!("record {k}: {} bytes", p.len()));
        }
        let t = u64::from_le_bytes(p[..8].try_into().unwrap());
        let i = u64::from_le_bytes(p[8..16].try_into().unwrap());
        if t >= THREADS || *p != payload(t, i) {
            return Err(format!("record {k}: garbled (t {t}, i {i})"));
        }
        if !seen.insert((t, i)) || i < next[t as usize] {
            return Err(format!("record {k}: ({t}, {i}) twice or out of order"));
        }
        next[t as usize] = i + 1;
    }
    let acks = fs::read_to_string(dir.join("acks")).unwrap_or_default();
    for line in acks.lines() {
        // The last line may be cut by the kill; a cut line names a record that was
        // acknowledged anyway, but its number may be cut short: skip it.
        let Some((t, i)) = line.split_once(' ') else {
            continue;
        };
        let (Ok(t), Ok(i)) = (t.parse::<u64>(), i.parse::<u64>()) else {
            continue;
        };
        if !acks.ends_with('\n') && acks.lines().last() == Some(line) {
            continue;
        }
        if !seen.contains(&(t, i)) {
            return Err(format!("acknowledged ({t}, {i}) is not in the log"));
        }
    }
    // Reopening agrees on the end and takes a record after it.
    let log = LogOptions::new()
        .policy(policy)
        .open(dir.join("log"))
        .map_err(|e| e.to_string())?;
    if log.durable_end() != got.end {
        return Err(format!(
            "reopened at {}, recovery said {}",
            log.durable_end(),
            got.end
        ));
    }
    log.append_durable(&payload(0, u64::MAX))
        .map_err(|e| e.to_string())?;
    drop(log);
    let again = read_records(dir.join("log")).map_err(|e| e.to_string())?;
    if again.records.len() != got.records.len() + 1 {
        return Err("the record appended after reopening is not found".into());
    }
    Ok(got.records.len())
}

#[test]
fn sigkill_during_group_commit_keeps_every_acknowledged_record() {
    let mut seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let scratch = common::scratch();
    for policy in LogPolicy::ALL {
        if let Err(reason) = policy.availability_for(scratch.path()) {
            common::skip(format!("{policy}: {reason}"));
            continue;
        }
        let (mut recovered, started) = (0, Instant::now());
        for iteration in 0..ITERATIONS {
            let dir = tempfile::tempdir_in(scratch.path()).unwrap();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            common::kill_child_when_ready(
                "crash_child",
                &[
                    (CHILD_DIR_ENV, dir.path().as_os_str()),
                    (CHILD_POLICY_ENV, OsStr::new(policy.name())),
                ],
                &dir.path().join("acks"),
                Duration::from_micros(seed % MAX_KILL_DELAY_US),
            );
            match check(dir.path(), policy) {
                Ok(n) => recovered += n,
                Err(e) => panic!(
                    "{policy}, iteration {iteration}: {e}; kept in {}",
                    dir.keep().display()
                ),
            }
        }
        eprintln!(
            "{policy}: {ITERATIONS} kills in {:.1?}, {recovered} records recovered",
            started.elapsed()
        );
        assert!(
            recovered > 0,
            "{policy}: the kills all landed before any record"
        );
    }
}
