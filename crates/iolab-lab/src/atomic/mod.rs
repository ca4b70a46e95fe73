//! Putting a file in place so that it is either complete or absent: the data sets, the
//! machine profile, the exports and the trace's saved costs are all written through here.
//!
//! **System calls**: `open` of the target's directory, `fstatvfs(2)` on it (free space),
//! `open(O_CREAT|O_EXCL)` of a temporary `.NAME.tmp-PID` beside the target, the caller's
//! `write`s, `fsync` of the file, `renameat2(2)` into place (with `RENAME_NOREPLACE` unless
//! overwriting is allowed), and `fsync` of the directory so the rename itself is durable.
//! **Guarantee**: the final name only ever holds a complete, synced file. On any error (a
//! failed write, a full disk, a panic in the writer) the temporary file is removed before
//! returning. A process killed by a signal cannot clean up, so after `kill -9` or Ctrl-C a
//! `.NAME.tmp-PID` may remain beside the target, never the target itself; it can be
//! deleted.
//! **Limits**: the target must be a regular file or not exist: replacing a device, FIFO or
//! symbolic link by renaming over it is refused (write to those directly). The free-space
//! check uses the caller's size estimate and the space available to unprivileged users
//! (`f_bavail`); a disk that fills up anyway is reported as
//! [`GenerateError::NoSpaceWhileGenerating`]. Where the
//! file system does not support `RENAME_NOREPLACE`, "do not overwrite" is checked just
//! before a plain rename, which leaves a small race. A replaced file's owner is not carried
//! over, nor its permissions unless asked ([`AtomicOptions::keep_permissions`]): the new
//! file has the default mode (0666 less the umask).
//!
//! A named temporary file is used rather than `O_TMPFILE` so the same code works on every
//! file system and overwriting stays a plain rename.

use std::ffi::{CString, OsStr, OsString};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

mod error;

pub use error::GenerateError;

use iolab::Error;

/// The atomic writer's result type.
pub type Result<T, E = GenerateError> = std::result::Result<T, E>;

/// The buffer in front of the temporary file. Writes at least this large (the generators'
/// 1 MiB chunks) go straight through; small writes are gathered. 64 KiB: LevelDB's
/// `PosixWritableFile` buffer.
const WRITE_BUFFER_LEN: usize = 64 << 10;

/// How many temporary names to try when `.NAME.tmp-PID` is taken (by a run that died with
/// the same process id, or another write of the same target from this process).
const TEMP_NAME_ATTEMPTS: u32 = 100;

/// How [`write_file_atomically`] behaves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AtomicOptions {
    expected_size: u64,
    overwrite: bool,
    keep_permissions: bool,
}

impl AtomicOptions {
    /// The defaults: no size estimate (no free-space check) and no overwriting.
    pub fn new() -> AtomicOptions {
        AtomicOptions::default()
    }

    /// The bytes the file is expected to take, checked against the free space before
    /// anything is written. Default 0 (no check).
    pub fn expected_size(mut self, bytes: u64) -> AtomicOptions {
        self.expected_size = bytes;
        self
    }

    /// Whether an existing regular file at the path may be replaced. Default `false`: the
    /// write fails with [`Error::Exists`], checked before writing and again, atomically,
    /// by the final rename.
    pub fn overwrite(mut self, overwrite: bool) -> AtomicOptions {
        self.overwrite = overwrite;
        self
    }

    /// Whether a replaced file's permissions carry over to the new one (a user's file
    /// that iolab replaces keeps the mode its owner gave it). Default `false`: the new
    /// file has the default mode (0666 less the umask).
    pub fn keep_permissions(mut self, keep: bool) -> AtomicOptions {
        self.keep_permissions = keep;
        self
    }
}

