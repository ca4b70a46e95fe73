//! Write methods: how a stream of bytes leaves a program through standard output.
//!
//! Each method lives in its own file, whose module doc says which system calls it makes,
//! when it wins, its limits and how it fails. All of them write `N` zero bytes to file
//! descriptor 1 ([`write_zeros`], the engine of `iolab write`), so the benchmark can
//! compare them on the same sinks.
//!
//! | name | module | system calls |
//! |---|---|---|
//! | `stdout` | [`stdout`] | `write` through Rust's `std::io::stdout().lock()` (line-buffered) |
//! | `raw-fd` | [`raw_fd`] | `write` of a whole buffer straight to fd 1 |
//! | `bufwriter` | [`bufwriter`] | small records copied into a [`StdoutWriter`]: into a pipe, its buffers' pages lent with `vmsplice` ([`lend`]); elsewhere one `write` per full buffer |
//! | `vmsplice` | [`vmsplice`] | `vmsplice`: the buffer's pages are handed to the pipe, not copied |
//!
//! For programs that print, [`StdoutWriter`] is the library's answer: into a pipe it lends
//! the pages of a ring of buffers to the pipe instead of copying them ([`lend`], with what a
//! reader that `tee`s sees); otherwise it is not line-buffered,
//! sized by [`default_buffer_size`], EINTR and short writes handled, `EPIPE`, `ENOSPC` and a
//! closed descriptor turned into clear [`Error`]s, flushed on drop.
//!
//! **The buffer-size rule** ([`default_buffer_size`]): a pipe's capacity, and `pv`'s
//! `st_blksize × 32` for anything else, both clamped to 64 KiB..=1 MiB. Into a regular
//! file, a size `iolab bench write` measured beating the rule's beyond the noise on this
//! machine and device replaces it ([`default_buffer`]). That is the buffer; into a pipe, the default writes it out in pieces whose size it measures
//! ([`adaptive`]), and `vmsplice` first enlarges the pipe ([`vmsplice`]).
//!
//! **Why pipes need more than a size**: into a pipe, the best size per `write` depends on
//! where the reader runs. On another CPU (the scheduler's usual choice), writes of up to
//! 8 KiB stream, with neither side sleeping; a larger write holds the pipe's lock for its
//! whole copy, and one that fills the pipe makes both sides sleep and wake each other
//! across CPUs. On the writer's CPU every write wakes the reader, which preempts the
//! writer, so fewer, larger writes win. A writer cannot see where its reader runs, but it
//! can count its own involuntary context switches, and the default does ([`adaptive`]).
//! A writer slower than its reader (Rust's `stdout`, with its newline search) does not
//! stream at any size: the reader empties the pipe and must be woken by every write. Into
//! a regular file and `/dev/null`, throughput rises to 32–64 KiB and then stays flat:
//! 128 KiB is on both plateaus (evidence: docs/findings/write.md).

pub mod adaptive;
pub mod bufwriter;
pub mod destination;
pub mod lend;
pub mod raw_fd;
pub mod vmsplice;

use std::io;

#[cfg(any(test, feature = "lab"))]
pub use adaptive::Sizing;
pub use bufwriter::StdoutWriter;
pub use destination::{Destination, DestinationKind, probe_stdout};

use crate::buf::AlignedBuf;
use crate::error::Error;

/// The smallest buffer the rule picks: 64 KiB, the default pipe capacity on Linux, where
/// every sink of the sweep had reached its plateau (32 KiB was 20–30% slower into a pipe).
pub const MIN_DEFAULT_BUFFER_SIZE: usize = 64 * 1024;
/// The largest buffer the rule picks: 1 MiB, the default `/proc/sys/fs/pipe-max-size` and
/// the top of the sweep (nothing beyond it was measured).
pub const MAX_DEFAULT_BUFFER_SIZE: usize = 1 << 20;
/// `pv`'s multiplier of `st_blksize` for sinks that are not pipes (`sz = sb.st_blksize *
/// 32` in pv's source): 128 KiB for the usual 4 KiB.
pub const BLOCKS_PER_BUFFER: u64 = 32;
/// The largest buffer a caller may ask for: 1 GiB. Buffers are allocated and touched up
/// front, so a typo such as `--buffer 1T` must fail instead of exhausting memory.
pub const MAX_BUFFER_SIZE: usize = 1 << 30;

/// How to write to standard output: [`WriteOptions::stdout`] makes a [`StdoutWriter`]
/// with them.
#[derive(Clone, Debug, Default)]
pub struct WriteOptions {
    buffer_size: Option<usize>,
    pipe_capacity: Option<usize>,
    lend_pages: Option<bool>,
}

