//! `iolab_lab::durable::Log`: every policy round-trips and recovers, a reopened log goes on
//! after a torn tail, and — the proof — under many threads with group commit no
//! append is acknowledged before a completed sync covers its record (checked from the
//! log's own write/sync events, interleaved with the acknowledgements on one clock).

use iolab_testkit as common;

use std::fs;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use iolab_lab::durable::{
    FRAME_HEADER_LEN, LOG_HEADER_LEN, Log, LogObserver, LogOptions, LogPolicy, read_records,
};

/// The policies that can run in `dir`; the others are named in a `skipped:` line.
fn policies(dir: &Path) -> Vec<LogPolicy> {
    LogPolicy::ALL
        .into_iter()
        .filter(|p| match p.availability_for(dir) {
            Ok(()) => true,
            Err(reason) => {
                common::skip_once(format!("{p}: {reason}"));
                false
            }
        })
        .collect()
}

/// Record `i`'s payload: its index, then bytes derived from it, `len` bytes in all.
fn payload(i: u64, len: usize) -> Vec<u8> {
    let mut p = i.to_le_bytes().to_vec();
    p.extend((0..len.saturating_sub(8)).map(|j| (i as usize * 31 + j) as u8));
    p.truncate(len.max(8));
    p
}

fn small(policy: LogPolicy, group: bool) -> LogOptions {
    LogOptions::new()
        .policy(policy)
        .group_commit(group)
        .prealloc_chunk(64 << 10)
}

#[test]
fn every_policy_round_trips_and_reopens_where_it_ended() {
    let dir = common::scratch();
    for policy in policies(dir.path()) {
        for group in [true, false] {
            let path = dir.path().join(format!("{policy}-{group}"));
            let mut want = Vec::new();
            {
                let log = small(policy, group).open(&path).unwrap();
                for i in 0..50u64 {
                    let p = payload(i, (i as usize * 977) % 9000);
                    let end = log.append_durable(&p).unwrap();
                    want.push(p);
                    assert_eq!(end, log.durable_end());
                }
            }
            let got = read_records(&path).unwrap();
            assert_eq!(got.records, want, "{policy} group={group}");
            if policy.preallocates() {
                assert!(got.file_len > got.end, "{policy}: preallocated");
            } else {
                assert_eq!(got.file_len, got.end, "{policy}");
            }
            // Reopen (with another policy, too) and go on.
            let other = LogPolicy::ALL[(LogPolicy::ALL.iter().position(|&p| p == policy).unwrap()
                + 1)
                % LogPolicy::ALL.len()];
            let other = if policies(dir.path()).contains(&other) {
                other
            } else {
                policy
            };
            let log = small(other, group).open(&path).unwrap();
            assert_eq!(log.durable_end(), got.end);
            log.append_durable(b"after reopen").unwrap();
            want.push(b"after reopen".to_vec());
            drop(log);
            assert_eq!(
                read_records(&path).unwrap().records,
                want,
                "{policy}→{other}"
            );
        }
    }
}

#[test]
fn a_torn_last_record_is_cut_off_and_overwritten() {
    let dir = common::scratch();
    for policy in policies(dir.path()) {
        let path = dir.path().join(policy.name());
        let log = small(policy, true).open(&path).unwrap();
        log.append_durable(b"one").unwrap();
        let end = log.append_durable(b"two").unwrap();
        drop(log);
        // A crash mid-write: the start of a long record, no more.
        let torn = {
            let mut t = Vec::new();
            let long = payload(7, 5000);
            t.extend_from_slice(&(long.len() as u32).to_le_bytes());
            t.extend_from_slice(&[0xAB; 4]);
            t.extend_from_slice(&long[..1000]);
            t
        };
        fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .write_all_at(&torn, end)
            .unwrap();
        assert_eq!(read_records(&path).unwrap().end, end, "{policy}");
        let log = small(policy, true).open(&path).unwrap();
        assert_eq!(log.durable_end(), end, "{policy}");
        log.append_durable(b"3").unwrap();
        drop(log);
        let got = read_records(&path).unwrap();
        assert_eq!(
            got.records,
            vec![b"one".to_vec(), b"two".to_vec(), b"3".to_vec()],
            "{policy}"
        );
        assert_eq!(got.end, end + FRAME_HEADER_LEN as u64 + 1);
    }
}

