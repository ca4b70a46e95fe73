//! The `append` suite: N tiny appends to a file, five ways, with and without `fdatasync`,
//! and C++ `std::fstream` as the baseline — the write-up's experiment, verified and with
//! the system calls counted.
//!
//! | strategy | per record | system calls |
//! |---|---|---|
//! | `write-per-record` | `write_all(record)` on the file | one `write` per record |
//! | `bufwriter-8k`, `bufwriter-64k` | `BufWriter::write_all` | one `write` per buffer (std flushes the buffer when a record does not fit) |
//! | `writev-batch` | an `IoSlice` pointing at the record | one `writev` per [`WRITEV_BATCH`] records (no copy) |
//! | `append-file` | [`AppendFile::append`] | one `write` of exactly 64 KiB per 64 KiB; records of 64 KiB or more: one `writev` of buffer + record |
//! | `fstream` (baseline) | `std::fstream::write` | libstdc++: one `writev` of buffer + record per 8 KiB |
//!
//! Every file is opened with `O_APPEND` in a fresh folder inside the data folder and
//! removed after its run; the suite touches no other file.
//!
//! **Sections** (one table each): sync policy `none` at payloads of 5, 64, 512 and 4096
//! bytes, with `min(1 M, 16 MiB / payload)` records (1 M for the write-up's 5 bytes; the
//! byte cap keeps a run of big records as short as the 5-byte one); then 5-byte records
//! with `every-K` (an `fdatasync` every [`SYNC_EVERY_K`] records, over
//! [`EVERY_K_RECORDS`]) and `every-record` (an `fdatasync` after each of
//! [`EVERY_RECORD_RECORDS`]): `fdatasync` costs milliseconds on a virtual disk, so those
//! runs are short. `--quick` divides the counts by 5 to 16.
//!
//! **Measurement**: iolab's strategies run in this process, one at a time, in interleaved
//! rounds ([`schedule`]); the timer covers the append loop and the final flush (and the
//! syncs), not opening the file. System calls are *measured*: the `syscw` counter of
//! `/proc/thread-self/io` (write-family calls made by this thread: `write`, `writev`,
//! `pwrite`, …; not `fdatasync`) is read before and after the loop; `fdatasync` calls are
//! counted by the suite. CPU times are this thread's (`getrusage(RUSAGE_THREAD)`). The
//! `fstream` baseline is compiled at bench time (`c++ -O2`) from `append_fstream.cpp` and
//! run as a child process that measures its own loop the same way and prints the figures;
//! it runs in the `none` sections only (`fstream` has no portable `fdatasync`). After every
//! run, warm-up included, the file is read back with [`SequentialFile`] and must hold
//! exactly the N records in order; record *i* is the bytes `(i + j) mod 256`, so a lost,
//! repeated or reordered record is caught.
//!
//! **The write-up's question** — where does `fstream`'s `writev` come from, when no header
//! mentions it? From libstdc++'s buffering, not from the kernel: `basic_filebuf::xsputn`
//! (`<bits/fstream.tcc>`) copies a write into its 8 KiB buffer while it fits; when it does
//! not (or the write is 1 KiB or more) it calls `std::__basic_file<char>::xsputn_2`, which
//! is compiled into `libstdc++.so` (`config/io/basic_file_stdio.cc`) and issues one `writev`
//! of the buffered bytes plus the new ones (`objdump -d libstdc++.so.6` shows the call).
//! So 5-byte writes cost one system call per 1639 records (8190 buffered bytes and the one
//! that did not fit), and 4 KiB writes one each. The write-up's own `writev` benchmark
//! passed one `iovec` per iteration to a single `writev`; Linux refuses more than
//! `IOV_MAX` (1024) of them with `EINVAL`, so it timed building the vector and wrote
//! nothing. `writev-batch` here sends 1024 per call.

use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, IoSlice, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::json;

use super::count::{version_line, which};
use crate::bench::progress::Progress;
use crate::bench::results::Row;
use crate::bench::runner::{Job, schedule};
use crate::bench::{Context, interrupt};
use crate::error::{Error, Result};
use crate::file::{AppendFile, SequentialFile};

