//! Crash safety of `AppendFile`: a child process appends framed records and is killed with
//! `SIGKILL` at a random moment, many times; the file read back with `SequentialFile` must
//! always be a prefix of the intended records, reaching at least the last record whose
//! `flush()` returned, with nothing garbled anywhere.
//!
//! **The child** is this test binary, re-executed with `--exact crash_child` and
//! [`CHILD_DIR_ENV`] set (without it, `crash_child` does nothing). It appends records
//! `0, 1, 2, …` through an [`AppendFile`] and flushes at random points; after each flush
//! *returns*, it appends the index of the last flushed record to an `acks` file with one
//! `write`. The acknowledgement is thus ordered after the flush: it can lag (a kill between
//! the two), never lead.
//!
//! **Framing**: `[payload length: u32 LE][index: u64 LE][payload][FNV-1a 64 of all before: u64
//! LE]`. Payloads are 0 bytes to 150 KiB (some larger than the 64 KiB buffer, which takes
//! the bypass path), derived from the seed and the index.
//!
//! **The reader's rule**: decode frames until the end of the file; an incomplete last frame
//! (a write cut by the kill) ends the log and is allowed only at the very end; a complete
//! frame with a bad checksum, a wrong index or a wrong payload fails the test. The file
//! must also equal the intended byte stream up to its length: even the torn tail is the
//! true start of the next record.

use iolab_testkit as common;

use std::ffi::OsStr;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use iolab_lab::file::{AppendFile, SequentialFile};

/// Set (to the folder holding `log` and `acks`) for the re-executed child.
const CHILD_DIR_ENV: &str = "IOLAB_CRASH_CHILD_DIR";
/// The child's seed.
const CHILD_SEED_ENV: &str = "IOLAB_CRASH_SEED";
/// Set to reproduce a failing run's kill points and records.
const BASE_SEED_ENV: &str = "IOLAB_CRASH_BASE_SEED";
/// Kills per test run: enough to land in every phase (between appends, inside a flush,
/// inside a bypassing append) many times, in about 5 s.
const ITERATIONS: u64 = 150;
/// The child stops appending after this many bytes (and waits to be killed), so a slow
/// kill cannot fill the disk.
const MAX_CHILD_BYTES: u64 = 64 << 20;
/// Kill delay after the child has started writing: up to this many microseconds.
const MAX_KILL_DELAY_US: u64 = 20_000;
/// A frame's fixed part: length, index, checksum.
const HEADER_LEN: usize = 4 + 8;
const TRAILER_LEN: usize = 8;
/// The largest payload a frame may claim; anything larger is garbage.
const MAX_PAYLOAD: usize = 150 << 10;

/// xorshift64: deterministic records and kill points from a seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The payload of record `i`: mostly small, some a few KiB, a few larger than the buffer.
fn payload(seed: u64, i: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed ^ i.wrapping_mul(0xff51_afd7_ed55_8ccd));
    let len = match rng.below(100) {
        0 => 70_000 + rng.below((MAX_PAYLOAD - 70_000) as u64) as usize,
        1..=10 => 1000 + rng.below(4000) as usize,
        _ => rng.below(200) as usize,
    };
    (0..len).map(|_| rng.next() as u8).collect()
}

/// Record `i` framed.
fn frame(seed: u64, i: u64) -> Vec<u8> {
    let payload = payload(seed, i);
    let mut f = Vec::with_capacity(HEADER_LEN + payload.len() + TRAILER_LEN);
    f.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    f.extend_from_slice(&i.to_le_bytes());
    f.extend_from_slice(&payload);
    let check = fnv1a(&f);
    f.extend_from_slice(&check.to_le_bytes());
    f
}

