//! Random reads: small blocks at random offsets of one file, the access a storage engine
//! makes most — six ways and the library's default, one file each, every read checked.
//!
//! | method | module | how a block arrives |
//! |---|---|---|
//! | `pread` | [`pread`] | one `pread(2)` into the caller's buffer, through the page cache |
//! | `pread-direct` | [`pread_direct`] | `pread(2)` with `O_DIRECT` into an aligned buffer |
//! | `mmap` | [`mmap`] | copied out of a map with the kernel's default read-ahead |
//! | `mmap-random` | [`mmap_random`] | the same map with `madvise(MADV_RANDOM)`: no read-ahead |
//! | `uring` | [`uring`] | io_uring `READ`s, buffered, up to the queue depth in flight |
//! | `uring-direct` | [`uring_direct`] | io_uring `READ_FIXED`s with `O_DIRECT` into registered buffers |
//! | `auto` | `library_default` | [`crate::file::RandomAccessFile::open`]: the measured backing of those that read one block at a time; at a queue depth above 1, [`crate::file::RandomAccessFile::read_batch`] |
//!
//! The debate they settle is Crotty, Leis and Pavlo, "Are You Sure You Want to Use MMAP in
//! Your Database Management System?" (CIDR 2022): maps win while the data fits in memory
//! and lose once it does not, where `O_DIRECT` with a deep queue holds (this machine's
//! figures against fio: docs/findings/random.md).
//!
//! **A read** is block `k` of the file (offset `k × block`): `block` bytes, fewer for the
//! last block of a file whose size is not a multiple of it. Blocks are drawn by a
//! [`Pattern`] (uniform or Zipfian). Each thread reads on its own (its own buffers, its own
//! ring), all over the same open file. The synchronous methods make one read at a time per
//! thread; the io_uring ones keep up to the queue depth in flight per thread.
//!
//! **Reads are checked** ([`Check`]). On a file `iolab gen blocks` (or the `random`
//! benchmark) made, whose bytes are a function of their offset, every read is verified
//! against [`crate::generate::blocks`], so a read at the wrong offset, a short read before
//! the end and a torn read all count as mismatches ([`Report::mismatches`]). Any other file
//! — a user's own — is checked by sampling: every read's length, and one read in
//! [`SAMPLE_EVERY`] (up to [`SAMPLE_BUDGET`] bytes of copies) compared, after the timed run,
//! with a second `pread(2)` of the same block. The checks run outside the latency timer.
//!
//! **Latency** of each read — from the call to its return, or for io_uring from the
//! submission to the completion of that read (for `auto`'s batches, which do not show when
//! a read was submitted, from the landing of the block `queue depth` places before it,
//! when its slot was freed for it) — goes into an HDR histogram (nanoseconds,
//! three significant digits), merged over the threads.

pub use crate::file::auto;
/// How many queued reads a ring hands over per `io_uring_enter(2)` (shared with the
/// library's batch reads, so it lives beside the ring).
pub use crate::read::batching as batch;
mod depth;
mod library_default;
pub mod mmap;
pub mod mmap_random;
pub mod pattern;
pub mod pread;
pub mod pread_direct;
mod tally;
pub mod uring;
pub mod uring_direct;

use std::fs::File;
use std::path::Path;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::buf::AlignedBuf;
pub use depth::depth_for;
use iolab::{Error, Result};
use iolab::{FileKind, Input};
pub use pattern::{Pattern, Sampler};
pub use tally::Check;
pub(crate) use tally::Tally;

