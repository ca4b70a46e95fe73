//! `uring-direct`: io_uring over `O_DIRECT`, several reads in flight into registered
//! buffers — what fio does to find a device's sequential-read limit.
//!
//! **System calls**: `statx(2)` for the `O_DIRECT` alignment, `open(2)` with `O_DIRECT`,
//! `io_uring_setup(2)`, `io_uring_register(2)` of [`queue depth`] aligned buffers, then
//! `io_uring_enter(2)` calls that each submit the freed slots and wait for at least one
//! completion. Reads are `READ_FIXED` of one block each ([`DEFAULT_BLOCK_SIZE`]), issued
//! at consecutive offsets; completions may arrive out of order and are delivered to the
//! task in file order.
//! **When it wins**: cold files: with [`DEFAULT_QUEUE_DEPTH`] reads in flight the device
//! never waits for the CPU, and no page-cache copy or eviction work is done. It reads the
//! device even when the file is cached (`O_DIRECT` bypasses the cache), so warm it is only
//! as fast as the device.
//! **Limits and failures**: needs a regular file with a real size on a file system that
//! supports `O_DIRECT`, and io_uring: otherwise [`Error::Unavailable`] with the reason. If
//! registering buffers fails (a low `RLIMIT_MEMLOCK` on old kernels), plain `READ`s into
//! the same buffers are used. The size is taken at open. A short read before the end of
//! the file (never seen on local file systems) is completed with buffered `pread`s, so
//! the bytes delivered are right in every case. The ring itself (buffers, submissions,
//! completions, tear-down) is `read::ring`'s `DeepRing`, shared with `random`'s io_uring
//! methods.
//!
//! [`queue depth`]: DEFAULT_QUEUE_DEPTH

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

use io_uring::types;

use super::direct::{alignment, open_direct, unavailable};
use super::ring::{DeepRing, RingSetup};
use super::{ReadOptions, retry_eintr};
use crate::buf::AlignedBuf;
use crate::error::{Error, Result};
use crate::input::Input;
use crate::sys::uring as ring_support;
use crate::task::Task;

/// Bytes per read: 1 MiB, where fio's sequential reads reach this machine's disk limit.
pub const DEFAULT_BLOCK_SIZE: usize = 1 << 20;
/// Reads in flight: 8, enough to keep a virtual or NVMe disk busy (fio: QD 8 at 1 MiB).
pub const DEFAULT_QUEUE_DEPTH: usize = 8;

const METHOD: &str = "uring-direct";

/// Whether io_uring with `IORING_OP_READ_FIXED` works here.
pub fn availability() -> Result<(), String> {
    ring_support::require("IORING_OP_READ_FIXED", |s| s.read_fixed)
}

/// A block read and waiting for its turn to be delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Done {
    offset: u64,
    len: usize,
}

/// Reads `input` with `O_DIRECT` through io_uring and feeds it to `task` in order.
pub fn read(input: &Input, options: &ReadOptions, task: &mut dyn Task) -> Result<()> {
    let len = input.sized_len(METHOD)?;
    let end = input.start() + len;
    let align = alignment(input.file()).map_err(|r| unavailable(METHOD, r))?;
    let file = open_direct(input, METHOD)?;
    // What is read, from the aligned offset below the start: a small file gets one buffer
    // of its own size, not the queue's worth of 1 MiB ones (allocating and registering, i.e.
    // pinning, 8 MiB per file cost 7 ms of system time per file of a thousand).
    let span = end - (input.start() - input.start() % align.offset as u64);
    let block = options
        .buffer_size_or(DEFAULT_BLOCK_SIZE)
        .min(usize::try_from(span).unwrap_or(usize::MAX))
        .next_multiple_of(align.offset)
        .clamp(align.offset, u32::MAX as usize / 2);
    let depth = options
        .queue_depth_or(DEFAULT_QUEUE_DEPTH)
        .min(usize::try_from(span.div_ceil(block as u64)).unwrap_or(usize::MAX))
        .max(1);
    let buffer_align = align.buffer_align();
    let buffers = AlignedBuf::for_device(depth, block, buffer_align);
    // Declared after `file`, so the ring (waiting for any read left in flight) goes first.
    let mut ring = DeepRing::new(
        METHOD,
        RingSetup::Plain,
        types::Fd(file.as_raw_fd()),
        buffers,
        depth,
        true,
    )?;
    let first = input.start() - input.start() % align.offset as u64;
    let mut reader = Reader {
        buffered: input.file(),
        block,
        end,
        done: vec![None; depth],
        next_submit: first,
        deliver: first,
        skip: (input.start() % align.offset as u64) as usize,
    };
    reader.run(&mut ring, task)
}

struct Reader<'a> {
    buffered: &'a File,
    block: usize,
    end: u64,
    /// Per buffer, the block read into it and not yet delivered.
    done: Vec<Option<Done>>,
    next_submit: u64,
    /// The offset of the next block to deliver.
    deliver: u64,
    /// Bytes before `input.start()` in the first block, not to be delivered.
    skip: usize,
}

impl Reader<'_> {
    fn run(&mut self, ring: &mut DeepRing, task: &mut dyn Task) -> Result<()> {
        loop {
            // Fill every free slot with the next block.
            for i in 0..self.done.len() {
                let free = self.done[i].is_none() && !ring.is_reading(i);
                if free && self.next_submit < self.end {
                    ring.queue(i, self.next_submit)?;
                    self.next_submit += self.block as u64;
                }
            }
            if ring.is_idle() && self.done.iter().all(Option::is_none) {
                return Ok(());
            }
            if !ring.is_idle() {
                ring.submit_and_wait()?;
            }
            let done = &mut self.done;
            ring.reap("io_uring O_DIRECT read failed", |read| {
                done[read.buffer] = Some(Done {
                    offset: read.offset,
                    len: read.bytes,
                });
            })?;
            self.deliver_ready(ring, task)?;
        }
    }

    /// Delivers, in file order, every block that is complete.
    fn deliver_ready(&mut self, ring: &mut DeepRing, task: &mut dyn Task) -> Result<()> {
        while let Some(i) = self
            .done
            .iter()
            .position(|d| d.is_some_and(|d| d.offset == self.deliver))
        {
            let Some(Done { offset, len }) = self.done[i].take() else {
                unreachable!("found above")
            };
            let len = len.min((self.end - offset) as usize);
            let wanted_skip = std::mem::take(&mut self.skip);
            let skip = wanted_skip.min(len);
            task.feed(&ring.buffer(i)[skip..len]);
            if len < self.block && offset + (len as u64) < self.end {
                // A short read before the end: complete the block with buffered reads,
                // from past the start if the read stopped before it.
                self.fill_gap(
                    offset + len.max(wanted_skip) as u64,
                    offset + self.block as u64,
                    ring.buffer_mut(i),
                    task,
                )?;
            }
            self.deliver = offset + self.block as u64;
        }
        Ok(())
    }

    /// Reads `[from, to)` (clipped to the end) with buffered `pread` and feeds it.
    fn fill_gap(&self, from: u64, to: u64, buf: &mut [u8], task: &mut dyn Task) -> Result<()> {
        let mut offset = from;
        let to = to.min(self.end);
        while offset < to {
            let want = ((to - offset) as usize).min(buf.len());
            let n = retry_eintr(|| self.buffered.read_at(&mut buf[..want], offset))
                .map_err(|e| Error::io("read failed", e))?;
            if n == 0 {
                break;
            }
            task.feed(&buf[..n]);
            offset += n as u64;
        }
        Ok(())
    }
}