const SUITE: &str = "append";

/// Records per run with sync policy `none`: the write-up's 1 M (capped by [`MAX_RUN_BYTES`]).
pub const DEFAULT_RECORDS: u64 = 1_000_000;
/// Payload sizes swept with sync policy `none`; the first is the write-up's 5 bytes, used
/// by the sync sections too.
pub const PAYLOADS: [usize; 4] = [5, 64, 512, 4096];
/// Bytes per run at most: 16 MiB keeps each big-record run about as short as the 5-byte
/// one (and well inside the page cache), so the whole suite takes about 30 s.
pub const MAX_RUN_BYTES: u64 = 16 << 20;
/// `every-K`: records per `fdatasync` (a group commit of 1000 records).
pub const SYNC_EVERY_K: u64 = 1000;
/// `every-K`: records per run, i.e. 50 `fdatasync`s.
pub const EVERY_K_RECORDS: u64 = 50_000;
/// `every-record`: records per run, each followed by an `fdatasync` (milliseconds each on
/// a virtual disk).
pub const EVERY_RECORD_RECORDS: u64 = 50;
/// `writev-batch`: records per `writev`: `IOV_MAX`, the most Linux accepts in one call.
pub const WRITEV_BATCH: usize = libc::UIO_MAXIOV as usize;

/// `--quick`: records per run with sync `none`.
const QUICK_RECORDS: u64 = 100_000;
/// `--quick`: bytes per run at most.
const QUICK_MAX_RUN_BYTES: u64 = 1 << 20;
/// `--quick`: records per `every-K` run (5 syncs).
const QUICK_EVERY_K_RECORDS: u64 = 5_000;
/// `--quick`: records per `every-record` run.
const QUICK_EVERY_RECORD_RECORDS: u64 = 10;

/// The record content repeats every 256 records: record *i* starts at `i mod 256` in a
/// pattern of the bytes 0, 1, 2, …
const PATTERN_PERIOD: usize = 256;

/// C++ compilers tried for the `fstream` baseline, in order.
const CXX_COMPILERS: &[&str] = &["c++", "g++", "clang++"];
/// The baseline's source, built into the binary so the bench needs no source tree.
const FSTREAM_SOURCE: &str = include_str!("append_fstream.cpp");
/// The baseline's row name.
const FSTREAM: &str = "fstream";

/// A way of appending records, by its kebab-case name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// One `write(2)` per record.
    WritePerRecord,
    /// `std::io::BufWriter` with 8 KiB (std's default capacity, and libstdc++'s `BUFSIZ`).
    BufWriter8k,
    /// `std::io::BufWriter` with 64 KiB.
    BufWriter64k,
    /// One `writev(2)` per [`WRITEV_BATCH`] records, each an `iovec` of its own.
    WritevBatch,
    /// [`AppendFile`] with its default 64 KiB buffer.
    AppendFile,
}

impl Strategy {
    /// Every strategy, in the order they are listed and measured.
    pub const ALL: [Strategy; 5] = [
        Strategy::WritePerRecord,
        Strategy::BufWriter8k,
        Strategy::BufWriter64k,
        Strategy::WritevBatch,
        Strategy::AppendFile,
    ];

    /// The name shared by the CLI, JSON and docs.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::WritePerRecord => "write-per-record",
            Strategy::BufWriter8k => "bufwriter-8k",
            Strategy::BufWriter64k => "bufwriter-64k",
            Strategy::WritevBatch => "writev-batch",
            Strategy::AppendFile => "append-file",
        }
    }

    /// Whether it gathers records before a system call (the goal of ≤ 0.001 system calls
    /// per 5-byte record applies to these).
    pub fn buffers(self) -> bool {
        self != Strategy::WritePerRecord
    }
}

/// When the records are made durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncPolicy {
    /// Never: the records end in the page cache (the write-up's experiment).
    None,
    /// `fdatasync` after every [`SYNC_EVERY_K`] records.
    EveryK,
    /// `fdatasync` after every record.
    EveryRecord,
}

