//! `mmap`, `mmap-avx2`, `mmap-avx512`: the file mapped into memory and scanned in place.
//!
//! **System calls**: `mmap(2)` once, `munmap(2)` once; the kernel then fills pages on
//! demand through page faults (with its read-ahead), and no byte is copied into a user
//! buffer. The three names share this reader and differ only in the kernel that scans
//! the map: portable, AVX2 or AVX-512 (see [`crate::kernel`]).
//! **When it wins**: big files already in the page cache, where the copy that `read`
//! makes is the main cost; with a SIMD kernel it runs at memory speed.
//! **Limits**: needs a regular file with a real size (a FIFO or a `/proc` file is refused
//! with a clear error, never counted as 0). Page faults make it slower than large reads on
//! a cold cache. If another process truncates the file while it is mapped, touching the
//! lost pages raises `SIGBUS`; the same holds for every program that maps files.

use memmap2::Mmap;

use crate::error::{Error, Result};
use crate::input::Input;
use crate::task::Task;

/// Maps `input` and feeds the whole map to `task` in one chunk.
pub fn read(input: &Input, method: &'static str, task: &mut dyn Task) -> Result<()> {
    let len = input.sized_len(method)?;
    if len == 0 {
        // A zero-length mapping is invalid; an empty file has nothing to feed.
        return Ok(());
    }
    // SAFETY: the map is read-only and private to this call. Its soundness in Rust terms
    // relies on no other process truncating or writing the file while it is mapped; that
    // cannot be enforced, and is the documented risk of every mmap reader (see above).
    let map = unsafe { Mmap::map(input.file()) }.map_err(|e| Error::io("mmap failed", e))?;
    // `input.start()` is 0 unless standard input was partly read already.
    // If the file shrank below that since it was opened, there is nothing left to feed.
    task.feed(map.get(input.start() as usize..).unwrap_or(&[]));
    Ok(())
}
