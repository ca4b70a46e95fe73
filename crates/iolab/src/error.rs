//! The library's one error type, [`Error`], and what a program matches on, [`ErrorKind`].
//!
//! Messages are one line and say what to do where there is something to do. An error from
//! a call that was given a path names it ([`Error::AtPath`], `big.txt: is a directory`);
//! [`Error::path`] gives it back and [`Error::kind`] says what kind of failure it was,
//! whichever variant carries it. `?` turns an [`std::io::Error`] into an [`Error`] and an
//! [`Error`] into an [`std::io::Error`], so iolab's calls mix with std's in one function.

use std::io;
use std::path::{Path, PathBuf};

use crate::kernel::Kernel;
use crate::units::format_bytes;

/// What kind of failure an [`Error`] is: what a program matches on (the variants carry
/// the details, and new ones may come).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file does not exist.
    NotFound,
    /// The file or its folder does not let this user do it.
    PermissionDenied,
    /// The file exists and the call would not overwrite it.
    AlreadyExists,
    /// The path names a folder.
    IsDirectory,
    /// The path names a pipe, a device or a socket where a regular file is needed, or a
    /// `/proc` or `/sys` file whose size is not real.
    NotRegularFile,
    /// The device is full.
    NoSpace,
    /// The method (or kernel) cannot run on this machine or for this file.
    Unavailable,
    /// An option, a name or a specification the call cannot take.
    InvalidInput,
    /// The bytes are not what the call reads (text that is not UTF-8).
    InvalidData,
    /// Another process changed the file while the call worked on it.
    Changed,
    /// The file is too big for the way asked (memory, address space).
    TooBig,
    /// A sync failed, now or before: bytes written since the last good one may be lost.
    SyncFailed,
    /// The reader of standard output went away.
    BrokenPipe,
    /// Standard output is closed.
    Closed,
    /// The file is open as a [`Log`](crate::Log) by another opener (in this process or
    /// another), and a log has one writer.
    Locked,
    /// The file is not a log this version of iolab can open (not a log at all, a newer
    /// format, a damaged header); nothing in it was changed.
    NotALog,
    /// Any other failure of a system call.
    Io,
}

