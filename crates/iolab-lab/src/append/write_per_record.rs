//! `write-per-record`: one `write(2)` per record, straight to the file.
//!
//! **System calls**: `write` of each record (`write_all`: again after a short write or
//! `EINTR`); `fdatasync` where [`Syncs`] asks.
//! **When it wins**: never for throughput: every record pays a system call (about 0.7 µs
//! here, 100× a buffered append). It is the reference for "each record is in the kernel
//! as soon as the call returns", which no buffered strategy gives.
//! **Limits**: none.
//! **How it fails**: the first failed `write` or `fdatasync` is returned; the records
//! before it are in the file, that one may be partly.

use std::fs::File;
use std::io::{self, Write};

use super::Syncs;

/// Appends records `0..n` to `file`, one `write` each.
pub(super) fn append<'r>(
    file: &mut File,
    n: u64,
    record: &impl Fn(u64) -> &'r [u8],
    syncs: Syncs,
) -> io::Result<()> {
    for i in 0..n {
        file.write_all(record(i))?;
        if syncs.due(i) {
            file.sync_data()?;
        }
    }
    if syncs.tail() {
        file.sync_data()?;
    }
    Ok(())
}
