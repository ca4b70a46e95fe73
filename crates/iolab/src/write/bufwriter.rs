//! `bufwriter`: small records copied into a sized buffer over the raw descriptor — and
//! [`StdoutWriter`], the library's writer for programs that print.
//!
//! **System calls**: one `write(1, buf, B)` each time the buffer of `B` bytes is full — into
//! a pipe, by default, each time it holds the adaptive size ([`super::adaptive`], 8 KiB with
//! the reader on another CPU) — through [`RawStdout`](super::raw_fd::RawStdout) (short writes
//! continued, `EINTR` retried, `EAGAIN` waited on), and one for the rest at the end. Nothing
//! else: a piece that fits is copied by code inlined into the caller.
//! **When it wins**: when a program produces its output in pieces (lines, records): the
//! pieces are gathered into few, large system calls, and nothing scans them for newlines
//! as Rust's stdout does. The benchmark feeds it [`RECORD_SIZE`]-byte records, so its
//! figures include the copy into the buffer that `raw-fd` does not make.
//! Into a pipe, by default, the buffer is not written but lent ([`super::lend`]).
//! **Limits**: one more copy of every byte than `raw-fd`; output is only visible when the
//! buffer fills or the writer is flushed (not after each line, which an interactive
//! program may want).
//! **How it fails**: as `raw-fd`; the errors carry a clear message (`ENOSPC` says standard
//! output's file system is full) and keep their `io::ErrorKind`, so `BrokenPipe` can still
//! be recognised.

use std::fmt;
use std::io::{self, Write};

use super::adaptive::{Adaptive, Sizing};
use super::lend::{Lender, MIN_LEND};
use super::raw_fd::SizedStdout;
use super::{DestinationKind, Error, PAGE_ALIGN, default_buffer, probe_stdout};
use crate::buf::AlignedBuf;

/// A buffered writer on standard output that is not line-buffered.
///
/// - Into a pipe, by default, its buffers' pages are lent to the pipe with `vmsplice`
///   rather than copied into it, from a ring of buffers 4 × the pipe's capacity, each
///   reused only after the pipe has moved past it; a reader that `tee`s or `splice`s the
///   pages onward may see later bytes ([`WriteOptions::lend_pages`](super::WriteOptions::lend_pages)
///   says when, and turns lending off). The rest of this list is how it writes elsewhere,
///   or with lending off.
/// - Its capacity follows what standard output is (a pipe's capacity; 128 KiB for files,
///   or the size `iolab bench write` measured beating it on this machine;
///   [`StdoutWriter::why`] says which), or is given with [`StdoutWriter::with_capacity`].
/// - Into a pipe, [`StdoutWriter::new`] hands its buffer to the kernel as soon as it
///   holds a write's worth, of a size it adapts by counting its own involuntary context
///   switches (8 KiB when the reader runs on another CPU, the whole buffer when it shares
///   ours); elsewhere, one `write` per full buffer.
/// - A piece that fits before the buffer is due is copied and nothing else happens: the
///   check and the copy are inlined into the caller, so a fixed-size record costs a
///   comparison and a copy of known length (std's `BufWriter`, which this replaced, made a
///   call per piece: 0.62 s of user time against 0.40 s for 8 GiB of 128-byte records;
///   evidence: docs/findings/write.md).
/// - A piece that fills the buffer tops it up to exactly the due size and writes it, so a
///   pipe sees writes of one size. When the buffer is empty, a piece of at least the due size
///   goes out directly, in whole system calls, without being copied.
/// - Short writes are continued and `EINTR` is retried. On a failure the bytes buffered by
///   earlier calls and not yet written stay buffered (a later flush retries them); of the
///   failing call's piece nothing unwritten is kept, and `write` fails only when it took
///   nothing. The buffer is allocated, not touched: its pages cost memory once used.
/// - Errors are [`io::Error`]s of the original kind whose inner error is an [`Error`]
///   with a clear message: `EPIPE` is [`Error::BrokenPipe`], `ENOSPC` [`Error::StdoutNoSpace`].
///   With [`StdoutWriter::exit_quietly_on_broken_pipe`] a vanished reader ends the process
///   with status 0 and no message instead, as `SIGPIPE` ends a C program (but cleanly).
/// - Dropping it flushes what is buffered, ignoring errors (a destructor cannot report
///   them): call [`StdoutWriter::finish`] to see them.
///
/// ```no_run
/// use std::io::Write;
///
/// let mut out = iolab::StdoutWriter::new()?.exit_quietly_on_broken_pipe();
/// for i in 0..1_000_000 {
///     writeln!(out, "line {i}")?;
/// }
/// out.finish()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct StdoutWriter {
    /// The buffer, page-aligned (the kernel copies out of it into page-aligned pipe pages).
    buf: AlignedBuf,
    /// Bytes buffered, from the start of `buf`.
    len: usize,
    /// The buffer is written once it holds this many bytes: the size of the next write
    /// (adaptive), at most the capacity. Kept in a field so the fast path reads one number.
    due: usize,
    /// The descriptor, with how its writes are sized.
    out: SizedStdout,
    /// Bytes the kernel has accepted.
    written: u64,
    exit_on_broken_pipe: bool,
    /// Why its buffer has its size.
    why: String,
    /// Into a pipe, by default: the ring its buffers are lent from ([`super::lend`]).
    lender: Option<Lender>,
}

