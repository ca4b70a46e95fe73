//! The calibration: when no `iolab bench` results measured a figure a finding needs, it is
//! measured here, briefly, with the same system calls the traced program made and the
//! calls its fix would make:
//!
//! - an empty system call (`getppid`): the round trip a call's own time leaves out;
//! - small writes: `write(2)` of the traced size into a pipe read by another thread, into
//!   a pseudo-terminal drained by another thread, or into a file in the page cache; the
//!   buffered fix: the same sinks, 64 KiB per `write(2)`;
//! - a pipe's reader: the CPU time per read of a thread reading, 128 KiB at a time (`cat`'s
//!   buffer), what another thread writes into a pipe in pieces of the traced size;
//! - `O_DIRECT` writes of the traced size, and of 1 MiB, appending to a file **in the traced
//!   file's folder** (its device decides what they cost);
//! - reads: `pread(2)` of the traced size, and of 1 MiB, over a cached 64 MiB file;
//! - random reads: 4 KiB `pread(2)`s at scattered offsets, one at a time, and the random
//!   suite's methods (`mmap-random`, `uring` at depth 32), over the cached file; cold: the
//!   same with `O_DIRECT` (`pread-direct`, `uring-direct`) over a file in the traced file's
//!   folder;
//! - syncs: records of the traced size appended to a growing file in the traced file's
//!   folder with the traced call (`fsync`, `fdatasync` or `O_DSYNC` writes) after each, or
//!   one `fdatasync` per 1000; a folder's `fsync` after a file was made in it; a file of a
//!   journal's size made in the folder and removed (the `unlink` the tracer does not see);
//! - the in-place edit: [`iolab_lab::edit::EditOptions`] replacing a byte in a 16 MiB copy;
//! - an interpreter's own work around each call (Python's flush per record, its logging
//!   handler's), with the traced program's own interpreter (`costs/runtime.rs`).
//!
//! Each figure is the median of many samples (a sync's cost varies from one to the next),
//! measured for at least its budget. Files are made without a name where the file system
//! allows (`O_TMPFILE`), so nothing is left behind whatever happens to iolab; the few named
//! ones (a folder's sync needs a name in it; the edit opens a path) are removed at once, and
//! on Ctrl-C: the calibration stops between samples when a signal arrives
//! ([`crate::signals`]), keeping what it measured.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::device::{churn, dir_syncs, direct_writes, syncs, unlinks};
use super::sampling::{BUDGET, MIN_SAMPLES, Samples, bytes_text, named, room, sample, unnamed};
use super::{Figure, Need, rate, seconds};
use crate::model::Kind;

/// The cached file the reads use.
const DATA_BYTES: u64 = 64 << 20;
/// The buffered fix's write size: `AppendFile`'s and `StdoutWriter`'s 64 KiB.
const BUFFER: usize = 64 << 10;
/// The big reads' and direct writes' size.
pub(super) const BIG: usize = 1 << 20;
/// Writes all of `buf` to `fd` with `write(2)` (one call, unless the sink takes less).
fn write_fd(fd: i32, buf: &[u8]) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        // SAFETY: writes from a live slice.
        let n = unsafe { libc::write(fd, buf[done..].as_ptr().cast(), buf.len() - done) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        done += n as usize;
    }
    Ok(())
}

/// A sink of `kind` with a thread draining it: (write end, the drainer).
fn sink(kind: Kind, dir: &Path) -> io::Result<(OwnedFd, Option<std::thread::JoinHandle<()>>)> {
    let drain = |read: OwnedFd| {
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            // SAFETY: reads into a live buffer until end of file or error.
            while unsafe { libc::read(read.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
        })
    };
    match kind {
        Kind::Pipe => {
            let mut fds = [0; 2];
            // SAFETY: pipe2 fills two descriptors.
            if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: both are fresh descriptors owned by nobody else.
            let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
            Ok((w, Some(drain(r))))
        }
        Kind::Tty => {
            // SAFETY: posix_openpt returns a new descriptor or -1.
            let master =
                unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) };
            if master < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: a fresh descriptor owned by nobody else.
            let master = unsafe { OwnedFd::from_raw_fd(master) };
            let mut name = [0 as libc::c_char; 128];
            // SAFETY: grantpt/unlockpt on our master; ptsname_r writes a NUL-terminated name
            // into `name`.
            let ok = unsafe {
                libc::grantpt(master.as_raw_fd()) == 0
                    && libc::unlockpt(master.as_raw_fd()) == 0
                    && libc::ptsname_r(master.as_raw_fd(), name.as_mut_ptr(), name.len()) == 0
            };
            if !ok {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `name` is NUL-terminated by ptsname_r.
            let slave = unsafe {
                libc::open(
                    name.as_ptr(),
                    libc::O_WRONLY | libc::O_NOCTTY | libc::O_CLOEXEC,
                )
            };
            if slave < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: a fresh descriptor owned by nobody else.
            Ok((unsafe { OwnedFd::from_raw_fd(slave) }, Some(drain(master))))
        }
        Kind::File => Ok((unnamed(dir, 0)?.into(), None)),
        _ => Err(io::Error::other(format!(
            "no calibration for writes to {}",
            kind.article()
        ))),
    }
}

