//! `direct-dsync`: `O_DIRECT | O_DSYNC` writes of whole aligned blocks into a pre-zeroed
//! file — PostgreSQL's `open_datasync` with direct I/O.
//!
//! **System calls**: per batch, one `pwrite` of whole blocks (the block size is the file's
//! `O_DIRECT` alignment from `statx(STATX_DIOALIGN)`, at least 4 KiB) that starts at the
//! block holding the log's end: records are packed into blocks, and the last, partial block
//! is written again, with the next batch's records after the bytes it already had, zeros
//! after them. Zeroing ahead (as [`Prealloc`](super::LogPolicy::Prealloc)) goes through a
//! second, buffered descriptor.
//! **What survives a crash**: every acknowledged record. Rewriting the tail block writes
//! its earlier bytes unchanged, so a torn rewrite (devices write whole sectors atomically)
//! leaves each sector either old or new, and both hold the acknowledged records.
//! **Cost**: no page cache copy, no separate sync call, no metadata (the region is
//! pre-zeroed); but every batch writes at least one whole block, so tiny records write
//! 4 KiB each, and the device must honour FUA or a cache flush per write.
//! **Limits**: needs a file system that accepts `O_DIRECT` (not tmpfs before Linux 6.6);
//! otherwise [`LogPolicy::availability_for`](super::LogPolicy::availability_for) says why.
//! **How it fails**: a refused `O_DIRECT` open fails [`Log::open`](super::Log::open); a
//! failed write fails the batch and every later append.

use std::fs::File;
use std::io;

use super::{LogObserver, Sink, pwrite_all, zero_fill};
use crate::buf::AlignedBuf;

/// Whole-block `O_DIRECT | O_DSYNC` writes over a pre-zeroed region.
pub(crate) struct DirectDsyncSink {
    /// Opened with `O_DIRECT | O_DSYNC`.
    pub(crate) file: File,
    /// The same file, buffered, for zeroing ahead.
    pub(crate) zeroer: File,
    /// The `O_DIRECT` alignment of offsets, lengths and memory.
    pub(crate) block: usize,
    /// The bytes of the log's last, partial block (fewer than `block`).
    pub(crate) tail: Vec<u8>,
    /// Bytes from offset 0 that are written and synced.
    pub(crate) zeroed: u64,
    /// How much to zero ahead each time the log reaches `zeroed`.
    pub(crate) chunk: u64,
    /// Reused aligned staging buffer.
    pub(crate) buf: Option<AlignedBuf>,
}

impl Sink for DirectDsyncSink {
    fn write_durable(
        &mut self,
        offset: u64,
        bytes: &[u8],
        obs: &dyn LogObserver,
    ) -> io::Result<()> {
        let block = self.block as u64;
        let start = offset - offset % block;
        debug_assert_eq!((offset - start) as usize, self.tail.len());
        let used = self.tail.len() + bytes.len();
        let padded = used.div_ceil(self.block) * self.block;
        let end = offset + bytes.len() as u64;
        if start + padded as u64 > self.zeroed {
            self.zeroed = zero_fill(&self.zeroer, self.zeroed, start + padded as u64, self.chunk)?;
        }
        if self.buf.as_ref().is_none_or(|b| b.len() < padded) {
            self.buf = Some(AlignedBuf::new(padded.next_power_of_two(), self.block));
        }
        let buf = self.buf.as_mut().expect("just allocated");
        buf[..self.tail.len()].copy_from_slice(&self.tail);
        buf[self.tail.len()..used].copy_from_slice(bytes);
        buf[used..padded].fill(0);
        obs.sync_started(end);
        pwrite_all(&self.file, &buf[..padded], start)?;
        obs.written(end);
        obs.sync_completed(end);
        let last_block = used - used % self.block;
        self.tail.clear();
        self.tail.extend_from_slice(&buf[last_block..used]);
        Ok(())
    }
}
