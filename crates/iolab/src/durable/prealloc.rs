//! `prealloc`: a file written full of zeros ahead of the log, overwritten in place, then
//! `fdatasync(2)` — the way PostgreSQL recycles WAL segments and `pg_test_fsync` measures.
//!
//! **System calls**: per batch, `pwrite` inside the zeroed region and `fdatasync`; when the
//! log reaches the end of the region, `pwrite`s of zeros for the next
//! [`PREALLOC_CHUNK`](super::PREALLOC_CHUNK) and one `fsync` (outside any record's write).
//! **What survives a crash**: every acknowledged record. Recovery stops at the first
//! invalid frame; the zeros after the log are never a valid frame.
//! **Cost**: the size and the extents never change while the log writes inside the
//! region, so `fdatasync` has no metadata to commit: one data write and one cache flush.
//! Zeros are *written*, not `fallocate`d: an `fallocate`d extent is "unwritten", and the
//! first write into it changes metadata again.
//! **Limits**: the zeroed region costs disk space and one write of it up front.
//! **How it fails**: a failed write or sync fails the batch and every later append; a full
//! disk shows when the next chunk is zeroed.

use std::fs::File;
use std::io;

use super::fdatasync::write_then_fdatasync;
use super::{LogObserver, Sink, zero_fill};

/// A pre-zeroed file overwritten in place and synced with `fdatasync`.
pub(crate) struct PreallocSink {
    pub(crate) file: File,
    /// Bytes from offset 0 that are written (zeros or records) and synced.
    pub(crate) zeroed: u64,
    /// How much to zero ahead each time the log reaches `zeroed`.
    pub(crate) chunk: u64,
}

impl Sink for PreallocSink {
    fn write_durable(
        &mut self,
        offset: u64,
        bytes: &[u8],
        obs: &dyn LogObserver,
    ) -> io::Result<()> {
        let end = offset + bytes.len() as u64;
        if end > self.zeroed {
            self.zeroed = zero_fill(&self.file, self.zeroed, end, self.chunk)?;
        }
        write_then_fdatasync(&self.file, offset, bytes, obs)
    }
}
