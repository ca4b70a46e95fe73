//! `append-file`: [`AppendFile`], LevelDB's `PosixWritableFile` in Rust, as a strategy.
//!
//! **System calls**: one `write` of exactly 64 KiB each time its buffer fills (records of
//! 64 KiB or more: one `writev` of buffer + record, as libstdc++ does); `fdatasync` for
//! [`AppendFile::sync`]; see [`crate::file::append`] for what is durable after each call.
//! **When it wins**: small records: a copy and a branch per record, and writes that end on
//! page boundaries (writes ending mid-page were slower on the development VM).
//! **Limits**: the buffer is lost if the process dies before a flush, as with any buffer.
//! **How it fails**: [`iolab::Error`], converted to `io::Error` with its kind and
//! message kept; after a full disk the refused bytes stay buffered, in order.

use std::io;

use super::Syncs;
use iolab::AppendFile;

/// Appends records `0..n` to `file`, then flushes it (or syncs it, for a partial group).
pub(super) fn append<'r>(
    file: &mut AppendFile,
    n: u64,
    record: &impl Fn(u64) -> &'r [u8],
    syncs: Syncs,
) -> io::Result<()> {
    for i in 0..n {
        file.append(record(i))?;
        if syncs.due(i) {
            file.sync()?;
        }
    }
    if syncs.tail() {
        file.sync()?;
    } else {
        file.flush()?;
    }
    Ok(())
}