impl WriteOptions {
    /// Options with every default.
    pub fn new() -> WriteOptions {
        WriteOptions::default()
    }

    /// The buffer's capacity, every write of it whole, clamped to 1 B..=1 GiB.
    ///
    /// By default, a pipe's capacity, else `st_blksize` × 32 (128 KiB for the usual
    /// 4 KiB), either clamped to 64 KiB..=1 MiB, or into a regular file the size `iolab
    /// bench write` measured beating it on this machine ([`StdoutWriter::why`] says which);
    /// into a pipe it is written out in pieces whose size adapts (8 KiB or the whole
    /// buffer).
    pub fn buffer_size(mut self, bytes: usize) -> WriteOptions {
        self.buffer_size = Some(bytes.clamp(1, MAX_BUFFER_SIZE));
        self
    }

    /// Asks the kernel to resize the pipe on standard output (`F_SETPIPE_SZ`) before
    /// writing; the kernel rounds up to a power-of-two number of pages, and an unprivileged
    /// process may not go beyond `/proc/sys/fs/pipe-max-size`. Ignored when standard
    /// output is not a pipe.
    ///
    /// By default, the pipe is left as it is.
    pub fn pipe_capacity(mut self, bytes: usize) -> WriteOptions {
        self.pipe_capacity = Some(bytes.max(1));
        self
    }

    /// Whether the writer lends its buffers' pages to a pipe on standard output
    /// (`vmsplice`) instead of copying them into it (`write`). Ignored when standard output
    /// is not a pipe; a kernel that refuses `vmsplice` gets `write`s.
    ///
    /// A lent buffer is written again only after 4 × the pipe's capacity has been lent
    /// after it, by which time the pipe, which holds at most its capacity, has let go of
    /// it. So lending is safe for a reader that `read`s or `splice`s the pipe. A reader that
    /// moves the pages on instead of copying them (`tee(2)` or `splice(2)` into other pipes
    /// or a socket) keeps them referenced outside this pipe: as long as what it holds so
    /// stays under 3 × the pipe's capacity (`pv`'s 64 KiB pipe, two 1 MiB pipes after a
    /// 1 MiB one), it sees the bytes written; beyond that it may see bytes written later
    /// into the same buffer. Turn lending off for such a reader.
    ///
    /// By default, on into a pipe when no [`WriteOptions::buffer_size`] is given (it was
    /// faster into every reader measured: docs/findings/write.md), off with one.
    pub fn lend_pages(mut self, lend: bool) -> WriteOptions {
        self.lend_pages = Some(lend);
        self
    }

    /// The buffer size asked for, if any ([`WriteOptions::buffer_size`]).
    pub fn buffer_size_asked(&self) -> Option<usize> {
        self.buffer_size
    }

    /// The pipe capacity asked for, if any ([`WriteOptions::pipe_capacity`]).
    pub fn pipe_capacity_asked(&self) -> Option<usize> {
        self.pipe_capacity
    }

    /// Whether lending was asked for or refused, if either ([`WriteOptions::lend_pages`]).
    pub fn lend_pages_asked(&self) -> Option<bool> {
        self.lend_pages
    }
}

/// The buffer size iolab picks for `destination`: a pipe's capacity, else its
/// `st_blksize` × [`BLOCKS_PER_BUFFER`]; either clamped to
/// [`MIN_DEFAULT_BUFFER_SIZE`]..=[`MAX_DEFAULT_BUFFER_SIZE`]. The measurements behind the
/// rule: docs/findings/write.md.
pub fn default_buffer_size(destination: &Destination) -> usize {
    let preferred = match (destination.kind, destination.pipe_capacity) {
        (DestinationKind::Pipe, Some(capacity)) => capacity,
        _ => usize::try_from(destination.block_size.saturating_mul(BLOCKS_PER_BUFFER))
            .unwrap_or(MAX_DEFAULT_BUFFER_SIZE),
    };
    preferred.clamp(MIN_DEFAULT_BUFFER_SIZE, MAX_DEFAULT_BUFFER_SIZE)
}

/// The buffer iolab picks for `destination`, standard output, and why: into a regular
/// file, the size `iolab bench write` measured beating the rule's beyond the noise on this
/// machine, for files on the device it ran on ([`crate::lab::profile`]); else the
/// rule, [`default_buffer_size`].
pub fn default_buffer(destination: &Destination) -> (usize, String) {
    let profile = match destination.kind {
        DestinationKind::RegularFile => crate::profile::load_checked(),
        _ => Err(String::new()),
    };
    buffer_from(
        &profile,
        destination,
        std::path::Path::new("/proc/self/fd/1"),
    )
}