/// The reader's buffer in [`pipe_reads`]: `cat`'s 128 KiB.
const READER_BUFFER: usize = 128 << 10;

/// This thread's CPU time (user and system), in seconds.
fn thread_cpu() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills a live timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// The CPU time per read of this thread reading what another thread writes into a pipe in
/// pieces of `size` bytes, as they come (with `onward`, writing each read on to
/// `/dev/null`, as `cat > /dev/null` does): the reads of a pipe's reader that keeps up, each
/// with its sleep on the empty pipe and its wake-up (CPU time, so the waits for the writer
/// are left out), and per byte at the pace of a writer that writes as fast as its calls
/// allow; both times the share of it the writer waited for a CPU meanwhile (what of the
/// reader's work fell on the writer's wall clock: none with a CPU free for the reader).
/// Median of batches of 64 reads, for at least [`BUDGET`].
fn pipe_reads(size: usize, onward: bool) -> io::Result<Figure> {
    let null = if onward {
        Some(File::options().write(true).open("/dev/null")?)
    } else {
        None
    };
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both are fresh descriptors owned by nobody else.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let piece = vec![b'x'; size];
            let delay = run_delay();
            while !stop.load(std::sync::atomic::Ordering::Relaxed)
                && write_fd(w.as_raw_fd(), &piece).is_ok()
            {}
            Some(run_delay()? - delay?)
        })
    };
    let mut buf = vec![0u8; READER_BUFFER];
    let (mut samples, mut reads, mut bytes) = (Vec::new(), 0u64, 0u64);
    let started = Instant::now();
    let reader_cpu = thread_cpu();
    let mut result = Ok(());
    while (samples.len() < MIN_SAMPLES || started.elapsed() < BUDGET)
        && started.elapsed() < BUDGET * 4
    {
        if crate::signals::interrupted().is_some() && !samples.is_empty() {
            break;
        }
        let cpu = thread_cpu();
        for _ in 0..64 {
            // SAFETY: reads into a live buffer.
            let n = unsafe { libc::read(r.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                result = Err(io::Error::last_os_error());
                break;
            }
            reads += 1;
            bytes += n as u64;
            if let Some(null) = &null {
                write_fd(null.as_raw_fd(), &buf[..n as usize])?;
            }
        }
        if result.is_err() {
            break;
        }
        samples.push((thread_cpu() - cpu) / 64.0);
    }
    let reader_cpu = thread_cpu() - reader_cpu;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    drop(r);
    let waited = writer.join().ok().flatten();
    result?;
    let cpu = Samples(samples).median();
    // The reader's CPU time is the writer's wall clock only as far as the writer waited
    // for a CPU meanwhile: with one free, the reader runs beside it.
    let (share, why) = match waited {
        Some(w) => (
            (w / reader_cpu.max(1e-9)).clamp(0.0, 1.0),
            format!("the writer beside it waited {} for a CPU", seconds(w)),
        ),
        None => (1.0, "no scheduler statistics: all of it counts".into()),
    };
    let per_read = cpu * share;
    // Per byte: the same over the bytes a read took here, at the pace of a writer that
    // writes as fast as its calls allow (the most a read finds).
    let per_byte = per_read * reads as f64 / bytes.max(1) as f64;
    Ok(Figure::new(
        per_read,
        per_byte,
        format!(
            "calibrated here: {reads} reads of a pipe another thread wrote {} at a time into, taken as they came{} ({} a read on average): {} of the reader's CPU time each ({} in all; {why}): {} each on the writer's wall clock",
            iolab_lab::units::format_bytes(size as u64),
            if onward {
                ", each written on to /dev/null"
            } else {
                ""
            },
            iolab_lab::units::format_bytes(bytes / reads.max(1)),
            seconds(cpu),
            seconds(reader_cpu),
            seconds(per_read)
        ),
    ))
}