/// The writer: does nothing unless re-executed by the parent test.
#[test]
fn crash_child() {
    let Some(dir) = std::env::var_os(CHILD_DIR_ENV) else {
        return;
    };
    let dir = Path::new(&dir);
    let seed: u64 = std::env::var(CHILD_SEED_ENV).unwrap().parse().unwrap();
    let mut acks = OpenOptions::new()
        .append(true)
        .create_new(true)
        .open(dir.join("acks"))
        .unwrap();
    let mut log = AppendFile::create(dir.join("log")).unwrap();
    let mut rng = Rng::new(seed ^ 0xf1u64);
    let mut ack = |i: u64, log: &mut AppendFile| {
        log.flush().unwrap();
        // One write; only after the flush returned.
        acks.write_all(format!("{i}\n").as_bytes()).unwrap();
    };
    for i in 0.. {
        log.append(&frame(seed, i)).unwrap();
        if rng.below(16) == 0 {
            ack(i, &mut log);
        }
        if log.written_len() >= MAX_CHILD_BYTES {
            ack(i, &mut log);
            break;
        }
    }
    // Done: wait to be killed.
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// What one killed child left behind.
#[derive(Debug)]
struct Outcome {
    records: u64,
    torn_tail: bool,
    acknowledged: Option<u64>,
}

/// Reads `dir/log` back with `SequentialFile` and checks it (see the module docs).
fn check(dir: &Path, seed: u64) -> Result<Outcome, String> {
    let acks = fs::read_to_string(dir.join("acks")).unwrap_or_default();
    // Only complete lines count: the kill may cut the last one.
    let acknowledged = acks
        .split_inclusive('\n')
        .filter(|l| l.ends_with('\n'))
        .filter_map(|l| l.trim().parse::<u64>().ok())
        .next_back();
    let path = dir.join("log");
    if !path.exists() {
        return match acknowledged {
            None => Ok(Outcome {
                records: 0,
                torn_tail: false,
                acknowledged,
            }),
            Some(a) => Err(format!("no log, but record {a} was acknowledged")),
        };
    }
    let mut log = SequentialFile::open(&path).map_err(|e| e.to_string())?;
    let mut records = 0u64;
    let torn_tail = loop {
        let expected = frame(seed, records);
        let mut header = [0u8; HEADER_LEN];
        let got = log.read_full(&mut header).map_err(|e| e.to_string())?;
        if got == 0 {
            break false;
        }
        if header[..got] != expected[..got] {
            return Err(format!("record {records}: garbled header"));
        }
        if got < HEADER_LEN {
            break true;
        }
        let len = u32::from_le_bytes(header[..4].try_into().unwrap()) as usize;
        if len > MAX_PAYLOAD {
            return Err(format!("record {records}: impossible length {len}"));
        }
        let mut rest = vec![0u8; len + TRAILER_LEN];
        let got = log.read_full(&mut rest).map_err(|e| e.to_string())?;
        if rest[..got] != expected[HEADER_LEN..HEADER_LEN + got] {
            return Err(format!("record {records}: garbled body"));
        }
        if got < rest.len() {
            // Incomplete: the reader stops here, and there is nothing after it.
            break true;
        }
        // A complete frame: its own checksum must hold too (the reader's rule).
        let body_end = HEADER_LEN + len;
        let mut whole = header.to_vec();
        whole.extend_from_slice(&rest);
        let check = u64::from_le_bytes(whole[body_end..].try_into().unwrap());
        if check != fnv1a(&whole[..body_end]) {
            return Err(format!("record {records}: bad checksum"));
        }
        records += 1;
    };
    if let Some(a) = acknowledged
        && records <= a
    {
        return Err(format!(
            "only {records} complete records, but record {a} was acknowledged"
        ));
    }
    Ok(Outcome {
        records,
        torn_tail,
        acknowledged,
    })
}

#[test]
fn sigkill_at_random_points_leaves_a_prefix_of_the_records() {
    let base_seed = std::env::var(BASE_SEED_ENV)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    let mut rng = Rng::new(base_seed);
    let (mut acknowledged, mut torn, mut total_records) = (0, 0, 0);
    let started = Instant::now();
    for iteration in 0..ITERATIONS {
        let dir = common::scratch();
        let seed = rng.next();
        let seed_text = seed.to_string();
        common::kill_child_when_ready(
            "crash_child",
            &[
                (CHILD_DIR_ENV, dir.path().as_os_str()),
                (CHILD_SEED_ENV, OsStr::new(&seed_text)),
            ],
            &dir.path().join("acks"),
            Duration::from_micros(rng.below(MAX_KILL_DELAY_US)),
        );
        match check(dir.path(), seed) {
            Ok(outcome) => {
                acknowledged += u64::from(outcome.acknowledged.is_some());
                torn += u64::from(outcome.torn_tail);
                total_records += outcome.records;
            }
            Err(e) => panic!(
                "iteration {iteration} (reproduce with {BASE_SEED_ENV}={base_seed}): {e}; \
                 the file is kept in {}",
                dir.keep().display()
            ),
        }
    }
    eprintln!(
        "{ITERATIONS} kills in {:.1?}: {acknowledged} after at least one flush, {torn} with a \
         torn last record, {total_records} records recovered",
        started.elapsed()
    );
    // The kills must have landed while the child was writing, not all before it began: on
    // a quiet machine about half the runs had flushed; a loaded one (a CI running every
    // test binary at once) starts the child's writing later.
    assert!(
        acknowledged >= ITERATIONS / 4,
        "only {acknowledged} of {ITERATIONS} runs had flushed anything"
    );
}
