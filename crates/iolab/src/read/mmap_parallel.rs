//! `mmap-parallel`: the file mapped once and its parts scanned by several threads.
//!
//! **System calls**: those of [`super::mmap`] (`mmap`, optional `MAP_POPULATE` and
//! `madvise`), plus one `clone(2)` per extra thread. Each thread scans one contiguous part
//! of the map with the fastest kernel and takes its own page faults, so both the scan and
//! the page-table work run on every core.
//! **When it wins**: big files in the page cache: one core's scan plus its page faults
//! cannot saturate memory bandwidth; all cores together come close.
//! **Limits**: the task must be splittable ([`SplitTask`]); any other task is fed the whole
//! map in order on one thread. Parts are at least [`MIN_PART`], so small files use fewer
//! threads (one below 2 × `MIN_PART`), and a thread is never started for nothing. A file
//! truncated meanwhile gives [`crate::Error::FileShrank`], as for `mmap`.

use super::{CountMethod, ReadOptions, mmap};
use crate::error::Result;
use crate::input::Input;
use crate::task::SplitTask;

/// The smallest part worth a thread: 8 MiB, about a millisecond of scanning, far more than
/// the few tens of microseconds a thread costs to start.
pub const MIN_PART: usize = 8 << 20;
/// Parts start at multiples of this: 2 MiB, a huge page, so no two threads touch one.
const PART_ALIGN: usize = 2 << 20;

/// Maps `input` and scans it with `options`' threads (default: the available cores).
/// Returns the bytes delivered.
pub fn read_split<T: SplitTask>(input: &Input, options: &ReadOptions, task: &mut T) -> Result<u64> {
    let Some(map) = mmap::map(input, CountMethod::MmapParallel.name(), options)? else {
        return Ok(0);
    };
    let data = mmap::from_start(&map, input);
    mmap::guarded(&map, || {
        feed_parallel(data, options.threads_or_cores(), task)
    })?;
    Ok(data.len() as u64)
}

/// Splits `data` into at most `threads` parts of at least [`MIN_PART`] bytes and feeds
/// them to forks of `task` on scoped threads (the calling thread takes the last part).
pub fn feed_parallel<T: SplitTask>(data: &[u8], threads: usize, task: &mut T) {
    let parts = threads.min(data.len() / MIN_PART).max(1);
    if parts == 1 {
        task.feed(data);
        return;
    }
    let part_len = data.len().div_ceil(parts).next_multiple_of(PART_ALIGN);
    let mut chunks = data.chunks(part_len);
    let last = chunks.next_back().unwrap_or(&[]);
    let results: Vec<T> = std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .map(|chunk| {
                let mut part = task.fork();
                scope.spawn(move || {
                    part.feed(chunk);
                    part
                })
            })
            .collect();
        let mut tail = task.fork();
        tail.feed(last);
        let mut done: Vec<T> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect();
        done.push(tail);
        done
    });
    for part in results {
        task.join(part);
    }
}