/// How long this thread has waited on a run queue for a CPU, in seconds
/// (`/proc/thread-self/schedstat`'s second field); `None` without scheduler statistics.
fn run_delay() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(ns as f64 * 1e-9)
}

fn where_(kind: Kind) -> &'static str {
    match kind {
        Kind::Pipe => "into a pipe read by another thread",
        Kind::Tty => "into a pseudo-terminal drained by another thread",
        _ => "to a file in the page cache",
    }
}

/// A calibration in progress: its private folder (for the edit) and cached data file.
#[derive(Default)]
pub struct Calibration {
    dir: Option<PathBuf>,
    data: Option<File>,
    cold: Option<(PathBuf, File)>,
}

impl Drop for Calibration {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The path by which another call can open `file` again (it may have no name).
fn proc_path(file: &File) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()))
}

impl Calibration {
    /// A calibration that has made nothing yet.
    pub fn new() -> Calibration {
        Calibration::default()
    }

    /// The private scratch folder, made on first use.
    fn dir(&mut self) -> io::Result<PathBuf> {
        if let Some(d) = &self.dir {
            return Ok(d.clone());
        }
        let base = std::env::temp_dir();
        for _ in 0..100 {
            let d = named(&base, "calibration");
            match std::fs::create_dir(&d) {
                Ok(()) => {
                    self.dir = Some(d.clone());
                    return Ok(d);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other("cannot make a scratch folder"))
    }

    /// The cached data file the reads use, written on first use.
    fn data(&mut self) -> io::Result<&File> {
        if self.data.is_none() {
            let f = unnamed(&std::env::temp_dir(), 0)?;
            fill(&f, DATA_BYTES)?;
            self.data = Some(f);
        }
        Ok(self.data.as_ref().expect("made above"))
    }

    /// A file in `dir` whose reads miss the cache (`O_DIRECT`), written on first use.
    fn cold(&mut self, dir: &Path) -> io::Result<&File> {
        if self.cold.as_ref().is_none_or(|(d, _)| d != dir) {
            room(dir, DATA_BYTES)?;
            let f = unnamed(dir, 0)?;
            fill(&f, DATA_BYTES)?;
            f.sync_data()?;
            self.cold = Some((dir.to_path_buf(), f));
        }
        Ok(&self.cold.as_ref().expect("made above").1)
    }

    /// Measures the figure for `need`.
    pub fn figure(&mut self, need: &Need) -> io::Result<Figure> {
        match need {
            Need::Syscall => syscall(),
            Need::SmallWrite { kind, size } => {
                self.writes(*kind, (*size).clamp(1, BIG as u64) as usize, false)
            }
            Need::BufferedWrite { kind, .. } => self.writes(*kind, BUFFER, true),
            Need::PipeRead { size, onward } => {
                pipe_reads((*size).clamp(1, BIG as u64) as usize, *onward)
            }
            Need::DirectWrite { dir, size } => direct_writes(dir, (*size).clamp(1, BIG as u64)),
            Need::SmallRead { size } => self.reads((*size).clamp(1, BIG as u64) as usize, false),
            Need::BigRead => self.reads(BIG, true),
            Need::RandomRead { cold: false, .. } => self.random_pread(),
            Need::RandomRead { cold: true, dir } => self.cold_random(dir, false),
            Need::BestRandomRead { cold: false, .. } => self.best_random(),
            Need::BestRandomRead { cold: true, dir } => self.cold_random(dir, true),
            Need::Sync {
                dir,
                call,
                record,
                every,
            } => syncs(dir, *call, (*record).clamp(1, BIG as u64) as usize, *every),
            Need::DirSync { dir } => dir_syncs(dir),
            Need::Churn { dir } => churn(dir),
            Need::InPlaceEdit => self.edit(),
            Need::Unlink { dir, size } => unlinks(dir, *size),
            Need::Runtime { exe, idiom, size } => super::runtime::figure(exe, *idiom, *size),
        }
    }

    fn writes(&mut self, kind: Kind, size: usize, buffered: bool) -> io::Result<Figure> {
        let dir = std::env::temp_dir();
        let (fd, drainer) = sink(kind, &dir)?;
        let buf = vec![b'x'; size];
        let raw = fd.as_raw_fd();
        let batch = if buffered { 4 } else { 64 };
        // A file grows to DATA_BYTES, then is emptied and grows again: each write appends
        // new pages, as a program's output does, without filling memory with dirty pages
        // the kernel would then make the writer wait for (that took 64 KiB writes from 5.6
        // GB/s to 0.44 GB/s).
        let file = kind == Kind::File;
        let mut off = 0u64;
        let mut samples = sample(BUDGET, MIN_SAMPLES, BUDGET * 4, batch as f64, || {
            for _ in 0..batch {
                if file && off + size as u64 > DATA_BYTES {
                    // SAFETY: ftruncate and lseek on our own descriptor.
                    unsafe {
                        libc::ftruncate(raw, 0);
                        libc::lseek(raw, 0, libc::SEEK_SET);
                    }
                    off = 0;
                }
                write_fd(raw, &buf)?;
                off += size as u64;
            }
            Ok(())
        })?;
        drop(fd);
        if let Some(d) = drainer {
            let _ = d.join();
        }
        let calls = samples.len() * batch;
        let per_call = samples.median();
        Ok(if buffered {
            Figure::new(
                0.0,
                per_call / size as f64,
                format!(
                    "calibrated here: {calls} writes of 64 KiB {}: {}",
                    where_(kind),
                    rate(size as f64 / per_call)
                ),
            )
        } else {
            Figure::new(
                per_call,
                0.0,
                format!(
                    "calibrated here: {calls} writes of {} {}: {} each",
                    iolab_lab::units::format_bytes(size as u64),
                    where_(kind),
                    seconds(per_call)
                ),
            )
        })
    }

    fn reads(&mut self, size: usize, big: bool) -> io::Result<Figure> {
        let file = self.data()?;
        let mut buf = vec![0u8; size];
        let mut off = 0u64;
        let batch = if big { 4 } else { 64 };
        let mut samples = sample(BUDGET, MIN_SAMPLES, BUDGET * 4, batch as f64, || {
            for _ in 0..batch {
                if off + size as u64 > DATA_BYTES {
                    off = 0;
                }
                file.read_exact_at(&mut buf, off)?;
                off += size as u64;
            }
            Ok(())
        })?;
        let calls = samples.len() * batch;
        let per_call = samples.median();
        Ok(if big {
            let mut f = Figure::new(
                0.0,
                per_call / size as f64,
                format!(
                    "calibrated here: {calls} reads of 1 MiB of a cached file: {}",
                    rate(size as f64 / per_call)
                ),
            );
            f.cli = Some("iolab count FILE (or reads of 128 KiB and more)".into());
            f
        } else {
            Figure::new(
                per_call,
                0.0,
                format!(
                    "calibrated here: {calls} reads of {} of a cached file: {} each",
                    bytes_text(size as u64),
                    seconds(per_call)
                ),
            )
        })
    }

    fn random_pread(&mut self) -> io::Result<Figure> {
        let file = self.data()?;
        let mut buf = vec![0u8; 4096];
        let per = scattered_preads(file, &mut buf, DATA_BYTES, BUDGET)?;
        Ok(Figure::new(
            per,
            0.0,
            format!(
                "calibrated here: preads of 4 KiB at scattered offsets of a cached file, one at a time: {} each",
                seconds(per)
            ),
        ))
    }

    fn best_random(&mut self) -> io::Result<Figure> {
        use iolab_lab::random::Method;
        let path = proc_path(self.data()?);
        let (per, method, depth) = best_of(&path, &[(Method::MmapRandom, 1), (Method::Uring, 32)])?;
        Ok(random_figure(per, method, depth, "a cached file"))
    }

    /// Scattered 4 KiB reads that miss the cache: `pread` with `O_DIRECT` at depth 1, or
    /// the best of `pread-direct` and `uring-direct` at depth 32 (`best`), over a file in
    /// `dir`.
    fn cold_random(&mut self, dir: &Path, best: bool) -> io::Result<Figure> {
        use iolab_lab::random::Method;
        let path = proc_path(self.cold(dir)?);
        let place = format!("a file in {} read with O_DIRECT", dir.display());
        if best {
            let (per, method, depth) = best_of(&path, &[(Method::UringDirect, 32)])?;
            return Ok(random_figure(per, method, depth, &place));
        }
        let (per, _, _) = best_of(&path, &[(Method::PreadDirect, 1)])?;
        Ok(Figure::new(
            per,
            0.0,
            format!(
                "calibrated here: preads of 4 KiB at scattered offsets of {place}, one at a time: {} each",
                seconds(per)
            ),
        ))
    }

    fn edit(&mut self) -> io::Result<Figure> {
        let path = self.dir()?.join("edit.csv");
        let row = b"1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16\n";
        let bytes = 16u64 << 20;
        let text: Vec<u8> = row.iter().copied().cycle().take(bytes as usize).collect();
        std::fs::write(&path, &text)?;
        let editor = iolab_lab::edit::EditOptions::new()
            .strategy(iolab_lab::edit::EditStrategy::Mmap)
            .durable(false);
        let started = Instant::now();
        let done = editor
            .replace_byte(&path, b',', b';')
            .map_err(|e| io::Error::other(e.to_string()));
        let t = started.elapsed().as_secs_f64();
        let _ = std::fs::remove_file(&path);
        done?;
        let mut f = Figure::new(
            0.0,
            t / bytes as f64,
            format!(
                "calibrated here: iolab_lab::edit mmap replacing a byte in place in a cached 16 MiB file: {}",
                seconds(t)
            ),
        );
        f.cli = Some("iolab edit replace --from X --to Y FILE".into());
        f.library = Some(iolab_lab::snippet::edit(
            iolab_lab::snippet::Edit::Replace {
                from: b',',
                to: b';',
            },
            Some(iolab::EditStrategy::Mmap),
            true,
        ));
        Ok(f)
    }
}

/// Writes `bytes` of a repeating pattern into `f`.
fn fill(f: &File, bytes: u64) -> io::Result<()> {
    let chunk: Vec<u8> = (0..BUFFER).map(|i| (i % 251) as u8).collect();
    let mut off = 0;
    while off < bytes {
        f.write_all_at(&chunk, off)?;
        off += chunk.len() as u64;
    }
    Ok(())
}

fn syscall() -> io::Result<Figure> {
    let mut samples = sample(BUDGET / 3, MIN_SAMPLES, BUDGET, 256.0, || {
        for _ in 0..256 {
            // SAFETY: getppid has no arguments and cannot fail.
            std::hint::black_box(unsafe { libc::syscall(libc::SYS_getppid) });
        }
        Ok(())
    })?;
    let per = samples.median();
    Ok(Figure::new(
        per,
        0.0,
        format!(
            "calibrated here: an empty system call (getppid), into the kernel and back: {}",
            seconds(per)
        ),
    ))
}

/// Median seconds per 4 KiB `pread` at scattered block offsets of `file` (`bytes` long).
fn scattered_preads(file: &File, buf: &mut [u8], bytes: u64, budget: Duration) -> io::Result<f64> {
    let blocks = bytes / 4096;
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut samples = sample(budget, MIN_SAMPLES, budget * 4, 16.0, || {
        for _ in 0..16 {
            // xorshift64: scattered block numbers.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            file.read_exact_at(buf, (x % blocks) * 4096)?;
        }
        Ok(())
    })?;
    Ok(samples.median())
}

/// The fastest of `methods` (with their depths) of `iolab_lab::random` over `path`: seconds
/// per read, the method and its depth.
fn best_of(
    path: &Path,
    methods: &[(iolab_lab::random::Method, usize)],
) -> io::Result<(f64, iolab_lab::random::Method, usize)> {
    use iolab_lab::random::{Options, Stop};
    let mut best: Option<(f64, iolab_lab::random::Method, usize)> = None;
    let mut why = String::from("no random method can run here");
    for &(method, depth) in methods {
        if let Err(reason) = method.availability() {
            why = reason;
            continue;
        }
        let options = Options::new()
            .queue_depth(depth)
            .stop(Stop::Duration(BUDGET));
        match iolab_lab::random::run(method, path, &options) {
            Ok(report) => {
                let per = report.elapsed.as_secs_f64() / report.reads.max(1) as f64;
                if best.is_none_or(|(b, _, _)| per < b) {
                    best = Some((per, method, depth));
                }
            }
            Err(e) => why = e.to_string(),
        }
    }
    best.ok_or_else(|| io::Error::other(why))
}

fn random_figure(per: f64, method: iolab_lab::random::Method, depth: usize, place: &str) -> Figure {
    let mut f = Figure::new(
        per,
        0.0,
        format!(
            "calibrated here: iolab_lab::random {method} at depth {depth} over {place}: {} per read",
            seconds(per)
        ),
    );
    f.cli = Some(format!(
        "iolab random --method {method} --queue-depth {depth} FILE"
    ));
    f.library = Some(iolab_lab::snippet::random(method, 4096, depth as u64, 1));
    f
}