impl SyncPolicy {
    /// `none`, `every-K` or `every-record`: the rows' `sync_policy`.
    pub fn name(self) -> &'static str {
        match self {
            SyncPolicy::None => "none",
            SyncPolicy::EveryK => "every-K",
            SyncPolicy::EveryRecord => "every-record",
        }
    }

    /// Records per `fdatasync`, if any.
    pub fn interval(self) -> Option<u64> {
        match self {
            SyncPolicy::None => None,
            SyncPolicy::EveryK => Some(SYNC_EVERY_K),
            SyncPolicy::EveryRecord => Some(1),
        }
    }

    /// The `fdatasync` calls of a run of `records` records: one per interval, and one
    /// for a partial last interval.
    fn syncs(self, records: u64) -> u64 {
        self.interval().map_or(0, |k| records.div_ceil(k))
    }
}

/// One table: a payload size, a record count and a sync policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Section {
    /// Bytes per record.
    pub payload: usize,
    /// Records per run.
    pub records: u64,
    /// When records are made durable.
    pub sync: SyncPolicy,
}

/// The sections measured, in order (see the module docs).
pub fn sections(quick: bool) -> Vec<Section> {
    let (records, max_bytes, every_k, every_record) = if quick {
        (
            QUICK_RECORDS,
            QUICK_MAX_RUN_BYTES,
            QUICK_EVERY_K_RECORDS,
            QUICK_EVERY_RECORD_RECORDS,
        )
    } else {
        (
            DEFAULT_RECORDS,
            MAX_RUN_BYTES,
            EVERY_K_RECORDS,
            EVERY_RECORD_RECORDS,
        )
    };
    let mut out: Vec<Section> = PAYLOADS
        .iter()
        .map(|&payload| Section {
            payload,
            records: records.min(max_bytes / payload as u64).max(1),
            sync: SyncPolicy::None,
        })
        .collect();
    out.push(Section {
        payload: PAYLOADS[0],
        records: every_k,
        sync: SyncPolicy::EveryK,
    });
    out.push(Section {
        payload: PAYLOADS[0],
        records: every_record,
        sync: SyncPolicy::EveryRecord,
    });
    out
}

/// The records of a run: record *i* is `payload` bytes of `(i + j) mod 256`.
pub struct Records {
    pattern: Vec<u8>,
    payload: usize,
}

impl Records {
    /// The records of `payload` bytes each.
    pub fn new(payload: usize) -> Records {
        Records {
            pattern: (0..PATTERN_PERIOD + payload).map(|k| k as u8).collect(),
            payload,
        }
    }

    /// Record `i`.
    #[inline]
    pub fn get(&self, i: u64) -> &[u8] {
        let start = (i % PATTERN_PERIOD as u64) as usize;
        &self.pattern[start..start + self.payload]
    }
}

/// Runs the suite.
pub fn run(ctx: &mut Context<'_>) -> Result<Vec<Row>> {
    let config = ctx.config;
    let strategies: Vec<Strategy> = Strategy::ALL
        .into_iter()
        .filter(|s| config.wants(s.name()))
        .collect();
    let mut work = WorkDir::create(&config.data_dir)?;
    let fstream = if config.baselines {
        match build_fstream(&mut work) {
            Ok(baseline) => Some(baseline),
            Err(reason) => {
                ctx.notes
                    .push(format!("append: baseline `{FSTREAM}` skipped: {reason}"));
                None
            }
        }
    } else {
        None
    };
    let mut rows = Vec::new();
    for section in sections(config.quick) {
        if interrupt::interrupted() {
            break;
        }
        let baseline = fstream
            .as_ref()
            .filter(|_| section.sync == SyncPolicy::None);
        rows.extend(measure_section(
            ctx,
            &mut work,
            &section,
            &strategies,
            baseline,
        )?);
    }
    if thread_write_calls().is_none() {
        ctx.notes.push(
            "append: /proc/thread-self/io is unreadable (no task I/O accounting in this kernel): \
             system calls per record were not measured"
                .into(),
        );
    }
    ctx.notes.extend(explanations(&rows));
    Ok(rows)
}

