//! The engine of `iolab write`: [`write_zeros`] writes `N` zero bytes to standard output
//! with one [`Method`], so the benchmark compares the methods on the same sinks. The
//! methods themselves are the library's (`iolab::lab::write`: `raw_fd`, `bufwriter` with
//! its lending ring, `vmsplice`), except Rust's line-buffered `stdout`, kept here for
//! contrast ([`stdout`]). The library's answer for a program's own bytes is
//! `iolab::StdoutWriter`; findings: docs/findings/write.md.

use std::io::{self, Write};

use iolab::Error;
use iolab::RawStdout;
use iolab::lab::write::lend::Lender;
use iolab::lab::write::vmsplice::zero_region;
pub use iolab::lab::write::*;

/// Standard output's descriptor.
const STDOUT_FD: libc::c_int = 1;

pub mod stdout;

iolab::lab::named::named_enum! {
    /// A way of writing bytes to standard output, by its kebab-case name.
    #[non_exhaustive]
    pub enum Method: "method" {
        /// `std::io::stdout().lock()`: Rust's line-buffered standard output, as programs use it.
        Stdout = "stdout",
        /// `write(2)` of a whole buffer on file descriptor 1: no user-space buffer in between.
        RawFd = "raw-fd",
        /// Small records into a [`StdoutWriter`] (a sized buffer over the raw descriptor).
        Bufwriter = "bufwriter",
        /// `vmsplice(2)` of an unchanging zero buffer into a pipe: pages, not copies.
        Vmsplice = "vmsplice",
    }
}

impl Method {
    /// Whether the method can run on this machine at all (the kernel's `vmsplice`).
    ///
    /// An available method may still refuse a particular standard output: see
    /// [`Method::requirement`].
    pub fn availability(self) -> Result<(), String> {
        match self {
            Method::Vmsplice => vmsplice::availability(),
            Method::Stdout | Method::RawFd | Method::Bufwriter => Ok(()),
        }
    }

    /// What standard output must be for the method to run, when that is restricted.
    pub fn requirement(self) -> Option<&'static str> {
        match self {
            Method::Vmsplice => Some("standard output must be a pipe"),
            Method::Stdout | Method::RawFd | Method::Bufwriter => None,
        }
    }

    /// Why the method cannot write to `destination`, if it cannot.
    pub fn refuses(self, destination: &Destination) -> Option<String> {
        match self {
            Method::Vmsplice if destination.kind != DestinationKind::Pipe => Some(format!(
                "standard output is {}, not a pipe; vmsplice can only hand pages to a pipe",
                destination.kind.describe()
            )),
            Method::Vmsplice | Method::Stdout | Method::RawFd | Method::Bufwriter => None,
        }
    }
}

/// What [`write_zeros`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// Bytes the kernel accepted.
    pub bytes: u64,
    /// The method that wrote them.
    pub method: Method,
    /// The buffer size used.
    pub buffer_size: usize,
    /// What standard output was (after a requested pipe resize).
    pub destination: Destination,
    /// With adaptive write sizes (the default into a pipe): the small and the large size
    /// and the bytes each wrote.
    pub adaptive: Option<[(usize, u64); 2]>,
    /// Bytes whose pages were lent to the pipe (`bufwriter`'s default into a pipe, `vmsplice`).
    pub lent: u64,
}

