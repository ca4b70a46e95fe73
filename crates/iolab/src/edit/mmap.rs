//! `mmap`: the file mapped shared into memory and edited through the map.
//!
//! **System calls**, replace: `mmap(2)` of the whole file `PROT_READ|PROT_WRITE`,
//! `MAP_SHARED` (memmap2's `MmapMut`) and `madvise(MADV_SEQUENTIAL)`. Then, per 2 MiB
//! window ([`WINDOW`]): `memchr`/`memrchr` find the first and last match (reading faults
//! the pages in, with read-ahead), one `madvise(MADV_POPULATE_WRITE)` (Linux 5.14)
//! prefaults the pages between them writable, and the kernel replaces there with plain
//! stores. The durable variant ends with `msync(MS_SYNC)`, which writes the dirty pages
//! back and waits (`fdatasync` over the range), then `munmap(2)`.
//! Truncate: a read-only shared map (nothing is written through it), `memchr` for the
//! first `\n`, `munmap`, then `ftruncate(2)` and, durable, `fdatasync(2)`: a file must not
//! be shortened while mapped, so the map is dropped first.
//! **When it wins**: big files in the page cache, since no byte is copied between the
//! kernel and a buffer; and truncation, which reads only the pages up to the first
//! newline whatever the file's size. A window without a match is neither prefaulted nor
//! written, so its pages stay clean and are not written back (the kernel tracks dirtiness
//! per folio, which can be 2 MiB, so one changed byte may still write back that much).
//! **Limits**: a regular file with a real size that fits in the address space (any file
//! on 64-bit). Without the prefault (kernels before 5.14) every page takes a write fault,
//! which makes a warm replace about three times slower. On a cold cache the pages arrive
//! through page faults and read-ahead rather than large reads.
//! **How it fails**: if another process truncates the file while it is mapped, touching
//! the lost pages raises `SIGBUS`, which kills most mmap-based tools; iolab's guard
//! ([`crate::sys::sigbus`]) puts zeros in their place and the edit ends with
//! [`Error::ShrankWhileEdited`] (the prefault of a lost page gives the same error); an append or
//! a rename is caught by the check before each window and at the end
//! ([`Error::Changed`]). The bytes
//! before the new end may be partly replaced; running the edit again finishes it. A page
//! that cannot be read is reported by `madvise` as an error. An I/O error during
//! write-back is reported by `msync`; without the sync it is lost, as for any write that
//! is never synced.

use memmap2::{Advice, MmapMut, MmapOptions};

use super::watch::Watch;
use super::{Error, Job, Phases, Replace, Result, len_usize};
use crate::sys::sigbus;

/// The span the map is prefaulted and replaced in: 2 MiB (a huge page). Within each
/// window, the pages from the first match to the last are prefaulted writable with one
/// `madvise(MADV_POPULATE_WRITE)`, which costs a third of taking a write fault on each page
/// (0.15 s against 0.6 s for 1 GiB here). Prefaulting marks pages dirty whether or not they
/// change, so it is kept to the matches' span: a window without a match stays clean, and at
/// most one window's worth of unchanged pages per match is written back needlessly.
pub const WINDOW: usize = 2 << 20;

/// Finds the end of the first line through a read-only map (the length to keep, `\n`
/// included), or `None` when there is no newline; the caller truncates once it is unmapped.
pub(crate) fn truncate(job: &Job<'_>, phases: &mut Phases) -> Result<Option<u64>> {
    if job.len == 0 {
        // A zero-length mapping is invalid, and an empty file has no newline.
        return Ok(None);
    }
    let len = len_usize(job.len)?;
    // SAFETY: a read-only shared map of a regular file open for the duration of the map.
    // In Rust terms it is sound only while no other process writes the file; that cannot
    // be enforced. A process shrinking it is caught by the SIGBUS guard below.
    let map = phases
        .time("map", || unsafe {
            MmapOptions::new().len(len).map(job.file)
        })
        .map_err(|e| Error::io("mmap failed", e))?;
    let guard = sigbus::Guard::new(map.as_ptr(), len);
    let newline = phases.time("find-newline", || memchr::memchr(b'\n', &map));
    let shrank = guard.truncated();
    // The guard goes first: the address range must not be watched once it is unmapped.
    drop(guard);
    phases.time("unmap", || drop(map));
    if shrank {
        return Err(Error::ShrankWhileEdited);
    }
    Ok(newline.map(|at| at as u64 + 1))
}

