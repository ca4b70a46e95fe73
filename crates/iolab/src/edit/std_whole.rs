//! `std-whole`: the whole file read into one buffer, changed there, written back.
//!
//! This is the write-up's "standard I/O" version, made correct. **System calls**: `read(2)`
//! until end of file into a buffer reserved at the file's size, then `pwrite(2)` of the new
//! contents at offset 0 and `ftruncate(2)` to their length, then (durable) `fdatasync(2)`.
//! The write-up called `write_all` on the descriptor it had just read to the end, which
//! *appends* the new contents after the old ones instead of replacing them; writing at
//! offset 0 and setting the length leaves exactly the new contents, whatever the file
//! position. Nothing is written when nothing changed (no newline, or no byte matched).
//! **When it wins**: small files, where one read and one write are the fewest system calls
//! any strategy can make.
//! **Limits**: the file must fit in memory, twice over while it is also in the page cache.
//! Before reading, the size is checked against the memory it may use: by default 80% of
//! `MemAvailable` (see [`super::Editor::memory_limit`]); a larger file is refused with
//! [`Error::TooBigForMemory`] instead of the process being killed for it, as happened to
//! the write-up's version on an 18 GB file. A truncation reads the whole file too, to keep
//! one line.
//! **How it fails**: an interrupted write-back leaves a prefix of the new contents over the
//! old ones; both operations are idempotent, so running the edit again completes it.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;

use super::{Error, Job, Phases, Replace, Result, len_usize};

/// Keeps the bytes up to and including the first `\n`; returns the new length, or `None`
/// when there is no newline (the file is unchanged).
pub(crate) fn truncate(
    job: &Job<'_>,
    limit: Option<u64>,
    phases: &mut Phases,
) -> Result<Option<u64>> {
    let contents = read_whole(job, limit, phases)?;
    let Some(at) = phases.time("find-newline", || memchr::memchr(b'\n', &contents)) else {
        return Ok(None);
    };
    let kept = &contents[..=at];
    if kept.len() < contents.len() {
        write_back(job.file, kept, phases)?;
    }
    Ok(Some(kept.len() as u64))
}

/// Replaces in memory and writes the whole file back; returns how many bytes changed.
pub(crate) fn replace(
    job: &Job<'_>,
    edit: &Replace,
    limit: Option<u64>,
    phases: &mut Phases,
) -> Result<u64> {
    let mut contents = read_whole(job, limit, phases)?;
    let changed = phases.time("replace", || edit.apply(&mut contents));
    if changed > 0 {
        write_back(job.file, &contents, phases)?;
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

/// Writes `contents` at offset 0 and makes the file exactly that long.
fn write_back(file: &File, contents: &[u8], phases: &mut Phases) -> Result<()> {
    phases
        .time("write", || file.write_all_at(contents, 0))
        .map_err(|e| Error::io("write failed", e))?;
    phases
        .time("truncate", || file.set_len(contents.len() as u64))
        .map_err(|e| Error::io("cannot truncate", e))
}