/// Writes `bytes` zero bytes to standard output with `method`.
///
/// Standard output is checked first ([`probe_stdout`]): a closed descriptor is an
/// [`Error::StdoutClosed`], and a method that cannot write there is
/// [`Error::Unavailable`]. Write failures are classified: [`Error::BrokenPipe`] when the
/// reader went away (a caller printing data usually stops quietly then),
/// [`Error::StdoutNoSpace`] when the disk or quota is full.
pub fn write_zeros(method: Method, bytes: u64, options: &WriteOptions) -> Result<Written, Error> {
    method.availability().map_err(|reason| Error::Unavailable {
        method: method.name(),
        reason,
    })?;
    let mut destination = probe_stdout()?;
    if let Some(reason) = method.refuses(&destination) {
        return Err(Error::Unavailable {
            method: method.name(),
            reason,
        });
    }
    let pipe = destination.kind == DestinationKind::Pipe;
    if let Some(capacity) = options.pipe_capacity_asked()
        && pipe
    {
        destination.pipe_capacity = Some(
            destination::set_pipe_capacity(capacity)
                .map_err(|e| Error::io("cannot resize the pipe on standard output", e))?,
        );
    } else if method == Method::Vmsplice && options.buffer_size_asked().is_none() && pipe {
        // vmsplice's default: the largest pipe this process may make (module docs of
        // `vmsplice`); refused (EPERM past the user's pipe quota), the pipe stays as it is.
        if let Some(capacity) = vmsplice::enlarge_pipe() {
            destination.pipe_capacity = Some(capacity);
        }
    }
    // `StdoutWriter::new()`'s default into a pipe: its buffers lent, not copied.
    let lender = (method == Method::Bufwriter
        && pipe
        && options.buffer_size_asked().is_none()
        && options.lend_pages_asked() != Some(false))
    .then(|| lend::Lender::for_stdout(&mut destination, None).ok())
    .flatten();
    let buffer_size = options.buffer_size_asked().unwrap_or_else(|| match method {
        Method::Vmsplice => vmsplice::default_chunk(&destination),
        _ if lender.is_some() => lender.as_ref().map_or(0, lend::Lender::chunk),
        _ => default_buffer(&destination).0,
    });
    // Explicit sizes are kept; the default into a pipe measures (`adaptive`), except
    // vmsplice's, whose pages are not copied and whose best size does not move.
    let sizing = match options.buffer_size_asked() {
        None if method != Method::Vmsplice && lender.is_none() => {
            bufwriter::default_sizing(&destination, buffer_size)
        }
        _ => Sizing::Fixed(buffer_size),
    };
    // Where a regular file's position stands, so that what std's line buffer never got
    // to write can be told from what reached the file.
    let start = (method == Method::Stdout && destination.kind == DestinationKind::RegularFile)
        .then(stdout_position)
        .flatten();
    let mut run = Run {
        sizing,
        written: 0,
        lent: 0,
    };
    let result = match method {
        Method::Stdout => stdout::write(bytes, buffer_size, &mut run),
        Method::RawFd => raw_fd_zeros(bytes, buffer_size, &mut run),
        Method::Bufwriter => bufwriter_zeros(bytes, buffer_size, lender, &mut run),
        Method::Vmsplice => vmsplice_zeros(bytes, buffer_size, &mut run.written),
    };
    let Run {
        sizing,
        written,
        lent,
    } = run;
    result.map_err(|e| match method {
        Method::Stdout => std_buffered(
            from_write(e, written),
            start.and_then(|start| stdout_position().map(|now| now.saturating_sub(start))),
        ),
        _ => from_write(e, written),
    })?;
    Ok(Written {
        bytes: written,
        method,
        buffer_size,
        destination,
        adaptive: match sizing {
            Sizing::Adaptive(a) => Some(a.report()),
            Sizing::Fixed(_) => None,
        },
        lent,
    })
}

/// Standard output's file position, where it has one.
fn stdout_position() -> Option<u64> {
    // SAFETY: lseek on descriptor 1 has no memory effects; SEEK_CUR with offset 0 only
    // reads the position.
    u64::try_from(unsafe { libc::lseek(1, 0, libc::SEEK_CUR) }).ok()
}

/// For the `stdout` method, whose last pieces std's line buffer may have held when the
/// write failed: the bytes that reached standard output, when they can be known
/// (`reached`, from the file position of a regular file), else up to the line buffer's
/// size of `written` marked as unknown.
fn std_buffered(mut e: Error, reached: Option<u64>) -> Error {
    if let Error::BrokenPipe {
        written, unflushed, ..
    }
    | Error::StdoutNoSpace {
        written, unflushed, ..
    } = &mut e
    {
        match reached {
            Some(reached) => (*written, *unflushed) = (reached.min(*written), 0),
            None => *unflushed = (*written).min(stdout::LINE_BUFFER as u64),
        }
    }
    e
}