/// Replaces through a writable shared map; returns how many bytes changed. When the job is
/// durable, syncs with `msync(MS_SYNC)` and records it as the `sync` phase.
pub(crate) fn replace(
    job: &Job<'_>,
    edit: &Replace,
    watch: &mut Watch<'_>,
    phases: &mut Phases,
) -> Result<u64> {
    replace_range(job, edit, watch, phases, 0..job.len, job.durable)
}

/// [`replace`] of the bytes in `range` alone (its start a multiple of the page size),
/// through a map of that range; syncs it with `msync(MS_SYNC)` when `sync` is set (else the
/// caller's `fdatasync` covers the pages, which unmapping leaves dirty in the page cache).
pub(crate) fn replace_range(
    job: &Job<'_>,
    edit: &Replace,
    watch: &mut Watch<'_>,
    phases: &mut Phases,
    range: std::ops::Range<u64>,
    sync: bool,
) -> Result<u64> {
    if range.is_empty() {
        return Ok(0);
    }
    let len = len_usize(range.end - range.start)?;
    // SAFETY: a shared writable map of a regular file open for reading and writing for the
    // duration of the map. In Rust terms it is sound only while no other process writes
    // the file; that cannot be enforced. A process shrinking it is caught by the SIGBUS
    // guard below instead of killing this one (see the module docs).
    let mut map = phases
        .time("map", || unsafe {
            MmapOptions::new()
                .offset(range.start)
                .len(len)
                .map_mut(job.file)
        })
        .map_err(|e| Error::io("mmap failed", e))?;
    // Only a hint (doubles read-ahead on a cold file); a failure changes nothing.
    let _ = map.advise(Advice::Sequential);
    let guard = sigbus::Guard::new(map.as_ptr(), len);
    let changed = replace_windows(&mut map, range.start, edit, watch, phases);
    let shrank = guard.truncated();
    drop(guard);
    // A shrunk file explains any other failure too (a prefault past the new end).
    let changed = if shrank {
        Err(Error::ShrankWhileEdited)
    } else {
        changed
    }?;
    if sync {
        phases
            .time("sync", || map.flush())
            .map_err(|e| Error::io("cannot sync (msync)", e))?;
    }
    phases.time("unmap", || drop(map));
    Ok(changed)
}

/// Replaces window by window (see [`WINDOW`]) in a map of the file from byte `base`;
/// returns how many bytes changed.
fn replace_windows(
    map: &mut MmapMut,
    base: u64,
    edit: &Replace,
    watch: &mut Watch<'_>,
    phases: &mut Phases,
) -> Result<u64> {
    let len = map.len();
    let mut changed = 0u64;
    for start in (0..len).step_by(WINDOW) {
        let end = len.min(start + WINDOW);
        let span = phases.time("find-matches", || {
            let window = &map[start..end];
            let first = memchr::memchr(edit.from, window)?;
            let last = memchr::memrchr(edit.from, window).unwrap_or(first);
            Some((start + first, start + last + 1))
        });
        let Some((first, end)) = span else {
            continue;
        };
        // Through a shared map there is no stale copy to write back (another process's
        // write lands in the same pages), but an append or a rename must stop the edit.
        watch.check(&format!("the replace at byte {}", base + first as u64))?;
        match phases.time("prefault", || {
            map.advise_range(Advice::PopulateWrite, first, end - first)
        }) {
            // Before Linux 5.14 there is no such advice: the writes fault page by page.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
            // EFAULT: a page past the end of a file that shrank under the map, which a
            // write would have met as SIGBUS.
            Err(e) if e.raw_os_error() == Some(libc::EFAULT) => {
                return Err(Error::ShrankWhileEdited);
            }
            // A page that cannot be read (EIO), memory exhausted (ENOMEM).
            Err(e) => return Err(Error::io("cannot fault the file in (madvise)", e)),
            Ok(()) => {}
        }
        changed += phases.time("replace", || edit.apply(&mut map[first..end]));
        watch.wrote(base + first as u64, (end - first) as u64)?;
    }
    Ok(changed)
}
