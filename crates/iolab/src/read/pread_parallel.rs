//! `pread-parallel`: several threads, each reading its own range of the file with `pread`.
//!
//! **System calls**: `pread(2)` of [`DEFAULT_BUFFER_SIZE`] bytes per thread at a time,
//! each thread on its own contiguous range, plus `readahead(2)` of the range with the
//! `readahead` hint and `posix_fadvise(2)` with `sequential`/`willneed`.
//! **When it wins**: cold files on devices that serve several requests at once: every
//! thread's read-ahead stream keeps the device busy, where one thread waits for each read
//! in turn. Warm, it spreads the copy out of the page cache over all cores.
//! **Limits**: the task must be splittable ([`SplitTask`]); any other task is fed in order
//! by one thread. Ranges are at least [`MIN_RANGE`], so small files use fewer threads.
//! Reads until each range is done or the file ends early (it may shrink meanwhile).

use std::os::unix::fs::FileExt;

use super::{CountHint, ReadOptions, retry_eintr};
use crate::error::{Error, Result};
use crate::input::Input;
use crate::task::{SplitTask, Task};

/// Bytes per read: 1 MiB.
pub const DEFAULT_BUFFER_SIZE: usize = 1 << 20;
/// The smallest range worth a thread: 8 MiB.
pub const MIN_RANGE: u64 = 8 << 20;

const METHOD: &str = "pread-parallel";

/// Reads `input` with `options`' threads (default: the available cores). Returns the bytes
/// delivered.
pub fn read_split<T: SplitTask>(input: &Input, options: &ReadOptions, task: &mut T) -> Result<u64> {
    let len = input.sized_len(METHOD)?;
    let start = input.start();
    let threads = (options.threads_or_cores() as u64)
        .min(len / MIN_RANGE)
        .max(1);
    let size = options.buffer_size_or(DEFAULT_BUFFER_SIZE);
    if threads == 1 {
        return read_range(input, options, start, start + len, size, task);
    }
    let range = len.div_ceil(threads).next_multiple_of(1 << 20);
    let bounds: Vec<(u64, u64)> = (0..threads)
        .map(|i| {
            (
                start + i * range,
                (start + (i + 1) * range).min(start + len),
            )
        })
        .filter(|(a, b)| a < b)
        .collect();
    let results: Vec<Result<(T, u64)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = bounds
            .iter()
            .map(|&(a, b)| {
                let mut part = task.fork();
                scope.spawn(move || {
                    read_range(input, options, a, b, size, &mut part).map(|n| (part, n))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    let mut total = 0;
    for result in results {
        let (part, n) = result?;
        task.join(part);
        total += n;
    }
    Ok(total)
}

/// The same reads on one thread, in order, for tasks that cannot be split.
pub fn read(input: &Input, options: &ReadOptions, task: &mut dyn Task) -> Result<u64> {
    let len = input.sized_len(METHOD)?;
    let start = input.start();
    let size = options.buffer_size_or(DEFAULT_BUFFER_SIZE);
    read_range(input, options, start, start + len, size, task)
}

fn read_range<T: Task + ?Sized>(
    input: &Input,
    options: &ReadOptions,
    from: u64,
    to: u64,
    size: usize,
    task: &mut T,
) -> Result<u64> {
    if options.has_hint(CountHint::Readahead) {
        // SAFETY: readahead on an open descriptor has no memory effects; it is a hint.
        unsafe { libc::readahead(input.fd(), from as libc::off64_t, (to - from) as usize) };
    }
    let mut buf = vec![0u8; size];
    let mut offset = from;
    while offset < to {
        let want = ((to - offset) as usize).min(size);
        let n = retry_eintr(|| input.file().read_at(&mut buf[..want], offset))
            .map_err(|e| Error::io("read failed", e))?;
        if n == 0 {
            break; // the file shrank since it was opened
        }
        task.feed(&buf[..n]);
        offset += n as u64;
    }
    Ok(offset - from)
}