/// [`default_buffer`] with `profile`, for a destination at `path`.
fn buffer_from(
    profile: &std::result::Result<crate::profile::Profile, String>,
    destination: &Destination,
    path: &std::path::Path,
) -> (usize, String) {
    use crate::profile::{Strategies, size_for};
    let rule = default_buffer_size(destination);
    let why_not = match destination.kind {
        DestinationKind::RegularFile => match size_for(profile, Strategies::Write, "file", path) {
            Ok((bytes, source)) => {
                let bytes = usize::try_from(bytes).unwrap_or(MAX_WRITE_BUFFER);
                return (bytes.clamp(1, MAX_WRITE_BUFFER), source);
            }
            Err(why) => why,
        },
        kind => format!("{} follows the rule", kind.describe()),
    };
    (
        rule,
        format!(
            "the rule, {} ({why_not})",
            crate::units::format_bytes(rule as u64)
        ),
    )
}

/// The largest buffer a profile may set: 64 MiB.
const MAX_WRITE_BUFFER: usize = 64 << 20;

/// Classifies a failed write to standard output after `written` bytes. An error that
/// already carries an [`Error`] (from [`StdoutWriter`]) is unwrapped rather than wrapped
/// twice.
pub fn from_write(e: io::Error, written: u64) -> Error {
    if e.get_ref().is_some_and(|inner| inner.is::<Error>()) {
        let inner = e.into_inner().expect("checked above");
        return match inner.downcast::<Error>() {
            Ok(mut error) => {
                // The writer knew how much it had passed on; the caller knows better.
                if let Error::BrokenPipe { written: w, .. }
                | Error::StdoutNoSpace { written: w, .. } = &mut *error
                {
                    *w = written;
                }
                *error
            }
            Err(other) => Error::io("cannot write to standard output", io::Error::other(other)),
        };
    }
    match e.raw_os_error() {
        Some(libc::EPIPE) => Error::BrokenPipe {
            written,
            unflushed: 0,
            source: e,
        },
        Some(libc::ENOSPC | libc::EDQUOT) => Error::StdoutNoSpace {
            written,
            unflushed: 0,
            source: e,
        },
        Some(libc::EBADF) => Error::StdoutClosed {
            why: "file descriptor 1 is not open for writing",
        },
        _ => Error::io("cannot write to standard output", e),
    }
}

/// A zero-filled, page-aligned buffer of `len` bytes whose pages are really allocated.
///
/// `vec![0; len]` comes from `calloc`, and a large one from fresh `mmap` pages that all
/// map the kernel's single shared zero page until written. Copying out of such a buffer
/// reads the same 4 KiB over and over, from L1, and flatters every method; `yes` and `dd`
/// copy from real memory. So one byte per page is written (volatile, so the compiler cannot
/// drop the store as redundant), which gives each page its own frame.
///
/// The start is aligned to [`PAGE_ALIGN`]: the kernel copies each piece into a fresh,
/// page-aligned pipe page, and a source off a cache line is slower to copy: a C writer
/// whose buffer sat 16 bytes past a page moved 11.5–11.8 GB/s against 13.5–14.0
/// page-aligned. `malloc` only promises 16 bytes, so the speed of a `Vec` buffer would be
/// luck (evidence: docs/findings/write.md).
pub fn zeroed_buffer(len: usize) -> AlignedBuf {
    let mut buf = AlignedBuf::new(len, PAGE_ALIGN);
    touch_pages(&mut buf);
    buf
}

/// The alignment of the write methods' buffers: 4 KiB, a page on x86-64 and aarch64.
pub const PAGE_ALIGN: usize = 4096;

/// The page size assumed when touching buffers: 4 KiB, the smallest page on x86-64 and
/// aarch64; touching more often than needed on larger-page systems is harmless.
const TOUCH_STRIDE: usize = 4096;

fn touch_pages(buf: &mut [u8]) {
    for i in (0..buf.len()).step_by(TOUCH_STRIDE) {
        // SAFETY: `i < buf.len()`, so the pointer is in bounds, aligned (u8) and writable
        // through the unique borrow `buf`.
        unsafe { std::ptr::write_volatile(buf.as_mut_ptr().add(i), 0) };
    }
}

/// Retries `f` while it fails with `EINTR`, and waits for `fd` to become writable while it
/// fails with `EAGAIN` (a non-blocking descriptor inherited from the caller).
pub fn retry_write(fd: libc::c_int, mut f: impl FnMut() -> libc::ssize_t) -> io::Result<usize> {
    loop {
        let n = f();
        if let Ok(n) = usize::try_from(n) {
            return Ok(n);
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => wait_writable(fd)?,
            _ => return Err(e),
        }
    }
}