#[test]
fn a_whole_frame_left_beyond_a_gap_in_a_torn_batch_is_never_read_back() {
    let dir = common::scratch();
    for policy in policies(dir.path()) {
        // A valid frame from another log, to leave behind as a torn batch's survivor.
        let donor = dir.path().join(format!("{policy}-donor"));
        let stray = payload(99, 300);
        small(policy, true)
            .open(&donor)
            .unwrap()
            .append_durable(&stray)
            .unwrap();
        let frame = fs::read(&donor).unwrap()[LOG_HEADER_LEN as usize..]
            [..FRAME_HEADER_LEN + stray.len()]
            .to_vec();

        let path = dir.path().join(policy.name());
        let log = small(policy, true).open(&path).unwrap();
        let end = log.append_durable(b"acknowledged").unwrap();
        drop(log);
        // A crash while a batch was written back out of order: its first pages never
        // reached the device (zeros, a whole 4 KiB block of them), a later page did.
        let gap_end = LOG_HEADER_LEN + 3 * 4096u64;
        assert!(end < LOG_HEADER_LEN + 4096);
        let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
        if file.metadata().unwrap().len() < gap_end + frame.len() as u64 {
            // The growing-file policies cut the file at the end on open: nothing to test.
            continue;
        }
        file.write_all_at(&frame, gap_end).unwrap();
        drop(file);

        let log = small(policy, true).open(&path).unwrap();
        assert_eq!(log.durable_end(), end, "{policy}");
        // A record that ends exactly where the survivor starts.
        let next = vec![7u8; (gap_end - end) as usize - FRAME_HEADER_LEN];
        log.append_durable(&next).unwrap();
        drop(log);
        let got = read_records(&path).unwrap();
        assert_eq!(
            got.records,
            vec![b"acknowledged".to_vec(), next],
            "{policy}: the survivor of the torn batch came back"
        );
    }
}

/// An observer that panics at the first sync it sees start.
struct PanicOnSync;

impl LogObserver for PanicOnSync {
    fn sync_started(&self, _end: u64) {
        panic!("observer panics (on purpose)");
    }
}

#[test]
fn a_leader_that_panics_fails_the_log_and_leaves_no_writer_waiting() {
    let dir = common::scratch();
    let path = dir.path().join("panics");
    let log = Arc::new(
        small(LogPolicy::Prealloc, true)
            .observer(Arc::new(PanicOnSync))
            .open(&path)
            .unwrap(),
    );
    let (tx, rx) = std::sync::mpsc::channel();
    for t in 0..4u64 {
        let (log, tx) = (log.clone(), tx.clone());
        std::thread::spawn(move || {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                log.append_durable(&payload(t, 64))
            }));
            let _ = tx.send(outcome.map(|r| r.is_ok()));
        });
    }
    drop(tx);
    let mut panicked = 0;
    for _ in 0..4 {
        match rx.recv_timeout(std::time::Duration::from_secs(60)) {
            Ok(Ok(acknowledged)) => assert!(!acknowledged, "acknowledged without a sync"),
            Ok(Err(_)) => panicked += 1,
            Err(e) => panic!("a writer is still waiting for the panicked leader: {e}"),
        }
    }
    assert!(panicked >= 1, "the observer's panic reached its leader");
    let after = log.append_durable(b"later").unwrap_err();
    assert!(after.to_string().contains("panicked"), "{after}");
}

/// One event on the test's clock.
#[derive(Clone, Copy, Debug)]
enum Event {
    Written(u64),
    SyncStarted(u64),
    SyncCompleted(u64),
    Acknowledged(u64),
}

/// Records the log's events and the writers' acknowledgements in one total order.
#[derive(Default)]
struct Trace {
    events: Mutex<Vec<Event>>,
    seq: AtomicU64,
}

