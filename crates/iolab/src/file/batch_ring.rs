//! The io_uring half of [`super::RandomAccessFile::read_batch`]: one ring per thread, made
//! on the thread's first batch and kept for every later one, of every file, that reads a
//! caller's requests with up to the queue depth in flight and lends each block as it lands.
//!
//! **System calls**: on a thread's first batch (or one that needs a deeper queue, larger
//! or more aligned buffers than its ring has), `io_uring_setup(2)` (private to the thread,
//! as fio sets up its rings: `read::ring`'s `RingSetup::Private`) and
//! `io_uring_register(2)` of its buffers; then per batch only `io_uring_enter(2)` calls,
//! which submit in batches whose size the ring measures as it runs (`read::batching`) and
//! wait for completions. A registered buffer is read with `READ_FIXED`, else `READ`.
//!
//! **One ring per thread, not per file**: the ring's buffers are not tied to a file (each
//! read names its descriptor), so a thread serving lookups from a thousand open tables
//! holds one ring and one set of buffers (depth × block), not a thousand. A batch started
//! from inside another's callback on the same thread finds the thread's ring in use and
//! reads through a ring of its own, dropped after it.
//!
//! **A request** `(offset, len)` is read as one span: under `O_DIRECT` the aligned range
//! that covers it (offset rounded down, length up, to the file system's unit) into an
//! aligned buffer, the block lent as the sub-slice; buffered, exactly its bytes. A read
//! that returns fewer bytes than asked before the end of the file is resubmitted for the
//! rest into the same buffer; one that returns none (or, under `O_DIRECT`, a part of a
//! unit) is the end of the file, and what arrived is lent. A read interrupted (`EINTR`,
//! `EAGAIN`) is queued again by the ring.
//!
//! **How it fails**: a failed read is that request's error, lent to the callback; a ring
//! that cannot be set up, or a submission or wait that fails, fails the batch, and the
//! requests not yet answered get no call. The ring is then dropped, waiting for the reads
//! in flight before its buffers are freed.

use std::cell::RefCell;
use std::time::Instant;

use io_uring::types;

use crate::buf::AlignedBuf;
use crate::error::{Error, Result};
use crate::read::batching::{Batching, flush};
use crate::read::ring::{DeepRing, RingSetup};

/// The name io_uring's refusals carry.
const METHOD: &str = "read_batch (io_uring)";

/// The largest span a ring buffer holds: 1 MiB. A request whose span is larger is read by
/// `pread` instead, so a single huge request does not make the ring hold depth × its size.
pub(crate) const MAX_SPAN: usize = 1 << 20;

thread_local! {
    /// This thread's ring, made on its first batch; `None` while a batch uses it.
    static RING: RefCell<Option<BatchRing>> = const { RefCell::new(None) };
}

/// A ring with its buffers and what it has learnt of the device.
struct BatchRing {
    ring: DeepRing,
    batching: Batching,
    depth: usize,
    span: usize,
    align: usize,
}

impl BatchRing {
    fn new(depth: usize, span: usize, align: usize) -> Result<BatchRing> {
        let buffers: Vec<AlignedBuf> = (0..depth).map(|_| AlignedBuf::new(span, align)).collect();
        // The descriptor is given per read ([`DeepRing::queue_range_of`]); this one is unused.
        let ring = DeepRing::new(
            METHOD,
            RingSetup::Private,
            types::Fd(-1),
            buffers,
            depth,
            true,
        )?;
        Ok(BatchRing {
            ring,
            batching: Batching::new(depth),
            depth,
            span,
            align,
        })
    }

    fn fits(&self, depth: usize, span: usize, align: usize) -> bool {
        self.depth == depth && self.span >= span && self.align >= align
    }
}

/// How requests become reads: the descriptor, the unit a read's offset and length are
/// rounded to (1 buffered; the `O_DIRECT` unit), the buffers' alignment, and the end of
/// the file past which nothing is read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reads {
    pub fd: std::os::fd::RawFd,
    pub unit: usize,
    pub align: usize,
    pub end: u64,
    pub depth: usize,
}

impl Reads {
    /// The read that serves request `(offset, len)`.
    pub(crate) fn span_of(&self, request: usize, (offset, len): (u64, usize)) -> Span {
        let want = usize::try_from(self.end.saturating_sub(offset))
            .unwrap_or(usize::MAX)
            .min(len);
        let unit = self.unit as u64;
        let base = offset - offset % unit;
        let skip = (offset - base) as usize;
        Span {
            request,
            base,
            skip,
            want,
            len: (skip + want).next_multiple_of(self.unit),
            got: 0,
        }
    }
}