/// Blocks until `fd` can be written (or has an error that the next write will report).
fn wait_writable(fd: libc::c_int) -> io::Result<()> {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLOUT,
        revents: 0,
    };
    loop {
        // SAFETY: `pfd` is one valid, writable `pollfd`, and the count says one.
        let rc = unsafe { libc::poll(&mut pfd, 1, -1) };
        if rc >= 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn into_a_file_the_measured_size_replaces_the_rule_elsewhere_the_rule_stays() {
        use crate::profile::{Profile, StrategyWinner};
        let file = Destination {
            kind: DestinationKind::RegularFile,
            block_size: 4096,
            pipe_capacity: None,
        };
        let here = std::env::temp_dir();
        let profile = |bytes| {
            Ok(Profile {
                write: vec![StrategyWinner {
                    condition: "file".into(),
                    method: "bufwriter".into(),
                    runner_up: "the rule's buffer".into(),
                    lead: 1.2,
                    measured_at: "2026-11-26T10:00:00Z".into(),
                    device: None,
                    bytes,
                }],
                ..Profile::default()
            })
        };
        let (size, why) = buffer_from(&profile(Some(1 << 20)), &file, &here);
        assert_eq!(size, 1 << 20);
        assert!(why.contains("file winner"), "{why}");
        let (size, why) = buffer_from(&profile(None), &file, &here);
        assert_eq!(size, default_buffer_size(&file));
        assert!(why.contains("has no size"), "{why}");
        let (size, why) = buffer_from(&Err("no profile of this machine yet".into()), &file, &here);
        assert_eq!(size, 128 << 10);
        assert_eq!(why, "the rule, 128 KiB (no profile of this machine yet)");
        let null = Destination {
            kind: DestinationKind::Null,
            ..file
        };
        let (size, why) = buffer_from(&profile(Some(1 << 20)), &null, &here);
        assert_eq!(size, default_buffer_size(&null));
        assert!(why.contains("/dev/null follows the rule"), "{why}");
    }

    #[test]
    fn the_rule_takes_the_pipe_capacity_or_32_blocks_and_clamps() {
        let pipe = |cap| Destination {
            kind: DestinationKind::Pipe,
            block_size: 4096,
            pipe_capacity: Some(cap),
        };
        assert_eq!(default_buffer_size(&pipe(64 << 10)), 64 << 10);
        assert_eq!(default_buffer_size(&pipe(4096)), MIN_DEFAULT_BUFFER_SIZE);
        assert_eq!(default_buffer_size(&pipe(256 << 10)), 256 << 10);
        assert_eq!(default_buffer_size(&pipe(1 << 30)), MAX_DEFAULT_BUFFER_SIZE);
        let file = |block_size| Destination {
            kind: DestinationKind::RegularFile,
            block_size,
            pipe_capacity: None,
        };
        assert_eq!(default_buffer_size(&file(4096)), 128 << 10);
        assert_eq!(default_buffer_size(&file(0)), MIN_DEFAULT_BUFFER_SIZE);
        assert_eq!(default_buffer_size(&file(1 << 20)), MAX_DEFAULT_BUFFER_SIZE);
        assert_eq!(
            default_buffer_size(&file(u64::MAX)),
            MAX_DEFAULT_BUFFER_SIZE
        );
    }

    #[test]
    fn write_errors_are_classified() {
        let e = from_write(io::Error::from_raw_os_error(libc::EPIPE), 7);
        assert!(e.is_broken_pipe());
        let e = from_write(io::Error::from_raw_os_error(libc::ENOSPC), 9);
        assert!(matches!(e, Error::StdoutNoSpace { written: 9, .. }));
        assert_eq!(
            e.to_string(),
            "cannot write to standard output: No space left on device after 9 bytes \
             (free some space or write elsewhere)"
        );
        let e = from_write(io::Error::from_raw_os_error(libc::EBADF), 0);
        assert!(matches!(e, Error::StdoutClosed { .. }));
        // An error already classified by the writer keeps its class.
        let wrapped = io::Error::new(
            io::ErrorKind::StorageFull,
            from_write(io::Error::from_raw_os_error(libc::ENOSPC), 1),
        );
        assert!(matches!(
            from_write(wrapped, 5),
            Error::StdoutNoSpace { written: 5, .. }
        ));
    }

    #[test]
    fn zeroed_buffers_are_zero() {
        for len in [0, 1, 4095, 4096, 4097, 1 << 20] {
            let buf = zeroed_buffer(len);
            assert_eq!(buf.len(), len.max(1));
            assert_eq!(buf.as_ptr() as usize % PAGE_ALIGN, 0);
            assert!(buf.iter().all(|&b| b == 0));
        }
    }
}
