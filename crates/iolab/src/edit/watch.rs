//! Watching the file under edit for other writers.
//!
//! An edit reads the file and writes back at the offsets it read. If another process
//! truncates the file meanwhile (logrotate's copytruncate), a `pwrite` at an old offset
//! would extend it again with a hole of NUL bytes; if another process appends, a final
//! `ftruncate` to the old length would cut its bytes off; if another process rewrites
//! bytes, writing back an older copy of them would undo its write. So before every write
//! and before the final truncate, the edit compares the file with what it last saw
//! ([`Watch::check`]): its size, its change time (`st_ctime`, which every write and
//! truncate moves and no program can set), and whether the path still names it. Any
//! difference stops the edit with [`Error::Changed`], which says what the file holds then.
//!
//! Between the check and the write the edit holds a write lease where it can
//! ([`Watch::guarded`]): another process's open or truncation then waits the microseconds
//! until the write is done. Where no lease can be had (another process keeps the file open,
//! as a logger does), the check and the write are two adjacent system calls: a change in
//! between is not seen before the write, but it is after it ([`Watch::wrote`] checks the
//! size again), so the edit still fails instead of reporting success; only a truncation
//! made by the edit itself can then cut off an append that lands in that gap. A truncation that lands
//! there leaves a gap of NULs before the write; the file had none (it is checked when the
//! edit starts), so the gap is found with `SEEK_HOLE` and cut off again: exactly when the
//! truncation was to a multiple of the block size (logrotate truncates to 0), else up to
//! one block of NULs stays after the new end. On kernels before 6.13, whose timestamps are
//! coarse (a few milliseconds), a rewrite within the same tick as the edit's own write can
//! go unseen; Linux 6.13's multigrain timestamps close that.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

use super::{Error, Result};
use crate::sys::lease::WriteLease;
use crate::units::format_bytes;

/// What an edit last saw of the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seen {
    len: u64,
    ctime: (i64, i64),
    dev: u64,
    ino: u64,
}

impl Seen {
    fn of(file: &File) -> Result<Seen> {
        let m = file.metadata().map_err(|e| Error::io("cannot stat", e))?;
        Ok(Seen::from(&m))
    }

    fn from(m: &std::fs::Metadata) -> Seen {
        Seen {
            len: m.len(),
            ctime: (m.ctime(), m.ctime_nsec()),
            dev: m.dev(),
            ino: m.ino(),
        }
    }
}

/// The file under edit, as the edit last left it.
pub(crate) struct Watch<'a> {
    file: &'a File,
    path: &'a Path,
    seen: Seen,
    /// The bytes the edit has changed so far (written, or to be cut).
    edited: u64,
    /// Whether the file had no hole when the edit started: a hole found later was made by
    /// a truncation under the edit's write, and may be cut off.
    dense: bool,
    /// Whether to try a write lease around each write (given up after one cannot be had).
    leases: bool,
}

/// How long [`Watch::guarded`] waits for other descriptors of the file to close before it
/// writes without a lease: a writer that reopens the file for every line closes it within
/// this.
const LEASE_PATIENCE: Duration = Duration::from_millis(5);