/// The compiled `fstream` baseline.
struct Fstream {
    program: PathBuf,
    version: Option<String>,
}

/// Compiles the baseline into the work folder, or says why it cannot.
fn build_fstream(work: &mut WorkDir) -> std::result::Result<Fstream, String> {
    let Some(compiler) = CXX_COMPILERS.iter().find_map(|c| which(c)) else {
        return Err(format!(
            "no C++ compiler ({}) on PATH",
            CXX_COMPILERS.join(", ")
        ));
    };
    let source = work.file("append_fstream.cpp");
    fs::write(&source, FSTREAM_SOURCE).map_err(|e| format!("cannot write its source: {e}"))?;
    let program = work.file("append_fstream");
    let out = Command::new(&compiler)
        .args(["-O2", "-std=c++17", "-o"])
        .arg(&program)
        .arg(&source)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", compiler.display()))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "`{} -O2` failed: {}",
            compiler.display(),
            stderr.lines().next().unwrap_or("no message")
        ));
    }
    Ok(Fstream {
        version: version_line(&compiler, &["--version"]).map(|v| format!("{v} (-O2)")),
        program,
    })
}

/// One run's figures.
#[derive(Clone, Copy, Debug)]
struct Sample {
    wall_s: f64,
    user_s: f64,
    sys_s: f64,
    /// Write-family system calls, when `/proc/thread-self/io` can be read.
    write_calls: Option<u64>,
}

/// What a row's runs gathered.
#[derive(Default)]
struct Accumulator {
    wall: Vec<f64>,
    user: Vec<f64>,
    sys: Vec<f64>,
    write_calls: Vec<u64>,
    calls_unknown: bool,
    error: Option<String>,
    wrong: Option<String>,
    checked: usize,
}

/// A job of a section: one of ours, or the baseline.
#[derive(Clone, Copy)]
enum Contender<'a> {
    Ours(Strategy),
    Baseline(&'a Fstream),
}

impl Contender<'_> {
    fn name(&self) -> &'static str {
        match self {
            Contender::Ours(s) => s.name(),
            Contender::Baseline(_) => FSTREAM,
        }
    }
}

