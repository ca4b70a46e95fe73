//! Counting many files in one call ([`count_files`]): the files are shared out among
//! worker threads and the results come back in the order given.
//!
//! **System calls** per file: `openat(2)`, `statx(2)` (the kind and size), then for a
//! regular file under [`auto::SMALL_FILE`] `read(2)` into the worker's own buffer until a
//! read comes back short at the reported size (the end; no extra `read` for the 0, except
//! for a file whose size is a multiple of the buffer),
//! and `close(2)`. Bigger files and other kinds go through [`count_input`] with `auto`, as
//! a single file would. `-` is standard input.
//! **When it wins**: many small files (a source tree, a folder of logs), where the cost is
//! the four system calls per file, not the bytes: two workers make them on two cores at
//! once, and no per-file set-up is paid (no `BufReader` allocation, no method choice, no
//! residency check, no `fstatfs`).
//! **Limits**: results are kept until all files are done (a few dozen bytes per file), so
//! the caller can size its columns from every file, as `wc` does; the workers take files
//! in batches of [`BATCH`] from a shared counter, so a slow file holds up one worker only.
//! **How it fails**: per file: a file that cannot be opened or read gives its own error in
//! its place; the others are still counted.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use iolab::lab::kernel::ByteCounter;
use iolab::lab::read::{CountMethod, ReadOptions, auto, count_input};
use iolab::{Error, FileKind, Input, Result};

/// Files a worker takes at a time: 64, enough to make the shared counter cheap, few
/// enough that the workers finish together.
pub const BATCH: usize = 64;
/// Each worker's read buffer: 64 KiB, as `bufread-chunks`.
pub const BUFFER_SIZE: usize = 64 << 10;

/// One file's count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileCount {
    /// The number of `\n` bytes.
    pub lines: u64,
    /// The size `statx` reported (what `wc` sums to size its columns).
    pub size: u64,
    /// Whether it is a regular file.
    pub regular: bool,
}

/// Counts the lines of every path, with `options`' threads (default: the available
/// cores). The result has one entry per path, in the same order.
pub fn count_files(paths: &[PathBuf], options: &ReadOptions) -> Vec<Result<FileCount>> {
    let threads = options
        .threads_or_cores()
        .min(paths.len().div_ceil(BATCH))
        .max(1);
    let counter = ByteCounter::best();
    if threads == 1 {
        let mut buf = vec![0u8; BUFFER_SIZE];
        return paths
            .iter()
            .map(|p| count_file(p, options, counter, &mut buf))
            .collect();
    }
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Result<FileCount>>>> =
        paths.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut buf = vec![0u8; BUFFER_SIZE];
                loop {
                    let from = next.fetch_add(BATCH, Ordering::Relaxed);
                    if from >= paths.len() {
                        break;
                    }
                    for i in from..(from + BATCH).min(paths.len()) {
                        let result = count_file(&paths[i], options, counter, &mut buf);
                        *slots[i].lock().unwrap_or_else(PoisonError::into_inner) = Some(result);
                    }
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(PoisonError::into_inner)
                .expect("every file was counted")
        })
        .collect()
}

/// Counts one file: small regular files with plain reads into `buf`, the rest as `auto`.
fn count_file(
    path: &Path,
    options: &ReadOptions,
    counter: ByteCounter,
    buf: &mut [u8],
) -> Result<FileCount> {
    if path.as_os_str() == "-" {
        return whole(Input::stdin()?, options);
    }
    let mut file = File::open(path).map_err(|e| Error::io("cannot open", e))?;
    let meta = file.metadata().map_err(|e| Error::io("cannot stat", e))?;
    if meta.is_dir() {
        return Err(Error::IsDirectory);
    }
    if !meta.is_file() || meta.len() >= auto::SMALL_FILE {
        return whole(Input::from_file(file)?, options);
    }
    let (mut lines, mut total) = (0, 0);
    loop {
        match file.read(buf) {
            Ok(0) => break,
            Ok(n) => {
                lines += counter.count(&buf[..n], b'\n');
                total += n as u64;
                // A short read that reaches the size statx gave is the end of a regular
                // file. A pseudo file (`/proc`: size 0; sysfs: 4096) reads on to the 0.
                if n < buf.len() && total >= meta.len() && meta.len() > 0 {
                    break;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io("read failed", e)),
        }
    }
    Ok(FileCount {
        lines,
        size: meta.len(),
        regular: true,
    })
}

fn whole(input: Input, options: &ReadOptions) -> Result<FileCount> {
    let regular = input.kind() == FileKind::Regular;
    let size = input.reported_len();
    let count = count_input(CountMethod::Auto, &input, options)?;
    Ok(FileCount {
        lines: count.lines,
        size,
        regular,
    })
}
