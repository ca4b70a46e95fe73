//! `lend`: [`StdoutWriter`](super::StdoutWriter)'s way into a pipe — the caller's bytes,
//! copied once into a ring of page-aligned buffers, whose pages are then lent to the pipe
//! with `vmsplice(2)` instead of being copied into it (the "page-gifting" writer;
//! `SPLICE_F_GIFT` itself is not used: a gift promises never to touch the pages again).
//!
//! **System calls**: per buffer of [`Lender::chunk`] bytes (a quarter of the pipe: 256 KiB
//! in the 1 MiB pipe it asks for first, as the `vmsplice` method does), one
//! `vmsplice(1, {buf, len}, 1, 0)`, repeated while the pipe takes part of it, and one
//! `fcntl(1, F_GETPIPE_SZ)` with one `fstat(1)` before a buffer is reused. Pieces shorter
//! than [`MIN_LEND`] (a flushed line) are `write`n: they would take a whole pipe slot each.
//! **When it wins**: into any pipe (docs/findings/write.md, "Lending pages"): the writer no
//! longer copies into the pipe; a `splice` reader then copies nothing at all, a `read`ing
//! one copies once, out of our pages.
//!
//! **Why a reused buffer is never seen changing** (in a pipe read with `read` or `splice`):
//! the pipe keeps a reference to each lent page until the reader consumes it, and a reader
//! sees what the page holds *then*. A pipe of capacity C (`F_GETPIPE_SZ`) holds at most
//! C / page-size buffers, each referring to one page (a partial page takes a whole slot;
//! lent buffers are never merged), and it is first in, first out. So a buffer after whose
//! last lend the writer has made at least that many pipe buffers cannot be in the pipe any
//! more, and once out it cannot come back. The writer counts the pipe buffers it makes
//! (each `vmsplice` call makes one per page it spans) and reuses the oldest buffer only
//! when [`RING_DEPTH`] × C / page-size have been made since: the capacity is read again
//! each time, so a reader that enlarges the pipe mid-stream makes the ring grow (up to
//! [`MAX_RING`], beyond which it writes instead). If descriptor 1 stops being that pipe
//! (`dup2` by the program), no buffer is reused again. On drop (and on any buffer the
//! pipe may still hold) the pages are released with `madvise(MADV_DONTNEED)` before the
//! memory is freed: the pipe keeps the old frames, unchanged, and whoever allocates the
//! memory next gets fresh ones.
//!
//! **What a reader that `tee`s sees** — and one that `splice`s our pipe into another pipe,
//! as `pv` does into a pipe: the pages it moves or copies out keep referring to our
//! buffers outside our pipe. Those are safe while all the pages held outside our pipe
//! number fewer than the ring's slack, (RING_DEPTH − 1) × C less one buffer: 3 MiB less
//! 256 KiB with the 1 MiB pipe, which covers `WRITER | pv | CONSUMER` (pv's output pipe is
//! 64 KiB) and up to two 1 MiB pipes downstream. A reader that holds more may read, in such
//! a page, bytes written later into the same ring buffer: one ring length, or a multiple,
//! further in the stream, and possibly torn within the page. A `splice` into a TCP socket
//! is the same: its send queue keeps the pages until acknowledged. For such a reader, call
//! [`WriteOptions::lend_pages(false)`](super::WriteOptions::lend_pages): every byte is
//! copied into the pipe, as `write` does.
//! **How it fails**: as `write`: `EPIPE` (with `SIGPIPE`, ignored in Rust programs) when
//! the reader went away, `EINTR` retried, `EAGAIN` waited on. A `vmsplice` refused before it
//! took anything (`EINVAL`, `ENOSYS`, `EBADF`, `EPERM` from a seccomp filter) ends the
//! lending for good, once, and the bytes go out with `write`
//! ([`StdoutWriter::why`](super::StdoutWriter::why) says so).

use std::collections::VecDeque;
use std::io;

use super::destination::pipe_capacity_of;
use super::{Destination, DestinationKind, PAGE_ALIGN, retry_write};
use crate::buf::AlignedBuf;

