//! How the calibration measures: a figure's samples taken until its budget is spent, and
//! the scratch files they use (unnamed where the file system allows, named ones removed at
//! once), in the traced file's folder when it has room.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long one figure is measured for, at least.
pub(super) const BUDGET: Duration = Duration::from_millis(150);
/// How long the syncs and `O_DIRECT` writes are measured for, at most.
pub(super) const DEVICE_BUDGET: Duration = Duration::from_secs(2);
/// Samples a figure needs before its budget may end it.
pub(super) const MIN_SAMPLES: usize = 16;
/// Syncs a sync figure needs (each is one sample).
pub(super) const MIN_SYNCS: usize = 48;
/// Alignment of `O_DIRECT` buffers.
pub(super) const ALIGN: usize = 4096;

/// Samples of one measurement: seconds per unit (per call, per record).
pub(super) struct Samples(pub(super) Vec<f64>);

impl Samples {
    pub(super) fn median(&mut self) -> f64 {
        self.0.sort_by(f64::total_cmp);
        self.0.get(self.0.len() / 2).copied().unwrap_or(0.0)
    }

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }
}

/// Runs `op` (which does `units` units of work) until `budget` is spent and at least `min`
/// samples are taken (at most `cap`), or a signal arrived; `Err` when none was taken.
pub(super) fn sample(
    budget: Duration,
    min: usize,
    cap: Duration,
    units: f64,
    mut op: impl FnMut() -> io::Result<()>,
) -> io::Result<Samples> {
    sample_timed(budget, min, cap, || {
        let t = Instant::now();
        op()?;
        Ok(t.elapsed().as_secs_f64() / units)
    })
}

/// As [`sample`], for an `op` that times the part of its work that counts and returns its
/// seconds (the set-up around it untimed).
pub(super) fn sample_timed(
    budget: Duration,
    min: usize,
    cap: Duration,
    mut op: impl FnMut() -> io::Result<f64>,
) -> io::Result<Samples> {
    let started = Instant::now();
    let mut samples = Vec::new();
    loop {
        let elapsed = started.elapsed();
        if (elapsed >= budget && samples.len() >= min) || elapsed >= cap {
            break;
        }
        if crate::signals::interrupted().is_some() {
            break;
        }
        samples.push(op()?);
    }
    if samples.is_empty() {
        return Err(io::Error::other("interrupted before a sample was taken"));
    }
    Ok(Samples(samples))
}

/// A file without a name in `dir` (`O_TMPFILE`), opened with `flags` more; where the file
/// system has no unnamed files, a named one removed at once (it lives while open).
pub(super) fn unnamed(dir: &Path, flags: i32) -> io::Result<File> {
    let tmp = OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE | flags)
        .open(dir);
    match tmp {
        Ok(f) => Ok(f),
        Err(e)
            if e.raw_os_error() == Some(libc::EOPNOTSUPP)
                || e.raw_os_error() == Some(libc::EISDIR) =>
        {
            let path = named(dir, "scratch");
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(flags)
                .open(&path)?;
            std::fs::remove_file(&path)?;
            Ok(f)
        }
        Err(e) => Err(e),
    }
}

/// A fresh name for a scratch file of this process in `dir`.
pub(super) fn named(dir: &Path, what: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    // SAFETY: getpid cannot fail.
    let pid = unsafe { libc::getpid() };
    dir.join(format!(
        ".iolab-trace-{what}-{pid}-{}",
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Bytes for a basis: `512 B`, `64.0 KiB`.
pub(super) fn bytes_text(bytes: u64) -> String {
    iolab_lab::units::format_bytes(bytes)
}

/// Whether `dir`'s file system has `bytes` free (and some to spare).
pub(super) fn room(dir: &Path, bytes: u64) -> io::Result<()> {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: statvfs fills a zeroed struct from a valid path.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is NUL-terminated; `st` is writable.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let free = st.f_bavail as u64 * st.f_frsize as u64;
    if free < bytes * 4 {
        return Err(io::Error::other(format!(
            "{} has {} free, too little to calibrate with {}",
            dir.display(),
            bytes_text(free),
            bytes_text(bytes)
        )));
    }
    Ok(())
}
