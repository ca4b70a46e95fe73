//! The calibration: when no `iolab bench` results measured a figure a finding needs, it is
//! measured here, briefly (about 0.2 s each; syncs at most 1 s), with the same system calls
//! the traced program made and the library calls the fix names:
//!
//! - small writes: `write(2)` of the traced size into a pipe read by another thread, into a
//!   pseudo-terminal drained by another thread (through its line discipline, as a real
//!   terminal), or into a file in the page cache;
//! - the buffered fix: the same sinks, 64 KiB per `write(2)`;
//! - reads: `pread(2)` of the traced size, and of 1 MiB, over a cached 64 MiB file;
//! - random reads: 4 KiB `pread(2)`s at scattered offsets of that file, one at a time, and
//!   [`iolab::random::run`] with `mmap-random` and `uring` at depth 32 (the fastest wins);
//! - syncs: a 512-byte `pwrite(2)` and an `fdatasync(2)` per record, in the traced file's
//!   folder (the file system decides what a sync costs), and one sync per 1000 records;
//! - the in-place edit: [`iolab::edit::Editor`] replacing a byte in a 16 MiB copy.
//!
//! Scratch files go in a fresh folder under the temporary folder, removed at the end.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{Figure, Need};
use crate::model::Kind;

/// How long one figure is measured for.
const BUDGET: Duration = Duration::from_millis(200);
/// At most this long for the syncs (one can take tens of milliseconds).
const SYNC_BUDGET: Duration = Duration::from_secs(1);
/// The cached file the reads use.
const DATA_BYTES: u64 = 64 << 20;
/// The buffered fix's write size: `AppendFile`'s and `StdoutWriter`'s 64 KiB.
const BUFFER: usize = 64 << 10;

/// A calibration in progress: its scratch folder and data file.
pub struct Calibration {
    dir: Option<PathBuf>,
    data: Option<PathBuf>,
}

impl Drop for Calibration {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Runs `op` (which does `batch` calls) until [`BUDGET`] is spent; returns calls and time.
fn repeat(
    budget: Duration,
    batch: u64,
    mut op: impl FnMut() -> io::Result<()>,
) -> io::Result<(u64, Duration)> {
    let started = Instant::now();
    let mut calls = 0;
    while started.elapsed() < budget {
        op()?;
        calls += batch;
    }
    Ok((calls.max(1), started.elapsed()))
}

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
        Kind::File => {
            let f = OpenOptions::new()
                .create(true)
                .truncate(true)
                .write(true)
                .open(dir.join("writes"))?;
            Ok((f.into(), None))
        }
        _ => Err(io::Error::other(format!(
            "no calibration for writes to {}",
            kind.article()
        ))),
    }
}

fn where_(kind: Kind) -> &'static str {
    match kind {
        Kind::Pipe => "into a pipe read by another thread",
        Kind::Tty => "into a pseudo-terminal drained by another thread",
        _ => "to a file in the page cache",
    }
}

impl Calibration {
    /// A calibration that has made nothing yet.
    pub fn new() -> Calibration {
        Calibration {
            dir: None,
            data: None,
        }
    }

