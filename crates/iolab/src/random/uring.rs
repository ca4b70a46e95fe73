//! `uring`: io_uring `READ`s through the page cache, up to the queue depth in flight per
//! thread — fio's `io_uring` engine. The ring loop here serves `uring-direct` too.
//!
//! **System calls**: `io_uring_setup(2)` per thread, then `io_uring_enter(2)` calls that
//! submit the freed slots (all at once while reads complete inline; while they go to the
//! device, in batches whose size the ring measures as it runs: [`super::batch`]) and wait
//! for at least one completion;
//! no system call per read beyond that. **When it wins**: cold reads with a deep queue,
//! where one thread keeps many device reads in flight; warm, a buffered `READ` completes
//! inline at submission, so it costs about what a `pread` does. **Latency** of a read is from just before its
//! submission to the reaping of its completion. **Limits and failures**: needs io_uring
//! with `IORING_OP_READ` (Linux 5.6): otherwise [`Error::Unavailable`] with the reason.

use std::os::fd::AsRawFd;
use std::time::Instant;

use io_uring::{IoUring, types};

use super::batch::Batching;
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

#[derive(Clone, Copy)]
struct InFlight {
    buffer: usize,
    offset: u64,
    want: usize,
    since: Instant,
}

/// One thread's ring: fills every free slot, reaps completions, until its share is done.
pub(crate) fn run_ring(plan: &Plan<'_>, ring_plan: &RingPlan<'_>, t: usize) -> Result<Tally> {
    let depth = plan.options.queue_depth;
    let (mut left, mut sampler) = plan.share(t);
    // Two buffers per slot, `i` and `i + depth`, used in turn: a slot's next read goes
    // into its other buffer, so it is handed over before the last one's bytes are checked.
    // Declared before the ring, so the ring (and its registration) is dropped first.
    let mut buffers: Vec<AlignedBuf> = (0..2 * depth)
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
    // The buffer each slot's next read goes into.
    let mut next_buffer: Vec<usize> = (0..depth).collect();
    // Reads completed but not yet checked: (buffer, offset, wanted, got, latency).
    let mut unchecked: Vec<(usize, u64, usize, usize, u64)> = Vec::with_capacity(depth);
    let mut tally = Tally::new(plan);
    let deadline = plan.deadline(Instant::now());
    let mut stopping = false;
    let mut batching = Batching::new(depth);
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
                let b = next_buffer[i];
                next_buffer[i] = (b + depth) % (2 * depth);
                let started = queue(&mut ring, &mut buffers[b], b, offset, ring_plan, registered)?;
                if ring.submission().len() >= batching.size() {
                    flush(&mut ring, &mut batching)?;
                }
                *slot = Some(InFlight {
                    buffer: b,
                    offset,
                    want,
                    since: started,
                });
            }
            // The reads just handed over went into the other buffers: check the last ones.
            for (b, offset, want, n, ns) in unchecked.drain(..) {
                tally.record(offset, want, &buffers[b][..n], ns);
            }
            if slots.iter().all(Option::is_none) {
                return Ok(());
            }
            if !ring.submission().is_empty()
                && (batching.is_inline() || !ring.completion().is_empty())
            {
                flush(&mut ring, &mut batching)?;
            }
            if ring.completion().is_empty() {
                // Submits what is still queued, if anything, and waits.
                retry_eintr(|| ring.submit_and_wait(1))
                    .map_err(|e| Error::io("io_uring wait failed", e))?;
            }
            let now = reap(
                &mut ring,
                &mut slots,
                &mut buffers,
                ring_plan,
                registered,
                &mut batching,
                &mut unchecked,
            )?;
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

/// Reaps the completions ready: each settles its slot (a read interrupted is queued
/// again), and a finished read waits in `unchecked` to be checked after the next
/// submissions. Returns when they were reaped; the first failed read fails it.
fn reap(
    ring: &mut IoUring,
    slots: &mut [Option<InFlight>],
    buffers: &mut [AlignedBuf],
    ring_plan: &RingPlan<'_>,
    registered: bool,
    batching: &mut Batching,
    unchecked: &mut Vec<(usize, u64, usize, usize, u64)>,
) -> Result<Instant> {
    let depth = slots.len();
    let done: Vec<(u64, i32)> = ring
        .completion()
        .map(|c| (c.user_data(), c.result()))
        .collect();
    let now = Instant::now();
    batching.reaped(done.len(), now);
    // Every reaped completion settles its slot before a failure is returned: a slot
    // left in flight would make `drain` wait for a completion already taken.
    let mut failed = None;
    for (b, result) in done {
        let i = b as usize % depth;
        let Some(read) = slots[i] else { continue };
        if failed.is_some() {
            slots[i] = None;
            continue;
        }
        if result == -libc::EINTR || result == -libc::EAGAIN {
            // Queued again; the next submission hands it over.
            queue(
                ring,
                &mut buffers[read.buffer],
                read.buffer,
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
        unchecked.push((read.buffer, read.offset, read.want, n, ns));
    }
    if let Some(result) = failed {
        return Err(Error::io(
            "io_uring read failed",
            std::io::Error::from_raw_os_error(-result),
        ));
    }
    Ok(now)
}

/// Queues a read of a whole block at `offset` into buffer `i` (its user data); returns
/// when, the start of its latency (taken before the submission that hands it over).
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
    // SAFETY: `buf` stays allocated and untouched until this read's completion is reaped
    // (or is leaked if the ring cannot be drained): a slot alternates between its two
    // buffers and checks one's bytes before its next read can land in it. The ring has at
    // least as many entries as there are slots, each with at most one read queued or in
    // flight.
    unsafe { ring.submission().push(&entry) }.map_err(|_| {
        Error::io(
            "io_uring submit",
            std::io::Error::other("submission queue is full"),
        )
    })?;
    Ok(Instant::now())
}

/// Hands every queued read to the kernel, and tells `batching` how many completed inline.
fn flush(ring: &mut IoUring, batching: &mut Batching) -> Result<()> {
    let before = ring.completion().len();
    let submitted =
        retry_eintr(|| ring.submit()).map_err(|e| Error::io("io_uring submit failed", e))?;
    let inline = ring.completion().len().saturating_sub(before);
    batching.submitted(submitted, inline);
    Ok(())
}

/// Waits for every read still in flight; `false` if that failed.
fn drain(ring: &mut IoUring, slots: &mut [Option<InFlight>]) -> bool {
    while slots.iter().any(Option::is_some) {
        if retry_eintr(|| ring.submit_and_wait(1)).is_err() {
            return false;
        }
        let depth = slots.len();
        for c in ring.completion() {
            if let Some(slot) = slots.get_mut(c.user_data() as usize % depth) {
                *slot = None;
            }
        }
    }
    true
}