/// Standard output's file descriptor.
const STDOUT_FD: libc::c_int = 1;

/// A buffer is reused once the pipe buffers made after it are this many times the pipe's
/// slots: 4, so the ring is 4 × the pipe (4 MiB for 1 MiB) and 3 × the pipe is slack for
/// pages a reader moves on into other pipes (module docs).
pub const RING_DEPTH: usize = 4;
/// The most memory the ring may take: 64 MiB. Beyond it (a pipe enlarged past 16 MiB by a
/// privileged reader), the writer stops lending and writes.
pub const MAX_RING: usize = 64 << 20;
/// Buffered bytes below this are `write`n, not lent: 16 KiB. A lent partial page takes a
/// whole pipe slot, so a program that flushes each line would fill the pipe with a line
/// per slot. (Chosen, not measured: the streams measured never flush early.)
pub const MIN_LEND: usize = 16 << 10;

/// The ring of buffers lent to the pipe on standard output, and the count that says when
/// each may be reused (module docs).
pub struct Lender {
    /// Bytes per buffer, a multiple of the page size.
    chunk: usize,
    /// The page size: a pipe slot holds at most one page.
    page: usize,
    /// Pipe buffers made by our `vmsplice` calls so far: one per page each call spanned.
    made: u64,
    /// Buffers lent, oldest first, each with `made` after its last lend.
    lent: VecDeque<(AlignedBuf, u64)>,
    /// The pipe's device and inode: lending stops if descriptor 1 becomes something else.
    pipe: (u64, u64),
    /// Bytes lent so far.
    bytes: u64,
    /// Why lending stopped, once it has.
    stopped: Option<String>,
}

impl Lender {
    /// A lender into the pipe on standard output (`destination`, updated when the pipe is
    /// enlarged): buffers of `chunk` bytes, or by default a quarter of the pipe after it was
    /// enlarged to 1 MiB where the kernel allows. Why not, when it cannot lend.
    pub fn for_stdout(
        destination: &mut Destination,
        chunk: Option<usize>,
    ) -> Result<Lender, String> {
        if destination.kind != DestinationKind::Pipe {
            return Err(format!(
                "standard output is {}",
                destination.kind.describe()
            ));
        }
        super::vmsplice::availability()?;
        let pipe = identity(STDOUT_FD).ok_or("cannot fstat standard output")?;
        if chunk.is_none()
            && let Some(capacity) = super::vmsplice::enlarge_pipe()
        {
            destination.pipe_capacity = Some(capacity);
        }
        let page = page_size();
        let chunk = chunk
            .unwrap_or_else(|| super::vmsplice::default_chunk(destination))
            .next_multiple_of(page);
        Ok(Lender {
            chunk,
            page,
            made: 0,
            lent: VecDeque::new(),
            pipe,
            bytes: 0,
            stopped: None,
        })
    }

    /// Bytes per buffer.
    pub fn chunk(&self) -> usize {
        self.chunk
    }

    /// Whether it still lends (see [`Lender::stopped`]).
    pub(crate) fn active(&self) -> bool {
        self.stopped.is_none()
    }

    /// Why it stopped lending, if it has.
    pub(crate) fn stopped(&self) -> Option<&str> {
        self.stopped.as_deref()
    }

    /// Bytes lent so far.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// A fresh buffer to fill first.
    pub(crate) fn first_buffer(&self) -> AlignedBuf {
        AlignedBuf::new(self.chunk, PAGE_ALIGN)
    }