impl Trace {
    fn push(&self, e: Event) {
        // The lock orders the events; seq only counts them.
        self.events.lock().unwrap().push(e);
        self.seq.fetch_add(1, Ordering::Relaxed);
    }
}

impl LogObserver for Trace {
    fn written(&self, end: u64) {
        self.push(Event::Written(end));
    }
    fn sync_started(&self, end: u64) {
        self.push(Event::SyncStarted(end));
    }
    fn sync_completed(&self, end: u64) {
        self.push(Event::SyncCompleted(end));
    }
}

/// Checks that every acknowledgement of `end` comes after a completed sync covering
/// `end`, and that sync's bytes were written before it completed (for the policies with a
/// separate sync call, before it started).
fn check_trace(events: &[Event], policy: LogPolicy) -> Result<usize, String> {
    let write_is_sync = matches!(policy, LogPolicy::Dsync | LogPolicy::DirectDsync);
    let mut written = 0u64; // highest end written so far
    let mut started: Vec<(u64, u64)> = Vec::new(); // (end, bytes written when it started)
    let mut durable = 0u64; // highest end covered by a completed, sound sync
    let mut acks = 0;
    for (i, e) in events.iter().enumerate() {
        match *e {
            Event::Written(end) => written = written.max(end),
            Event::SyncStarted(end) => started.push((end, written)),
            Event::SyncCompleted(end) => {
                let k = started
                    .iter()
                    .rposition(|&(e, _)| e == end)
                    .ok_or(format!("event {i}: sync of {end} completed, never started"))?;
                let (_, written_at_start) = started.remove(k);
                let covered = if write_is_sync {
                    written
                } else {
                    written_at_start
                };
                if covered < end {
                    return Err(format!(
                        "event {i}: sync of {end} completed, but only {covered} bytes were written"
                    ));
                }
                durable = durable.max(end);
            }
            Event::Acknowledged(end) => {
                if durable < end {
                    return Err(format!(
                        "event {i}: record ending at {end} acknowledged, durable only to {durable}"
                    ));
                }
                acks += 1;
            }
        }
    }
    Ok(acks)
}

#[test]
fn no_acknowledgement_before_a_sync_covers_it() {
    let dir = common::scratch();
    for policy in policies(dir.path()) {
        let trace = Arc::new(Trace::default());
        let path = dir.path().join(policy.name());
        let log = small(policy, true)
            .observer(trace.clone())
            .open(&path)
            .unwrap();
        let threads = 8u64;
        let per_thread = 40u64;
        std::thread::scope(|s| {
            for t in 0..threads {
                let (log, trace) = (&log, &trace);
                s.spawn(move || {
                    let mut state = t.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
                    for i in 0..per_thread {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        let len = (state % 3000) as usize;
                        let end = log.append_durable(&payload(t * 1000 + i, len)).unwrap();
                        trace.push(Event::Acknowledged(end));
                    }
                });
            }
        });
        let events = trace.events.lock().unwrap().clone();
        let acks = check_trace(&events, policy).unwrap_or_else(|e| panic!("{policy}: {e}"));
        assert_eq!(acks as u64, threads * per_thread);
        let syncs = log.syncs();
        assert!(syncs <= threads * per_thread, "{policy}: {syncs} syncs");
        drop(log);
        let got = read_records(&path).unwrap();
        assert_eq!(got.records.len() as u64, threads * per_thread, "{policy}");
    }
}

#[test]
fn the_checker_catches_an_early_acknowledgement() {
    let events = [
        Event::Written(10),
        Event::SyncStarted(10),
        Event::Acknowledged(10),
        Event::SyncCompleted(10),
    ];
    assert!(check_trace(&events, LogPolicy::Fdatasync).is_err());
    let events = [
        Event::SyncStarted(10),
        Event::Written(10),
        Event::SyncCompleted(10),
        Event::Acknowledged(10),
    ];
    assert!(
        check_trace(&events, LogPolicy::Fdatasync).is_err(),
        "written after sync start"
    );
    assert_eq!(check_trace(&events, LogPolicy::Dsync), Ok(1));
}

