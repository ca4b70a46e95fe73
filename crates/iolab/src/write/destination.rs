//! What standard output is: a pipe (and its capacity), a regular file, `/dev/null`, a
//! terminal, … and whether it is open for writing at all.
//!
//! **System calls**: `fcntl(1, F_GETFL)` (open? for writing?), `fstat(1)` (kind,
//! `st_blksize`), `isatty(1)`, and for a pipe `fcntl(F_GETPIPE_SZ)` (and `F_SETPIPE_SZ` in
//! [`set_pipe_capacity`]).
//!
//! **A closed standard output** is not always visible as `EBADF`: Rust's runtime, before
//! `main`, opens `/dev/null` read-write on a closed standard descriptor, so a program
//! started with `>&-` finds `/dev/null` there and every write "succeeds". A library cannot
//! tell that `/dev/null` from one its caller chose (Python's `subprocess.DEVNULL` opens it
//! read-write too), so [`probe_stdout`] reports it as `/dev/null`; the `iolab` command
//! notes its closed descriptors before Rust's runtime replaces them, and refuses them.

use std::io::{self, IsTerminal};
#[cfg(any(test, feature = "lab"))]
use std::os::fd::AsRawFd;

use super::Error;

/// Standard output's file descriptor.
const STDOUT_FD: libc::c_int = 1;

/// The device numbers of `/dev/null` (major 1, minor 3 on Linux).
const DEV_NULL_MAJOR: u32 = 1;
const DEV_NULL_MINOR: u32 = 3;

/// What kind of file standard output is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DestinationKind {
    /// A pipe or FIFO.
    Pipe,
    /// A regular file.
    RegularFile,
    /// `/dev/null`.
    Null,
    /// A terminal.
    Terminal,
    /// Another character device (`/dev/full`, …).
    CharDevice,
    /// A socket.
    Socket,
    /// Anything else.
    Other,
}

impl DestinationKind {
    /// `a pipe`, `a regular file`, …: for messages.
    pub fn describe(self) -> &'static str {
        match self {
            DestinationKind::Pipe => "a pipe",
            DestinationKind::RegularFile => "a regular file",
            DestinationKind::Null => "/dev/null",
            DestinationKind::Terminal => "a terminal",
            DestinationKind::CharDevice => "a character device",
            DestinationKind::Socket => "a socket",
            DestinationKind::Other => "neither a pipe nor a file",
        }
    }
}

/// Standard output, as found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Destination {
    /// What it is.
    pub kind: DestinationKind,
    /// Its `st_blksize`: the I/O size it prefers (4096 for pipes and most files; `pv`
    /// buffers 32 times this).
    pub block_size: u64,
    /// A pipe's capacity in bytes (`F_GETPIPE_SZ`), `None` for anything else.
    pub pipe_capacity: Option<usize>,
}

/// Finds out what standard output is, refusing one that cannot be written.
///
/// [`Error::StdoutClosed`] when descriptor 1 is closed, open only for reading, or is the
/// read-write `/dev/null` that Rust's runtime put in place of a closed one (module docs).
pub fn probe_stdout() -> Result<Destination, Error> {
    // SAFETY: F_GETFL only reads the descriptor's flags; a closed one gives EBADF.
    let flags = unsafe { libc::fcntl(STDOUT_FD, libc::F_GETFL) };
    if flags < 0 {
        let e = io::Error::last_os_error();
        return Err(if e.raw_os_error() == Some(libc::EBADF) {
            Error::StdoutClosed {
                why: "file descriptor 1 is not open",
            }
        } else {
            Error::io("cannot inspect standard output", e)
        });
    }
    let access = flags & libc::O_ACCMODE;
    if access == libc::O_RDONLY {
        return Err(Error::StdoutClosed {
            why: "file descriptor 1 is open for reading only",
        });
    }
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `st` is writable memory of the size and layout fstat fills.
    if unsafe { libc::fstat(STDOUT_FD, st.as_mut_ptr()) } != 0 {
        return Err(Error::io(
            "cannot inspect standard output",
            io::Error::last_os_error(),
        ));
    }
    // SAFETY: fstat returned 0, so it filled `st`.
    let st = unsafe { st.assume_init() };
    let kind = match st.st_mode & libc::S_IFMT {
        libc::S_IFIFO => DestinationKind::Pipe,
        libc::S_IFREG => DestinationKind::RegularFile,
        libc::S_IFSOCK => DestinationKind::Socket,
        libc::S_IFCHR
            if libc::major(st.st_rdev) == DEV_NULL_MAJOR
                && libc::minor(st.st_rdev) == DEV_NULL_MINOR =>
        {
            DestinationKind::Null
        }
        libc::S_IFCHR if io::stdout().is_terminal() => DestinationKind::Terminal,
        libc::S_IFCHR => DestinationKind::CharDevice,
        _ => DestinationKind::Other,
    };
    let pipe_capacity = match kind {
        DestinationKind::Pipe => pipe_capacity_of(STDOUT_FD).ok(),
        _ => None,
    };
    Ok(Destination {
        kind,
        block_size: u64::try_from(st.st_blksize).unwrap_or(0),
        pipe_capacity,
    })
}

/// The capacity of the pipe `fd` (`F_GETPIPE_SZ`).
pub fn pipe_capacity_of(fd: libc::c_int) -> io::Result<usize> {
    // SAFETY: F_GETPIPE_SZ only reads the pipe's size; a non-pipe gives EBADF or EINVAL.
    let size = unsafe { libc::fcntl(fd, libc::F_GETPIPE_SZ) };
    usize::try_from(size).map_err(|_| io::Error::last_os_error())
}

/// Resizes the pipe `fd` to at least `bytes` (`F_SETPIPE_SZ`) and returns the capacity it
/// got: the kernel rounds up to a power-of-two number of pages. Fails with `EPERM` beyond
/// `/proc/sys/fs/pipe-max-size` without `CAP_SYS_RESOURCE`, and with `EBUSY` below the
/// bytes the pipe holds.
#[cfg(any(test, feature = "lab"))]
pub fn set_pipe_capacity_of(fd: &impl AsRawFd, bytes: usize) -> io::Result<usize> {
    resize(fd.as_raw_fd(), bytes)
}

/// [`set_pipe_capacity_of`] for standard output.
pub fn set_pipe_capacity(bytes: usize) -> io::Result<usize> {
    resize(STDOUT_FD, bytes)
}

fn resize(fd: libc::c_int, bytes: usize) -> io::Result<usize> {
    let arg = libc::c_int::try_from(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "pipe size too large"))?;
    // SAFETY: F_SETPIPE_SZ takes an int and touches no memory of ours.
    let size = unsafe { libc::fcntl(fd, libc::F_SETPIPE_SZ, arg) };
    usize::try_from(size).map_err(|_| io::Error::last_os_error())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_can_be_measured_and_resized() {
        let (reader, _writer) = io::pipe().unwrap();
        let before = pipe_capacity_of(reader.as_raw_fd()).unwrap();
        assert!(before >= 4096);
        let after = set_pipe_capacity_of(&reader, 2 * before).unwrap();
        assert!(after >= 2 * before);
        assert_eq!(pipe_capacity_of(reader.as_raw_fd()).unwrap(), after);
    }

    #[test]
    fn a_file_has_no_pipe_capacity() {
        let file = tempfile::tempfile().unwrap();
        assert!(pipe_capacity_of(file.as_raw_fd()).is_err());
    }
}
