//! `stream`: one sequential stream of reads, with the kernel's read-ahead kept ahead of it.
//!
//! **System calls**: `posix_fadvise(POSIX_FADV_SEQUENTIAL)` once (Linux doubles the file's
//! read-ahead window for this descriptor), then `read(2)` of [`DEFAULT_BUFFER_SIZE`] bytes
//! until it returns 0, from the file's current position. With the `readahead` hint it also
//! asks for the next [`WINDOW`] with `posix_fadvise(POSIX_FADV_WILLNEED)` each time the
//! reads enter a new window, so that the device always has the next window to work on
//! while the current one is copied and counted.
//! **When it wins**: it is what `wc -l` does (one stream of small reads, the device kept
//! busy by the kernel's asynchronous read-ahead), with a SIMD kernel behind it, and the
//! device serves one place at a time, where parallel streams (`mmap-parallel`,
//! `pread-parallel`) make it serve two. Cold on this machine's virtual disk it led some
//! interleaved sets and trailed `wc -l` in others (evidence: docs/findings/count.md), so it
//! is a candidate the `count` suite measures, not the default. Warm it copies every byte
//! once (below `mmap-parallel`).
//! **Limits**: one core reads and counts; works on every kind of input (the hints only on
//! regular files). Memory is one buffer.
//! **How it fails**: a failing `read` is [`crate::Error::Io`]; the advice is only a hint
//! and its failure is ignored.

use std::io::{ErrorKind, Read};

use super::{CountHint, ReadOptions};
use crate::error::{Error, Result};
use crate::input::{FileKind, Input};
use crate::task::Task;

/// Bytes per read: 16 KiB, as GNU `wc` reads. Small reads leave the kernel's asynchronous
/// read-ahead in charge (a read waits only for the pages it needs), where a large read
/// waits for its whole range (docs/findings/count.md, "Larger `stream` reads").
pub const DEFAULT_BUFFER_SIZE: usize = 16 << 10;
/// The read-ahead window asked for ahead of the reads with the `readahead` hint: 32 MiB.
pub const WINDOW: u64 = 32 << 20;

/// Feeds all of `input` to `task`, one read at a time.
pub fn read(input: &Input, options: &ReadOptions, task: &mut dyn Task) -> Result<()> {
    let regular = input.kind() == FileKind::Regular;
    if regular {
        // SAFETY: posix_fadvise on an open descriptor has no memory effects; a hint.
        unsafe { libc::posix_fadvise(input.fd(), 0, 0, libc::POSIX_FADV_SEQUENTIAL) };
    }
    let ahead = regular && options.has_hint(CountHint::Readahead);
    let mut buf = vec![0u8; options.buffer_size_or(DEFAULT_BUFFER_SIZE)];
    let mut file = input.file();
    let mut offset = input.start();
    let mut next_window = offset;
    loop {
        if ahead && offset >= next_window {
            let from = next_window + WINDOW;
            // SAFETY: as above: a hint on an open descriptor.
            unsafe {
                libc::posix_fadvise(
                    input.fd(),
                    from as libc::off_t,
                    WINDOW as libc::off_t,
                    libc::POSIX_FADV_WILLNEED,
                )
            };
            next_window += WINDOW;
        }
        let n = match file.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io("read failed", e)),
        };
        task.feed(&buf[..n]);
        offset += n as u64;
    }
}
