//! `raw-fd`: `write(2)` of a whole buffer straight on file descriptor 1.
//!
//! **System calls**: one `write(1, buf, B)` per buffer of `B` bytes (the last one shorter),
//! repeated after a short write for the rest, retried on `EINTR`, and after a `poll` on
//! `EAGAIN` (a non-blocking descriptor inherited from the caller).
//! **When it wins**: whenever the data is already in a buffer: nothing is copied in user
//! space, and the number of system calls is `N / B`. This is the stdout write-up's fix for Rust's
//! line-buffered stdout (`File::from_raw_fd(1)`), without taking ownership of descriptor 1:
//! [`RawStdout`] borrows it and never closes it.
//! Without `--buffer`, into a pipe, the size of each `write` is chosen by measuring
//! ([`super::adaptive`]: 8 KiB when the reader runs on another CPU, the pipe's capacity
//! when it shares ours).
//! **Limits**: every byte is still copied once by the kernel (into the pipe or the page
//! cache); a buffer larger than a pipe's capacity makes each `write` wait for the reader.
//! **How it fails**: `EPIPE` when the reader went away, `ENOSPC`/`EDQUOT` on a full disk,
//! `EBADF` when descriptor 1 is not open for writing (classified by [`super::Error`]).

use std::io::{self, Write};

use super::adaptive::Sizing;
use super::retry_write;

/// Standard output's file descriptor.
const STDOUT_FD: libc::c_int = 1;

/// The most bytes one `write(2)` may be asked for: Linux moves at most
/// `0x7ffff000` bytes per call anyway, and staying below `isize::MAX` keeps the return value
/// meaningful.
const MAX_WRITE: usize = 0x7fff_f000;

/// File descriptor 1 as an unbuffered [`Write`]: each `write` is one `write(2)` (retried on
/// `EINTR`, and after waiting on `EAGAIN`). Borrowed: dropping it leaves descriptor 1 open.
#[derive(Debug, Default, Clone, Copy)]
pub struct RawStdout;

impl Write for RawStdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let len = buf.len().min(MAX_WRITE);
        retry_write(STDOUT_FD, || {
            // SAFETY: `buf` is valid for reads of `len <= buf.len()` bytes for the call.
            unsafe { libc::write(STDOUT_FD, buf.as_ptr().cast(), len) }
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// [`RawStdout`] whose writes are at most [`Sizing::next_size`] bytes each: a longer
/// `write` moves one such piece and returns its length, as a short write would.
#[derive(Debug, Clone)]
pub struct SizedStdout {
    /// How the pieces are sized.
    pub sizing: Sizing,
}

impl Write for SizedStdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let len = buf.len().min(self.sizing.next_size());
        let n = RawStdout.write(&buf[..len])?;
        self.sizing.wrote(n);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
