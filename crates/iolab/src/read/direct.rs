//! `direct`: reads that bypass the page cache (`O_DIRECT`), into aligned buffers.
//!
//! **System calls**: `statx(2)` for `STATX_DIOALIGN`, `open(2)` of `/proc/self/fd/N` with
//! `O_DIRECT`, then `pread(2)` of
//! [`DEFAULT_BUFFER_SIZE`] bytes at aligned offsets until a short read (the file's end, or
//! a read that returns 0 when the length is a multiple of the block).
//! **When it wins**: cold files much larger than RAM, where caching only evicts other
//! data; with one read in flight it cannot reach the device's limit (see `uring-direct`).
//! **Alignment**: buffer address, length and file offset must be multiples of what the
//! file system requires. It is asked with `statx(STATX_DIOALIGN)` (Linux 6.1+); older
//! kernels fall back to the device's logical block size, then to 4096. The write-up used a
//! `Vec` (alignment 1), which the kernel may reject with `EINVAL`.
//! **Tail**: the last read returns fewer bytes at the end of the file, which ends the loop.
//! Should a short read ever leave an unaligned offset before the end, the rest is read
//! with ordinary `pread`, so the count is right either way.
//! **How it fails**: a file system that refuses `O_DIRECT` (some FUSE and older tmpfs),
//! or `statx` saying it is unsupported for this file: [`Error::Unavailable`] with the reason.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};

use super::{ReadOptions, retry_eintr};
use crate::buf::AlignedBuf;
use crate::error::{Error, Result};
use crate::input::Input;
use crate::task::Task;

/// Bytes per read: 1 MiB, large enough that the per-call cost is small.
pub const DEFAULT_BUFFER_SIZE: usize = 1 << 20;
pub use crate::sys::dio::alignment;
#[cfg(any(test, feature = "lab"))]
pub use crate::sys::dio::{DirectAlignment, FALLBACK_ALIGNMENT, logical_block_size};

const METHOD: &str = "direct";

/// Reopens `input` with `O_DIRECT` through `/proc/self/fd`, leaving the original
/// descriptor as it was. Setting `O_DIRECT` on the original with `fcntl` would change the
/// caller's open file too, so without /proc the method is refused instead.
pub(crate) fn open_direct(input: &Input, method: &'static str) -> Result<File> {
    open_direct_path(
        std::path::Path::new(&format!("/proc/self/fd/{}", input.fd())),
        method,
    )
}

/// Opens `path` read-only with `O_DIRECT`; a refusal is [`Error::Unavailable`] for `method`.
pub fn open_direct_path(path: &std::path::Path, method: &'static str) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::EINVAL) => {
                unavailable(method, "the file system refuses O_DIRECT (EINVAL)".into())
            }
            Some(libc::EOPNOTSUPP) => unavailable(
                method,
                "the file system refuses O_DIRECT (EOPNOTSUPP)".into(),
            ),
            Some(libc::ENOENT) => unavailable(
                method,
                "/proc is not mounted, so the file cannot be reopened with O_DIRECT".into(),
            ),
            _ => Error::io("cannot open with O_DIRECT", e),
        })
}

/// The error of an `O_DIRECT` method that cannot run here: `method`, and why.
pub fn unavailable(method: &'static str, reason: String) -> Error {
    Error::Unavailable { method, reason }
}

/// Feeds all of `input` to `task`, read with `O_DIRECT`.
pub fn read(input: &Input, options: &ReadOptions, task: &mut dyn Task) -> Result<()> {
    input.sized_len(METHOD)?;
    let align = alignment(input.file()).map_err(|r| unavailable(METHOD, r))?;
    let file = open_direct(input, METHOD)?;
    let len = options
        .buffer_size_or(DEFAULT_BUFFER_SIZE)
        .next_multiple_of(align.offset)
        .max(align.offset);
    let mut buf = AlignedBuf::for_device(1, len, align.buffer_align())
        .pop()
        .expect("one buffer");
    // Start at the aligned offset at or before `input.start()` and skip the difference.
    let mut skip = (input.start() % align.offset as u64) as usize;
    let mut offset = input.start() - skip as u64;
    loop {
        let n = retry_eintr(|| file.read_at(&mut buf, offset)).map_err(|e| {
            if e.raw_os_error() == Some(libc::EINVAL) {
                unavailable(
                    METHOD,
                    format!(
                        "O_DIRECT read rejected (EINVAL) with {}-byte alignment from {}",
                        align.offset, align.source
                    ),
                )
            } else {
                Error::io("read failed", e)
            }
        })?;
        if n == 0 {
            return Ok(());
        }
        task.feed(&buf[skip.min(n)..n]);
        // Bytes before the start still to pass over (only if the first read was short).
        let unskipped = skip.saturating_sub(n) as u64;
        skip = 0;
        offset += n as u64;
        if !offset.is_multiple_of(align.offset as u64) {
            // Normally the end of the file. If not, the next O_DIRECT read would be
            // misaligned: finish with buffered reads from here (past the start).
            return read_rest_buffered(input.file(), offset + unskipped, &mut buf, task);
        }
    }
}

fn read_rest_buffered(
    file: &File,
    mut offset: u64,
    buf: &mut [u8],
    task: &mut dyn Task,
) -> Result<()> {
    loop {
        let n =
            retry_eintr(|| file.read_at(buf, offset)).map_err(|e| Error::io("read failed", e))?;
        if n == 0 {
            return Ok(());
        }
        task.feed(&buf[..n]);
        offset += n as u64;
    }
}
