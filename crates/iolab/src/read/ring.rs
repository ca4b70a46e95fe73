//! The rings of the io_uring read methods, written once for every method that uses one.
//!
//! **One read in flight** (`count`'s `uring`, `uring-readv`): [`small_ring`] sets up a ring
//! of `SMALL_RING_ENTRIES`, [`read_one`] submits one read and reaps it.
//!
//! **Many reads in flight** (`count`'s `uring-direct`, `random`'s `uring` and
//! `uring-direct`): a [`DeepRing`] owns a ring and the buffers its reads land in. The
//! method queues whole-buffer reads at the offsets it chooses ([`DeepRing::queue`]),
//! decides when to hand them over ([`DeepRing::submit`], [`DeepRing::submit_and_wait`]) and
//! takes the completed ones ([`DeepRing::reap`]); what the bytes are for stays with it.
//!
//! **System calls**: `io_uring_setup(2)` with the queue depth rounded up to a power of two
//! (a plain ring, or one private to its thread: [`RingSetup`]), `io_uring_register(2)` of
//! the buffers when asked, then only the `io_uring_enter(2)` calls the method makes: no
//! system call per read. A registered buffer is read with `READ_FIXED`, else with `READ`.
//! **When it wins**: where the device rewards many reads in flight (cold files, `O_DIRECT`,
//! random reads from one thread); warm, a buffered read completes inline at submission and
//! the ring costs about what a `pread` does.
//! **Limits**: each read fills one whole buffer; at most 65,536 buffers (a read's user data
//! is its buffer's index) and at most the queue depth in flight. A buffer is handed out
//! only while no read is in flight into it.
//! **How it fails**: a ring that cannot be set up is [`Error::Unavailable`] with the
//! reason; registration refused (a low `RLIMIT_MEMLOCK` on old kernels) falls back to plain
//! `READ`s into the same buffers. A read that completes with `EINTR` or `EAGAIN` is queued
//! again; any other failed read fails the reap, after every completion taken is settled. A
//! ring dropped with reads in flight (after a failure) waits for them first; if even that
//! wait fails, the ring and its buffers are leaked rather than freed under the kernel.

use std::marker::PhantomData;
use std::mem::ManuallyDrop;

use io_uring::{IoUring, types};

use super::retry_eintr;
use crate::buf::AlignedBuf;
use crate::error::{Error, Result};
use crate::sys::uring::{self as ring_support, SMALL_RING_ENTRIES};

/// A ring of `SMALL_RING_ENTRIES` for `method`'s one read at a time; when io_uring cannot
/// be set up here, [`Error::Unavailable`] with the reason.
pub fn small_ring(method: &'static str) -> Result<IoUring> {
    ring_support::new_ring(SMALL_RING_ENTRIES)
        .map_err(|reason| Error::Unavailable { method, reason })
}

/// `submit_and_wait_one` for a read: the bytes it read, or the failure as iolab reports
/// it (`failed` names the operation, `"io_uring read failed"`). When the wait itself fails
/// the read may still be in flight, so `leak` is called first: it must leak every buffer
/// `entry` points to.
///
/// # Safety
///
/// As for `submit_and_wait_one`, with `leak` doing the leaking it requires.
pub unsafe fn read_one(
    ring: &mut IoUring,
    entry: &io_uring::squeue::Entry,
    failed: &'static str,
    leak: impl FnOnce(),
) -> Result<usize> {
    // SAFETY: the caller's contract; on a failed wait `leak` keeps the buffers alive.
    match unsafe { ring_support::submit_and_wait_one(ring, entry) } {
        Err(e) => {
            leak();
            Err(Error::io("io_uring wait failed", e))
        }
        Ok(r) if r < 0 => Err(Error::io(failed, std::io::Error::from_raw_os_error(-r))),
        Ok(r) => Ok(r as usize),
    }
}

/// How a [`DeepRing`]'s ring is set up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingSetup {
    /// `io_uring_setup(2)` without flags.
    Plain,
    /// Private to the thread that makes it, as fio sets up its rings:
    /// `COOP_TASKRUN | SINGLE_ISSUER | DEFER_TASKRUN` (Linux 6.1), else a plain ring.
    Private,
}

/// A read completed in full or in part: the bytes are in [`DeepRing::buffer`]`(buffer)`,
/// where the read was queued to land.
#[derive(Clone, Copy, Debug)]
pub struct Completed {
    /// The buffer the read went into.
    pub buffer: usize,
    /// Where in the file it read.
    pub offset: u64,
    /// The bytes it read: what it asked for, or fewer at the end of the file.
    pub bytes: usize,
}