/// Bytes per read by default: 4 KiB, a page and a common database block.
pub const DEFAULT_BLOCK: usize = 4096;
/// The smallest block: 512 B, the smallest logical sector.
pub const MIN_BLOCK: usize = 512;
/// The largest block: 1 MiB.
pub const MAX_BLOCK: usize = 1 << 20;
pub use crate::file::auto::{DEFAULT_QUEUE_DEPTH, MAX_QUEUE_DEPTH};
/// Reads per run when neither a count nor a duration is given.
pub const DEFAULT_READS: u64 = 100_000;
/// On a file of someone else's bytes, one read in this many is kept and re-read to check it.
pub const SAMPLE_EVERY: u64 = 64;
/// The most bytes of sampled reads one thread keeps for the check (16 MiB).
pub const SAMPLE_BUDGET: usize = 16 << 20;
/// The highest latency the histogram holds: 60 s (higher ones are clamped to it).
const MAX_LATENCY_NS: u64 = 60_000_000_000;

iolab::named_enum! {
    /// A way of reading blocks at random offsets, by its kebab-case name.
    #[non_exhaustive]
    pub enum Method: "method" {
        /// `pread(2)` through the page cache.
        Pread = "pread",
        /// `pread(2)` with `O_DIRECT`.
        PreadDirect = "pread-direct",
        /// A shared map with default read-ahead.
        Mmap = "mmap",
        /// A shared map with `MADV_RANDOM`.
        MmapRandom = "mmap-random",
        /// io_uring, buffered.
        Uring = "uring",
        /// io_uring, `O_DIRECT`, registered buffers.
        UringDirect = "uring-direct",
        /// `RandomAccessFile::open`, the library's default: its measured backing; at a
        /// queue depth above 1, its batch call (`read_batch`).
        Auto = "auto",
    }
}

impl Method {
    /// Whether the method can run here (a file system may still refuse `O_DIRECT` for a
    /// file: that is known when it is opened).
    pub fn availability(self) -> std::result::Result<(), String> {
        match self {
            Method::Uring => uring::availability(),
            Method::UringDirect => uring_direct::availability(),
            Method::Pread
            | Method::PreadDirect
            | Method::Mmap
            | Method::MmapRandom
            | Method::Auto => Ok(()),
        }
    }

    /// Whether it keeps several reads in flight per thread by default (`--queue-depth`).
    pub fn queues(self) -> bool {
        matches!(self, Method::Uring | Method::UringDirect)
    }

    /// Whether it takes a queue depth above 1: the io_uring methods, and `auto`, which
    /// then reads through the library's batch call.
    pub fn takes_depth(self) -> bool {
        self.queues() || self == Method::Auto
    }

    /// Whether it bypasses the page cache.
    pub fn direct(self) -> bool {
        matches!(self, Method::PreadDirect | Method::UringDirect)
    }
}

/// When a run stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// After this many reads in all (shared out over the threads).
    Reads(u64),
    /// After this long (reads in flight then are completed and counted).
    Duration(Duration),
}

/// How to run: block size, queue depth, threads, pattern and length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    block: usize,
    queue_depth: usize,
    threads: usize,
    stop: Stop,
    pattern: Pattern,
    seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            block: DEFAULT_BLOCK,
            queue_depth: 1,
            threads: 1,
            stop: Stop::Reads(DEFAULT_READS),
            pattern: Pattern::Uniform,
            seed: crate::generate::DEFAULT_SEED,
        }
    }
}

impl Options {
    /// [`DEFAULT_BLOCK`], queue depth 1, one thread, [`DEFAULT_READS`] uniform reads.
    pub fn new() -> Options {
        Options::default()
    }
    /// Bytes per read: a power of two from [`MIN_BLOCK`] to [`MAX_BLOCK`].
    pub fn block(mut self, bytes: usize) -> Options {
        self.block = bytes;
        self
    }
    /// Reads in flight per thread (io_uring methods): 1 to [`MAX_QUEUE_DEPTH`].
    pub fn queue_depth(mut self, n: usize) -> Options {
        self.queue_depth = n;
        self
    }
    /// Threads: 1 to the available cores.
    pub fn threads(mut self, n: usize) -> Options {
        self.threads = n;
        self
    }
    /// When to stop.
    pub fn stop(mut self, stop: Stop) -> Options {
        self.stop = stop;
        self
    }
    /// How blocks are drawn.
    pub fn pattern(mut self, pattern: Pattern) -> Options {
        self.pattern = pattern;
        self
    }
    /// The seed of the block stream (thread `t` uses `seed + t`).
    pub fn seed(mut self, seed: u64) -> Options {
        self.seed = seed;
        self
    }
    /// The block size.
    pub fn block_bytes(&self) -> usize {
        self.block
    }

