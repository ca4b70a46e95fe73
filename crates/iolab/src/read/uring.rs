//! `uring`: io_uring with one `READ` in flight, as the line-count write-up had it.
//!
//! **System calls**: `io_uring_setup(2)` once, then one `io_uring_enter(2)` per read of
//! [`DEFAULT_BUFFER_SIZE`] bytes that submits the read and waits for its completion.
//! **When it wins**: it does not, with one read in flight: it is `pread` with a ring in
//! between. It is the baseline for the deep-queue io_uring methods.
//! **Correctness**: a completion's result is checked before use (the line-count write-up cast a
//! negative errno to `usize`); short reads continue at the next offset; the end is a read
//! that returns 0.
//! **How it fails**: io_uring unavailable (kernel without it, `kernel.io_uring_disabled`,
//! a seccomp filter): [`Error::Unavailable`](crate::Error::Unavailable) with the reason. Needs a regular file.

use io_uring::{opcode, types};

use super::ReadOptions;
use crate::error::Result;
use crate::input::Input;
use crate::sys::uring as ring_support;
use crate::task::Task;

/// Bytes per read: 1 MiB.
pub const DEFAULT_BUFFER_SIZE: usize = 1 << 20;

const METHOD: &str = "uring";

/// Whether io_uring with `IORING_OP_READ` works here.
pub fn availability() -> Result<(), String> {
    ring_support::require("IORING_OP_READ", |s| s.read)
}

/// Feeds all of `input` to `task`, one io_uring read at a time.
pub fn read(input: &Input, options: &ReadOptions, task: &mut dyn Task) -> Result<()> {
    input.sized_len(METHOD)?;
    let len = options
        .buffer_size_or(DEFAULT_BUFFER_SIZE)
        .min(u32::MAX as usize);
    let mut buf = vec![0u8; len];
    let mut ring = super::ring::small_ring(METHOD)?;
    let fd = types::Fd(input.fd());
    let mut offset = input.start();
    loop {
        let entry = opcode::Read::new(fd, buf.as_mut_ptr(), len as u32)
            .offset(offset)
            .build();
        // SAFETY: `buf` is neither read nor moved until the completion has been reaped;
        // if the wait fails, `buf` is leaked so a late completion writes into live memory.
        let n = unsafe {
            super::ring::read_one(&mut ring, &entry, "io_uring read failed", || {
                std::mem::forget(std::mem::take(&mut buf))
            })
        }?;
        if n == 0 {
            return Ok(());
        }
        task.feed(&buf[..n]);
        offset += n as u64;
    }
}