/// A read queued or in flight: at `offset` of file `fd`, into `len` bytes of its buffer
/// from `start`.
#[derive(Clone, Copy, Debug)]
struct Span {
    fd: types::Fd,
    offset: u64,
    start: usize,
    len: usize,
}

/// A ring with up to its queue depth of reads in flight, each into a buffer of its own.
///
/// It owns the buffers so that none is freed, or handed out, while the kernel may still
/// write into it. It is not `Send`: a [`RingSetup::Private`] ring must stay on its thread.
pub struct DeepRing {
    /// Dropped by hand, first, so the registration ends before the buffers go.
    ring: ManuallyDrop<IoUring>,
    buffers: ManuallyDrop<Vec<AlignedBuf>>,
    fd: types::Fd,
    registered: bool,
    /// Per buffer, the read queued or in flight into it.
    reads: Vec<Option<Span>>,
    in_flight: usize,
    depth: usize,
    /// Completions taken from the ring and not yet settled: (user data, result).
    reaped: Vec<(u64, i32)>,
    private: PhantomData<*const ()>,
}

impl DeepRing {
    /// A ring for `method` with room for `depth` reads in flight, reading `fd` into
    /// `buffers`, which it registers when `register` says so (falling back to plain
    /// `READ`s if the kernel refuses). A ring that cannot be set up is
    /// [`Error::Unavailable`] for `method`.
    ///
    /// # Panics
    ///
    /// With more than 65,536 buffers, or a buffer of 4 GiB or more.
    pub fn new(
        method: &'static str,
        setup: RingSetup,
        fd: types::Fd,
        mut buffers: Vec<AlignedBuf>,
        depth: usize,
        register: bool,
    ) -> Result<DeepRing> {
        assert!(
            buffers.len() <= 1 << 16,
            "a read's user data is a u16 index"
        );
        assert!(buffers.iter().all(|b| u32::try_from(b.len()).is_ok()));
        let entries = (depth as u32).next_power_of_two();
        let ring = match setup {
            RingSetup::Plain => ring_support::new_ring(entries),
            RingSetup::Private => ring_support::new_private_ring(entries),
        };
        let ring = ring.map_err(|reason| Error::Unavailable { method, reason })?;
        let registered = register && {
            let iovecs: Vec<libc::iovec> = buffers.iter_mut().map(|b| iovec(b)).collect();
            // SAFETY: the iovecs describe `buffers`, which the ring then owns: they are not
            // freed while it is registered (the ring is dropped first, or both are leaked),
            // and moving the Vec does not move the heap memory they point to.
            unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok()
        };
        Ok(DeepRing {
            ring: ManuallyDrop::new(ring),
            reads: vec![None; buffers.len()],
            buffers: ManuallyDrop::new(buffers),
            fd,
            registered,
            in_flight: 0,
            depth,
            reaped: Vec::with_capacity(depth),
            private: PhantomData,
        })
    }

    /// Queues a read of all of buffer `buffer` at `offset`; the next submission hands it
    /// over.
    ///
    /// # Panics
    ///
    /// When a read is already in flight into that buffer.
    pub fn queue(&mut self, buffer: usize, offset: u64) -> Result<()> {
        let len = self.buffers[buffer].len();
        self.queue_range_of(self.fd, buffer, (0, len), offset)
    }

    /// Queues a read of `len` bytes at `offset` of `fd` (the ring's own, or any other the
    /// caller keeps open until the read is reaped) into buffer `buffer` from `start` on
    /// (`(start, len)`, within the buffer); the next submission hands it over.
    ///
    /// # Panics
    ///
    /// When a read is already in flight into that buffer, or the range is not in it.
    pub fn queue_range_of(
        &mut self,
        fd: types::Fd,
        buffer: usize,
        (start, len): (usize, usize),
        offset: u64,
    ) -> Result<()> {
        assert!(
            self.reads[buffer].is_none(),
            "buffer {buffer} is being read"
        );
        assert!(start.saturating_add(len) <= self.buffers[buffer].len());
        debug_assert!(
            self.in_flight < self.depth,
            "more reads than the queue depth"
        );
        let span = Span {
            fd,
            offset,
            start,
            len,
        };
        self.push(buffer, span)?;
        self.reads[buffer] = Some(span);
        self.in_flight += 1;
        Ok(())
    }

