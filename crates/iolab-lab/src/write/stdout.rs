//! `stdout`: Rust's standard output, `std::io::stdout().lock()`, as most programs use it.
//!
//! **System calls**: `write(1, …)` of each buffer of `B` bytes, like `raw-fd`; but every
//! buffer first goes through std's `LineWriter`: it is searched for a newline
//! (`memrchr`) and, when smaller than the `LineWriter`'s 1 KiB, copied into its buffer.
//! That is the stdout write-up's finding: Rust's stdout is line-buffered even when it is a pipe
//! or a file, so a program writing big buffers through it pays a scan (or a copy) per
//! byte that a raw descriptor does not.
//! **When it wins**: never on throughput; it is here for contrast, written exactly as the
//! write-up's first program (a locked handle, `write_all` per buffer).
//! Without `--buffer`, into a pipe, the pieces are sized by measuring, as `raw-fd`'s
//! ([`super::adaptive`]); std passes a piece of 1 KiB or more straight to `write(2)`.
//! **Limits**: std's stdout silently reports success when descriptor 1 is closed (`EBADF`
//! is swallowed); [`super::write_zeros`] checks the descriptor before, so that case is
//! still caught.
//! **How it fails**: as `raw-fd`, except on a non-blocking standard output: std's
//! `write_all` fails on `EAGAIN` where `raw-fd` waits with `poll(2)` and goes on. The
//! locked handle is flushed at the end, so the last buffered bytes' errors are reported
//! too.

use std::io::{self, Write};

use super::Run;

/// The capacity of std's `LineWriter` around standard output: 1 KiB, which is how many of
/// the bytes passed to it may still be unwritten when a write fails.
pub const LINE_BUFFER: usize = 1024;
use super::zeroed_buffer;

/// Writes `bytes` zero bytes through the locked standard output, in pieces of at most
/// `buffer_size` sized by `sizing`.
pub(crate) fn write(bytes: u64, buffer_size: usize, run: &mut Run) -> io::Result<()> {
    let Run {
        sizing, written, ..
    } = run;
    let buf = zeroed_buffer(usize::try_from(bytes).map_or(buffer_size, |b| b.min(buffer_size)));
    let mut out = io::stdout().lock();
    while *written < bytes {
        let want = usize::try_from(bytes - *written)
            .map_or(buf.len(), |rest| rest.min(buf.len()))
            .min(sizing.next_size());
        out.write_all(&buf[..want])?;
        sizing.wrote(want);
        *written += want as u64;
    }
    // Bytes still in the LineWriter's buffer are not written yet: flush, and count them as
    // written only then (a failure below leaves `written` slightly high, by at most 1 KiB).
    out.flush()
}
