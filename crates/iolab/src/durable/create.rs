//! Making a new log so that its name appears only once the file is whole: header written,
//! zeros preallocated (for the policies that preallocate), locked and synced.
//!
//! The file is made without a name (`O_TMPFILE`) and linked to the log's path with
//! `linkat(2)`, which never replaces a file: a crash before the link leaves nothing, a
//! failure removes nothing of anyone's, and two openers racing to make the same log end
//! with one (the loser opens the winner's and finds it locked). Where the file system has
//! no `O_TMPFILE`, a hidden temporary name in the same folder and `renameat2(2)` with
//! `RENAME_NOREPLACE` (or `link(2)` where that flag is refused) do the same, except that a
//! crash in between leaves the temporary file (`.iolab-log-PID-N.tmp`).

use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::open::Opened;
use super::{LogPolicy, fail, header, lock, pwrite_all, zero_fill};
use crate::file::{Error, Result, open_error, retry_eintr};

/// Makes the log at `path`, or `None` when a file took the name first.
pub(crate) fn create(
    path: &Path,
    policy: LogPolicy,
    chunk: u64,
    wait: bool,
) -> Result<Option<Opened>> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let (file, temp) = match unnamed(dir) {
        Ok(file) => (file, None),
        Err(e) if tmpfile_refused(&e) => {
            let (file, name) = named(dir)?;
            (file, Some(name))
        }
        Err(e) => return Err(open_error("cannot create", e)),
    };
    // A named temporary file can be opened by others: it is locked from the start. An
    // unnamed one cannot be until it is linked, and it is locked by its name after that
    // ([`by_name`]): a lock on it would outlive its descriptor in any child another thread
    // forks meanwhile (until that child executes), and refuse the log's own lock.
    let locked = temp.is_some();
    let made =
        fill(&file, policy, chunk, locked).and_then(|()| give_name(&file, temp.as_deref(), path));
    if made.is_err()
        && let Some(t) = &temp
    {
        let _ = std::fs::remove_file(t);
    }
    if !made? {
        return Ok(None);
    }
    let file = match temp {
        Some(_) => file,
        None => by_name(file, path, wait)?,
    };
    Ok(Some(Opened {
        file,
        len: 0,
        created: true,
    }))
}

/// The linked `unnamed` file again, opened by its new name, and locked: a descriptor of an
/// `O_TMPFILE` keeps the name it was made with (`/dir/#12345 (deleted)` in `/proc`, `lsof`
/// and `iolab trace`) after it is linked. An opener that takes the lock between the link
/// and this has the log (the file is whole and synced by then), and this call is refused
/// as a second opener.
fn by_name(unnamed: File, path: &Path, wait: bool) -> Result<File> {
    let named = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| open_error("cannot open", e))?;
    if !lock::same_file(&unnamed, &named) {
        return Err(Error::ReplacedWhileOpening);
    }
    drop(unnamed);
    lock::exclusive(&named, wait)?;
    Ok(named)
}

/// Locks the new `file` when `take_lock`, writes its header and (for `policy`) its first zeros,
/// and syncs.
fn fill(file: &File, policy: LogPolicy, chunk: u64, take_lock: bool) -> Result<()> {
    if take_lock {
        lock::exclusive(file, false)?;
    }
    pwrite_all(file, &header::encode(), 0).map_err(|e| fail("cannot write the log header", e))?;
    if policy.preallocates() {
        // `zero_fill` syncs the file.
        zero_fill(file, header::LOG_HEADER_LEN, chunk, chunk)
            .map_err(|e| fail("cannot preallocate the log", e))?;
    } else {
        retry_eintr(|| file.sync_all()).map_err(|e| fail("cannot sync", e))?;
    }
    Ok(())
}

/// Gives `file` (unnamed, or named `temp`) the name `path` unless a file has it; `false`
/// when one has.
fn give_name(file: &File, temp: Option<&Path>, path: &Path) -> Result<bool> {
    let to = cstring(path)?;
    let linked = match temp {
        None => {
            // The descriptor's `/proc` link: `linkat` with `AT_EMPTY_PATH` would need
            // CAP_DAC_READ_SEARCH.
            let from = cstring(Path::new(&format!("/proc/self/fd/{}", file.as_raw_fd())))?;
            // SAFETY: both paths are NUL-terminated strings that outlive the call.
            cvt(unsafe {
                libc::linkat(
                    libc::AT_FDCWD,
                    from.as_ptr(),
                    libc::AT_FDCWD,
                    to.as_ptr(),
                    libc::AT_SYMLINK_FOLLOW,
                )
            })
        }
        Some(temp) => {
            let from = cstring(temp)?;
            // SAFETY: both paths are NUL-terminated strings that outlive the call.
            let renamed = cvt(unsafe {
                libc::renameat2(
                    libc::AT_FDCWD,
                    from.as_ptr(),
                    libc::AT_FDCWD,
                    to.as_ptr(),
                    libc::RENAME_NOREPLACE,
                )
            });
            match renamed {
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    // The file system refuses the flag: a hard link never replaces either.
                    // SAFETY: both paths are NUL-terminated strings that outlive the call.
                    let linked = cvt(unsafe { libc::link(from.as_ptr(), to.as_ptr()) });
                    let _ = std::fs::remove_file(temp);
                    linked
                }
                other => other,
            }
        }
    };
    match linked {
        Ok(()) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {
            if let Some(t) = temp {
                let _ = std::fs::remove_file(t);
            }
            Ok(false)
        }
        Err(e) => Err(fail("cannot create", e)),
    }
}

/// A new file in `dir` with no name (`O_TMPFILE`).
fn unnamed(dir: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o666)
        .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
        .open(dir)
}

/// Whether `e` means the file system (or kernel) has no `O_TMPFILE`, rather than that the
/// folder cannot take a new file.
fn tmpfile_refused(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)
    )
}

/// A new file in `dir` under a hidden name of its own.
fn named(dir: &Path) -> Result<(File, PathBuf)> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = dir.join(format!(".iolab-log-{}-{n}.tmp", std::process::id()));
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o666)
            .custom_flags(libc::O_CLOEXEC)
            .open(&name)
        {
            Ok(f) => return Ok((f, name)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(open_error("cannot create", e)),
        }
    }
}

fn cstring(path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        Error::io(
            "cannot create",
            io::Error::new(io::ErrorKind::InvalidInput, "the path holds a NUL byte"),
        )
    })
}

fn cvt(ret: libc::c_int) -> io::Result<()> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
