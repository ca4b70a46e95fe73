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
//! the bytes delivered are right in every case.
//!
//! [`queue depth`]: DEFAULT_QUEUE_DEPTH

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

use io_uring::{IoUring, types};

use super::direct::{alignment, open_direct, unavailable};
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Free,
    InFlight { offset: u64 },
    Done { offset: u64, len: usize },
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
    // Declared before the ring, so the ring (and its registration) is dropped first.
    let mut buffers: Vec<AlignedBuf> = (0..depth)
        .map(|_| AlignedBuf::new(block, buffer_align))
        .collect();
    let mut ring = ring_support::new_ring((depth as u32).next_power_of_two())
        .map_err(|reason| unavailable(METHOD, reason))?;
    let iovecs: Vec<libc::iovec> = buffers
        .iter_mut()
        .map(|b| libc::iovec {
            iov_base: b.as_mut_ptr().cast(),
            iov_len: b.len(),
        })
        .collect();
    // SAFETY: the iovecs describe `buffers`, which outlive `ring` (declared before it) and
    // are not moved or freed while registered.
    let registered = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();

    let mut reader = Reader {
        buffered: input.file(),
        fd: types::Fd(file.as_raw_fd()),
        block,
        end,
        registered,
        slots: vec![Slot::Free; depth],
        next_submit: input.start() - input.start() % align.offset as u64,
        skip: (input.start() % align.offset as u64) as usize,
    };
    let mut deliver = reader.next_submit;
    let result = reader.run(&mut ring, &mut buffers, &mut deliver, task);
    if result.is_err() && !reader.drain(&mut ring) {
        // Reads may still be in flight into `buffers`: never free them.
        std::mem::forget(buffers);
        std::mem::forget(ring);
    }
    result
}

struct Reader<'a> {
    buffered: &'a File,
    fd: types::Fd,
    block: usize,
    end: u64,
    registered: bool,
    slots: Vec<Slot>,
    next_submit: u64,
    /// Bytes before `input.start()` in the first block, not to be delivered.
    skip: usize,
}

impl Reader<'_> {
    fn run(
        &mut self,
        ring: &mut IoUring,
        buffers: &mut [AlignedBuf],
        deliver: &mut u64,
        task: &mut dyn Task,
    ) -> Result<()> {
        loop {
            // Fill every free slot with the next block.
            for i in 0..self.slots.len() {
                if self.slots[i] == Slot::Free && self.next_submit < self.end {
                    self.submit(ring, buffers, i, self.next_submit)?;
                    self.next_submit += self.block as u64;
                }
            }
            if self.slots.iter().all(|s| *s == Slot::Free) {
                return Ok(());
            }
            if self
                .slots
                .iter()
                .any(|s| matches!(s, Slot::InFlight { .. }))
            {
                retry_eintr(|| ring.submit_and_wait(1))
                    .map_err(|e| Error::io("io_uring wait failed", e))?;
            }
            let completions: Vec<(u64, i32)> = ring
                .completion()
                .map(|c| (c.user_data(), c.result()))
                .collect();
            // Every reaped completion settles its slot before a failure is returned: a slot
            // left in flight would make `drain` wait for a completion already taken.
            let mut failed = None;
            for (index, result) in completions {
                let i = index as usize;
                let Slot::InFlight { offset } = self.slots[i] else {
                    continue;
                };
                if failed.is_none() && (result == -libc::EINTR || result == -libc::EAGAIN) {
                    self.submit(ring, buffers, i, offset)?;
                    continue;
                }
                if result < 0 || failed.is_some() {
                    self.slots[i] = Slot::Free;
                    failed = failed.or((result < 0).then_some(result));
                    continue;
                }
                self.slots[i] = Slot::Done {
                    offset,
                    len: result as usize,
                };
            }
            if let Some(result) = failed {
                return Err(Error::io(
                    "io_uring O_DIRECT read failed",
                    std::io::Error::from_raw_os_error(-result),
                ));
            }
            // Deliver, in file order, every block that is complete.
            while let Some(i) = self
                .slots
                .iter()
                .position(|s| matches!(s, Slot::Done { offset, .. } if *offset == *deliver))
            {
                let Slot::Done { offset, len } = self.slots[i] else {
                    unreachable!("matched above")
                };
                let len = len.min((self.end - offset) as usize);
                let wanted_skip = std::mem::take(&mut self.skip);
                let skip = wanted_skip.min(len);
                task.feed(&buffers[i][skip..len]);
                if len < self.block && offset + (len as u64) < self.end {
                    // A short read before the end: complete the block with buffered reads,
                    // from past the start if the read stopped before it.
                    self.fill_gap(
                        offset + len.max(wanted_skip) as u64,
                        offset + self.block as u64,
                        &mut buffers[i],
                        task,
                    )?;
                }
                *deliver = offset + self.block as u64;
                self.slots[i] = Slot::Free;
            }
        }
    }

    fn submit(
        &mut self,
        ring: &mut IoUring,
        buffers: &mut [AlignedBuf],
        i: usize,
        offset: u64,
    ) -> Result<()> {
        let buf = &mut buffers[i];
        let entry = ring_support::read_entry(
            self.fd,
            buf.as_mut_ptr(),
            self.block as u32,
            i as u16,
            offset,
            self.registered,
        );
        // SAFETY: `buf` stays allocated and untouched until this slot's completion is
        // reaped (or is leaked if the ring cannot be drained); the ring has at least as many
        // entries as there are slots, and each slot has at most one read in flight.
        unsafe { ring.submission().push(&entry) }.map_err(|_| {
            Error::io(
                "io_uring submit",
                std::io::Error::other("submission queue is full"),
            )
        })?;
        self.slots[i] = Slot::InFlight { offset };
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

    /// Waits for every read still in flight; `false` if that failed.
    fn drain(&mut self, ring: &mut IoUring) -> bool {
        while self
            .slots
            .iter()
            .any(|s| matches!(s, Slot::InFlight { .. }))
        {
            if retry_eintr(|| ring.submit_and_wait(1)).is_err() {
                return false;
            }
            for c in ring.completion() {
                if let Some(slot) = self.slots.get_mut(c.user_data() as usize) {
                    *slot = Slot::Free;
                }
            }
        }
        true
    }
}