impl<'a> Watch<'a> {
    /// Starts watching `file` (opened from `path`) as `first` shows it: the edit's first
    /// look, taken before it opened the file for writing.
    pub(crate) fn new(file: &'a File, path: &'a Path, first: &std::fs::Metadata) -> Watch<'a> {
        let seen = Seen::from(first);
        Watch {
            file,
            path,
            seen,
            edited: 0,
            dense: first_hole(file).is_some_and(|hole| hole >= seen.len),
            leases: true,
        }
    }

    /// Makes one write (`write`, which `op` names for an error) once [`Watch::check`] has
    /// found the file unchanged, holding a write lease from before the check to after the
    /// write where one can be had ([`WriteLease`]): no other process can then open or
    /// truncate the file in between. Without a lease (another process keeps it open) the
    /// check and the write are adjacent system calls.
    pub(crate) fn guarded<T>(
        &mut self,
        next: &str,
        op: &'static str,
        write: impl FnOnce() -> std::io::Result<T>,
    ) -> Result<T> {
        let lease = if self.leases {
            WriteLease::take(self.file, LEASE_PATIENCE)
        } else {
            None
        };
        self.leases = lease.is_some();
        self.check(next)?;
        let done = write().map_err(|e| Error::io(op, e));
        drop(lease);
        done
    }

    /// Fails with [`Error::Changed`] unless the file is as the edit last saw it: the same
    /// length, no write or truncate by anyone since, and its path still naming it. `next`
    /// says what the edit was about to do, for the message.
    pub(crate) fn check(&self, next: &str) -> Result<()> {
        let now = Seen::of(self.file)?;
        let renamed = match std::fs::metadata(self.path) {
            Ok(m) => (m.dev(), m.ino()) != (now.dev, now.ino),
            Err(_) => true,
        };
        if now == self.seen && !renamed {
            return Ok(());
        }
        Err(self.changed(now, renamed, next))
    }

    /// Records the edit's own write of `bytes` at `offset` (which moves the change time)
    /// and checks that the length did not move under it: an append is a tail this edit has
    /// not seen; a truncation between [`Watch::check`] and the write leaves a gap before
    /// the written bytes, which is cut off again (see the module docs).
    pub(crate) fn wrote(&mut self, offset: u64, bytes: u64) -> Result<()> {
        self.edited += bytes;
        let now = Seen::of(self.file)?;
        if now.len != self.seen.len
            && now.len == offset + bytes
            && self.dense
            && let Some(hole) = first_hole(self.file).filter(|&hole| hole < offset)
        {
            self.file
                .set_len(hole)
                .map_err(|e| Error::io("cannot cut off the gap a truncation left", e))?;
            return Err(Error::Changed {
                what: format!(
                    "another process truncated it while this edit was writing (it had {}); the gap that left before this edit's write was cut off again, so it is now {}; run the edit again",
                    format_bytes(self.seen.len),
                    format_bytes(hole)
                ),
            });
        }
        self.settle(self.seen.len, "anything after that write")
    }

    /// Records the edit's own truncation to `len` and checks that the file is that long.
    pub(crate) fn cut(&mut self, len: u64) -> Result<()> {
        self.edited += self.seen.len.saturating_sub(len);
        self.settle(len, "anything after the truncation")
    }

    fn settle(&mut self, len: u64, next: &str) -> Result<()> {
        let now = Seen::of(self.file)?;
        if now.len != len {
            return Err(Error::Changed {
                what: format!(
                    "another process changed its length while this edit was writing: it is now {} where this edit left {} (a truncation then shows as a gap of NUL bytes before the edit's last write); {} of this edit had been written, and {next} was not done; run the edit again",
                    format_bytes(now.len),
                    format_bytes(len),
                    format_bytes(self.edited)
                ),
            });
        }
        self.seen = now;
        Ok(())
    }

    fn changed(&self, now: Seen, renamed: bool, next: &str) -> Error {
        let before = format_bytes(self.seen.len);
        let what = if renamed {
            "its path now names another file (it was renamed or replaced); the edit went to the file it had opened".to_string()
        } else if now.len < self.seen.len {
            format!(
                "another process shrank it to {} (it had {before})",
                format_bytes(now.len)
            )
        } else if now.len > self.seen.len {
            format!(
                "another process added {} to it (it had {before}); the added bytes are kept",
                format_bytes(now.len - self.seen.len)
            )
        } else {
            format!("another process wrote to it (its length, {before}, is unchanged)")
        };
        let done = if self.edited == 0 {
            "nothing of this edit was written".to_string()
        } else {
            format!(
                "{} of this edit had been written",
                format_bytes(self.edited)
            )
        };
        Error::Changed {
            what: format!("{what}; {done}, and {next} was not done; run the edit again"),
        }
    }
}

/// The offset of the first hole in `file` (its length when it has none), or `None` when
/// the file system cannot tell (`SEEK_HOLE` unsupported). The file position is kept.
fn first_hole(file: &File) -> Option<u64> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: lseek on an open descriptor has no memory effects; the position it moves is
    // put back before returning.
    unsafe {
        let position = libc::lseek(fd, 0, libc::SEEK_CUR);
        let hole = libc::lseek(fd, 0, libc::SEEK_HOLE);
        if position >= 0 {
            libc::lseek(fd, position, libc::SEEK_SET);
        }
        u64::try_from(hole).ok()
    }
}
