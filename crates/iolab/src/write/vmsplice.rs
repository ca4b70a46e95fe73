//! `vmsplice`: the buffer's pages are handed to the pipe on standard output, not copied.
//!
//! **System calls**: `vmsplice(1, {buf, B}, 1, 0)` repeated until `N` bytes are in (a call
//! moves at most the pipe's free space and returns how much it took; `EINTR` is retried,
//! `EAGAIN` waited on with `poll`).
//! **When it wins**: into a pipe whose reader does not copy either (`splice` to a file or
//! to `/dev/null`, as `pv` and the benchmark's reader do): no byte is copied end to end, and
//! the cost is the page bookkeeping (2× `raw-fd` through a default pipe, 4× through one
//! enlarged to 1 MiB). Into a reader that `read`s, the reader's copy remains.
//! **Its default** (`enlarge_pipe`, `default_chunk`): without `--buffer` and
//! `--pipe-size`, it enlarges the pipe to `min(pipe-max-size, 1 MiB)` and splices 256 KiB
//! per call, so the pipe holds four calls' pages and neither side waits for a whole pipe
//! (evidence: docs/findings/write.md). A refused resize (`EPERM` past the user's pipe
//! quota) keeps the pipe and 64 KiB calls.
//! The region sits on transparent huge pages when the kernel grants them
//! (`MADV_HUGEPAGE`), as the fastest known pipe writers do; `SPLICE_F_GIFT` is not used:
//! the region is shared and reused, which gifting forbids (below), though a C prototype
//! gained 6% with it.
//! **Limits**: standard output must be a pipe (anything else is `EBADF`, which is why
//! [`super::Method::refuses`] checks first). The pipe then holds references to *our* pages
//! until the reader has consumed them, possibly after we return or even exit: the bytes
//! the reader sees are whatever the pages hold *then*. (Gifting them with `SPLICE_F_GIFT`
//! would promise never to touch them again, which a reused buffer cannot.) So this method
//! only ever splices [`zero_region`]: a buffer allocated once per process, filled with
//! zeros, never written again and never freed (leaked on purpose); a pipe reference to it
//! stays valid, and its content stays zero, for as long as the kernel holds it.
//! **How it fails**: `EPIPE` when the reader went away; `ENOSYS` on a kernel without it
//! ([`availability`]).

use std::io;
use std::sync::{Mutex, OnceLock};

use super::zeroed_buffer;
use crate::buf::AlignedBuf;

/// Standard output's file descriptor.
const STDOUT_FD: libc::c_int = 1;

/// The zero region handed out so far (the largest one; smaller requests share it).
static ZERO_REGION: Mutex<&'static [u8]> = Mutex::new(&[]);

/// A zero-filled region of at least `len` bytes that lives, unmodified, until the process
/// exits. A larger request leaks a new, larger region; older regions stay leaked too,
/// since pipes may still hold their pages.
pub fn zero_region(len: usize) -> &'static [u8] {
    let mut region = ZERO_REGION.lock().unwrap_or_else(|e| e.into_inner());
    if region.len() < len {
        *region = huge_zero_region(len).unwrap_or_else(|| {
            let leaked: &'static AlignedBuf = Box::leak(Box::new(zeroed_buffer(len)));
            &leaked[..len]
        });
    }
    let whole: &'static [u8] = *region;
    &whole[..len]
}

/// A transparent huge page on x86-64: 2 MiB.
const HUGE_PAGE: usize = 2 << 20;

/// A zero region of at least `len` bytes on 2 MiB-aligned memory advised `MADV_HUGEPAGE`,
/// so the pipe refers to a few huge pages instead of many small ones: into a `splice`
/// reader a C prototype moved 46 GB/s this way against 28 with small pages. The advice is
/// only advice; the mapping is never unmapped (module docs). `None` when `mmap` fails.
fn huge_zero_region(len: usize) -> Option<&'static [u8]> {
    let size = len.max(1).next_multiple_of(HUGE_PAGE);
    let map_len = size + HUGE_PAGE;
    // SAFETY: a new private anonymous mapping; no file, no address hint.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            map_len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    let start = (p as usize).next_multiple_of(HUGE_PAGE) as *mut u8;
    // SAFETY: `start` is within HUGE_PAGE of `p`, so `[start, start + size)` lies in the
    // mapping; madvise only changes how the kernel backs it (a failure leaves small pages).
    unsafe { libc::madvise(start.cast(), size, libc::MADV_HUGEPAGE) };
    // SAFETY: `[start, start + size)` is mapped readable and writable, zero-filled, and
    // never unmapped or handed out elsewhere: this is its only reference, leaked.
    let buf: &'static mut [u8] = unsafe { std::slice::from_raw_parts_mut(start, size) };
    super::touch_pages(buf);
    Some(buf)
}

/// Whether the kernel has `vmsplice`: probed once, by splicing one byte of the zero
/// region into a fresh pipe.
pub fn availability() -> Result<(), String> {
    static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
    PROBE.get_or_init(probe).clone()
}

fn probe() -> Result<(), String> {
    use std::os::fd::AsRawFd;
    let (_reader, writer) =
        io::pipe().map_err(|e| format!("cannot make a pipe to probe vmsplice: {e}"))?;
    let region = zero_region(1);
    let iov = libc::iovec {
        iov_base: region.as_ptr().cast_mut().cast(),
        iov_len: 1,
    };
    // SAFETY: `iov` describes one byte of the zero region, which lives and stays unchanged
    // for the rest of the process (module docs); the kernel only reads it.
    let n = unsafe { libc::vmsplice(writer.as_raw_fd(), &iov, 1, 0) };
    if n == 1 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    Err(match e.raw_os_error() {
        Some(libc::ENOSYS) => "this kernel has no vmsplice system call".to_string(),
        Some(libc::EPERM) => "vmsplice is blocked here (seccomp filter?)".to_string(),
        _ => format!("vmsplice failed: {}", crate::error::describe_io(&e)),
    })
}

/// The largest pipe capacity vmsplice's default asks for: 1 MiB, the default
/// `/proc/sys/fs/pipe-max-size` (a larger maximum is left to `--pipe-size`).
pub const DEFAULT_PIPE_CAPACITY: usize = 1 << 20;
/// The default splice size is the pipe's capacity divided by this: 4, so the pipe holds
/// several calls' pages and the reader never waits for a whole pipe (256 KiB in 1 MiB).
pub const CHUNKS_PER_PIPE: usize = 4;

/// Enlarges the pipe on standard output to `min(pipe-max-size, 1 MiB)`, when that is
/// larger than it is; returns the capacity it has, or `None` when the kernel refused.
pub fn enlarge_pipe() -> Option<usize> {
    let max = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .unwrap_or(DEFAULT_PIPE_CAPACITY)
        .min(DEFAULT_PIPE_CAPACITY);
    let now = super::destination::pipe_capacity_of(STDOUT_FD).ok()?;
    if now >= max {
        return Some(now);
    }
    super::destination::set_pipe_capacity(max).ok()
}

/// vmsplice's default bytes per call: a quarter of the pipe ([`CHUNKS_PER_PIPE`]), at
/// least 64 KiB (today's default) when the pipe could not be enlarged.
pub fn default_chunk(destination: &super::Destination) -> usize {
    match destination.pipe_capacity {
        Some(c) if c >= DEFAULT_PIPE_CAPACITY => c / CHUNKS_PER_PIPE,
        _ => super::default_buffer_size(destination),
    }
}