#[test]
fn a_full_disk_fails_the_log_and_keeps_the_acknowledged_records() {
    let disk = match common::SmallFs::mount("1m") {
        Ok(d) => d,
        Err(reason) => return common::skip(reason),
    };
    for policy in [LogPolicy::Fdatasync, LogPolicy::Prealloc] {
        let path = disk.path().join(policy.name());
        let log = small(policy, true).open(&path).unwrap();
        let mut acked = Vec::new();
        let err = loop {
            let p = payload(acked.len() as u64, 4000);
            match log.append_durable(&p) {
                Ok(_) => acked.push(p),
                Err(e) => break e,
            }
        };
        assert!(err.is_no_space(), "{policy}: {err:?}");
        let again = log.append_durable(b"x").unwrap_err();
        assert!(again.to_string().contains("open the file again"), "{again}");
        drop(log);
        let got = read_records(&path).unwrap();
        assert!(got.records.starts_with(&acked), "{policy}");
        fs::remove_file(&path).unwrap();
    }
}

// ------------------------------------------------------------------------------------------
// The system calls that make records durable are really made, observed from outside the
// library on every machine (no strace needed): the open flags of each policy's descriptors
// (`/proc/self/fdinfo`), and every sync (a child whose fdatasync and fsync fail with EIO
// must see each append that relies on a sync fail). A sync made a no-op, or O_DSYNC
// dropped, fails these.
// ------------------------------------------------------------------------------------------

/// `O_DSYNC` and `O_DIRECT` as `/proc/PID/fdinfo` prints flags (octal, x86-64 values).
const O_DSYNC: u32 = libc::O_DSYNC as u32;
const O_DIRECT: u32 = libc::O_DIRECT as u32;

/// The `flags:` of every descriptor of this process that names `path`.
fn flags_of_descriptors_to(path: &Path) -> Vec<u32> {
    let mut flags = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        if std::fs::read_link(entry.path()).ok().as_deref() != Some(path) {
            continue;
        }
        let info = std::fs::read_to_string(Path::new("/proc/self/fdinfo").join(entry.file_name()))
            .unwrap();
        let octal = info
            .lines()
            .find_map(|l| l.strip_prefix("flags:"))
            .unwrap()
            .trim();
        flags.push(u32::from_str_radix(octal, 8).unwrap());
    }
    flags
}

/// Flags as `fdinfo` prints them, for messages.
fn show(flags: &[u32]) -> String {
    let octal: Vec<String> = flags.iter().map(|f| format!("0{f:o}")).collect();
    octal.join(", ")
}

fn open(policy: LogPolicy, path: &Path) -> Log {
    LogOptions::new()
        .policy(policy)
        .group_commit(false)
        .prealloc_chunk(64 << 10)
        .open(path)
        .unwrap()
}

#[test]
fn each_policy_writes_with_the_flags_it_documents() {
    let dir = common::scratch();
    for policy in policies(dir.path()) {
        let path = dir.path().join(format!("flags-{policy}"));
        let log = open(policy, &path);
        log.append_durable(b"one record").unwrap();
        let path = path.canonicalize().unwrap();
        let flags = flags_of_descriptors_to(&path);
        assert!(
            !flags.is_empty(),
            "{policy}: no descriptor of the log is open"
        );
        let dsync = flags.iter().any(|f| f & O_DSYNC == O_DSYNC);
        let direct = flags.iter().any(|f| f & O_DIRECT != 0);
        match policy {
            LogPolicy::Dsync => assert!(dsync && !direct, "{policy}: {}", show(&flags)),
            LogPolicy::DirectDsync => {
                assert!(
                    flags
                        .iter()
                        .any(|f| f & O_DSYNC == O_DSYNC && f & O_DIRECT != 0),
                    "{policy}: no O_DIRECT|O_DSYNC descriptor: {}",
                    show(&flags)
                );
            }
            LogPolicy::Fdatasync | LogPolicy::Prealloc => {
                assert!(!dsync && !direct, "{policy}: {}", show(&flags))
            }
            other => panic!("{other}: no expectation of its descriptors"),
        }
        drop(log);
    }
}