/// One request's read: from `base`, `len` bytes (the block is `want` bytes from `skip`),
/// `got` of them arrived so far.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Span {
    pub request: usize,
    pub base: u64,
    pub skip: usize,
    pub want: usize,
    pub len: usize,
    pub got: usize,
}

/// Reads the requests `todo` names through this thread's ring, lending each block to
/// `each` as it lands (an empty one, without a read, for a request at or past the end).
/// Every span must be at most [`MAX_SPAN`].
pub(crate) fn serve(
    reads: &Reads,
    requests: &[(u64, usize)],
    todo: &mut dyn Iterator<Item = usize>,
    each: &mut dyn FnMut(usize, Result<&[u8]>),
) -> Result<()> {
    let span = todo_span(reads, requests);
    let mine = RING.with_borrow_mut(Option::take);
    let mut ring = match mine {
        Some(ring) if ring.fits(reads.depth, span, reads.align) => ring,
        _ => {
            // Dropped first: one thread holds one set of buffers.
            drop(mine);
            BatchRing::new(reads.depth, span.max(4096), reads.align)?
        }
    };
    let served = serve_on(&mut ring, reads, requests, todo, each);
    if served.is_ok() {
        // A nested batch's ring may have been put back meanwhile; this one replaces it.
        RING.with_borrow_mut(|slot| *slot = Some(ring));
    }
    served
}

/// The longest span among the requests (the buffers' size).
fn todo_span(reads: &Reads, requests: &[(u64, usize)]) -> usize {
    requests
        .iter()
        .map(|&r| reads.span_of(0, r).len)
        .filter(|&len| len <= MAX_SPAN)
        .max()
        .unwrap_or(0)
}

/// [`serve`] on `ring`.
fn serve_on(
    ring: &mut BatchRing,
    reads: &Reads,
    requests: &[(u64, usize)],
    todo: &mut dyn Iterator<Item = usize>,
    each: &mut dyn FnMut(usize, Result<&[u8]>),
) -> Result<()> {
    let fd = types::Fd(reads.fd);
    let mut slots: Vec<Option<Span>> = vec![None; ring.depth];
    let mut landed = Vec::with_capacity(ring.depth);
    loop {
        for (b, slot) in slots.iter_mut().enumerate() {
            if slot.is_some() {
                continue;
            }
            let Some(span) = next_read(reads, requests, todo, each) else {
                break;
            };
            ring.ring.queue_range_of(fd, b, (0, span.len), span.base)?;
            *slot = Some(span);
            if ring.ring.queued() >= ring.batching.size() {
                flush(&mut ring.ring, &mut ring.batching)?;
            }
        }
        if ring.ring.is_idle() {
            return Ok(());
        }
        if ring.ring.queued() > 0 && (ring.batching.is_inline() || ring.ring.ready() > 0) {
            flush(&mut ring.ring, &mut ring.batching)?;
        }
        if ring.ring.ready() == 0 {
            ring.ring.submit_and_wait()?;
        }
        let reaped = ring.ring.collect();
        ring.batching.reaped(reaped, Instant::now());
        ring.ring
            .settle_each(|read, result| landed.push((read.buffer, result)));
        for (b, result) in landed.drain(..) {
            let span = slots[b].as_mut().expect("a read in flight has its slot");
            let bytes = match result {
                Ok(bytes) => bytes,
                Err(e) => {
                    each(span.request, Err(Error::io("io_uring read failed", e)));
                    slots[b] = None;
                    continue;
                }
            };
            span.got += bytes;
            let need = span.skip + span.want;
            // None, or under O_DIRECT a part of a unit: the file ends (it may have shrunk).
            let ended = bytes == 0 || !bytes.is_multiple_of(reads.unit);
            if span.got < need && !ended {
                // A partial read: the rest, into the rest of the buffer.
                let rest = (span.got, span.len - span.got);
                ring.ring
                    .queue_range_of(fd, b, rest, span.base + span.got as u64)?;
                continue;
            }
            let have = span.got.min(need);
            each(
                span.request,
                Ok(&ring.ring.buffer(b)[span.skip.min(have)..have]),
            );
            slots[b] = None;
        }
    }
}

/// The next request that needs a read; those that need none (at or past the end, or of
/// no bytes) are answered with an empty block on the way.
fn next_read(
    reads: &Reads,
    requests: &[(u64, usize)],
    todo: &mut dyn Iterator<Item = usize>,
    each: &mut dyn FnMut(usize, Result<&[u8]>),
) -> Option<Span> {
    for i in todo {
        let span = reads.span_of(i, requests[i]);
        if span.want > 0 {
            return Some(span);
        }
        each(i, Ok(&[]));
    }
    None
}