impl StdoutWriter {
    /// A writer sized for what standard output is (into a file, the size measured on this
    /// machine if one beat the rule's; [`StdoutWriter::why`] says).
    ///
    /// Fails with [`Error::StdoutClosed`] when descriptor 1 is not open for writing.
    pub fn new() -> Result<StdoutWriter, Error> {
        let mut destination = probe_stdout()?;
        Ok(StdoutWriter::sized_for(&mut destination, true))
    }

    /// The default writer for `destination`: into a pipe, lending its pages when `lend` and
    /// the kernel allow (which may enlarge the pipe: `destination` then says so).
    pub(crate) fn sized_for(destination: &mut super::Destination, lend: bool) -> StdoutWriter {
        let lender = match lend && destination.kind == DestinationKind::Pipe {
            true => Some(Lender::for_stdout(destination, None)),
            false => None,
        };
        let (capacity, why) = default_buffer(destination);
        match lender {
            Some(Ok(lender)) => StdoutWriter::lending(lender),
            refused => {
                let mut writer =
                    StdoutWriter::unchecked(capacity, default_sizing(destination, capacity));
                writer.why = match refused {
                    Some(Err(reason)) => format!("{why}; pages not lent: {reason}"),
                    _ => why,
                };
                writer
            }
        }
    }

    /// A writer whose buffers are lent to the pipe by `lender`.
    pub(crate) fn lending(lender: Lender) -> StdoutWriter {
        let chunk = lender.chunk();
        let mut writer = StdoutWriter::unchecked(0, Sizing::Fixed(chunk));
        writer.buf = lender.first_buffer();
        writer.why = format!(
            "lends its pages to the pipe (vmsplice), {} at a time, reused after {} × the \
             pipe's capacity",
            crate::units::format_bytes(chunk as u64),
            super::lend::RING_DEPTH
        );
        writer.lender = Some(lender);
        writer.update_due();
        writer
    }

    /// Whether its buffers are being lent to a pipe.
    fn lends(&self) -> bool {
        self.lender.as_ref().is_some_and(Lender::active)
    }

    /// Bytes whose pages were lent to the pipe rather than copied into it.
    pub fn lent(&self) -> u64 {
        self.lender.as_ref().map_or(0, Lender::bytes)
    }

    /// Why its buffer has its size: the caller's, the size `iolab bench write` measured
    /// here (and when), or the rule, and why the profile was not followed.
    pub fn why(&self) -> &str {
        &self.why
    }

