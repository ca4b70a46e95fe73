//! `mmap`, `mmap-avx2`, `mmap-avx512`: the file mapped into memory and scanned in place.
//!
//! **System calls**: `mmap(2)` once (with `MAP_POPULATE` when the `populate` hint is
//! given), `madvise(2)` for the `sequential`, `willneed` and `hugepage` hints, `munmap(2)`
//! once; the kernel fills pages on demand through page faults (mapping up to 16 cached
//! pages per fault, "fault-around"), and no byte is copied into a user buffer. The three
//! names share this reader and differ only in the kernel that scans the map: portable,
//! AVX2 or AVX-512 (see [`crate::lab::kernel`]).
//! **When it wins**: big files already in the page cache, where the copy that `read`
//! makes is the main cost; with a SIMD kernel it runs at memory speed on one core.
//! **Limits**: needs a regular file with a real size (a FIFO or a `/proc` file is refused
//! with a clear error, never counted as 0). Page faults make it slower than large reads on
//! a cold cache. The size is taken when the file is opened: bytes appended later are not
//! read. If another process truncates the file while it is mapped, touching the lost pages
//! raises `SIGBUS`, which kills most mmap-based tools; iolab's guard ([`sigbus`]) turns it
//! into [`Error::FileShrank`].

use memmap2::{Advice, Mmap, MmapOptions};

use super::{CountHint, ReadOptions};
use crate::error::{Error, Result};
use crate::input::Input;
use crate::sys::sigbus;
use crate::task::Task;

/// A read-only map of `input` (from offset 0) with the options' map hints applied, or
/// `None` for an empty file (a zero-length map is invalid).
pub(crate) fn map(
    input: &Input,
    method: &'static str,
    options: &ReadOptions,
) -> Result<Option<Mmap>> {
    let len = input.sized_len(method)?;
    if len == 0 {
        return Ok(None);
    }
    let mut map_options = MmapOptions::new();
    if options.has_hint(CountHint::Populate) {
        map_options.populate();
    }
    // SAFETY: the map is read-only and private to this call. Its soundness in Rust terms
    // relies on no other process truncating or writing the file while it is mapped; that
    // cannot be enforced, and is the documented risk of every mmap reader (see above).
    let map = unsafe { map_options.map(input.file()) }.map_err(|e| Error::io("mmap failed", e))?;
    for (hint, advice) in [
        (CountHint::Sequential, Advice::Sequential),
        (CountHint::WillNeed, Advice::WillNeed),
        (CountHint::HugePage, Advice::HugePage),
    ] {
        if options.has_hint(hint) {
            map.advise(advice)
                .map_err(|e| Error::io("madvise failed", e))?;
        }
    }
    Ok(Some(map))
}

/// The part of `map` from `input.start()` on; empty if the file shrank below that since
/// it was opened.
pub(crate) fn from_start<'m>(map: &'m Mmap, input: &Input) -> &'m [u8] {
    map.get(input.start() as usize..).unwrap_or(&[])
}

/// Runs `scan` over the map with a [`sigbus::Guard`]: if the file shrinks meanwhile, the
/// lost pages read as zeros instead of killing the process, and the result is
/// [`Error::FileShrank`] instead of a wrong answer.
pub(crate) fn guarded<R>(map: &Mmap, scan: impl FnOnce() -> R) -> Result<R> {
    let guard = sigbus::Guard::new(map.as_ptr(), map.len());
    let result = scan();
    if guard.truncated() {
        return Err(Error::FileShrank);
    }
    Ok(result)
}

/// Maps `input` and feeds the whole map to `task` in one chunk.
pub fn read(
    input: &Input,
    method: &'static str,
    options: &ReadOptions,
    task: &mut dyn Task,
) -> Result<()> {
    if let Some(map) = map(input, method, options)? {
        guarded(&map, || task.feed(from_start(&map, input)))?;
    }
    Ok(())
}
