//! `mmap-random`: the `mmap` method with `madvise(MADV_RANDOM)` — what a database that maps
//! its files should do for point reads (LMDB does; the CIDR 2022 paper measures both).
//!
//! **System calls**: `mmap(2)`, one `madvise(2)` with `MADV_RANDOM`, `munmap(2)`; page
//! faults in between. **When it wins**: cold or beyond memory, over plain `mmap`: a major
//! fault reads only the page touched (4 KiB) instead of a read-ahead window (128 KiB by
//! default), so the device does 30× less work per random 4 KiB read. Warm, it equals
//! `mmap`. **Limits and failures**: as [`super::mmap`]; a block larger than a page still
//! faults page by page.

use std::fs::File;

use super::mmap::{Advice, Mapped};
use iolab::Result;

/// Maps `file` with `MADV_RANDOM`.
pub(crate) fn open(file: &File, len: u64) -> Result<Mapped> {
    Mapped::new(file, len, Advice::Random)
}
