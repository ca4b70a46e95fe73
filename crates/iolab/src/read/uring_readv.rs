//! `uring-readv`: io_uring with one vectored `READV` in flight.
//!
//! **System calls**: `io_uring_setup(2)` once, then one `io_uring_enter(2)` per `READV` of
//! [`DEFAULT_BUFFERS`] × [`DEFAULT_BUFFER_SIZE`] bytes.
//! **When it wins**: as `readv`, it moves much per call; the ring adds nothing with one
//! operation in flight. Kept because the line-count write-up measured it.
//! **Correctness**: the bytes of a partly filled `READV` are handed on buffer by buffer,
//! exactly as many as the completion reports; errors in a completion are reported, not
//! cast to a size.
//! **How it fails**: io_uring unavailable: [`Error::Unavailable`](crate::Error::Unavailable) with the reason. Needs a
//! regular file.

use io_uring::{opcode, types};

use super::ReadOptions;
use super::readv::feed_filled;
use crate::error::Result;
use crate::input::Input;
use crate::sys::uring as ring_support;
use crate::task::Task;

/// Bytes per buffer: 64 KiB.
pub const DEFAULT_BUFFER_SIZE: usize = 64 * 1024;
/// Buffers per `READV`: 16, so one operation moves up to 1 MiB.
pub const DEFAULT_BUFFERS: usize = 16;

const METHOD: &str = "uring-readv";

/// Whether io_uring with `IORING_OP_READV` works here.
pub fn availability() -> Result<(), String> {
    ring_support::require("IORING_OP_READV", |s| s.readv)
}

/// Feeds all of `input` to `task`, one vectored io_uring read at a time.
pub fn read(input: &Input, options: &ReadOptions, task: &mut dyn Task) -> Result<()> {
    input.sized_len(METHOD)?;
    let (size, count) = input.fit_buffers(
        options.buffer_size_or(DEFAULT_BUFFER_SIZE),
        options.buffers_or(DEFAULT_BUFFERS),
    );
    let mut buffers: Vec<Vec<u8>> = (0..count).map(|_| vec![0u8; size]).collect();
    let mut iovecs: Vec<libc::iovec> = buffers
        .iter_mut()
        .map(|b| libc::iovec {
            iov_base: b.as_mut_ptr().cast(),
            iov_len: b.len(),
        })
        .collect();
    let mut ring = super::ring::small_ring(METHOD)?;
    let fd = types::Fd(input.fd());
    let mut offset = input.start();
    loop {
        let entry = opcode::Readv::new(fd, iovecs.as_ptr(), iovecs.len() as u32)
            .offset(offset)
            .build();
        // SAFETY: `iovecs` and the buffers they point to are neither touched nor moved
        // until the completion is reaped; if the wait fails both are leaked.
        let n = unsafe {
            super::ring::read_one(&mut ring, &entry, "io_uring readv failed", || {
                std::mem::forget(std::mem::take(&mut buffers));
                std::mem::forget(std::mem::take(&mut iovecs));
            })
        }?;
        if n == 0 {
            return Ok(());
        }
        feed_filled(&buffers, n, task);
        offset += n as u64;
    }
}