    fn push(&mut self, buffer: usize, span: Span) -> Result<()> {
        let buf = &mut self.buffers[buffer][span.start..span.start + span.len];
        let entry = ring_support::read_entry(
            span.fd,
            buf.as_mut_ptr(),
            span.len as u32,
            buffer as u16,
            span.offset,
            self.registered,
        );
        // SAFETY: the ring owns `buf` (a range of a buffer registered whole, when
        // registered) and hands it out again only once this read's
        // completion is reaped (`reads` marks it until then); if the ring cannot be drained
        // it is leaked, never freed. The ring has at least `depth` entries, and no more
        // reads than that are queued or in flight.
        unsafe { self.ring.submission().push(&entry) }.map_err(|_| {
            Error::io(
                "io_uring submit",
                std::io::Error::other("submission queue is full"),
            )
        })
    }

    /// Whether a read is queued or in flight into buffer `buffer`.
    pub fn is_reading(&self, buffer: usize) -> bool {
        self.reads[buffer].is_some()
    }

    /// Whether no read is queued or in flight.
    pub fn is_idle(&self) -> bool {
        self.in_flight == 0
    }

    /// Reads queued and not yet handed to the kernel.
    pub fn queued(&mut self) -> usize {
        self.ring.submission().len()
    }

    /// Completions ready to be reaped.
    pub fn ready(&mut self) -> usize {
        self.ring.completion().len()
    }

    /// Hands every queued read to the kernel (`io_uring_enter(2)`, no wait); returns how
    /// many it took.
    pub fn submit(&mut self) -> Result<usize> {
        retry_eintr(|| self.ring.submit()).map_err(|e| Error::io("io_uring submit failed", e))
    }

    /// Hands every queued read to the kernel and waits for at least one completion.
    pub fn submit_and_wait(&mut self) -> Result<()> {
        retry_eintr(|| self.ring.submit_and_wait(1))
            .map_err(|e| Error::io("io_uring wait failed", e))?;
        Ok(())
    }

    /// Takes the completions ready from the ring, to be settled by [`DeepRing::settle`];
    /// returns how many wait to be settled.
    pub fn collect(&mut self) -> usize {
        let completions = self.ring.completion();
        self.reaped
            .extend(completions.map(|c| (c.user_data(), c.result())));
        self.reaped.len()
    }

    /// Settles the completions collected: a read interrupted (`EINTR`, `EAGAIN`) is queued
    /// again, a finished one frees its buffer and goes to `done`. The first failed read
    /// fails it (`failed` names the operation), once every completion has freed its
    /// buffer: one left marked would have the drop wait for a completion already taken.
    pub fn settle(&mut self, failed: &'static str, mut done: impl FnMut(Completed)) -> Result<()> {
        let mut error = None;
        self.settle_each(|read, result| match result {
            Ok(_) if error.is_some() => {}
            Ok(_) => done(read),
            Err(e) => {
                error.get_or_insert_with(|| Error::io(failed, e));
            }
        });
        error.map_or(Ok(()), Err)
    }

    /// Settles the completions collected, each on its own: a read interrupted (`EINTR`,
    /// `EAGAIN`) is queued again; every other frees its buffer and goes to `done` with its
    /// result (the bytes read, also in [`Completed::bytes`], or the error).
    pub fn settle_each(&mut self, mut done: impl FnMut(Completed, std::io::Result<usize>)) {
        let mut reaped = std::mem::take(&mut self.reaped);
        for &(user_data, result) in &reaped {
            let buffer = user_data as usize;
            let Some(span) = self.reads.get(buffer).copied().flatten() else {
                continue;
            };
            let mut outcome = match result {
                r if r >= 0 => Ok(r as usize),
                r => Err(std::io::Error::from_raw_os_error(-r)),
            };
            if result == -libc::EINTR || result == -libc::EAGAIN {
                // Queued again; the next submission hands it over.
                match self.push(buffer, span) {
                    Ok(()) => continue,
                    Err(_) => outcome = Err(std::io::Error::other("submission queue is full")),
                }
            }
            self.reads[buffer] = None;
            self.in_flight -= 1;
            let read = Completed {
                buffer,
                offset: span.offset,
                bytes: *outcome.as_ref().unwrap_or(&0),
            };
            done(read, outcome);
        }
        reaped.clear();
        self.reaped = reaped;
    }