    /// `Err` with a one-line reason when an option is out of range for `method`.
    pub fn validate(&self, method: Method) -> Result<()> {
        let bad = |s: String| Err(Error::InvalidOption(s));
        if !self.block.is_power_of_two() || !(MIN_BLOCK..=MAX_BLOCK).contains(&self.block) {
            return bad(format!(
                "block size {} must be a power of two from {MIN_BLOCK} to {MAX_BLOCK} bytes",
                self.block
            ));
        }
        if !(1..=MAX_QUEUE_DEPTH).contains(&self.queue_depth) {
            return bad(format!(
                "queue depth {} must be from 1 to {MAX_QUEUE_DEPTH}",
                self.queue_depth
            ));
        }
        if self.queue_depth > 1 && !method.takes_depth() {
            return bad(format!(
                "method '{method}' makes one read at a time per thread; a queue depth above 1 \
                 needs uring, uring-direct or auto (or use --threads)"
            ));
        }
        let cores = cores();
        if !(1..=cores).contains(&self.threads) {
            return bad(format!(
                "threads {} must be from 1 to the {cores} available core(s)",
                self.threads
            ));
        }
        if self.stop == Stop::Reads(0) || self.stop == Stop::Duration(Duration::ZERO) {
            return bad("a run needs at least one read (or a duration above 0)".into());
        }
        Ok(())
    }
}

/// The cores this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// What a run measured.
#[derive(Clone, Debug)]
pub struct Report {
    /// The method.
    pub method: Method,
    /// The options it ran with.
    pub options: Options,
    /// The file's size.
    pub file_bytes: u64,
    /// Reads completed.
    pub reads: u64,
    /// Bytes those reads returned.
    pub bytes: u64,
    /// Wall time of the reading, set-up (open, map, ring) excluded.
    pub elapsed: Duration,
    /// CPU time (user + system) of the process over the same span.
    pub cpu: Duration,
    /// Per-read latency in nanoseconds.
    pub latency: Histogram<u64>,
    /// Reads whose bytes were wrong (wrong offset, short or torn).
    pub mismatches: u64,
    /// The offset of the first wrong read, if any.
    pub first_mismatch: Option<u64>,
    /// How the reads were checked.
    pub check: Check,
    /// Reads whose bytes were compared with the truth (every read for [`Check::Generated`]).
    pub checked: u64,
    /// For `auto`: the backing that served at the end and why
    /// ([`crate::file::RandomAccessFile::why`]; at a queue depth above 1,
    /// [`crate::file::RandomAccessFile::batch_why`]).
    pub why: Option<String>,
}

impl Report {
    /// Reads per second.
    pub fn iops(&self) -> f64 {
        self.reads as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
    /// Bytes per second.
    pub fn bytes_per_s(&self) -> f64 {
        self.bytes as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
    /// The latency at quantile `q` (0.5, 0.99, 0.999) in microseconds.
    pub fn latency_us(&self, q: f64) -> f64 {
        self.latency.value_at_quantile(q) as f64 / 1000.0
    }
    /// Bytes per read, on average: the block size, less where the file's last block is
    /// short, and the whole file on every read of a file smaller than one block.
    pub fn bytes_per_read(&self) -> f64 {
        self.bytes as f64 / self.reads.max(1) as f64
    }
    /// CPU microseconds per read.
    pub fn cpu_us_per_read(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.reads.max(1) as f64
    }
    /// Whether every checked read returned the right bytes (and some were checked).
    pub fn verified(&self) -> bool {
        self.mismatches == 0 && self.checked > 0
    }
    /// The latency distribution as (latency µs, fraction of reads at or below) points, for a
    /// CDF: one per quantile step of the histogram.
    pub fn cdf_us(&self) -> Vec<(f64, f64)> {
        self.latency
            .iter_quantiles(1)
            .map(|v| {
                (
                    v.value_iterated_to() as f64 / 1000.0,
                    v.quantile_iterated_to(),
                )
            })
            .collect()
    }
}

/// An empty latency histogram (1 ns to 60 s, three significant digits).
pub(crate) fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3).expect("valid histogram bounds")
}