    /// A writer with a buffer of `bytes` (at least 1).
    ///
    /// Fails with [`Error::StdoutClosed`] when descriptor 1 is not open for writing.
    pub fn with_capacity(bytes: usize) -> Result<StdoutWriter, Error> {
        probe_stdout()?;
        Ok(StdoutWriter::unchecked(bytes, Sizing::Fixed(bytes.max(1))))
    }

    fn unchecked(bytes: usize, sizing: Sizing) -> StdoutWriter {
        let mut writer = StdoutWriter {
            // Not touched up front: pages get frames as the caller's bytes are copied in,
            // so a large capacity costs nothing until it is used.
            buf: AlignedBuf::new(bytes.max(1), PAGE_ALIGN),
            len: 0,
            due: 0,
            out: SizedStdout { sizing },
            written: 0,
            exit_on_broken_pipe: false,
            why: "chosen by the caller".into(),
            lender: None,
        };
        writer.update_due();
        writer
    }

    /// Ends the process with status 0, silently, when the reader goes away (`EPIPE`),
    /// instead of returning [`Error::BrokenPipe`]. For command-line tools whose output is
    /// cut short by `| head`; not for code that must clean up after itself.
    pub fn exit_quietly_on_broken_pipe(mut self) -> StdoutWriter {
        self.exit_on_broken_pipe = true;
        self
    }

    /// The buffer's size in bytes.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// How its writes are sized (for reports: [`Adaptive::report`] says how many bytes
    /// went out in small and in large writes).
    #[cfg(any(test, feature = "lab"))]
    pub(crate) fn sizing(&self) -> &Sizing {
        &self.out.sizing
    }

    /// Bytes handed to the kernel so far (not counting what is still buffered).
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Flushes and reports any error, classified.
    pub fn finish(mut self) -> Result<(), Error> {
        self.write_buffered().map_err(|e| self.classify(e))
    }

    /// The size at which the buffer is written next: the adaptive size (8 KiB while the
    /// reader runs on another CPU: the pipe then sees 8 KiB at a time, not bursts of the
    /// whole buffer, which fill a 64 KiB pipe as one 64 KiB write does: 0.69× `yes` into
    /// `pv`), or the capacity.
    ///
    /// Never below what is buffered (a failed write can leave more than a small write's
    /// worth), so `due - len` cannot underflow.
    fn update_due(&mut self) {
        self.due = self
            .out
            .sizing
            .next_size()
            .clamp(1, self.buf.len())
            .max(self.len);
    }

    /// Writes everything buffered, in pieces sized by the sizing. On a failure the bytes
    /// not written move to the front of the buffer and stay there.
    fn write_buffered(&mut self) -> io::Result<()> {
        if self.len >= MIN_LEND
            && let Some(lender) = self.lender.as_mut().filter(|l| l.active())
        {
            // What was not lent comes back at the front of a buffer the pipe does not hold.
            let (done, result) = lender.lend(&mut self.buf, self.len);
            self.written += done as u64;
            self.len -= done;
            if let Some(stopped) = lender.stopped() {
                self.why = format!("{}; {stopped}", self.why);
            }
            if done > 0 || lender.active() {
                self.update_due();
                return result;
            }
            // Refused before it took anything: the bytes go out with `write` below.
        }
        let (done, result) = write_out(&mut self.out, &self.buf[..self.len]);
        self.written += done as u64;
        self.buf.copy_within(done..self.len, 0);
        self.len -= done;
        self.update_due();
        result
    }

    /// Writes `data` straight to the descriptor, bypassing the buffer (which is empty).
    fn write_through(&mut self, data: &[u8]) -> io::Result<()> {
        if self.lends() {
            // The caller's memory is theirs to change: it is copied, then lent.
            return self.lend_through(data);
        }
        let (done, result) = write_out(&mut self.out, data);
        self.written += done as u64;
        self.update_due();
        result
    }

