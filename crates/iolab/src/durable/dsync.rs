//! `dsync`: the file is opened with `O_DSYNC`, so each write returns once it is durable.
//!
//! **System calls**: per batch, one `pwrite` at the end on an `O_DSYNC` descriptor (the
//! file grows); no separate sync call.
//! **What survives a crash**: every acknowledged record: the kernel completes an `O_DSYNC`
//! write only after the data and the metadata needed to read it back (the new size) are on
//! the device.
//! **Cost**: as [`Fdatasync`](super::LogPolicy::Fdatasync) (the size changes with every
//! write), minus one system call per batch.
//! **How it fails**: a failed `pwrite` fails the batch and every later append.

use std::fs::File;
use std::io;

use super::{LogObserver, Sink, pwrite_all};

/// A growing file opened with `O_DSYNC`.
pub(crate) struct DsyncSink {
    pub(crate) file: File,
}

impl Sink for DsyncSink {
    fn write_durable(
        &mut self,
        offset: u64,
        bytes: &[u8],
        obs: &dyn LogObserver,
    ) -> io::Result<()> {
        let end = offset + bytes.len() as u64;
        // The write is the sync: it starts with the write and completes when it returns.
        obs.sync_started(end);
        pwrite_all(&self.file, bytes, offset)?;
        obs.written(end);
        obs.sync_completed(end);
        Ok(())
    }
}