/// Everything that can go wrong in iolab's calls.
///
/// `Debug` prints the message and the kind (`big.txt: cannot open: No such file or
/// directory (NotFound)`), so `fn main() -> iolab::Result<()>` ends with a readable line.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A call given a path failed: the path, and why.
    #[error("{}: {source}", .path.display())]
    AtPath {
        /// The file or folder the call was given.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: Box<Error>,
    },
    /// A system call failed; `op` says which step (for example `"cannot open"`).
    #[error("{op}: {}", describe_io(.source))]
    Io {
        /// What was being done, as a short phrase.
        op: &'static str,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The path names a directory.
    #[error("is a directory")]
    IsDirectory,
    /// The file exists and the call makes new files only.
    #[error("already exists (open it instead, or remove it first)")]
    Exists,
    /// The file or its directory does not let this user do `op`.
    #[error("{op}: permission denied (check the owner and mode of the file and its directory)")]
    PermissionDenied {
        /// What was being done.
        op: &'static str,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A counting method needs a regular file and this is not one.
    #[error("is a {kind}; method '{method}' needs a regular file (use bufread-chunks or auto)")]
    NotRegularFile {
        /// What the file is instead: `FIFO`, `character device`, …
        kind: &'static str,
        /// The method that refused.
        method: &'static str,
    },
    /// An edit was asked of something that is not a regular file.
    #[error("is a {kind}, not a regular file; only regular files can be edited in place")]
    NotEditable {
        /// What the file is instead.
        kind: &'static str,
    },
    /// The file's reported size cannot be trusted (procfs, sysfs: size 0 or 4096 yet other
    /// content), and the method needs one.
    #[error(
        "its size is not real (a /proc or /sys file); method '{method}' needs one (use bufread-chunks or auto)"
    )]
    SizeUnknown {
        /// The method that refused.
        method: &'static str,
    },
    /// An edit of a `/proc` or `/sys` file, whose size is not real and whose writes change
    /// kernel state.
    #[error(
        "its size is not real (a /proc or /sys file) and writing it would change kernel state; only files on a real file system can be edited in place"
    )]
    PseudoFile,
    /// The method cannot run on this machine or for this file.
    #[error("method '{method}' is unavailable: {reason}")]
    Unavailable {
        /// The method's name.
        method: &'static str,
        /// Why, in a few words.
        reason: String,
    },
    /// The kernel asked for cannot run on this CPU.
    #[error("kernel '{kernel}' is unavailable: {reason}")]
    KernelUnavailable {
        /// The kernel.
        kernel: Kernel,
        /// Why.
        reason: String,
    },
    /// The file shrank while it was being read (another process truncated it), so the bytes
    /// read are not the file's. A mapped page the kernel could not read (an I/O error)
    /// raises the same signal and gives the same error.
    #[error(
        "the file shrank while it was being read (truncated by another process?), or a mapped page could not be read"
    )]
    FileShrank,
    /// `bufread-lines` met bytes that are not UTF-8.
    #[error(
        "invalid UTF-8 on line {line}: bufread-lines reads text only (bufread-chunks or auto count any bytes)"
    )]
    InvalidUtf8 {
        /// The 1-based line on which the invalid bytes start.
        line: u64,
    },
    /// An access hint was given to a method it does not belong to.
    #[error("hint '{hint}' does not apply to method '{method}'")]
    HintNotApplicable {
        /// The hint.
        hint: &'static str,
        /// The method.
        method: &'static str,
    },
    /// An option is out of its range (a block size, a queue depth, a thread count).
    #[error("{0}")]
    InvalidOption(String),
    /// A name iolab does not know (a method, a suite, …), with the valid ones.
    #[error(transparent)]
    UnknownName(#[from] crate::named::UnknownName),
    /// Another process changed the file while it was being edited.
    #[error("changed while being edited: {what}")]
    Changed {
        /// What changed: its length, its identity, its contents.
        what: String,
    },
    /// Another process truncated the file while an edit had it mapped.
    #[error(
        "changed while being edited: another process truncated it while it was mapped (nothing was written past its new end); run the edit again"
    )]
    ShrankWhileEdited,
    /// The path was replaced by another file between the edit's first look and its open.
    #[error("was replaced by another file while it was being opened; run the edit again")]
    ReplacedWhileOpening,
    /// `std-whole` would read more than the memory limit allows.
    #[error(
        "is {} but std-whole may only read {} into memory (80% of available memory); use std-stream or mmap",
        format_bytes(*.len),
        format_bytes(*.limit)
    )]
    TooBigForMemory {
        /// The file's length.
        len: u64,
        /// The limit.
        limit: u64,
    },
    /// The file cannot be mapped whole in this address space.
    #[error("is {} and does not fit in the address space; use std-stream", format_bytes(*.len))]
    TooBigForAddressSpace {
        /// The file's length.
        len: u64,
    },
    /// The device (or the user's quota) is full: a file could not be made or grown.
    ///
    /// With `pending` bytes, a writer that keeps them ([`AppendFile`](crate::AppendFile))
    /// writes them on its next `flush` once there is room; nothing was lost.
    #[error("{op}: no space left on the device{}", no_space_advice(*.pending))]
    NoSpace {
        /// What was being done.
        op: &'static str,
        /// Bytes still in the writer's buffer, not written (0 when nothing waits).
        pending: usize,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A sync failed: bytes written since the last successful sync may be lost.
    #[error(
        "cannot sync: {}; bytes written since the last successful sync may be lost (syncing again does not store them)",
        describe_io(.source)
    )]
    SyncFailed {
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A sync of this file failed earlier; the handle refuses to acknowledge more.
    #[error(
        "an earlier sync of this file failed ({reason}); bytes written since the last successful sync may be lost: reopen the file and check what it holds"
    )]
    SyncFailedBefore {
        /// The earlier failure.
        reason: String,
    },
    /// A write or sync of this log failed earlier; the log refuses further appends.
    #[error(
        "an earlier write or sync of this log failed ({reason}); drop this Log and open the file again to recover the acknowledged records"
    )]
    LogFailed {
        /// The earlier failure.
        reason: String,
    },
    /// The file is already open as a log: its lock is held by another opener.
    #[error(
        "is already open as a log{} (a log has one writer: share one Log among threads, or wait with LogOptions::wait_for_lock)",
        holder(*.pid)
    )]
    Locked {
        /// The process holding the lock, when the kernel says (`/proc/locks`).
        pid: Option<u32>,
    },
    /// The file is not a log this iolab can open.
    #[error("{reason}; nothing in it was changed")]
    NotALog {
        /// What it is instead: not a log, a newer format, a damaged header.
        reason: String,
    },
    /// The pipe's reader went away (`EPIPE`; Rust ignores `SIGPIPE`, so the write fails
    /// instead of killing the process). For a producer this is an end, not a failure.
    #[error("the reader of standard output went away after {} (broken pipe)", after(*.written, *.unflushed))]
    BrokenPipe {
        /// Bytes that reached standard output before it failed.
        written: u64,
        /// Of those, how many std's line buffer held (`stdout` method): whether they
        /// reached it cannot be known.
        unflushed: u64,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// Standard output's device filled up.
    #[error(
        "cannot write to standard output: {} after {} (free some space or write elsewhere)",
        describe_io(.source),
        after(*.written, *.unflushed)
    )]
    StdoutNoSpace {
        /// Bytes that reached standard output before it failed.
        written: u64,
        /// As for [`Error::BrokenPipe`].
        unflushed: u64,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// Standard output is closed (file descriptor 1 is not open for writing).
    #[error("standard output is closed ({why}); redirect it to a file, a pipe or /dev/null")]
    StdoutClosed {
        /// How it was found closed.
        why: &'static str,
    },
}