    /// The scratch folder, made on first use.
    fn dir(&mut self) -> io::Result<PathBuf> {
        if let Some(d) = &self.dir {
            return Ok(d.clone());
        }
        let base = std::env::temp_dir();
        for i in 0..100 {
            // SAFETY: getpid cannot fail.
            let d = base.join(format!("iolab-trace-{}-{i}", unsafe { libc::getpid() }));
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
    fn data(&mut self) -> io::Result<PathBuf> {
        if let Some(d) = &self.data {
            return Ok(d.clone());
        }
        let path = self.dir()?.join("data");
        let f = File::create(&path)?;
        let chunk: Vec<u8> = (0..BUFFER).map(|i| (i % 251) as u8).collect();
        let mut off = 0;
        while off < DATA_BYTES {
            f.write_all_at(&chunk, off)?;
            off += chunk.len() as u64;
        }
        self.data = Some(path.clone());
        Ok(path)
    }

    /// Measures the figure for `need`.
    pub fn figure(&mut self, need: &Need) -> io::Result<Figure> {
        match need {
            Need::SmallWrite { kind, size } => {
                self.writes(*kind, (*size).clamp(1, 1 << 20) as usize, false)
            }
            Need::BufferedWrite { kind, .. } => self.writes(*kind, BUFFER, true),
            Need::SmallRead { size } => self.reads((*size).clamp(1, 1 << 20) as usize, false),
            Need::BestRead => self.reads(1 << 20, true),
            Need::RandomRead { cold: false } => self.random_pread(),
            Need::BestRandomRead { cold: false } => self.best_random(),
            Need::RandomRead { cold: true } | Need::BestRandomRead { cold: true } => {
                Err(io::Error::other(
                    "reads that miss the page cache are not calibrated (run `iolab bench random`)",
                ))
            }
            Need::SyncedRecord { dir } => self.syncs(dir, 1),
            Need::GroupCommit { dir } => self.syncs(dir, 1000),
            Need::InPlaceEdit => self.edit(),
        }
    }

    fn writes(&mut self, kind: Kind, size: usize, buffered: bool) -> io::Result<Figure> {
        let dir = self.dir()?;
        let (fd, drainer) = sink(kind, &dir)?;
        let buf = vec![b'x'; size];
        let raw = fd.as_raw_fd();
        let (calls, t) = repeat(BUDGET, 64, || {
            for _ in 0..64 {
                write_fd(raw, &buf)?;
            }
            Ok(())
        })?;
        drop(fd);
        if let Some(d) = drainer {
            let _ = d.join();
        }
        let _ = std::fs::remove_file(dir.join("writes"));
        let per_call = t.as_secs_f64() / calls as f64;
        Ok(if buffered {
            Figure::new(
                0.0,
                per_call / size as f64,
                format!(
                    "calibrated here: {calls} writes of 64 KiB {}: {}",
                    where_(kind),
                    super::rate(size as f64 / per_call)
                ),
            )
        } else {
            Figure::new(
                per_call,
                0.0,
                format!(
                    "calibrated here: {calls} writes of {} {}: {} each",
                    iolab::units::format_bytes(size as u64),
                    where_(kind),
                    super::seconds(per_call)
                ),
            )
        })
    }

    fn reads(&mut self, size: usize, best: bool) -> io::Result<Figure> {
        let file = File::open(self.data()?)?;
        let mut buf = vec![0u8; size];
        let mut off = 0u64;
        let (calls, t) = repeat(BUDGET, 64, || {
            for _ in 0..64 {
                if off + size as u64 > DATA_BYTES {
                    off = 0;
                }
                file.read_exact_at(&mut buf, off)?;
                off += size as u64;
            }
            Ok(())
        })?;
        let per_call = t.as_secs_f64() / calls as f64;
        Ok(if best {
            let mut f = Figure::new(
                0.0,
                per_call / size as f64,
                format!(
                    "calibrated here: {calls} reads of 1 MiB of a cached file: {}",
                    super::rate(size as f64 / per_call)
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
                    iolab::units::format_bytes(size as u64),
                    super::seconds(per_call)
                ),
            )
        })
    }

    fn random_pread(&mut self) -> io::Result<Figure> {
        let file = File::open(self.data()?)?;
        let mut buf = vec![0u8; 4096];
        let blocks = DATA_BYTES / 4096;
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let (calls, t) = repeat(BUDGET, 64, || {
            for _ in 0..64 {
                // xorshift64: scattered block numbers.
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                file.read_exact_at(&mut buf, (x % blocks) * 4096)?;
            }
            Ok(())
        })?;
        let per = t.as_secs_f64() / calls as f64;
        Ok(Figure::new(
            per,
            0.0,
            format!(
                "calibrated here: {calls} preads of 4 KiB at scattered offsets of a cached file: {} each",
                super::seconds(per)
            ),
        ))
    }

    fn best_random(&mut self) -> io::Result<Figure> {
        use iolab::random::{Method, Options, Stop};
        let path = self.data()?;
        let mut best: Option<(f64, Method, usize)> = None;
        for (method, depth) in [(Method::MmapRandom, 1), (Method::Uring, 32)] {
            if method.availability().is_err() {
                continue;
            }
            let options = Options::new()
                .queue_depth(depth)
                .stop(Stop::Duration(BUDGET));
            if let Ok(report) = iolab::random::run(method, &path, &options) {
                let per = report.elapsed.as_secs_f64() / report.reads.max(1) as f64;
                if best.is_none_or(|(b, _, _)| per < b) {
                    best = Some((per, method, depth));
                }
            }
        }
        let (per, method, depth) = best.ok_or_else(|| io::Error::other("no random method ran"))?;
        let mut f = Figure::new(
            per,
            0.0,
            format!(
                "calibrated here: iolab::random {method} at depth {depth} over a cached file: {} per read",
                super::seconds(per)
            ),
        );
        f.cli = Some(format!(
            "iolab random --method {method} --queue-depth {depth} FILE"
        ));
        f.library = Some(if method == Method::Uring {
            "iolab::random::run(Method::Uring, path, &Options::new().queue_depth(32))".to_string()
        } else {
            "iolab::RandomAccessFile::open(path)?.read_at(offset, &mut buf)".to_string()
        });
        Ok(f)
    }

    fn syncs(&mut self, dir: &Path, every: u64) -> io::Result<Figure> {
        // In the traced file's folder when this process may write there.
        // SAFETY: getpid cannot fail.
        let name = format!(".iolab-trace-sync-{}", unsafe { libc::getpid() });
        let (path, place) = match OpenOptions::new()
            .create_new(true)
            .write(true)
            .mode(0o600)
            .open(dir.join(&name))
        {
            Ok(_) => (dir.join(&name), format!("in {}", dir.display())),
            Err(_) => {
                let d = self.dir()?;
                (
                    d.join(name),
                    format!(
                        "in {} (the traced file's folder is not writable)",
                        d.display()
                    ),
                )
            }
        };
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&path)?;
        let record = [b'r'; 512];
        let mut end = 0u64;
        let mut records = 0u64;
        // Twenty synced records, or two syncs' worth of batched ones; never past the budget.
        let wanted = if every == 1 { 20 } else { 2 * every };
        let started = Instant::now();
        let result = (|| {
            while records < wanted && started.elapsed() < SYNC_BUDGET {
                file.write_all_at(&record, end)?;
                end += record.len() as u64;
                records += 1;
                if records.is_multiple_of(every) {
                    file.sync_data()?;
                }
            }
            Ok::<(), io::Error>(())
        })();
        let t = started.elapsed();
        drop(file);
        let _ = std::fs::remove_file(&path);
        result?;
        let per = t.as_secs_f64() / records.max(1) as f64;
        let what = if every == 1 {
            "a 512-byte pwrite and an fdatasync per record".to_string()
        } else {
            format!("512-byte pwrites, one fdatasync per {every}")
        };
        Ok(Figure::new(
            per,
            0.0,
            format!(
                "calibrated here: {records} records, {what}, {place}: {} each",
                super::seconds(per)
            ),
        ))
    }

    fn edit(&mut self) -> io::Result<Figure> {
        let path = self.dir()?.join("edit.csv");
        let row = b"1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16\n";
        let bytes = 16u64 << 20;
        let text: Vec<u8> = row.iter().copied().cycle().take(bytes as usize).collect();
        std::fs::write(&path, &text)?;
        let editor = iolab::edit::Editor::new(iolab::edit::Strategy::Mmap).durable(false);
        let started = Instant::now();
        editor
            .replace_byte(&path, b',', b';')
            .map_err(|e| io::Error::other(e.to_string()))?;
        let t = started.elapsed().as_secs_f64();
        let _ = std::fs::remove_file(&path);
        let mut f = Figure::new(
            0.0,
            t / bytes as f64,
            format!(
                "calibrated here: iolab::edit mmap replacing a byte in place in a cached 16 MiB file: {}",
                super::seconds(t)
            ),
        );
        f.cli = Some("iolab edit replace --from X --to Y FILE".into());
        f.library =
            Some("iolab::edit::Editor::new(Strategy::Mmap).replace_byte(path, from, to)".into());
        Ok(f)
    }
}

impl Default for Calibration {
    fn default() -> Calibration {
        Calibration::new()
    }
}