/// Writes a file through `write` so that `path` never holds a partial file.
///
/// `write` receives a buffered writer to a temporary file in the same directory; when it
/// returns `Ok`, the file is flushed, synced and renamed to `path`, and the directory is
/// synced. When it (or any step) fails, the temporary file is removed and the error
/// returned; a full disk becomes [`GenerateError::NoSpaceWhileGenerating`]. See the module
/// docs for the details.
pub fn write_file_atomically<T>(
    path: &Path,
    options: &AtomicOptions,
    write: impl FnOnce(&mut dyn Write) -> Result<T>,
) -> Result<T> {
    let name = path.file_name().ok_or(GenerateError::NoFileName)?;
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let dir_file = File::open(dir).map_err(|e| Error::io("cannot open its directory", e))?;
    check_target(path, options.overwrite)?;
    // A file being replaced frees its space only after the rename: the full size is needed.
    let have = available_space(&dir_file)?;
    if options.expected_size > have {
        return Err(GenerateError::NotEnoughSpace {
            dir: dir.to_path_buf(),
            need: options.expected_size,
            have,
        });
    }

    let (temp_name, file) = create_temp(dir, name)?;
    let temp = TempFile {
        path: dir.join(&temp_name),
        dir: dir.to_path_buf(),
    };
    if options.keep_permissions
        && let Ok(old) = fs::metadata(path)
        && let Err(e) = file.set_permissions(old.permissions())
    {
        return Err(temp.fail(Error::io("cannot set the permissions of", e).into()));
    }
    let mut writer = BufWriter::with_capacity(WRITE_BUFFER_LEN, file);
    let value = match write(&mut writer) {
        Ok(value) => value,
        Err(e) => {
            // Drop what is still buffered rather than write it into a file about to go.
            drop(writer.into_parts());
            return Err(temp.fail(e));
        }
    };
    let file = match writer.into_inner() {
        Ok(file) => file,
        Err(e) => {
            let (error, writer) = e.into_parts();
            drop(writer.into_parts());
            return Err(temp.fail(Error::io("cannot write", error).into()));
        }
    };
    if let Err(e) = file.sync_all() {
        return Err(temp.fail(Error::io("cannot sync", e).into()));
    }
    drop(file);
    if let Err(e) = rename_into_place(&dir_file, dir, &temp_name, name, options.overwrite) {
        return Err(temp.fail(e.into()));
    }
    temp.keep();
    dir_file
        .sync_all()
        .map_err(|e| Error::io("cannot sync its directory", e))?;
    Ok(value)
}

/// Checks that `path` is absent, or a regular file that may be replaced.
fn check_target(path: &Path, overwrite: bool) -> Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) => {
            let kind = meta.file_type();
            if kind.is_dir() {
                Err(Error::IsDirectory.into())
            } else if !kind.is_file() {
                Err(GenerateError::NotReplaceable {
                    kind: crate::sys::special_kind_name(&kind),
                })
            } else if overwrite {
                Ok(())
            } else {
                Err(Error::Exists.into())
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io("cannot inspect", e).into()),
    }
}

/// The bytes an unprivileged user may still write on the file system of `dir`.
fn available_space(dir: &File) -> iolab::Result<u64> {
    Ok(free_space(dir)?.0)
}

/// The bytes and the inodes an unprivileged user may still use on the file system of
/// `dir`.
pub fn free_space(dir: &File) -> iolab::Result<(u64, u64)> {
    // SAFETY: `statvfs` is a plain C struct of integers, for which all zeros is valid.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is open for the duration of the call (`dir` is borrowed), and
    // `stat` is a valid, writable `statvfs`.
    let rc = unsafe { libc::fstatvfs(dir.as_raw_fd(), &mut stat) };
    if rc != 0 {
        return Err(Error::io(
            "cannot check the free space",
            io::Error::last_os_error(),
        ));
    }
    // The fields are `c_ulong`/`fsblkcnt_t`: already u64 on 64-bit Linux, u32 on some 32-bit.
    #[allow(clippy::unnecessary_cast)]
    let (blocks, block_size, inodes) = (
        stat.f_bavail as u64,
        stat.f_frsize as u64,
        stat.f_favail as u64,
    );
    Ok((blocks.saturating_mul(block_size), inodes))
}