impl Error {
    /// Wraps an I/O error with the step that failed.
    pub fn io(op: &'static str, source: io::Error) -> Error {
        Error::Io { op, source }
    }

    /// This error, naming `path` (once: an error that names a path already keeps it).
    pub fn at(self, path: impl AsRef<Path>) -> Error {
        match self {
            e @ Error::AtPath { .. } => e,
            e => Error::AtPath {
                path: path.as_ref().to_path_buf(),
                source: Box::new(e),
            },
        }
    }

    /// The path the failing call was given, when it was given one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Error::AtPath { path, .. } => Some(path),
            _ => None,
        }
    }

    /// The error without the path it names: what went wrong.
    pub fn cause(&self) -> &Error {
        match self {
            Error::AtPath { source, .. } => source.cause(),
            e => e,
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match self.cause() {
            Error::AtPath { .. } => unreachable!("cause() unwraps every path"),
            Error::Io { source, .. } => match source.kind() {
                io::ErrorKind::NotFound => ErrorKind::NotFound,
                io::ErrorKind::PermissionDenied => ErrorKind::PermissionDenied,
                io::ErrorKind::AlreadyExists => ErrorKind::AlreadyExists,
                io::ErrorKind::IsADirectory => ErrorKind::IsDirectory,
                io::ErrorKind::StorageFull => ErrorKind::NoSpace,
                io::ErrorKind::BrokenPipe => ErrorKind::BrokenPipe,
                io::ErrorKind::InvalidInput => ErrorKind::InvalidInput,
                io::ErrorKind::InvalidData => ErrorKind::InvalidData,
                _ => ErrorKind::Io,
            },
            Error::IsDirectory => ErrorKind::IsDirectory,
            Error::Exists => ErrorKind::AlreadyExists,
            Error::PermissionDenied { .. } => ErrorKind::PermissionDenied,
            Error::NotRegularFile { .. }
            | Error::NotEditable { .. }
            | Error::SizeUnknown { .. }
            | Error::PseudoFile => ErrorKind::NotRegularFile,
            Error::Unavailable { .. } | Error::KernelUnavailable { .. } => ErrorKind::Unavailable,
            Error::FileShrank
            | Error::Changed { .. }
            | Error::ShrankWhileEdited
            | Error::ReplacedWhileOpening => ErrorKind::Changed,
            Error::InvalidUtf8 { .. } => ErrorKind::InvalidData,
            Error::HintNotApplicable { .. } | Error::InvalidOption(_) | Error::UnknownName(_) => {
                ErrorKind::InvalidInput
            }
            Error::TooBigForMemory { .. } | Error::TooBigForAddressSpace { .. } => {
                ErrorKind::TooBig
            }
            Error::NoSpace { .. } | Error::StdoutNoSpace { .. } => ErrorKind::NoSpace,
            Error::SyncFailed { .. } | Error::SyncFailedBefore { .. } | Error::LogFailed { .. } => {
                ErrorKind::SyncFailed
            }
            Error::BrokenPipe { .. } => ErrorKind::BrokenPipe,
            Error::Locked { .. } => ErrorKind::Locked,
            Error::NotALog { .. } => ErrorKind::NotALog,
            Error::StdoutClosed { .. } => ErrorKind::Closed,
        }
    }

    /// The operating system's error number behind this error, when there is one.
    pub fn raw_os_error(&self) -> Option<i32> {
        match self.cause() {
            Error::IsDirectory => Some(libc::EISDIR),
            Error::Exists => Some(libc::EEXIST),
            Error::Io { source, .. }
            | Error::PermissionDenied { source, .. }
            | Error::NoSpace { source, .. }
            | Error::SyncFailed { source }
            | Error::BrokenPipe { source, .. }
            | Error::StdoutNoSpace { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }

    /// `true` when the error means "cannot run here" rather than "failed".
    pub fn is_unavailable(&self) -> bool {
        self.kind() == ErrorKind::Unavailable
    }

    /// `true` when the reader of standard output went away: a program that prints should
    /// stop quietly.
    pub fn is_broken_pipe(&self) -> bool {
        self.kind() == ErrorKind::BrokenPipe
    }

    /// `true` when the device is full.
    pub fn is_no_space(&self) -> bool {
        self.kind() == ErrorKind::NoSpace
            || matches!(self.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT))
    }

    /// The error of a file operation `op` that failed with `source`, with `pending` bytes
    /// still buffered: a folder, no permission and a full device get their own variants.
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
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self} ({:?})", self.kind())
    }
}