    /// [`StdoutWriter::write_through`] while lending: `data` in buffer-sized pieces, each
    /// copied into the (empty) buffer and lent. On a failure what was not lent stays
    /// buffered, as after a failed write of the buffer.
    fn lend_through(&mut self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            data = self.top_up(data);
            if let Err(e) = self.write_buffered() {
                // As a failed `write` takes nothing of its piece, nothing unlent is kept.
                self.len = 0;
                self.update_due();
                return Err(e);
            }
        }
        Ok(())
    }

    /// [`Write::write_all`] of a piece that does not fit before the buffer is due: tops the
    /// buffer up to the due size and writes it, then writes what is left straight through
    /// when it is a whole write's worth or more, and buffers it otherwise.
    #[cold]
    #[inline(never)]
    fn write_all_cold(&mut self, mut data: &[u8]) -> io::Result<()> {
        if self.len > 0 {
            let rest = self.top_up(data);
            let taken = data.len() - rest.len();
            if let Err(e) = self.write_buffered() {
                // Give back what of `data` is still buffered: as with std's `BufWriter`,
                // a failure takes nothing of the piece that was not written.
                self.len -= taken.min(self.len);
                self.update_due();
                return Err(self.fail(e));
            }
            data = rest;
        }
        if data.len() >= self.due {
            return self.write_through(data).map_err(|e| self.fail(e));
        }
        self.top_up(data);
        Ok(())
    }

    /// [`Write::write`] of a piece that does not fit before the buffer is due. An error is
    /// returned only when nothing of `data` was taken; a failure to write a buffer that
    /// `data` completed leaves it buffered, and the next call reports it.
    #[cold]
    #[inline(never)]
    fn write_cold(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.len >= self.due {
            // Left over from a failed write.
            self.write_buffered().map_err(|e| self.fail(e))?;
        }
        if self.len == 0 && data.len() >= self.due && !self.lends() {
            let n = self.out.write(data).map_err(|e| self.fail(e))?;
            self.written += n as u64;
            self.update_due();
            return Ok(n);
        }
        let rest = self.top_up(data);
        if self.len >= self.due {
            let _ = self.write_buffered();
        }
        Ok(data.len() - rest.len())
    }

    /// The fast path of every write: copies `data` when it leaves the buffer short of due,
    /// and says whether it did. `len <= due <= capacity` holds between calls, so the
    /// subtraction cannot underflow.
    #[inline]
    fn buffer_if_room(&mut self, data: &[u8]) -> bool {
        if data.len() < self.due - self.len {
            self.buf[self.len..self.len + data.len()].copy_from_slice(data);
            self.len += data.len();
            return true;
        }
        false
    }

    /// Copies as much of `data` as fits before the buffer is due; returns the rest.
    fn top_up<'a>(&mut self, data: &'a [u8]) -> &'a [u8] {
        let take = self.due.saturating_sub(self.len).min(data.len());
        self.buf[self.len..self.len + take].copy_from_slice(&data[..take]);
        self.len += take;
        &data[take..]
    }

    /// Classifies a failed write (or ends the process quietly, when asked to).
    fn classify(&self, e: io::Error) -> Error {
        let error = super::from_write(e, self.written());
        if error.is_broken_pipe() && self.exit_on_broken_pipe {
            std::process::exit(0);
        }
        error
    }

    /// The classified error as an `io::Error` of the original kind.
    fn fail(&self, e: io::Error) -> io::Error {
        let error = self.classify(e);
        let kind = match &error {
            Error::BrokenPipe { source, .. }
            | Error::StdoutNoSpace { source, .. }
            | Error::Io { source, .. } => source.kind(),
            _ => io::ErrorKind::Other,
        };
        io::Error::new(kind, error)
    }
}

/// Writes `data` through `out` until it is all written or a write fails; returns the bytes
/// written and how it ended.
fn write_out(out: &mut SizedStdout, data: &[u8]) -> (usize, io::Result<()>) {
    let mut done = 0;
    while done < data.len() {
        match out.write(&data[done..]) {
            Ok(0) => return (done, Err(io::ErrorKind::WriteZero.into())),
            Ok(n) => done += n,
            Err(e) => return (done, Err(e)),
        }
    }
    (done, Ok(()))
}

