//! The calibration's figures that the traced file's device decides, measured in its folder: `O_DIRECT` writes,
//! records made durable with the traced call, a folder's sync, a shell's redirection.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::time::Instant;

use super::sampling::{
    ALIGN, BUDGET, DEVICE_BUDGET, MIN_SAMPLES, MIN_SYNCS, bytes_text, named, room, sample,
    sample_timed, unnamed,
};
use super::{Figure, SyncCall, seconds};

/// A buffer of `len` bytes aligned for `O_DIRECT`.
struct Aligned {
    ptr: *mut u8,
    len: usize,
}

impl Aligned {
    fn new(len: usize) -> io::Result<Aligned> {
        let len = len.div_ceil(ALIGN) * ALIGN;
        let layout = std::alloc::Layout::from_size_align(len, ALIGN).map_err(io::Error::other)?;
        // SAFETY: the layout has a non-zero size (at least ALIGN).
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(io::ErrorKind::OutOfMemory.into());
        }
        Ok(Aligned { ptr, len })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` holds `len` initialised (zeroed) bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        let layout = std::alloc::Layout::from_size_align(self.len, ALIGN).expect("checked");
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, layout) };
    }
}

/// The most the `O_DIRECT` writes' and the syncs' files grow to in the user's folder.
const DIRECT_BYTES: u64 = 64 << 20;

/// `O_DIRECT` writes of `size` bytes appended to a file in `dir`: seconds per write.
pub(super) fn direct_writes(dir: &Path, size: u64) -> io::Result<Figure> {
    let size = (size as usize).div_ceil(512) * 512;
    room(dir, DIRECT_BYTES)?;
    let file = unnamed(dir, libc::O_DIRECT)?;
    let buf = Aligned::new(size)?;
    let data = &buf.bytes()[..size];
    let mut end = 0u64;
    let mut samples = sample(BUDGET * 2, MIN_SAMPLES, DEVICE_BUDGET, 1.0, || {
        // Appends, as the program's; at DIRECT_BYTES the file is emptied and grows again,
        // so that the calibration never takes more of the user's disk than that.
        if end + size as u64 > DIRECT_BYTES {
            file.set_len(0)?;
            end = 0;
        }
        file.write_all_at(data, end)?;
        end += size as u64;
        Ok(())
    })?;
    let per = samples.median();
    Ok(Figure::new(
        per,
        0.0,
        format!(
            "calibrated here: {} O_DIRECT writes of {} appended to a file in {}: {} each",
            samples.len(),
            bytes_text(size as u64),
            dir.display(),
            seconds(per)
        ),
    ))
}

/// Records of `record` bytes appended to a growing file in `dir`, made durable with `call`
/// after every `every` records: seconds of syncing per record (the writes themselves, which
/// the program makes either way, are not timed; with `O_DSYNC` the write is the sync). The
/// median of at least [`MIN_SYNCS`] syncs (three batches for a group), within
/// [`DEVICE_BUDGET`]. In the temporary folder when `dir` cannot be written.
pub(super) fn syncs(dir: &Path, call: SyncCall, record: usize, every: u64) -> io::Result<Figure> {
    let call = if every > 1 && call == SyncCall::Dsync {
        // Group commit with O_DSYNC is a plain write per record and one fdatasync per batch.
        SyncCall::Fdatasync
    } else {
        call
    };
    let flags = if call == SyncCall::Dsync {
        libc::O_DSYNC
    } else {
        0
    };
    let (file, place) = match unnamed(dir, flags) {
        Ok(f) => (f, format!("in {}", dir.display())),
        Err(_) => {
            let tmp = std::env::temp_dir();
            (
                unnamed(&tmp, flags)?,
                format!("in {} ({} cannot be written)", tmp.display(), dir.display()),
            )
        }
    };
    let data = vec![b'r'; record];
    let mut end = 0u64;
    let min = if every == 1 { MIN_SYNCS } else { 3 };
    let mut samples = sample_timed(BUDGET * 2, min, DEVICE_BUDGET, || {
        // As for the direct writes: the file never takes more than DIRECT_BYTES of the
        // user's disk (emptied between samples, untimed).
        if end + (every + 1) * record as u64 > DIRECT_BYTES && end > 0 {
            file.set_len(0)?;
            file.sync_all()?;
            end = 0;
        }
        let unsynced = if call == SyncCall::Dsync { 0 } else { every };
        for _ in 0..unsynced {
            file.write_all_at(&data, end)?;
            end += record as u64;
        }
        let t = Instant::now();
        match call {
            SyncCall::Fsync => file.sync_all()?,
            SyncCall::Fdatasync => file.sync_data()?,
            SyncCall::Dsync => {
                file.write_all_at(&data, end)?;
                end += record as u64;
            }
        }
        Ok(t.elapsed().as_secs_f64() / every as f64)
    })?;
    let syncs = samples.len();
    let per = samples.median();
    let what = if every == 1 {
        format!("an {} per record", call.name())
    } else {
        format!("one {} per {every}", call.name())
    };
    Ok(Figure::new(
        per,
        0.0,
        format!(
            "calibrated here: {} records of {} appended {place}, {what}: {} of syncing per record (median of {syncs})",
            syncs as u64 * every,
            bytes_text(record as u64),
            seconds(per)
        ),
    ))
}

/// What a shell does around each redirected command (`echo x >> FILE`): `open` of a file
/// in `dir` for appending, `fcntl(F_DUPFD)` to save the descriptor it replaces, `dup2`
/// onto it, `fcntl(F_GETFD)`, `close`, `dup2` back, `close`: seconds per call (the mean
/// of the seven).
pub(super) fn churn(dir: &Path) -> io::Result<Figure> {
    let (path, place) = {
        let p = named(dir, "churn");
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&p)
        {
            Ok(_) => (p, format!("in {}", dir.display())),
            Err(_) => {
                let tmp = std::env::temp_dir();
                let p = named(&tmp, "churn");
                OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&p)?;
                (
                    p,
                    format!("in {} ({} cannot be written)", tmp.display(), dir.display()),
                )
            }
        }
    };
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // A spare descriptor to duplicate onto, as the shell's 1.
    let spare = File::open("/dev/null")?;
    let target = spare.as_raw_fd();
    let result = sample(BUDGET, MIN_SAMPLES, BUDGET * 4, 7.0 * 16.0, || {
        for _ in 0..16 {
            // SAFETY: `c` is a NUL-terminated path; the descriptors are this function's.
            unsafe {
                let fd = libc::open(
                    c.as_ptr(),
                    libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_CLOEXEC,
                    0o600,
                );
                if fd < 0 {
                    return Err(io::Error::last_os_error());
                }
                let dup = libc::fcntl(target, libc::F_DUPFD_CLOEXEC, 100);
                libc::dup2(fd, target);
                libc::fcntl(target, libc::F_GETFD);
                libc::close(fd);
                libc::dup2(dup, target);
                libc::close(dup);
            }
        }
        Ok(())
    });
    let _ = std::fs::remove_file(&path);
    let mut samples = result?;
    let per = samples.median();
    Ok(Figure::new(
        per,
        0.0,
        format!(
            "calibrated here: a shell's redirection of a file {place} (open, fcntl, dup2, fcntl, close, dup2, close): {} per call",
            seconds(per)
        ),
    ))
}

/// A file made in `dir`, then `fsync(dir)`: seconds per sync of the folder.
pub(super) fn dir_syncs(dir: &Path) -> io::Result<Figure> {
    let folder = File::open(dir)?;
    let mut samples = sample_timed(BUDGET * 2, MIN_SYNCS, DEVICE_BUDGET, || {
        let name = named(dir, "dirsync");
        let made = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&name);
        let timed = made.and_then(|_| {
            let t = Instant::now();
            folder.sync_all()?;
            Ok(t.elapsed().as_secs_f64())
        });
        let _ = std::fs::remove_file(&name);
        timed
    })?;
    let n = samples.len();
    let per = samples.median();
    Ok(Figure::new(
        per,
        0.0,
        format!(
            "calibrated here: {n} fsyncs of {} after a file was made in it: {} each (median)",
            dir.display(),
            seconds(per)
        ),
    ))
}

/// A file of `size` bytes made in `dir`, written and closed, then removed (`unlink`, which
/// the tracer does not follow): seconds per removal.
pub(super) fn unlinks(dir: &Path, size: u64) -> io::Result<Figure> {
    let data = vec![b'j'; size.clamp(1, 1 << 20) as usize];
    let mut samples = sample_timed(BUDGET, MIN_SYNCS, BUDGET * 4, || {
        let name = named(dir, "unlink");
        let made = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&name)
            .and_then(|f| f.write_all_at(&data, 0));
        let t = Instant::now();
        let removed = std::fs::remove_file(&name);
        let took = t.elapsed().as_secs_f64();
        made?;
        removed?;
        Ok(took)
    })?;
    let n = samples.len();
    let per = samples.median();
    Ok(Figure::new(
        per,
        0.0,
        format!(
            "calibrated here: {n} files of {} made in {} and removed: {} per removal (median)",
            bytes_text(size),
            dir.display(),
            seconds(per)
        ),
    ))
}