/// Set (to a folder) for the re-executed child of
/// [`a_failing_sync_fails_every_append_that_relies_on_it`].
const FAILING_SYNC_CHILD_ENV: &str = "IOLAB_DURABLE_FAILING_SYNC_DIR";

/// The child half: opens a log of each policy (and an `AppendFile`), makes every later
/// `fdatasync`/`fsync` of the process fail with `EIO`, and checks what each append says.
/// Exits 3 when the filter cannot be installed.
#[test]
fn failing_sync_child() {
    let Some(dir) = std::env::var_os(FAILING_SYNC_CHILD_ENV) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let mut logs: Vec<(LogPolicy, Log)> = policies(&dir)
        .into_iter()
        .map(|p| (p, open(p, &dir.join(format!("log-{p}")))))
        .collect();
    let mut file = iolab::AppendFile::create(dir.join("append-file")).unwrap();
    if let Err(e) = common::seccomp::install_in_this_process(common::seccomp::deny(
        &[libc::SYS_fdatasync, libc::SYS_fsync],
        libc::EIO,
    )) {
        eprintln!("cannot install a seccomp filter: {e}");
        std::process::exit(3);
    }
    for (policy, log) in logs.drain(..) {
        let result = log.append_durable(&[7u8; 100]);
        match policy {
            // Their durability is the sync: it failed, so must the append.
            LogPolicy::Fdatasync | LogPolicy::Prealloc => {
                let e = result.expect_err(&format!("{policy}: acknowledged with a failed sync"));
                assert!(
                    e.to_string().contains("Input/output error"),
                    "{policy}: {e}"
                );
            }
            // Durable through O_DSYNC writes: no sync call to fail.
            LogPolicy::Dsync | LogPolicy::DirectDsync => {
                result.unwrap_or_else(|e| panic!("{policy}: {e}"));
            }
            other => panic!("{other}: no expectation of a failed sync"),
        }
    }
    file.append(b"record").unwrap();
    let e = file
        .sync()
        .expect_err("AppendFile::sync succeeded with a failed fdatasync");
    assert!(e.to_string().contains("Input/output error"), "{e}");
}

#[test]
fn a_failing_sync_fails_every_append_that_relies_on_it() {
    let dir = common::scratch();
    let out = Command::new(std::env::current_exe().unwrap())
        .args(common::child_test_args("failing_sync_child"))
        .env(FAILING_SYNC_CHILD_ENV, dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(3) {
        return common::skip(stderr.trim().to_string());
    }
    assert!(out.status.success(), "the child failed:\n{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "the child did not run: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A child that another thread forks holds copies of the parent's descriptors until it
/// executes, the log's among them: a log closed meanwhile must not stay locked by that copy,
/// or the program's next open of it is refused as a second opener.
#[test]
fn a_log_closed_while_a_forked_child_holds_its_descriptor_opens_again() {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let dir = common::scratch();
    let path = dir.path().join("reopened");
    let log = iolab::Log::open(&path).unwrap();
    log.append_durable(b"one").unwrap();
    let (mut forked, told) = std::io::pipe().unwrap();
    let spawner = std::thread::spawn(move || {
        let fd = told.as_raw_fd();
        let mut child = Command::new("true");
        // SAFETY: between fork and exec the hook makes only async-signal-safe calls
        // (`write`, `nanosleep`) and touches no lock or allocation.
        unsafe {
            child.pre_exec(move || {
                libc::write(fd, b"f".as_ptr().cast(), 1);
                let pause = libc::timespec {
                    tv_sec: 1,
                    tv_nsec: 0,
                };
                libc::nanosleep(&pause, std::ptr::null_mut());
                Ok(())
            });
        }
        child.status().unwrap()
    });
    // The child exists, and holds its copy of every descriptor, the log's too.
    let mut byte = [0u8; 1];
    forked.read_exact(&mut byte).unwrap();
    drop(log);
    let log = iolab::Log::open(&path).expect("the closed log's lock went with it");
    log.append_durable(b"two").unwrap();
    assert!(spawner.join().unwrap().success());
    drop(log);
    assert_eq!(
        read_records(&path).unwrap().records,
        [b"one".to_vec(), b"two".to_vec()]
    );
}
