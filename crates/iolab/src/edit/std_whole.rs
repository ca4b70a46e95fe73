//! `std-whole`: the whole file read into one buffer, changed there, written back.
//!
//! This is the edit write-up's "standard I/O" version, made correct. **System calls**: `read(2)`
//! until end of file into a buffer reserved at the file's size, then (replace) one
//! `pwrite(2)` of the new contents at offset 0, or (truncate) one `ftruncate(2)`, then
//! (durable) `fdatasync(2)`. The edit write-up called `write_all` on the descriptor it had just
//! read to the end, which *appends* the new contents after the old ones instead of
//! replacing them; writing at offset 0 leaves exactly the new contents, whatever the file
//! position, and a replace never sets the length, so bytes another process appended are
//! never cut off. Nothing is written when nothing changed (no newline, or no byte matched).
//! **When it wins**: small files, where one read and one write are the fewest system calls
//! any strategy can make.
//! **Limits**: the file must fit in memory, twice over while it is also in the page cache.
//! Before reading, the size is checked against the memory it may use: by default 80% of
//! `MemAvailable` (see [`super::EditOptions::memory_limit`]); a larger file is refused with
//! [`Error::TooBigForMemory`] instead of the process being killed for it, as happened to
//! the edit write-up's version on an 18 GB file. A truncation reads the whole file too, to keep
//! one line.
//! **How it fails**: an interrupted write-back leaves a prefix of the new contents over the
//! old ones; both operations are idempotent, so running the edit again completes it. If
//! another process changed the file since it was read, the write-back is refused
//! ([`Error::Changed`], see `docs/reliability.md`).

use std::io::Read;
use std::os::unix::fs::FileExt;

use super::watch::Watch;
use super::{Error, Job, Phases, Replace, Result, len_usize};

/// Finds the end of the first line in the whole file read into memory (the length to keep,
/// `\n` included), or `None` when there is no newline; the caller truncates.
pub(crate) fn truncate(
    job: &Job<'_>,
    limit: Option<u64>,
    phases: &mut Phases,
) -> Result<Option<u64>> {
    let contents = read_whole(job, limit, phases)?;
    let at = phases.time("find-newline", || memchr::memchr(b'\n', &contents));
    Ok(at.map(|at| at as u64 + 1))
}

/// Replaces in memory and writes the whole file back at offset 0, if nobody changed it
/// since it was read ([`Watch`]); returns how many bytes changed. The length is left as it
/// is: bytes another process appends are never cut off.
pub(crate) fn replace(
    job: &Job<'_>,
    edit: &Replace,
    limit: Option<u64>,
    watch: &mut Watch<'_>,
    phases: &mut Phases,
) -> Result<u64> {
    let mut contents = read_whole(job, limit, phases)?;
    let changed = phases.time("replace", || edit.apply(&mut contents));
    if changed > 0 {
        phases.time("write", || {
            watch.guarded("writing it back", "write failed", || {
                job.file.write_all_at(&contents, 0)
            })
        })?;
        watch.wrote(0, contents.len() as u64)?;
    }
    Ok(changed)
}

/// Reads the file from offset 0 to its end, after checking that it fits in `limit`.
fn read_whole(job: &Job<'_>, limit: Option<u64>, phases: &mut Phases) -> Result<Vec<u8>> {
    if let Some(limit) = limit
        && job.len > limit
    {
        return Err(Error::TooBigForMemory {
            len: job.len,
            limit,
        });
    }
    let len = len_usize(job.len)?;
    let mut contents = Vec::new();
    contents
        .try_reserve_exact(len)
        .map_err(|_| Error::TooBigForAddressSpace { len: job.len })?;
    phases.time("read", || {
        // Up to the length from fstat: a file that grows meanwhile is edited up to the
        // length it had, as the other strategies do. `read_to_end` into the reserved
        // capacity neither zeroes it first nor reallocates. The descriptor was just
        // opened, so its position is 0.
        (&*job.file)
            .take(job.len)
            .read_to_end(&mut contents)
            .map_err(|e| Error::io("read failed", e))?;
        Ok(contents)
    })
}
