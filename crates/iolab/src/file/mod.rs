//! LevelDB-style file abstractions: [`SequentialFile`], [`RandomAccessFile`] and
//! [`AppendFile`], the three ways a storage engine touches its files (read a log from
//! the start, read a table at offsets, append to a log).
//!
//! | type | module | system calls |
//! |---|---|---|
//! | [`SequentialFile`] | [`sequential`] | `read` into a 64 KiB buffer; `lseek` to skip |
//! | [`RandomAccessFile`] | [`random_access`] | `pread`, or one `mmap` while a map slot is free |
//! | [`AppendFile`] | [`append`] | `open(O_APPEND)`; `write` of whole 64 KiB buffers (`writev` of buffer + data for appends of 64 KiB or more); `fdatasync` |
//!
//! # What is durable after which call
//!
//! For an [`AppendFile`]:
//!
//! | after … returned `Ok` | the appended bytes are … | they survive |
//! |---|---|---|
//! | [`AppendFile::append`] | possibly only in this process's buffer | nothing: a crash of the process loses them |
//! | [`AppendFile::flush`] | in the kernel (the page cache) | a crash or `kill -9` of the process, not a power loss or kernel crash |
//! | [`AppendFile::sync`] | on the device (`fdatasync`) | a power loss, on a device that honours cache flushes |
//!
//! When [`AppendOptions::open`] creates the file ([`AppendFile::create`], or
//! [`Creation::NewOrExisting`] for a missing file) it also syncs the directory, so that the
//! file's *name* survives a power loss; the data in it is durable only after
//! [`AppendFile::sync`]. If `sync` fails ([`Error::SyncFailed`]), the bytes since the last
//! successful `sync` must be treated as lost, and the handle refuses every later `flush`
//! and `sync` ([`Error::SyncFailedBefore`]) rather than acknowledge them.
//!
//! Dropping an [`AppendFile`] flushes its buffer, but an error on drop cannot be reported
//! and is lost: call [`AppendFile::flush`] (or [`AppendFile::close`]) explicitly.
//!
//! # Other ways to append
//!
//! [`AppendFile`] is one of the five append strategies of [`crate::append`] (one `write`
//! per record, `BufWriter` with 8 KiB and 64 KiB, `writev` of a batch of records, and
//! `append-file`), which `iolab bench append` measures against C++ `std::fstream`.

pub mod append;
pub mod random_access;
pub mod sequential;

use std::io;

pub use append::{AppendFile, AppendOptions, Creation};
pub use random_access::{Backing, MapLimiter, RandomAccessFile, RandomAccessOptions};
pub use sequential::SequentialFile;

use crate::error::describe_io;

