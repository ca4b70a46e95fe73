//! The log's one-writer lock: `flock(2)` on the log's open file description, held while
//! the [`Log`](super::Log) lives.
//!
//! `flock` rather than POSIX record locks: a record lock belongs to the process and is
//! dropped when *any* of its descriptors of the file is closed, and it never conflicts
//! within one process, so a second `Log` in the same program would not be stopped. An
//! `flock` belongs to the open file description: two opens conflict even in one process,
//! and closing another descriptor of the file does not release it.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::file::{Error, Result, retry_eintr};

/// Takes the exclusive lock of `file`, waiting for it when `wait`, else failing with
/// [`Error::Locked`] at once.
pub(crate) fn exclusive(file: &File, wait: bool) -> Result<()> {
    let taken = if wait {
        retry_eintr(|| file.lock()).map_err(std::fs::TryLockError::Error)
    } else {
        file.try_lock()
    };
    match taken {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(Error::Locked { pid: holder(file) }),
        Err(std::fs::TryLockError::Error(e)) => Err(Error::from_io("cannot lock", e, 0)),
    }
}

/// The lock a [`Log`](super::Log) holds: released when dropped, explicitly, not only when
/// its open file description closes, which a child that another thread forked keeps open
/// until it executes: a `Log` closed and opened again would find itself locked out.
#[derive(Debug)]
pub(crate) struct Held(pub(crate) File);

impl Drop for Held {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// Whether `a` and `b` are descriptors of one file (the same inode of the same file
/// system).
pub(crate) fn same_file(a: &File, b: &File) -> bool {
    match (a.metadata(), b.metadata()) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Whether `path` still names `file` (the same inode of the same file system).
pub(crate) fn still_named(file: &File, path: &Path) -> bool {
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The process holding an `flock` on `file`'s inode, from `/proc/locks` (lines such as
/// `1: FLOCK  ADVISORY  WRITE 8580 fe:00:10011129 0 EOF`: the device's major and minor in
/// hex, then the inode).
fn holder(file: &File) -> Option<u32> {
    let meta = file.metadata().ok()?;
    let (major, minor) = (libc::major(meta.dev()), libc::minor(meta.dev()));
    let inode = format!("{major:02x}:{minor:02x}:{}", meta.ino());
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    holder_in(&locks, &inode)
}

/// The pid of the first `FLOCK` line of `locks` on `inode` (`MAJ:MIN:INO`).
fn holder_in(locks: &str, inode: &str) -> Option<u32> {
    locks.lines().find_map(|line| {
        let mut f = line.split_whitespace().skip(1);
        let (kind, _, _, pid, ino) = (f.next()?, f.next()?, f.next()?, f.next()?, f.next()?);
        (kind == "FLOCK" && ino == inode)
            .then(|| pid.parse().ok())
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holder_is_read_from_proc_locks() {
        let locks = "1: POSIX  ADVISORY  WRITE 77 fe:00:42 0 EOF\n\
                     2: FLOCK  ADVISORY  WRITE 8580 fe:00:10011129 0 EOF\n";
        assert_eq!(holder_in(locks, "fe:00:10011129"), Some(8580));
        assert_eq!(
            holder_in(locks, "fe:00:42"),
            None,
            "a record lock is not ours"
        );
        assert_eq!(holder_in(locks, "fe:00:1"), None);
    }
}