/// The file being read, as every method sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan<'a> {
    pub file: &'a File,
    pub len: u64,
    pub blocks: u64,
    pub options: &'a Options,
    pub check: Check,
}

impl Plan<'_> {
    /// Offset and length of block `k`.
    #[inline]
    pub fn extent(&self, k: u64) -> (u64, usize) {
        let offset = k * self.options.block as u64;
        (
            offset,
            (self.len - offset).min(self.options.block as u64) as usize,
        )
    }

    /// Thread `t`'s share of the reads (`None`: stop by time) and its block stream.
    pub fn share(&self, t: usize) -> (Option<u64>, Sampler) {
        let reads = match self.options.stop {
            Stop::Reads(n) => {
                let threads = self.options.threads as u64;
                Some(n / threads + u64::from((t as u64) < n % threads))
            }
            Stop::Duration(_) => None,
        };
        let sampler = Sampler::new(
            self.options.pattern,
            self.blocks,
            self.options.seed.wrapping_add(t as u64),
        );
        (reads, sampler)
    }

    /// The deadline, when stopping by time.
    pub fn deadline(&self, start: Instant) -> Option<Instant> {
        match self.options.stop {
            Stop::Duration(d) => Some(start + d),
            Stop::Reads(_) => None,
        }
    }
}

/// A synchronous method: one read at a time, shared by the threads.
pub(crate) trait Source: Sync {
    /// A buffer for one block, as the method needs it aligned.
    fn buffer(&self, block: usize) -> AlignedBuf {
        AlignedBuf::new(block, 64)
    }
    /// Reads `want` bytes at `offset` into `buf` (a whole block) and returns them.
    fn read<'a>(&self, offset: u64, want: usize, buf: &'a mut [u8]) -> Result<&'a [u8]>;
}

/// Runs a synchronous method on every thread of the plan.
pub(crate) fn run_source(plan: &Plan<'_>, source: &dyn Source) -> Result<Vec<Tally>> {
    run_threads(plan, |t| {
        let (mut left, mut sampler) = plan.share(t);
        let mut buf = source.buffer(plan.options.block);
        let mut tally = Tally::new(plan);
        let deadline = plan.deadline(Instant::now());
        loop {
            match &mut left {
                Some(0) => break,
                Some(n) => *n -= 1,
                None => {}
            }
            let (offset, want) = plan.extent(sampler.next_block());
            let start = Instant::now();
            let data = source.read(offset, want, &mut buf)?;
            let end = Instant::now();
            tally.record(offset, want, data, (end - start).as_nanos() as u64);
            if deadline.is_some_and(|d| end >= d) {
                break;
            }
        }
        Ok(tally)
    })
}

/// Runs `body(thread)` on each of the plan's threads.
pub(crate) fn run_threads(
    plan: &Plan<'_>,
    body: impl Fn(usize) -> Result<Tally> + Sync,
) -> Result<Vec<Tally>> {
    if plan.options.threads == 1 {
        return Ok(vec![body(0)?]);
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..plan.options.threads)
            .map(|t| {
                let body = &body;
                s.spawn(move || body(t))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a reader thread panicked"))
            .collect()
    })
}

