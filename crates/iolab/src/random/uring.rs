//! `uring`: io_uring `READ`s through the page cache, up to the queue depth in flight per
//! thread — fio's `io_uring` engine. The ring loop here serves `uring-direct` too.
//!
//! **System calls**: `io_uring_setup(2)` per thread, then `io_uring_enter(2)` calls that
//! submit the freed slots ([`DEVICE_BATCH`] at a time while reads go to the device, all at
//! once while they complete inline: `Batching`) and wait for at least one completion;
//! no system call per read beyond that. **When it wins**: cold reads with a deep queue,
//! where one thread keeps many device reads in flight; warm, a buffered `READ` completes
//! inline at submission, so it costs about what a `pread` does. **Latency** of a read is from just before its
//! submission to the reaping of its completion. **Limits and failures**: needs io_uring
//! with `IORING_OP_READ` (Linux 5.6): otherwise [`Error::Unavailable`] with the reason.

use std::os::fd::AsRawFd;
use std::time::Instant;

use io_uring::{IoUring, types};

use super::{Plan, Tally, run_threads};
use crate::buf::AlignedBuf;
use crate::error::{Error, Result};
use crate::read::retry_eintr;
use crate::sys::uring as ring_support;

const METHOD: &str = "uring";

/// Whether io_uring with `IORING_OP_READ` works here.
pub fn availability() -> Result<(), String> {
    ring_support::require("IORING_OP_READ", |s| s.read)
}

/// Runs buffered io_uring reads on every thread of the plan.
pub(crate) fn run(plan: &Plan<'_>) -> Result<Vec<Tally>> {
    let ring_plan = RingPlan {
        fd: types::Fd(plan.file.as_raw_fd()),
        buffer: &|block| AlignedBuf::new(block, 64),
        register: false,
        method: METHOD,
    };
    run_threads(plan, |t| run_ring(plan, &ring_plan, t))
}

/// How a ring method reads: its descriptor, buffers and whether to register them.
pub(crate) struct RingPlan<'a> {
    pub fd: types::Fd,
    pub buffer: &'a (dyn Fn(usize) -> AlignedBuf + Sync),
    pub register: bool,
    pub method: &'static str,
}

/// Reads handed to the kernel per `io_uring_enter(2)` at most while they go to the device.
///
/// With all 32 free slots submitted in one call, this virtual disk served the reads as a
/// burst and completed them together: the loop fell into lockstep (32 in flight, then none
/// while they were reaped), about 73k IOPS for `uring-direct` at queue depth 32, where fio,
/// which submits each read as it is freed, reached 95k. Submitting 4 at a time keeps the
/// device fed (96.7k IOPS; batches of 2: 93.6k, 8: 83.1k), and buffered reads of a cold
/// file gain the same way (evidence: docs/findings/random.md).
pub const DEVICE_BATCH: usize = 4;

/// How many queued reads to hand over per `io_uring_enter(2)`: [`DEVICE_BATCH`] while the
/// reads go to the device, all of them while they complete inline at submission (a
/// buffered read of cached pages), where each call saved is a microsecond and small
/// batches cost 15% warm. Decided after every submission from what it completed inline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Batching {
    /// Reads wait for the device: hand them over a few at a time.
    Device,
    /// Reads complete at submission: hand them over all at once.
    Inline,
}

impl Batching {
    /// The queued reads that trigger a submission.
    fn size(self) -> usize {
        match self {
            Batching::Device => DEVICE_BATCH,
            Batching::Inline => usize::MAX,
        }
    }

    /// After a submission of `submitted` reads of which `inline` had completed when it
    /// returned.
    pub(crate) fn after(submitted: usize, inline: usize) -> Batching {
        if submitted > 0 && inline >= submitted {
            Batching::Inline
        } else {
            Batching::Device
        }
    }
}

#[derive(Clone, Copy)]
struct InFlight {
    offset: u64,
    want: usize,
    since: Instant,
}

