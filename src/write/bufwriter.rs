//! `bufwriter`: small records copied into a sized buffer over the raw descriptor — and
//! [`StdoutWriter`], the library's writer for programs that print.
//!
//! **System calls**: one `write(1, buf, B)` each time the buffer of `B` bytes is full
//! (through [`RawStdout`](super::raw_fd::RawStdout): short writes continued, `EINTR` retried, `EAGAIN` waited on),
//! and one for the rest at the end.
//! **When it wins**: when a program produces its output in pieces (lines, records): the
//! pieces are gathered into few, large system calls, and nothing scans them for newlines
//! as Rust's stdout does. The benchmark feeds it [`RECORD_SIZE`]-byte records, so its
//! figures include the copy into the buffer that `raw-fd` does not make.
//! **Limits**: one more copy of every byte than `raw-fd`; output is only visible when the
//! buffer fills or the writer is flushed (not after each line, which an interactive
//! program may want).
//! **How it fails**: as `raw-fd`; the errors carry a clear message (`ENOSPC` says standard
//! output's file system is full) and keep their `io::ErrorKind`, so `BrokenPipe` can still
//! be recognised.

use std::io::{self, BufWriter, Write};

use super::adaptive::{Adaptive, Run, Sizing};
use super::raw_fd::SizedStdout;
use super::{DestinationKind, Error, default_buffer_size, probe_stdout};

/// The record size the `bufwriter` method writes in: 128 bytes, about a line of text (the
/// benchmark's generated lines average 110 bytes), and smaller than every buffer of the
/// sweep, so every byte really goes through the buffer.
pub const RECORD_SIZE: usize = 128;

/// A buffered writer on standard output that is not line-buffered.
///
/// - Its capacity follows [`default_buffer_size`] for what standard output is (a pipe's
///   capacity, 128 KiB for files), or is given with [`StdoutWriter::with_capacity`].
/// - Into a pipe, [`StdoutWriter::new`] hands its buffer to the kernel as soon as it
///   holds a write's worth, of a size it adapts ([`super::adaptive`]: 8 KiB when the
///   reader runs on another CPU, the whole buffer when it shares ours); elsewhere, one
///   `write` per full buffer.
/// - Writes larger than the free space go out in whole system calls; short writes are
///   continued and `EINTR` is retried.
/// - Errors are [`io::Error`]s of the original kind whose inner error is an [`Error`]
///   with a clear message: `EPIPE` is [`Error::BrokenPipe`], `ENOSPC` [`Error::NoSpace`].
///   With [`StdoutWriter::exit_quietly_on_broken_pipe`] a vanished reader ends the process
///   with status 0 and no message instead, as `SIGPIPE` ends a C program (but cleanly).
/// - Dropping it flushes what is buffered, ignoring errors (a destructor cannot report
///   them): call [`StdoutWriter::finish`] to see them.
///
/// ```no_run
/// use std::io::Write;
///
/// let mut out = iolab::write::StdoutWriter::new()?.exit_quietly_on_broken_pipe();
/// for i in 0..1_000_000 {
///     writeln!(out, "line {i}")?;
/// }
/// out.finish()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct StdoutWriter {
    inner: BufWriter<SizedStdout>,
    passed_on: u64,
    exit_on_broken_pipe: bool,
}

impl StdoutWriter {
    /// A writer sized for what standard output is ([`default_buffer_size`]).
    ///
    /// Fails with [`Error::StdoutClosed`] when descriptor 1 is not open for writing.
    pub fn new() -> Result<StdoutWriter, Error> {
        let destination = probe_stdout()?;
        let capacity = default_buffer_size(&destination);
        Ok(StdoutWriter::unchecked(
            capacity,
            default_sizing(&destination, capacity),
        ))
    }

    /// A writer with a buffer of `bytes` (at least 1).
    ///
    /// Fails with [`Error::StdoutClosed`] when descriptor 1 is not open for writing.
    pub fn with_capacity(bytes: usize) -> Result<StdoutWriter, Error> {
        probe_stdout()?;
        Ok(StdoutWriter::unchecked(bytes, Sizing::Fixed(bytes.max(1))))
    }