/// Creates `.NAME.tmp-PID` (or `.NAME.tmp-PID-N` when taken) in `dir`, exclusively.
fn create_temp(dir: &Path, name: &OsStr) -> iolab::Result<(OsString, File)> {
    let pid = std::process::id();
    for attempt in 0..TEMP_NAME_ATTEMPTS {
        let mut temp_name = OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".tmp-{pid}"));
        if attempt > 0 {
            temp_name.push(format!("-{attempt}"));
        }
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dir.join(&temp_name))
        {
            Ok(file) => return Ok((temp_name, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io("cannot create a temporary file beside it", e)),
        }
    }
    Err(Error::io(
        "cannot create a temporary file beside it",
        io::Error::from(io::ErrorKind::AlreadyExists),
    ))
}

/// Renames `temp_name` to `name`, both in the directory `dir` (open as `dir_file`); without
/// `overwrite`, atomically refuses to replace an existing file.
fn rename_into_place(
    dir_file: &File,
    dir: &Path,
    temp_name: &OsStr,
    name: &OsStr,
    overwrite: bool,
) -> iolab::Result<()> {
    let c_name = |name: &OsStr| {
        CString::new(name.as_bytes()).map_err(|e| Error::io("cannot rename", e.into()))
    };
    let (from, to) = (c_name(temp_name)?, c_name(name)?);
    let rename = |flags: libc::c_uint| {
        // SAFETY: `dir_file` is an open directory descriptor for the call's duration, and
        // `from` and `to` are NUL-terminated strings that outlive it.
        let rc = unsafe {
            libc::renameat2(
                dir_file.as_raw_fd(),
                from.as_ptr(),
                dir_file.as_raw_fd(),
                to.as_ptr(),
                flags,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    };
    if overwrite {
        return rename(0).map_err(|e| Error::io("cannot rename into place", e));
    }
    match rename(libc::RENAME_NOREPLACE) {
        Ok(()) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EEXIST) => Err(Error::Exists),
        // The file system does not support RENAME_NOREPLACE: check, then rename.
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            if fs::symlink_metadata(dir.join(name)).is_ok() {
                return Err(Error::Exists);
            }
            rename(0).map_err(|e| Error::io("cannot rename into place", e))
        }
        Err(e) => Err(Error::io("cannot rename into place", e)),
    }
}

/// The temporary file, removed when dropped unless kept (so also on a panic in the writer).
struct TempFile {
    path: PathBuf,
    /// The directory it is in, for messages.
    dir: PathBuf,
}

impl TempFile {
    /// Removes the file now and turns `error` into the one to report: a full disk becomes
    /// [`GenerateError::NoSpaceWhileGenerating`] with the bytes that had reached the file.
    fn fail(self, error: GenerateError) -> GenerateError {
        let written = fs::metadata(&self.path).map_or(0, |meta| meta.len());
        let dir = self.dir.clone();
        drop(self);
        match &error {
            GenerateError::File(Error::Io { source, .. }) if is_out_of_space(source) => {
                GenerateError::NoSpaceWhileGenerating { dir, written }
            }
            _ => error,
        }
    }

    /// The file was renamed into place: nothing to remove.
    fn keep(self) {
        std::mem::forget(self);
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// `ENOSPC` (device full) or `EDQUOT` (quota exhausted), also when wrapped.
fn is_out_of_space(e: &io::Error) -> bool {
    let code = e.raw_os_error().or_else(|| {
        e.get_ref()
            .and_then(|inner| inner.downcast_ref::<io::Error>())
            .and_then(io::Error::raw_os_error)
    });
    matches!(code, Some(libc::ENOSPC) | Some(libc::EDQUOT))
}
