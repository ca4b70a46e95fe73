//! `fdatasync`: write the batch at the log's end, then `fdatasync(2)`.
//!
//! **System calls**: per batch, `pwrite` at the end (the file grows) and `fdatasync`.
//! **What survives a crash**: every acknowledged record; `fdatasync` returned after the
//! data *and* the new file size reached the device.
//! **Cost**: the file grows with every batch, so each `fdatasync` also commits metadata
//! (the size, new extents): on ext4 a journal commit, roughly two device writes and two
//! cache flushes per sync. That is what [`Prealloc`](super::LogPolicy::Prealloc) avoids.
//! **When it wins**: never by speed; it is the simplest correct log and needs no space
//! reserved ahead.
//! **How it fails**: a failed `pwrite` or `fdatasync` fails the batch and every later
//! append (see [`Log`](super::Log)).

use std::fs::File;
use std::io;

use super::{LogObserver, Sink, fdatasync, pwrite_all};

/// A growing file made durable by `fdatasync` after each write.
pub(crate) struct FdatasyncSink {
    pub(crate) file: File,
}

impl Sink for FdatasyncSink {
    fn write_durable(
        &mut self,
        offset: u64,
        bytes: &[u8],
        obs: &dyn LogObserver,
    ) -> io::Result<()> {
        write_then_fdatasync(&self.file, offset, bytes, obs)
    }
}

/// `pwrite` of `bytes` at `offset`, then `fdatasync`, reported to `obs`; shared with
/// [`prealloc`](super::prealloc), which differs only in where the bytes land.
pub(crate) fn write_then_fdatasync(
    file: &File,
    offset: u64,
    bytes: &[u8],
    obs: &dyn LogObserver,
) -> io::Result<()> {
    let end = offset + bytes.len() as u64;
    pwrite_all(file, bytes, offset)?;
    obs.written(end);
    obs.sync_started(end);
    fdatasync(file)?;
    obs.sync_completed(end);
    Ok(())
}