/// What can go wrong with the file abstractions. Messages are one line, do not name the
/// file (the caller knows it) and say what to do where there is something to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The path names a directory.
    #[error("is a directory")]
    IsDirectory,
    /// [`Creation::New`] was asked for and the file exists.
    #[error("already exists (open it to append to it, or remove it first)")]
    Exists,
    /// The file or its directory does not let this user do `op`.
    #[error("{op}: permission denied (check the owner and mode of the file and its directory)")]
    PermissionDenied {
        /// What was being done, as a short phrase.
        op: &'static str,
        /// `EACCES` or `EPERM`.
        #[source]
        source: io::Error,
    },
    /// The file system is full (`ENOSPC`) or the user's quota is exhausted (`EDQUOT`).
    ///
    /// Nothing acknowledged is lost: bytes written by an earlier successful
    /// [`AppendFile::flush`] are untouched, and the `pending` bytes the kernel refused are
    /// still held by the [`AppendFile`], in order, after those it took. Free space and call
    /// [`AppendFile::flush`] again to write them.
    #[error(
        "{op}: no space left on the device; {pending} bytes are still buffered (free space, then flush again)"
    )]
    NoSpace {
        /// What was being done, as a short phrase.
        op: &'static str,
        /// Bytes still held in the buffer, not written.
        pending: usize,
        /// `ENOSPC` or `EDQUOT`.
        #[source]
        source: io::Error,
    },
    /// `fdatasync` failed (`EIO`, or `ENOSPC` where space is allocated at writeback).
    ///
    /// The bytes written since the last successful [`AppendFile::sync`] may not be on the
    /// device, and after a failed writeback Linux may have dropped them from the page cache
    /// too, so a second `sync` can succeed without storing them. Treat them as lost.
    #[error(
        "cannot sync: {}; bytes written since the last successful sync may be lost (syncing again does not store them)",
        describe_io(.source)
    )]
    SyncFailed {
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// An earlier [`AppendFile::sync`] of this handle failed, so it refuses to flush or
    /// sync again: a later `fdatasync` can succeed without storing the bytes the failed one
    /// lost, and an `Ok` would acknowledge them. Reopen the file and check what it holds.
    #[error(
        "an earlier sync of this file failed ({reason}); bytes written since the last successful sync may be lost: reopen the file and check what it holds"
    )]
    SyncFailedBefore {
        /// The failed sync's message.
        reason: String,
    },
    /// An earlier write or sync of a [`Log`](crate::durable::Log) failed, so it takes no
    /// more records: the bytes it had not synced may be lost, and acknowledging later ones
    /// could hide that. Reopen the log to recover the acknowledged records.
    #[error(
        "an earlier write or sync of this log failed ({reason}); reopen it to recover the acknowledged records"
    )]
    LogFailed {
        /// The first failure's message.
        reason: String,
    },
    /// A mapped file shrank while it was read (another process truncated it): the bytes
    /// of the read are not the file's.
    /// A mapped page the kernel could not read (an I/O error) gives the same error.
    #[error(
        "the file shrank while it was being read (truncated by another process?), or a mapped page could not be read"
    )]
    FileShrank,
    /// Any other failed system call; `op` says which step.
    #[error("{op}: {}", describe_io(.source))]
    Io {
        /// What was being done, as a short phrase.
        op: &'static str,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl Error {
    /// Classifies a failed system call: `EISDIR`, `EACCES`/`EPERM`, `ENOSPC`/`EDQUOT` get
    /// their own variants. `pending` is what an [`AppendFile`] still holds.
    pub(crate) fn from_io(op: &'static str, source: io::Error, pending: usize) -> Error {
        match source.raw_os_error() {
            Some(libc::EISDIR) => Error::IsDirectory,
            Some(libc::EACCES | libc::EPERM) => Error::PermissionDenied { op, source },
            Some(libc::ENOSPC | libc::EDQUOT) => Error::NoSpace {
                op,
                pending,
                source,
            },
            _ => Error::Io { op, source },
        }
    }

    /// The `errno` behind the error, if a system call failed.
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            Error::IsDirectory => Some(libc::EISDIR),
            Error::Exists => Some(libc::EEXIST),
            Error::LogFailed { .. } | Error::SyncFailedBefore { .. } | Error::FileShrank => None,
            Error::PermissionDenied { source, .. }
            | Error::NoSpace { source, .. }
            | Error::SyncFailed { source }
            | Error::Io { source, .. } => source.raw_os_error(),
        }
    }

    /// `true` for a full file system or exhausted quota (`ENOSPC`, `EDQUOT`), whichever
    /// call met it.
    pub fn is_no_space(&self) -> bool {
        matches!(self, Error::NoSpace { .. })
            || matches!(self.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT))
    }
}

impl From<Error> for io::Error {
    /// Keeps the error's kind (`NotFound`, `PermissionDenied`, `StorageFull`, …) and its
    /// message, for callers working in `io::Result`.
    fn from(e: Error) -> io::Error {
        let kind = match &e {
            Error::IsDirectory => io::ErrorKind::IsADirectory,
            Error::Exists => io::ErrorKind::AlreadyExists,
            Error::LogFailed { .. } | Error::SyncFailedBefore { .. } => io::ErrorKind::Other,
            Error::PermissionDenied { .. } => io::ErrorKind::PermissionDenied,
            Error::FileShrank => io::ErrorKind::UnexpectedEof,
            Error::NoSpace { source, .. }
            | Error::SyncFailed { source }
            | Error::Io { source, .. } => source.kind(),
        };
        io::Error::new(kind, e)
    }
}

impl From<Error> for crate::error::Error {
    fn from(e: Error) -> crate::error::Error {
        match e {
            Error::IsDirectory => crate::error::Error::IsDirectory,
            Error::FileShrank => crate::error::Error::FileShrank,
            Error::Exists => crate::error::Error::io(
                "cannot create",
                io::Error::from(io::ErrorKind::AlreadyExists),
            ),
            Error::SyncFailed { source } => crate::error::Error::io("cannot sync", source),
            Error::LogFailed { reason } => {
                crate::error::Error::io("cannot append", io::Error::other(reason))
            }
            Error::SyncFailedBefore { reason } => {
                crate::error::Error::io("cannot sync", io::Error::other(reason))
            }
            Error::PermissionDenied { op, source }
            | Error::NoSpace { op, source, .. }
            | Error::Io { op, source } => crate::error::Error::io(op, source),
        }
    }
}

/// The file system's answer for a path, mapped to [`Error`], for `open` failures.
pub(crate) fn open_error(op: &'static str, source: io::Error) -> Error {
    Error::from_io(op, source, 0)
}

/// The library's result type for this module.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Retries `f` while it fails with `EINTR`.
pub(crate) fn retry_eintr<T>(mut f: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match f() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}