impl Write for StdoutWriter {
    #[inline]
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.buffer_if_room(data) {
            return Ok(data.len());
        }
        self.write_cold(data)
    }

    #[inline]
    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        if self.buffer_if_room(data) {
            return Ok(());
        }
        self.write_all_cold(data)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_buffered().map_err(|e| self.fail(e))
    }
}

impl Drop for StdoutWriter {
    fn drop(&mut self) {
        // A destructor cannot report errors: `finish` is the way to see them.
        let _ = self.write_buffered();
    }
}

impl fmt::Debug for StdoutWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdoutWriter")
            .field("capacity", &self.capacity())
            .field("buffered", &self.len)
            .field("due", &self.due)
            .field("sizing", &self.out.sizing)
            .field("written", &self.written)
            .finish()
    }
}

impl super::WriteOptions {
    /// A [`StdoutWriter`] with these options: a buffer of [`WriteOptions::buffer_size`]
    /// bytes written out whole (lent with [`WriteOptions::lend_pages`]`(true)`), or the
    /// default's (into a pipe, lent unless [`WriteOptions::lend_pages`]`(false)`); the pipe
    /// on standard output resized first when [`WriteOptions::pipe_capacity`] asks.
    ///
    /// Fails with [`Error::StdoutClosed`] when descriptor 1 is not open for writing.
    ///
    /// [`WriteOptions::buffer_size`]: super::WriteOptions::buffer_size
    /// [`WriteOptions::pipe_capacity`]: super::WriteOptions::pipe_capacity
    /// [`WriteOptions::lend_pages`]: super::WriteOptions::lend_pages
    pub fn stdout(&self) -> Result<StdoutWriter, Error> {
        let mut destination = probe_stdout()?;
        if let Some(bytes) = self.pipe_capacity
            && destination.kind == DestinationKind::Pipe
        {
            super::destination::set_pipe_capacity(bytes)
                .map_err(|e| Error::io("cannot resize the pipe on standard output", e))?;
            destination = probe_stdout()?;
        }
        let lend = destination.kind == DestinationKind::Pipe;
        Ok(match (self.buffer_size, self.lend_pages) {
            (Some(bytes), Some(true)) if lend => {
                match super::lend::Lender::for_stdout(&mut destination, Some(bytes)) {
                    Ok(lender) => StdoutWriter::lending(lender),
                    Err(_) => StdoutWriter::unchecked(bytes, Sizing::Fixed(bytes)),
                }
            }
            (Some(bytes), _) => StdoutWriter::unchecked(bytes, Sizing::Fixed(bytes)),
            (None, lend_pages) => {
                StdoutWriter::sized_for(&mut destination, lend_pages != Some(false))
            }
        })
    }
}

/// How a writer of `capacity` bytes sizes its writes into `destination` by default:
/// A writer whose buffers `lender` lends to the pipe (the laboratory's `bufwriter`
/// method, as `StdoutWriter::new()` makes it into a pipe).
#[cfg(any(test, feature = "lab"))]
pub fn lending_writer(lender: Lender) -> StdoutWriter {
    StdoutWriter::lending(lender)
}

/// A writer of `bytes` whose writes `sizing` sizes, standard output not checked (the
/// laboratory's `bufwriter` method, which checked it already).
#[cfg(any(test, feature = "lab"))]
pub fn unchecked_writer(bytes: usize, sizing: Sizing) -> StdoutWriter {
    StdoutWriter::unchecked(bytes, sizing)
}

/// How `writer`'s writes are sized (for reports: [`Adaptive::report`] says how many bytes
/// went out in small and in large writes).
#[cfg(any(test, feature = "lab"))]
pub fn writer_sizing(writer: &StdoutWriter) -> &Sizing {
    writer.sizing()
}

/// [`Adaptive`] into a pipe, one write per buffer elsewhere.
pub fn default_sizing(destination: &super::Destination, capacity: usize) -> Sizing {
    match destination.kind {
        DestinationKind::Pipe => Sizing::Adaptive(Adaptive::new(capacity)),
        _ => Sizing::Fixed(capacity),
    }
}