    /// Lends `buf[..len]` to the pipe until it is all in or a call fails. Returns the bytes
    /// lent and how it ended. When anything was lent, `buf` is replaced by a buffer the pipe
    /// no longer refers to, holding what was not lent at its front; when nothing was, `buf`
    /// is left as it was, and a refusal of `vmsplice` itself stops the lending.
    pub(crate) fn lend(&mut self, buf: &mut AlignedBuf, len: usize) -> (usize, io::Result<()>) {
        let mut done = 0;
        let mut result = Ok(());
        while done < len {
            let iov = libc::iovec {
                // SAFETY: `done < len <= buf.len()`: the pointer stays in the buffer.
                iov_base: unsafe { buf.as_ptr().add(done) }.cast_mut().cast(),
                iov_len: len - done,
            };
            let n = retry_write(STDOUT_FD, || {
                // SAFETY: `iov` describes `len - done` initialised bytes of `buf`. The pipe
                // may refer to these pages after the call: `buf` is then kept in the ring
                // and not written again until the pipe has moved past it, nor freed before
                // its pages are released (module docs).
                unsafe { libc::vmsplice(STDOUT_FD, &iov, 1, 0) }
            });
            match n {
                Ok(0) => {
                    result = Err(io::ErrorKind::WriteZero.into());
                    break;
                }
                Ok(n) => {
                    self.made += (done + n).div_ceil(self.page) as u64 - (done / self.page) as u64;
                    done += n;
                }
                Err(e) => {
                    if done == 0 && refused(&e) {
                        self.stopped = Some(format!(
                            "vmsplice refused ({}), writing instead",
                            crate::error::describe_io(&e)
                        ));
                    }
                    result = Err(e);
                    break;
                }
            }
        }
        if done > 0 {
            self.bytes += done as u64;
            let mut next = self.free_buffer();
            next[..len - done].copy_from_slice(&buf[done..len]);
            let old = std::mem::replace(buf, next);
            self.lent.push_back((old, self.made));
        }
        (done, result)
    }

    /// The oldest lent buffer when the pipe has moved past it (module docs), else a new
    /// one: while the ring is below [`MAX_RING`] and descriptor 1 is still our pipe;
    /// otherwise lending stops (a new buffer is still given, for the bytes not lent).
    fn free_buffer(&mut self) -> AlignedBuf {
        let slots = match (identity(STDOUT_FD), pipe_capacity_of(STDOUT_FD)) {
            (Some(now), Ok(capacity)) if now == self.pipe => Some((capacity / self.page) as u64),
            _ => None,
        };
        let Some(slots) = slots else {
            self.stopped
                .get_or_insert_with(|| "standard output is no longer the pipe".into());
            return self.first_buffer();
        };
        let needed = RING_DEPTH as u64 * slots;
        if let Some((_, after)) = self.lent.front()
            && self.made - after >= needed
        {
            return self.lent.pop_front().expect("checked above").0;
        }
        if (self.lent.len() + 1) * self.chunk > MAX_RING {
            self.stopped.get_or_insert_with(|| {
                format!(
                    "the pipe grew past {} MiB of ring, writing instead",
                    MAX_RING >> 20
                )
            });
        }
        self.first_buffer()
    }
}

impl Drop for Lender {
    fn drop(&mut self) {
        for (buf, _) in &self.lent {
            release(buf);
        }
    }
}

/// Releases `buf`'s pages before the memory is freed: a pipe that still refers to them
/// keeps the old frames, unchanged, and the next user of the memory gets fresh pages.
fn release(buf: &AlignedBuf) {
    // SAFETY: `buf` is page-aligned and owns `buf.len()` bytes; MADV_DONTNEED on private
    // anonymous memory only drops our mapping of its pages (they read as zeros after),
    // which is all that is asked: nothing reads the contents again.
    unsafe {
        libc::madvise(
            buf.as_ptr().cast_mut().cast(),
            buf.len(),
            libc::MADV_DONTNEED,
        )
    };
}

/// Whether `e` means `vmsplice` cannot be used on this descriptor at all.
fn refused(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINVAL | libc::ENOSYS | libc::EBADF | libc::EPERM)
    )
}

/// The device and inode of `fd`.
fn identity(fd: libc::c_int) -> Option<(u64, u64)> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `st` is writable memory of the size and layout fstat fills.
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: fstat returned 0, so it filled `st`.
    let st = unsafe { st.assume_init() };
    Some((st.st_dev, st.st_ino))
}

/// The page size: a pipe slot holds at most one page.
fn page_size() -> usize {
    // SAFETY: sysconf only reads a system value.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(PAGE_ALIGN).max(PAGE_ALIGN)
}
