//! `uring`: io_uring `READ`s through the page cache, up to the queue depth in flight per
//! thread — fio's `io_uring` engine. The ring loop here serves `uring-direct` too; the
//! ring itself (buffers, submissions, completions, tear-down) is `read::ring`'s
//! `DeepRing`, which `count`'s `uring-direct` uses as well.
//!
//! **System calls**: `io_uring_setup(2)` per thread, then `io_uring_enter(2)` calls that
//! submit the freed slots (all at once while reads complete inline; while they go to the
//! device, in batches whose size the ring measures as it runs: [`super::batch`]) and wait
//! for at least one completion;
//! no system call per read beyond that. **When it wins**: cold reads with a deep queue,
//! where one thread keeps many device reads in flight; warm, a buffered `READ` completes
//! inline at submission, so it costs about what a `pread` does. **Latency** of a read is from just before its
//! submission to the reaping of its completion. **Limits and failures**: needs io_uring
//! with `IORING_OP_READ` (Linux 5.6): otherwise
//! [`Error::Unavailable`](iolab::Error::Unavailable) with the reason.

use std::os::fd::AsRawFd;
use std::time::Instant;

use io_uring::types;

use super::batch::{Batching, flush};
use super::{Plan, Tally, run_threads};
use crate::buf::AlignedBuf;
use crate::read::ring::{DeepRing, RingSetup};
use crate::sys::uring as ring_support;
use iolab::Result;

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

/// A slot's read in flight: how many bytes it wants, and since when.
#[derive(Clone, Copy)]
struct InFlight {
    want: usize,
    since: Instant,
}

/// A read reaped but not yet checked: its buffer, offset, bytes wanted and got, latency.
type Unchecked = (usize, u64, usize, usize, u64);

/// One thread's ring: fills every free slot, reaps completions, until its share is done.
pub(crate) fn run_ring(plan: &Plan<'_>, ring_plan: &RingPlan<'_>, t: usize) -> Result<Tally> {
    let depth = plan.options.queue_depth;
    let (mut left, mut sampler) = plan.share(t);
    // Two buffers per slot, `i` and `i + depth`, used in turn: a slot's next read goes
    // into its other buffer, so it is handed over before the last one's bytes are checked.
    let buffers: Vec<AlignedBuf> = (0..2 * depth)
        .map(|_| (ring_plan.buffer)(plan.options.block))
        .collect();
    let mut ring = DeepRing::new(
        ring_plan.method,
        RingSetup::Private,
        ring_plan.fd,
        buffers,
        depth,
        ring_plan.register,
    )?;
    let mut slots: Vec<Option<InFlight>> = vec![None; depth];
    // The buffer each slot's next read goes into.
    let mut next_buffer: Vec<usize> = (0..depth).collect();
    let mut unchecked: Vec<Unchecked> = Vec::with_capacity(depth);
    let mut tally = Tally::new(plan);
    let deadline = plan.deadline(Instant::now());
    let mut stopping = false;
    let mut batching = Batching::new(depth);
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
            ring.queue(b, offset)?;
            // The start of its latency: before the submission that hands it over.
            let since = Instant::now();
            if ring.queued() >= batching.size() {
                flush(&mut ring, &mut batching)?;
            }
            *slot = Some(InFlight { want, since });
        }
        // The reads just handed over went into the other buffers: check the last ones.
        for (b, offset, want, n, ns) in unchecked.drain(..) {
            tally.record(offset, want, &ring.buffer(b)[..n], ns);
        }
        if ring.is_idle() {
            return Ok(tally);
        }
        if ring.queued() > 0 && (batching.is_inline() || ring.ready() > 0) {
            flush(&mut ring, &mut batching)?;
        }
        if ring.ready() == 0 {
            // Submits what is still queued, if anything, and waits.
            ring.submit_and_wait()?;
        }
        let now = reap(&mut ring, &mut slots, &mut batching, &mut unchecked)?;
        if deadline.is_some_and(|d| now >= d) {
            stopping = true;
        }
    }
}

/// Reaps the completions ready: each settles its slot (the ring queues a read interrupted
/// again), and a finished read waits in `unchecked` to be checked after the next
/// submissions. Returns when they were reaped; the first failed read fails it.
fn reap(
    ring: &mut DeepRing,
    slots: &mut [Option<InFlight>],
    batching: &mut Batching,
    unchecked: &mut Vec<Unchecked>,
) -> Result<Instant> {
    let depth = slots.len();
    let reaped = ring.collect();
    let now = Instant::now();
    batching.reaped(reaped, now);
    ring.settle("io_uring read failed", |read| {
        let Some(slot) = slots[read.buffer % depth].take() else {
            return;
        };
        let n = read.bytes.min(slot.want);
        let ns = (now - slot.since).as_nanos() as u64;
        unchecked.push((read.buffer, read.offset, slot.want, n, ns));
    })?;
    Ok(now)
}