    /// [`DeepRing::collect`] then [`DeepRing::settle`].
    pub fn reap(&mut self, failed: &'static str, done: impl FnMut(Completed)) -> Result<()> {
        self.collect();
        self.settle(failed, done)
    }

    /// Buffer `buffer`, holding what its last read brought.
    ///
    /// # Panics
    ///
    /// While a read is in flight into it.
    pub fn buffer(&self, buffer: usize) -> &[u8] {
        assert!(!self.is_reading(buffer), "buffer {buffer} is being read");
        &self.buffers[buffer]
    }

    /// Buffer `buffer`, to be written, as [`DeepRing::buffer`].
    pub fn buffer_mut(&mut self, buffer: usize) -> &mut [u8] {
        assert!(!self.is_reading(buffer), "buffer {buffer} is being read");
        &mut self.buffers[buffer]
    }

    /// Waits for every read queued or in flight; `false` if that failed.
    fn drain(&mut self) -> bool {
        while self.in_flight > 0 {
            if retry_eintr(|| self.ring.submit_and_wait(1)).is_err() {
                return false;
            }
            for c in self.ring.completion() {
                if let Some(read) = self.reads.get_mut(c.user_data() as usize)
                    && read.take().is_some()
                {
                    self.in_flight -= 1;
                }
            }
        }
        true
    }
}

impl Drop for DeepRing {
    fn drop(&mut self) {
        // After a failure reads may still be in flight into the buffers: wait for them, and
        // if even that fails, never free them (nor the ring they are registered with).
        if self.drain() {
            // SAFETY: no read is in flight, and neither field is used again. The ring goes
            // first, ending the buffers' registration.
            unsafe {
                ManuallyDrop::drop(&mut self.ring);
                ManuallyDrop::drop(&mut self.buffers);
            }
        }
    }
}

/// The iovec that describes all of `buf`.
fn iovec(buf: &mut [u8]) -> libc::iovec {
    libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::fd::AsRawFd;

    use super::*;

    /// A ring over `file` with `count` buffers of `len` bytes, or `None` where io_uring
    /// cannot be set up.
    fn ring(file: &std::fs::File, count: usize, len: usize, setup: RingSetup) -> Option<DeepRing> {
        let buffers = (0..count).map(|_| AlignedBuf::new(len, 4096)).collect();
        let fd = types::Fd(file.as_raw_fd());
        match DeepRing::new("test", setup, fd, buffers, count, true) {
            Ok(ring) => Some(ring),
            Err(e) if e.is_unavailable() => None,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn every_read_lands_in_its_buffer_and_the_last_is_short() {
        let content: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&content).unwrap();
        for setup in [RingSetup::Plain, RingSetup::Private] {
            let Some(mut ring) = ring(&file, 3, 4096, setup) else {
                return;
            };
            // Queued out of order: the user data, not the order, says which read it was.
            for (buffer, offset) in [(2, 8192), (0, 0), (1, 4096)] {
                ring.queue(buffer, offset).unwrap();
            }
            let mut done = Vec::new();
            while !ring.is_idle() {
                ring.submit_and_wait().unwrap();
                ring.reap("test read failed", |c| done.push(c)).unwrap();
            }
            done.sort_by_key(|c| c.buffer);
            assert_eq!(
                done.iter().map(|c| c.bytes).collect::<Vec<_>>(),
                [4096, 4096, 1808]
            );
            for c in done {
                let at = c.offset as usize;
                assert_eq!(c.offset, c.buffer as u64 * 4096);
                assert_eq!(ring.buffer(c.buffer)[..c.bytes], content[at..at + c.bytes]);
            }
        }
    }

    #[test]
    fn a_failed_read_fails_the_reap_and_the_ring_still_tears_down() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("write-only");
        std::fs::write(&path, [0u8; 8192]).unwrap();
        // Reading a descriptor opened only for writing completes with EBADF.
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        let Some(mut ring) = ring(&file, 2, 4096, RingSetup::Plain) else {
            return;
        };
        ring.queue(0, 0).unwrap();
        ring.queue(1, 4096).unwrap();
        ring.submit_and_wait().unwrap();
        let e = ring
            .reap("test read failed", |_| panic!("no read succeeds"))
            .unwrap_err();
        assert!(e.to_string().contains("test read failed"), "{e}");
        // Dropped with a read possibly still in flight: the drop waits for it.
        drop(ring);
    }
}
