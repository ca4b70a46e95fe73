//! `std-stream`: `pread`/`pwrite` of one fixed-size buffer, in place.
//!
//! **System calls**, replace: `posix_fadvise(POSIX_FADV_SEQUENTIAL)`, then per buffer a
//! `pread(2)` at offset *o*, the kernel's replace in the buffer, and a `pwrite(2)` of the
//! same bytes at the same offset *o* when at least one changed (a buffer without a match is
//! not written, so its pages stay clean); durable, a final `fdatasync(2)`. Truncate:
//! `pread` until the buffer holding the first `\n`, then `ftruncate(2)` and `fdatasync`.
//! Offsets are explicit, so a short read (fewer bytes than asked, which Linux may return
//! before the end of the file) is handled by continuing at *o + n*; the end is a read of 0.
//! **When it wins**: files of any size, with memory bounded by the one buffer
//! ([`DEFAULT_BUFFER_SIZE`], 1 MiB) whatever the file's size; the file's pages count as page
//! cache, not as the process's memory. On a warm cache it copies each byte twice (in and
//! out), which costs about what `mmap` pays in page faults; on a cold cache the reads are
//! large and sequential, which the device likes.
//! **Limits**: none beyond a regular file.
//! **How it fails**: an interrupted run leaves the buffers before the interruption replaced
//! and the rest not; replacing is idempotent, so running it again completes the edit. Each
//! write is made only if no other process changed the file since the last one, so a
//! concurrent truncation never becomes a hole of NULs ([`Error::Changed`], see
//! `docs/reliability.md`).

use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

use super::watch::Watch;
use super::{Error, Job, Phases, Replace, Result, read_at_retrying};

/// The buffer size: 1 MiB, large enough that the per-call cost is noise next to the copy,
/// small enough to stay in a current core's L2 cache between the read, the replace and the
/// write (the same size as [`crate::read::direct::DEFAULT_BUFFER_SIZE`]).
pub const DEFAULT_BUFFER_SIZE: usize = 1 << 20;

/// Finds the end of the first line (the length to keep, `\n` included), or `None` when
/// there is no newline; the caller truncates.
pub(crate) fn truncate(
    job: &Job<'_>,
    buffer_size: usize,
    phases: &mut Phases,
) -> Result<Option<u64>> {
    // The first line is usually short: start with a small read and grow to the full
    // buffer, so that keeping a 100-byte line does not read a megabyte.
    let mut buf = vec![0u8; buffer_size.min(FIRST_READ)];
    let mut offset = 0u64;
    loop {
        let n = phases
            .time("read", || read_at_retrying(job.file, &mut buf, offset))
            .map_err(|e| Error::io("read failed", e))?;
        if n == 0 {
            return Ok(None);
        }
        if let Some(at) = phases.time("find-newline", || memchr::memchr(b'\n', &buf[..n])) {
            return Ok(Some(offset + at as u64 + 1));
        }
        offset += n as u64;
        if buf.len() < buffer_size {
            buf.resize(buffer_size, 0);
        }
    }
}

/// The first read of a truncation: 64 KiB, one read for any first line shorter than that.
const FIRST_READ: usize = 64 << 10;

/// Replaces buffer by buffer in place, up to the length the file had when opened; returns
/// how many bytes changed. Every write is preceded by a check that nobody else changed the
/// file ([`Watch`]), so a truncation never turns into a hole and an append is never
/// overwritten.
pub(crate) fn replace(
    job: &Job<'_>,
    edit: &Replace,
    buffer_size: usize,
    watch: &mut Watch<'_>,
    phases: &mut Phases,
) -> Result<u64> {
    replace_range(job, edit, buffer_size, watch, phases, 0..job.len)
}

/// [`replace`] of the bytes in `range` alone.
pub(crate) fn replace_range(
    job: &Job<'_>,
    edit: &Replace,
    buffer_size: usize,
    watch: &mut Watch<'_>,
    phases: &mut Phases,
    range: std::ops::Range<u64>,
) -> Result<u64> {
    // SAFETY: posix_fadvise on an open descriptor is only a hint and has no memory effects;
    // its result does not matter (it doubles read-ahead on a cold file).
    unsafe { libc::posix_fadvise(job.file.as_raw_fd(), 0, 0, libc::POSIX_FADV_SEQUENTIAL) };
    let mut buf = vec![0u8; buffer_size];
    let mut offset = range.start;
    let mut changed = 0u64;
    while offset < range.end {
        let want = buf
            .len()
            .min(usize::try_from(range.end - offset).unwrap_or(usize::MAX));
        let n = phases
            .time("read", || {
                read_at_retrying(job.file, &mut buf[..want], offset)
            })
            .map_err(|e| Error::io("read failed", e))?;
        if n == 0 {
            // The end came early: the file shrank.
            watch.check(&format!("the read at byte {offset}"))?;
            break;
        }
        let here = phases.time("replace", || edit.apply(&mut buf[..n]));
        if here > 0 {
            phases.time("write", || {
                watch.guarded(
                    &format!("the write at byte {offset}"),
                    "write failed",
                    || job.file.write_all_at(&buf[..n], offset),
                )
            })?;
            watch.wrote(offset, n as u64)?;
            changed += here;
        }
        offset += n as u64;
    }
    Ok(changed)
}