fn measure_section(
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
    let progress = Progress::new(
        &format!("append {}B {}", section.payload, section.sync.name()),
        order.len() as u64,
        config.progress,
    );
    for (round, j) in order {
        if interrupt::interrupted() {
            break;
        }
        progress.inc();
        let a = &mut acc[j];
        if a.error.is_some() {
            continue;
        }
        let contender = contenders[j];
        progress.set_message(format!(
            "round {}/{rounds}: {}",
            round + 1,
            contender.name()
        ));
        let path = work.file(&format!("{}-{round}", contender.name()));
        let outcome = match contender {
            Contender::Ours(strategy) => run_strategy(strategy, &path, section, &records)
                .map_err(|e| format!("{}: {}", path.display(), crate::error::describe_io(&e))),
            Contender::Baseline(fstream) => run_fstream(ctx, fstream, &path, section)?,
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
        .map(|(c, a)| to_row(section, c, a))
        .collect())
}

/// The start of a verification failure's message.
const WRONG: &str = "wrong content: ";

fn to_row(section: &Section, contender: &Contender<'_>, a: Accumulator) -> Row {
    let records = section.records;
    let mut row = Row {
        suite: SUITE.to_string(),
        method: contender.name().to_string(),
        bytes: records * section.payload as u64,
        ..Row::default()
    };
    if let Contender::Baseline(fstream) = contender {
        row.baseline = true;
        row.version = fstream.version.clone();
    }
    row.extra
        .insert("payload_bytes".into(), json!(section.payload));
    row.extra
        .insert("sync_policy".into(), json!(section.sync.name()));
    row.extra.insert("records".into(), json!(records));
    if let Some(k) = section.sync.interval() {
        row.extra.insert("sync_every_records".into(), json!(k));
        row.extra.insert(
            "fdatasyncs_per_record".into(),
            json!(section.sync.syncs(records) as f64 / records as f64),
        );
    }
    row.error = a.error;
    row.set_timings(&a.wall, &a.user, &a.sys);
    row.verified = !a.wall.is_empty() && a.wrong.is_none() && row.error.is_none();
    if let Some(wrong) = a.wrong {
        row.error = Some(wrong);
    } else if a.checked > 0 {
        row.result = Some(format!("{records} records of {} bytes", section.payload));
    }
    if let Some(median) = row.median_s {
        let ns = median * 1e9 / records as f64;
        row.extra.insert("ns_per_record".into(), json!(ns));
    }
    if !a.calls_unknown
        && let Some(calls) = median_u64(&a.write_calls)
    {
        let per_record = calls / records as f64;
        row.extra
            .insert("syscalls_per_record".into(), json!(per_record));
    }
    row
}

/// Appends `section.records` records to a new file at `path` with `strategy` and times it.
fn run_strategy(
    strategy: Strategy,
    path: &Path,
    section: &Section,
    records: &Records,
) -> io::Result<Sample> {
    let n = section.records;
    let every = section.sync.interval();
    // Whether record `i` (0-based) ends an interval, and whether a partial one is left.
    let due = |i: u64| every.is_some_and(|k| (i + 1).is_multiple_of(k));
    let tail = every.is_some_and(|k| !n.is_multiple_of(k));
    let create = || OpenOptions::new().append(true).create_new(true).open(path);
    match strategy {
        Strategy::WritePerRecord => {
            let mut file = create()?;
            timed(|| {
                for i in 0..n {
                    file.write_all(records.get(i))?;
                    if due(i) {
                        file.sync_data()?;
                    }
                }
                if tail {
                    file.sync_data()?;
                }
                Ok(())
            })
        }
        Strategy::BufWriter8k | Strategy::BufWriter64k => {
            let capacity = if strategy == Strategy::BufWriter8k {
                8 << 10
            } else {
                64 << 10
            };
            let mut out = BufWriter::with_capacity(capacity, create()?);
            timed(|| {
                for i in 0..n {
                    out.write_all(records.get(i))?;
                    if due(i) {
                        out.flush()?;
                        out.get_ref().sync_data()?;
                    }
                }
                out.flush()?;
                if tail {
                    out.get_ref().sync_data()?;
                }
                Ok(())
            })
        }
        Strategy::WritevBatch => {
            let mut file = create()?;
            let mut batch: Vec<IoSlice<'_>> = Vec::with_capacity(WRITEV_BATCH);
            timed(|| {
                for i in 0..n {
                    batch.push(IoSlice::new(records.get(i)));
                    let sync = due(i);
                    if batch.len() == WRITEV_BATCH || sync {
                        write_all_vectored(&mut file, &mut batch)?;
                        batch.clear();
                    }
                    if sync {
                        file.sync_data()?;
                    }
                }
                write_all_vectored(&mut file, &mut batch)?;
                if tail {
                    file.sync_data()?;
                }
                Ok(())
            })
        }
        Strategy::AppendFile => {
            let mut file = AppendFile::create(path)?;
            timed(|| {
                for i in 0..n {
                    file.append(records.get(i))?;
                    if due(i) {
                        file.sync()?;
                    }
                }
                if tail {
                    file.sync()?;
                } else {
                    file.flush()?;
                }
                Ok(())
            })
        }
    }
}

/// `writev` of every slice, continued after short writes and `EINTR`.
fn write_all_vectored(file: &mut File, batch: &mut [IoSlice<'_>]) -> io::Result<()> {
    let mut rest = batch;
    IoSlice::advance_slices(&mut rest, 0);
    while !rest.is_empty() {
        match file.write_vectored(rest) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut rest, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Runs `work` and measures it: wall time, this thread's CPU times and write calls.
fn timed(work: impl FnOnce() -> io::Result<()>) -> io::Result<Sample> {
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
fn thread_write_calls() -> Option<u64> {
    let text = fs::read_to_string("/proc/thread-self/io").ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix("syscw:"))
        .and_then(|v| v.trim().parse().ok())
}

/// This thread's user and system CPU seconds.
fn thread_cpu_s() -> (f64, f64) {
    // SAFETY: all-zero is a valid `rusage`.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is valid for writes; RUSAGE_THREAD is supported since Linux 2.6.26.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    if rc != 0 {
        return (0.0, 0.0);
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(usage.ru_utime), s(usage.ru_stime))
}

/// Runs the compiled baseline once through the executor and reads its own figures.
/// `Err` from the outer result only when the executor cannot run processes at all.
fn run_fstream(
    ctx: &mut Context<'_>,
    fstream: &Fstream,
    path: &Path,
    section: &Section,
) -> Result<std::result::Result<Sample, String>> {
    let job = Job::new(
        FSTREAM,
        &fstream.program,
        [
            path.as_os_str().to_owned(),
            section.records.to_string().into(),
            section.payload.to_string().into(),
        ],
        true,
    );
    let outcome = ctx
        .executor
        .execute(&job)
        .map_err(|e| Error::io("cannot run a benchmark job", e))?;
    if !outcome.success() {
        let line = outcome.first_error_line();
        return Ok(Err(if line.is_empty() {
            format!("exit {:?}, signal {:?}", outcome.code, outcome.signal)
        } else {
            line
        }));
    }
    Ok(parse_fstream(&outcome.stdout)
        .ok_or_else(|| format!("unreadable output: {}", outcome.stdout.trim())))
}

/// Reads `ns N syscw N user_ns N sys_ns N`.
fn parse_fstream(stdout: &str) -> Option<Sample> {
    let mut words = stdout.split_whitespace();
    let mut get = |key: &str| -> Option<i64> {
        (words.next()? == key).then_some(())?;
        words.next()?.parse().ok()
    };
    let ns = get("ns")?;
    let calls = get("syscw")?;
    let user = get("user_ns")?;
    let sys = get("sys_ns")?;
    Some(Sample {
        wall_s: ns as f64 / 1e9,
        user_s: user as f64 / 1e9,
        sys_s: sys as f64 / 1e9,
        write_calls: u64::try_from(calls).ok(),
    })
}

/// Checks that `path` holds exactly the section's records, in order.
fn verify(path: &Path, section: &Section, records: &Records) -> std::result::Result<(), String> {
    let io_error = |e: crate::file::Error| format!("{}: {e}", path.display());
    let mut file = SequentialFile::open(path).map_err(io_error)?;
    let mut record = vec![0u8; section.payload];
    for i in 0..section.records {
        let got = file.read_full(&mut record).map_err(io_error)?;
        if got < record.len() {
            return Err(format!(
                "{WRONG}the file ends in record {i} of {}",
                section.records
            ));
        }
        if record != records.get(i) {
            return Err(format!("{WRONG}record {i} differs from what was appended"));
        }
    }
    if file.read(&mut [0u8; 1]).map_err(io_error)? != 0 {
        return Err(format!(
            "{WRONG}the file is longer than {} records",
            section.records
        ));
    }
    Ok(())
}

/// The median of integer samples, as a float.
fn median_u64(samples: &[u64]) -> Option<f64> {
    let floats: Vec<f64> = samples.iter().map(|&x| x as f64).collect();
    crate::bench::stats::Summary::of(&floats).map(|s| s.median)
}

/// The report's notes: how the suite measures, the write-up's question answered with
/// this run's figures, and the goals.
fn explanations(rows: &[Row]) -> Vec<String> {
    let figure = |method: &str, key: &str| -> Option<f64> {
        rows.iter()
            .find(|r| {
                r.method == method
                    && r.extra.get("payload_bytes") == Some(&json!(PAYLOADS[0]))
                    && r.extra.get("sync_policy") == Some(&json!(SyncPolicy::None.name()))
            })
            .and_then(|r| r.extra.get(key))
            .and_then(serde_json::Value::as_f64)
    };
    let mut notes = vec![format!(
        "append: times cover the append loop and the final flush or sync, measured in-process \
         (fstream: in its own process, the same way); syscalls_per_record is the measured change \
         of syscw in /proc/thread-self/io (write, writev, pwrite; fdatasync calls are counted \
         separately as fdatasyncs_per_record); every-K syncs every {SYNC_EVERY_K} records; \
         writev-batch sends {WRITEV_BATCH} records per writev"
    )];
    let mut answer = String::from(
        "append: where fstream's writev comes from (the write-up's question): libstdc++'s \
         basic_filebuf::xsputn (bits/fstream.tcc) copies a write into its 8 KiB buffer while it \
         fits; when it does not, or is 1 KiB or more, it calls std::__basic_file<char>::xsputn_2, \
         compiled into libstdc++.so (config/io/basic_file_stdio.cc, so no header mentions writev), \
         which sends the buffered bytes and the new ones in one writev. It is buffering, not the \
         kernel vectorising: ",
    );
    match figure(FSTREAM, "syscalls_per_record") {
        Some(calls) => {
            let _ = write!(
                answer,
                "here fstream made {} write calls per 5-byte record (one per {:.0} records)",
                crate::units::three_significant(calls),
                1.0 / calls.max(f64::MIN_POSITIVE)
            );
        }
        None => answer.push_str("one write call per 1639 records of 5 bytes"),
    }
    answer.push_str(
        ", and one per record at 4 KiB. append-file buffers 64 KiB and writes it in whole \
         64 KiB pieces (writes ending mid-page are slower here), keeping libstdc++'s \
         writev of buffer + data for appends of 64 KiB or more. \
         The write-up's writev benchmark handed one iovec per iteration to a single writev, \
         which Linux refuses beyond IOV_MAX (1024) iovecs with EINVAL: it timed building the \
         vector and wrote nothing.",
    );
    notes.push(answer);

    let ns = |m: &str| figure(m, "ns_per_record");
    if let (Some(append), Some(buf64), Some(per_record)) = (
        ns("append-file"),
        ns("bufwriter-64k"),
        ns("write-per-record"),
    ) {
        let verdict = |met: bool| if met { "met" } else { "MISSED" };
        let vs_buf = append / buf64;
        let vs_write = per_record / append;
        let mut goals = format!(
            "append goals at 5-byte payloads: append-file {} ns/record = {:.2}× bufwriter-64k \
             (goal ≤ 1.2×: {}), 1/{:.0} of write-per-record (goal ≤ 1/30: {})",
            crate::units::three_significant(append),
            vs_buf,
            verdict(vs_buf <= 1.2),
            vs_write,
            verdict(vs_write >= 30.0),
        );
        if let Some(cpp) = ns(FSTREAM) {
            let vs_cpp = append / cpp;
            let _ = write!(
                goals,
                ", {:.2}× fstream (goal ≤ 1.5×: {})",
                vs_cpp,
                verdict(vs_cpp <= 1.5)
            );
        }
        let buffered: Vec<(String, f64)> = Strategy::ALL
            .iter()
            .filter(|s| s.buffers())
            .filter_map(|s| {
                Some((
                    s.name().to_string(),
                    figure(s.name(), "syscalls_per_record")?,
                ))
            })
            .collect();
        if !buffered.is_empty() {
            let worst = buffered.iter().map(|(_, c)| *c).fold(0.0, f64::max);
            let _ = write!(
                goals,
                "; write calls per record of the buffered strategies: {} (goal ≤ 0.001: {})",
                buffered
                    .iter()
                    .map(|(n, c)| format!("{n} {}", crate::units::three_significant(*c)))
                    .collect::<Vec<_>>()
                    .join(", "),
                verdict(worst <= 0.001)
            );
        }
        notes.push(goals);
    }
    notes
}

/// A folder of our own inside the data folder, holding only files this suite created;
/// they (and it) are removed when it is dropped.
struct WorkDir {
    path: PathBuf,
    files: Vec<PathBuf>,
}

/// How many folder names to try when `append-PID` is taken.
const WORK_DIR_ATTEMPTS: u32 = 100;

impl WorkDir {
    fn create(data_dir: &Path) -> Result<WorkDir> {
        let pid = std::process::id();
        for attempt in 0..WORK_DIR_ATTEMPTS {
            let path = data_dir.join(format!(".append-{pid}-{attempt}"));
            match fs::create_dir(&path) {
                Ok(()) => {
                    return Ok(WorkDir {
                        path,
                        files: Vec::new(),
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(Error::io("cannot create a folder for the append runs", e)),
            }
        }
        Err(Error::io(
            "cannot create a folder for the append runs",
            io::ErrorKind::AlreadyExists.into(),
        ))
    }

    /// The path of a file of ours called `name`, remembered for removal.
    fn file(&mut self, name: &str) -> PathBuf {
        let path = self.path.join(name);
        if !self.files.contains(&path) {
            self.files.push(path.clone());
        }
        path
    }

    /// Removes one of our files now (it may not exist: a run that failed early).
    fn remove(&mut self, path: &Path) {
        let _ = fs::remove_file(path);
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        for file in &self.files {
            let _ = fs::remove_file(file);
        }
        // Fails, leaving it, only if someone else put a file in our folder.
        let _ = fs::remove_dir(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_differ_and_repeat_every_256() {
        let r = Records::new(5);
        assert_eq!(r.get(0), &[0, 1, 2, 3, 4]);
        assert_eq!(r.get(255), &[255, 0, 1, 2, 3]);
        assert_eq!(r.get(256), r.get(0));
        assert_ne!(r.get(1), r.get(2));
    }

    #[test]
    fn sections_stay_within_the_byte_cap_and_sync_policies_use_5_bytes() {
        for quick in [false, true] {
            let s = sections(quick);
            assert_eq!(s.len(), PAYLOADS.len() + 2);
            for sec in &s {
                assert!(sec.records * sec.payload as u64 <= MAX_RUN_BYTES);
                assert!(sec.records >= 1);
            }
            assert_eq!(s[0].records, if quick { 100_000 } else { 1_000_000 });
            assert!(
                s.iter()
                    .any(|x| x.sync == SyncPolicy::EveryK && x.payload == 5)
            );
            assert!(
                s.iter()
                    .any(|x| x.sync == SyncPolicy::EveryRecord && x.payload == 5)
            );
        }
    }

    #[test]
    fn sync_counts_include_a_partial_last_interval() {
        assert_eq!(SyncPolicy::None.syncs(10), 0);
        assert_eq!(SyncPolicy::EveryRecord.syncs(10), 10);
        assert_eq!(SyncPolicy::EveryK.syncs(2 * SYNC_EVERY_K), 2);
        assert_eq!(SyncPolicy::EveryK.syncs(2 * SYNC_EVERY_K + 1), 3);
    }

    #[test]
    fn fstream_output_is_parsed_and_missing_counters_are_unknown() {
        let s = parse_fstream("ns 2000 syscw 7 user_ns 1000 sys_ns 0\n").unwrap();
        assert_eq!(s.wall_s, 2e-6);
        assert_eq!(s.write_calls, Some(7));
        let s = parse_fstream("ns 2000 syscw -1 user_ns 1000 sys_ns 0").unwrap();
        assert_eq!(s.write_calls, None);
        assert!(parse_fstream("garbage").is_none());
    }

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

    #[test]
    fn verification_catches_short_long_and_reordered_files() {
        let dir = tempfile::tempdir().unwrap();
        let section = Section {
            payload: 3,
            records: 4,
            sync: SyncPolicy::None,
        };
        let records = Records::new(3);
        let good: Vec<u8> = (0..4).flat_map(|i| records.get(i).to_vec()).collect();
        let path = dir.path().join("f");
        fs::write(&path, &good).unwrap();
        assert!(verify(&path, &section, &records).is_ok());
        fs::write(&path, &good[..good.len() - 1]).unwrap();
        assert!(
            verify(&path, &section, &records)
                .unwrap_err()
                .contains("ends in record 3")
        );
        fs::write(&path, [good.as_slice(), b"x"].concat()).unwrap();
        assert!(
            verify(&path, &section, &records)
                .unwrap_err()
                .contains("longer")
        );
        let mut swapped = good.clone();
        swapped[..3].copy_from_slice(records.get(1));
        fs::write(&path, &swapped).unwrap();
        assert!(
            verify(&path, &section, &records)
                .unwrap_err()
                .contains("record 0")
        );
    }
}
