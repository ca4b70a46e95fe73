//! `readv`: one `readv(2)` fills several buffers per system call.
//!
//! **System calls**: `readv(2)` with [`DEFAULT_BUFFERS`] × [`DEFAULT_BUFFER_SIZE`] iovecs,
//! repeated until it returns 0.
//! **When it wins**: it moves as many bytes per call as one big `read`, so it is as fast
//! as `bufread-chunks` with a buffer of the same total size; it is here because the
//! write-up tried it.
//! **Correctness**: a call may fill the buffers only partly, and not only at the end of
//! the file. The write-up's version assumed every buffer but the last was full; here
//! exactly the returned number of bytes is handed on, buffer by buffer, in order.
//! **Limits**: works on any readable file, pipes included (it reads at the file position).

use std::io;

use super::{ReadOptions, retry_eintr};
use crate::error::{Error, Result};
use crate::input::Input;
use crate::task::Task;

/// Bytes per buffer: 64 KiB.
pub const DEFAULT_BUFFER_SIZE: usize = 64 * 1024;
/// Buffers per call: 16, so one call moves up to 1 MiB.
pub const DEFAULT_BUFFERS: usize = 16;

/// Feeds all of `input` to `task`.
pub fn read(input: &Input, options: &ReadOptions, task: &mut dyn Task) -> Result<()> {
    let (size, count) = input.fit_buffers(
        options.buffer_size_or(DEFAULT_BUFFER_SIZE),
        options.buffers_or(DEFAULT_BUFFERS),
    );
    let mut buffers: Vec<Vec<u8>> = (0..count).map(|_| vec![0u8; size]).collect();
    let iovecs: Vec<libc::iovec> = buffers
        .iter_mut()
        .map(|b| libc::iovec {
            iov_base: b.as_mut_ptr().cast(),
            iov_len: b.len(),
        })
        .collect();
    let fd = input.fd();
    loop {
        let n = retry_eintr(|| {
            // SAFETY: every iovec points into a live buffer of `buffers` (not moved or
            // dropped until this function returns) with its exact length, and `fd` stays
            // open while `input` is borrowed.
            let rc = unsafe { libc::readv(fd, iovecs.as_ptr(), iovecs.len() as libc::c_int) };
            if rc < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(rc as usize)
            }
        })
        .map_err(|e| Error::io("readv failed", e))?;
        if n == 0 {
            return Ok(());
        }
        feed_filled(&buffers, n, task);
    }
}

/// Hands the first `filled` bytes spread over `buffers` to `task`, in order.
pub(crate) fn feed_filled(buffers: &[Vec<u8>], mut filled: usize, task: &mut dyn Task) {
    for buffer in buffers {
        if filled == 0 {
            break;
        }
        let take = filled.min(buffer.len());
        task.feed(&buffer[..take]);
        filled -= take;
    }
}