/// One thread's ring: fills every free slot, reaps completions, until its share is done.
pub(crate) fn run_ring(plan: &Plan<'_>, ring_plan: &RingPlan<'_>, t: usize) -> Result<Tally> {
    let depth = plan.options.queue_depth;
    let (mut left, mut sampler) = plan.share(t);
    // Declared before the ring, so the ring (and its registration) is dropped first.
    let mut buffers: Vec<AlignedBuf> = (0..depth)
        .map(|_| (ring_plan.buffer)(plan.options.block))
        .collect();
    let mut ring =
        ring_support::new_private_ring((depth as u32).next_power_of_two()).map_err(|reason| {
            Error::Unavailable {
                method: ring_plan.method,
                reason,
            }
        })?;
    let registered = ring_plan.register && {
        let iovecs: Vec<libc::iovec> = buffers
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: b.len(),
            })
            .collect();
        // SAFETY: the iovecs describe `buffers`, which outlive `ring` (declared before it)
        // and are neither moved nor freed while registered.
        unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok()
    };
    let mut slots: Vec<Option<InFlight>> = vec![None; depth];
    let mut tally = Tally::new(plan);
    let deadline = plan.deadline(Instant::now());
    let mut stopping = false;
    let mut batching = Batching::Device;
    let result = (|| -> Result<()> {
        loop {
            for (i, slot) in slots.iter_mut().enumerate() {
                if slot.is_some() || stopping {
                    continue;
                }
                match &mut left {
                    Some(0) => break,
                    Some(n) => *n -= 1,
                    None => {}
                }
                let (offset, want) = plan.extent(sampler.next_block());
                let started = queue(&mut ring, &mut buffers[i], i, offset, ring_plan, registered)?;
                if ring.submission().len() >= batching.size() {
                    batching = flush(&mut ring)?;
                }
                *slot = Some(InFlight {
                    offset,
                    want,
                    since: started,
                });
            }
            if slots.iter().all(Option::is_none) {
                return Ok(());
            }
            if !ring.submission().is_empty()
                && (batching == Batching::Inline || !ring.completion().is_empty())
            {
                batching = flush(&mut ring)?;
            }
            if ring.completion().is_empty() {
                // Submits what is still queued, if anything, and waits.
                retry_eintr(|| ring.submit_and_wait(1))
                    .map_err(|e| Error::io("io_uring wait failed", e))?;
            }
            let done: Vec<(u64, i32)> = ring
                .completion()
                .map(|c| (c.user_data(), c.result()))
                .collect();
            let now = Instant::now();
            // Every reaped completion settles its slot before a failure is returned: a slot
            // left in flight would make `drain` wait for a completion already taken.
            let mut failed = None;
            for (i, result) in done {
                let i = i as usize;
                let Some(read) = slots[i] else { continue };
                if failed.is_some() {
                    slots[i] = None;
                    continue;
                }
                if result == -libc::EINTR || result == -libc::EAGAIN {
                    // Queued again; the next submission hands it over.
                    queue(
                        &mut ring,
                        &mut buffers[i],
                        i,
                        read.offset,
                        ring_plan,
                        registered,
                    )?;
                    continue;
                }
                slots[i] = None;
                if result < 0 {
                    failed = Some(result);
                    continue;
                }
                let n = (result as usize).min(read.want);
                let ns = (now - read.since).as_nanos() as u64;
                tally.record(read.offset, read.want, &buffers[i][..n], ns);
            }
            if let Some(result) = failed {
                return Err(Error::io(
                    "io_uring read failed",
                    std::io::Error::from_raw_os_error(-result),
                ));
            }
            if deadline.is_some_and(|d| now >= d) {
                stopping = true;
            }
        }
    })();
    if result.is_err() && !drain(&mut ring, &mut slots) {
        // Reads may still be in flight into `buffers`: never free them.
        std::mem::forget(buffers);
        std::mem::forget(ring);
    }
    result.map(|()| tally)
}

/// Queues a read of a whole block at `offset` into slot `i`'s buffer; returns when, the
/// start of its latency (taken before the submission that hands it over).
fn queue(
    ring: &mut IoUring,
    buf: &mut AlignedBuf,
    i: usize,
    offset: u64,
    ring_plan: &RingPlan<'_>,
    registered: bool,
) -> Result<Instant> {
    let entry = ring_support::read_entry(
        ring_plan.fd,
        buf.as_mut_ptr(),
        buf.len() as u32,
        i as u16,
        offset,
        registered,
    );
    // SAFETY: `buf` stays allocated and untouched until this slot's completion is reaped
    // (or is leaked if the ring cannot be drained); the ring has at least as many entries
    // as there are slots, and each slot has at most one read queued or in flight.
    unsafe { ring.submission().push(&entry) }.map_err(|_| {
        Error::io(
            "io_uring submit",
            std::io::Error::other("submission queue is full"),
        )
    })?;
    Ok(Instant::now())
}

/// Hands every queued read to the kernel; returns the batching the next ones get, from how
/// many completed inline.
fn flush(ring: &mut IoUring) -> Result<Batching> {
    let before = ring.completion().len();
    let submitted =
        retry_eintr(|| ring.submit()).map_err(|e| Error::io("io_uring submit failed", e))?;
    let inline = ring.completion().len().saturating_sub(before);
    Ok(Batching::after(submitted, inline))
}

/// Waits for every read still in flight; `false` if that failed.
fn drain(ring: &mut IoUring, slots: &mut [Option<InFlight>]) -> bool {
    while slots.iter().any(Option::is_some) {
        if retry_eintr(|| ring.submit_and_wait(1)).is_err() {
            return false;
        }
        for c in ring.completion() {
            if let Some(slot) = slots.get_mut(c.user_data() as usize) {
                *slot = None;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_are_whole_only_while_every_read_completes_at_submission() {
        assert_eq!(Batching::after(32, 32), Batching::Inline);
        assert_eq!(
            Batching::after(4, 5),
            Batching::Inline,
            "an earlier read landed too"
        );
        assert_eq!(Batching::after(32, 31), Batching::Device);
        assert_eq!(Batching::after(4, 0), Batching::Device);
        assert_eq!(
            Batching::after(0, 0),
            Batching::Device,
            "nothing submitted says nothing"
        );
        assert_eq!(Batching::Device.size(), DEVICE_BATCH);
        assert!(Batching::Inline.size() > 256, "more than any queue depth");
    }
}