impl From<io::Error> for Error {
    /// An I/O error from std, in a program that mixes iolab's calls with std's. One that
    /// carries an iolab [`Error`] (an iolab writer used through `std::io::Write`) is
    /// unwrapped rather than wrapped twice.
    fn from(e: io::Error) -> Error {
        if e.get_ref().is_some_and(|inner| inner.is::<Error>()) {
            let inner = e.into_inner().expect("checked above");
            return *inner.downcast::<Error>().expect("checked above");
        }
        Error::Io {
            op: "I/O",
            source: e,
        }
    }
}

impl From<Error> for io::Error {
    /// This error as an [`io::Error`] of the nearest kind, whose inner error is the
    /// [`Error`] itself (`get_ref()` then downcasts to it).
    fn from(e: Error) -> io::Error {
        let kind = match e.kind() {
            ErrorKind::NotFound => io::ErrorKind::NotFound,
            ErrorKind::PermissionDenied => io::ErrorKind::PermissionDenied,
            ErrorKind::AlreadyExists => io::ErrorKind::AlreadyExists,
            ErrorKind::IsDirectory => io::ErrorKind::IsADirectory,
            ErrorKind::NoSpace => io::ErrorKind::StorageFull,
            ErrorKind::BrokenPipe => io::ErrorKind::BrokenPipe,
            ErrorKind::InvalidInput => io::ErrorKind::InvalidInput,
            ErrorKind::InvalidData | ErrorKind::NotALog => io::ErrorKind::InvalidData,
            ErrorKind::Locked => io::ErrorKind::ResourceBusy,
            ErrorKind::Changed if matches!(e.cause(), Error::FileShrank) => {
                io::ErrorKind::UnexpectedEof
            }
            ErrorKind::Unavailable => io::ErrorKind::Unsupported,
            _ => match e.cause() {
                Error::Io { source, .. } => source.kind(),
                _ => io::ErrorKind::Other,
            },
        };
        io::Error::new(kind, e)
    }
}

/// What to do about a full device, for [`Error::NoSpace`]: the one call that retries the
/// `pending` bytes a writer holds (`flush`, which [`crate::AppendFile`] and every
/// `std::io::Write` have), or just make room.
fn no_space_advice(pending: usize) -> String {
    match pending {
        0 => " (free some space first)".to_string(),
        n => format!("; {n} bytes are still buffered (free some space, then call flush again)"),
    }
}

/// "N bytes", or what is known of them when std's line buffer held the last ones.
fn after(written: u64, unflushed: u64) -> String {
    if unflushed == 0 {
        format!("{written} bytes")
    } else {
        format!(
            "{} to {written} bytes (the last {unflushed} were in std's line buffer: how many of them reached it cannot be known)",
            written - unflushed
        )
    }
}

/// " (by process N)" when the lock's holder is known.
fn holder(pid: Option<u32>) -> String {
    pid.map(|p| format!(" by process {p}")).unwrap_or_default()
}

pub use crate::sys::describe_io;

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_named_once_and_the_kind_seen_through_it() {
        let e = Error::IsDirectory.at("/tmp/x").at("/tmp/y");
        assert_eq!(e.to_string(), "/tmp/x: is a directory");
        assert_eq!(e.path(), Some(Path::new("/tmp/x")));
        assert_eq!(e.kind(), ErrorKind::IsDirectory);
        let io: io::Error = e.into();
        assert_eq!(io.kind(), io::ErrorKind::IsADirectory);
        let back = Error::from(io);
        assert_eq!(
            back.to_string(),
            "/tmp/x: is a directory",
            "unwrapped, not wrapped"
        );
        let e = Error::from(io::Error::from_raw_os_error(libc::ENOENT));
        assert_eq!(e.kind(), ErrorKind::NotFound);
    }
}