/// Opens `path` for random reads: a regular, non-empty file on a real file system.
///
/// The file is opened to be probed ([`Input::open_to_probe`]), so a FIFO without a writer
/// is refused here instead of hanging the open, and made blocking again before any read. A
/// file on procfs or sysfs is refused for the reason `count` refuses it for sized methods:
/// its reported size (0 or 4096) is not its contents', so the blocks would not be the file's.
fn open(path: &Path) -> Result<Input> {
    let input = Input::open_to_probe(path)?;
    if input.kind() != FileKind::Regular {
        return Err(Error::InvalidOption(format!(
            "is a {}, not a regular file; random reads need a regular file",
            input.kind().describe()
        )));
    }
    match input.sized_len("random") {
        Ok(0) => Err(Error::InvalidOption(
            "the file is empty: there is no block to read".into(),
        )),
        Ok(_) => {
            input.set_blocking()?;
            Ok(input)
        }
        Err(_) => Err(Error::InvalidOption(
            "its size is not real (a /proc or /sys file); random reads need a file on a real \
             file system"
                .into(),
        )),
    }
}

/// Reads random blocks of `path` with `method` as `options` say, verifying each.
pub fn run(method: Method, path: &Path, options: &Options) -> Result<Report> {
    options.validate(method)?;
    method.availability().map_err(|reason| Error::Unavailable {
        method: method.name(),
        reason,
    })?;
    let input = open(path)?;
    let file = input.file();
    let len = input.reported_len();
    let plan = Plan {
        file,
        len,
        blocks: len.div_ceil(options.block as u64),
        options,
        check: Check::of(file, len, options.block)?,
    };
    // Opening and mapping stay outside the timer; a ring is set up per thread inside it
    // (tens of microseconds).
    let mut why = None;
    let (tallies, elapsed, cpu) = match method {
        Method::Pread => timed(|| run_source(&plan, &pread::Pread::new(file)))?,
        Method::PreadDirect => {
            let source = pread_direct::PreadDirect::open(path, file)?;
            timed(|| run_source(&plan, &source))?
        }
        Method::Mmap => {
            let source = mmap::Mapped::new(file, len, mmap::Advice::Normal)?;
            let out = timed(|| run_source(&plan, &source))?;
            source.check()?;
            out
        }
        Method::MmapRandom => {
            let source = mmap_random::open(file, len)?;
            let out = timed(|| run_source(&plan, &source))?;
            source.check()?;
            out
        }
        Method::Auto if options.queue_depth > 1 => {
            let file = library_default::open_batched(path, options.queue_depth)?;
            let out = timed(|| library_default::run_batches(&plan, &file))?;
            why = Some(file.batch_why());
            out
        }
        Method::Auto => {
            let source = library_default::LibraryDefault::open(path)?;
            let out = timed(|| run_source(&plan, &source))?;
            why = Some(source.why());
            out
        }
        Method::Uring => timed(|| uring::run(&plan))?,
        Method::UringDirect => {
            let direct = uring_direct::open(path, file)?;
            timed(|| uring_direct::run(&plan, &direct))?
        }
    };
    let mut report = Report {
        method,
        options: *options,
        file_bytes: len,
        reads: 0,
        bytes: 0,
        elapsed,
        cpu,
        latency: histogram(),
        mismatches: 0,
        first_mismatch: None,
        check: plan.check,
        checked: 0,
        why,
    };
    for mut t in tallies {
        t.check_samples(file)?;
        report.checked += t.checked;
        report.reads += t.reads;
        report.bytes += t.bytes;
        report.mismatches += t.mismatches;
        report.first_mismatch = report.first_mismatch.or(t.first_mismatch);
        report
            .latency
            .add(&t.latency)
            .expect("histograms with the same bounds merge");
    }
    Ok(report)
}

/// Runs `f`, returning its result with the wall and process CPU time it took.
fn timed<T>(f: impl FnOnce() -> Result<T>) -> Result<(T, Duration, Duration)> {
    let cpu_before = process_cpu();
    let start = Instant::now();
    let out = f()?;
    let elapsed = start.elapsed();
    Ok((out, elapsed, process_cpu().saturating_sub(cpu_before)))
}

/// User + system CPU time of this process so far.
fn process_cpu() -> Duration {
    // SAFETY: all-zero is a valid rusage, and getrusage only writes to it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is valid for writes.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}