/// A method's run in progress: how it sizes its writes, and the bytes the kernel has
/// accepted so far (so a failure can say how far it got).
#[derive(Debug, Clone)]
pub(crate) struct Run {
    pub(crate) sizing: Sizing,
    pub(crate) written: u64,
    /// Of `written`, the bytes whose pages were lent to the pipe ([`super::lend`]).
    pub(crate) lent: u64,
}

/// The record size the `bufwriter` method writes in: 128 bytes, about a line of text (the
/// benchmark's generated lines average 110 bytes), and smaller than every buffer of the
/// sweep, so every byte really goes through the buffer.
pub const RECORD_SIZE: usize = 128;

/// Writes `bytes` zero bytes from a buffer of `buffer_size`, each `write` sized by `sizing`,
/// counting in `written` what the kernel accepted (so a failure can say how far it got).
fn raw_fd_zeros(bytes: u64, buffer_size: usize, run: &mut Run) -> io::Result<()> {
    let Run {
        sizing, written, ..
    } = run;
    let buf = zeroed_buffer(usize::try_from(bytes).map_or(buffer_size, |b| b.min(buffer_size)));
    while *written < bytes {
        let want = usize::try_from(bytes - *written)
            .map_or(buf.len(), |rest| rest.min(buf.len()))
            .min(sizing.next_size());
        let n = RawStdout.write(&buf[..want])?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        sizing.wrote(n);
        *written += n as u64;
    }
    Ok(())
}
/// Splices `bytes` zero bytes into the pipe on standard output, `buffer_size` per call.
fn vmsplice_zeros(bytes: u64, buffer_size: usize, written: &mut u64) -> io::Result<()> {
    let region = zero_region(usize::try_from(bytes).map_or(buffer_size, |b| b.min(buffer_size)));
    while *written < bytes {
        let want = usize::try_from(bytes - *written).map_or(region.len(), |r| r.min(region.len()));
        // A partial call took the first `n` bytes; the next call starts again at the
        // region's beginning, which holds the same zeros.
        let iov = libc::iovec {
            iov_base: region.as_ptr().cast_mut().cast(),
            iov_len: want,
        };
        let n = retry_write(STDOUT_FD, || {
            // SAFETY: `iov` describes `want <= region.len()` bytes of the zero region, which
            // lives and stays unchanged for the rest of the process (module docs), so the
            // pipe may keep referring to its pages; the kernel only reads them.
            unsafe { libc::vmsplice(STDOUT_FD, &iov, 1, 0) }
        })?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        *written += n as u64;
    }
    Ok(())
}
/// Writes `bytes` zero bytes as [`RECORD_SIZE`]-byte records (the last one shorter) into a
/// [`StdoutWriter`] of `buffer_size` bytes whose writes are sized by `sizing` (which it
/// hands back updated), or that lends its buffers with `lender`.
fn bufwriter_zeros(
    bytes: u64,
    buffer_size: usize,
    lender: Option<Lender>,
    run: &mut Run,
) -> io::Result<()> {
    let Run {
        sizing,
        written,
        lent,
    } = run;
    // Opaque to the optimizer, as a program's own records are: a constant record of zeros
    // let the compiler store zeros instead of copying it, and whether it did moved with
    // unrelated code (1.4x on this loop between two builds, 26 Nov 2026).
    let record = std::hint::black_box([0u8; RECORD_SIZE]);
    let mut out = match lender {
        Some(lender) => bufwriter::lending_writer(lender),
        None => bufwriter::unchecked_writer(buffer_size, sizing.clone()),
    };
    let result = (|| {
        for _ in 0..bytes / RECORD_SIZE as u64 {
            out.write_all(&record)?;
        }
        out.write_all(&record[..(bytes % RECORD_SIZE as u64) as usize])?;
        out.flush()
    })();
    *written = out.written();
    *lent = out.lent();
    *sizing = bufwriter::writer_sizing(&out).clone();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_valid_ones() {
        for m in Method::ALL {
            assert_eq!(m.name().parse::<Method>().unwrap(), m);
        }
        let e = "nope".parse::<Method>().unwrap_err().to_string();
        assert!(e.contains("stdout, raw-fd, bufwriter, vmsplice"), "{e}");
    }
}