    fn unchecked(bytes: usize, sizing: Sizing) -> StdoutWriter {
        StdoutWriter {
            inner: BufWriter::with_capacity(bytes.max(1), SizedStdout { sizing }),
            passed_on: 0,
            exit_on_broken_pipe: false,
        }
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
        self.inner.capacity()
    }

    /// How its writes are sized (for reports: [`Adaptive::report`] says how many bytes
    /// went out in small and in large writes).
    pub fn sizing(&self) -> &Sizing {
        &self.inner.get_ref().sizing
    }

    /// Bytes handed to the kernel so far (not counting what is still buffered).
    pub fn written(&self) -> u64 {
        self.passed_on - self.inner.buffer().len() as u64
    }

    /// Flushes and reports any error, classified.
    pub fn finish(mut self) -> Result<(), Error> {
        match self.inner.flush() {
            Ok(()) => Ok(()),
            Err(e) => Err(self.classify(e)),
        }
    }

    /// Hands the buffer to the kernel once it holds the adaptive size's worth, so the
    /// pipe sees 8 KiB at a time while its reader runs on another CPU, not bursts of the
    /// whole buffer, which fill a 64 KiB pipe as one 64 KiB write does (into `pv -q`,
    /// 2 GiB, 5 interleaved runs: 2.27 GB/s with 64 KiB bursts, 0.69× `yes`). With a
    /// fixed size it is the buffer's capacity, and `BufWriter` flushes by itself.
    fn flush_when_due(&mut self) -> io::Result<()> {
        if let Sizing::Adaptive(a) = self.sizing()
            && self.inner.buffer().len() >= a.next_size()
        {
            return self.inner.flush().map_err(|e| self.fail(e));
        }
        Ok(())
    }

    /// Classifies a failed write (or ends the process quietly, when asked to).
    fn classify(&self, e: io::Error) -> Error {
        let error = Error::from_write(e, self.written());
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
            | Error::NoSpace { source, .. }
            | Error::Io { source, .. } => source.kind(),
            _ => io::ErrorKind::Other,
        };
        io::Error::new(kind, error)
    }
}

impl Write for StdoutWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.inner.write(buf) {
            Ok(n) => {
                self.passed_on += n as u64;
                self.flush_when_due().map(|()| n)
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self.inner.write_all(buf) {
            Ok(()) => {
                self.passed_on += buf.len() as u64;
                self.flush_when_due()
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().map_err(|e| self.fail(e))
    }
}

/// How a writer of `capacity` bytes sizes its writes into `destination` by default:
/// [`Adaptive`] into a pipe, one write per buffer elsewhere.
pub(crate) fn default_sizing(destination: &super::Destination, capacity: usize) -> Sizing {
    match destination.kind {
        DestinationKind::Pipe => Sizing::Adaptive(Adaptive::new(capacity)),
        _ => Sizing::Fixed(capacity),
    }
}

/// Writes `bytes` zero bytes as [`RECORD_SIZE`]-byte records into a [`StdoutWriter`] of
/// `buffer_size` bytes whose writes are sized by `sizing` (which it hands back updated).
pub(crate) fn write(bytes: u64, buffer_size: usize, run: &mut Run) -> io::Result<()> {
    let Run { sizing, written } = run;
    let record = [0u8; RECORD_SIZE];
    let mut out = StdoutWriter::unchecked(buffer_size, sizing.clone());
    let mut handed = 0u64;
    let result = (|| {
        while handed < bytes {
            let want = usize::try_from(bytes - handed).map_or(RECORD_SIZE, |r| r.min(RECORD_SIZE));
            out.write_all(&record[..want])?;
            handed += want as u64;
        }
        out.flush()
    })();
    *written = out.written();
    *sizing = out.sizing().clone();
    result
}
