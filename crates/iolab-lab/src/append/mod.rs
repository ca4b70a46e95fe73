//! Appending small records to a file: five strategies, one file each.
//!
//! | name | module | system calls |
//! |---|---|---|
//! | `write-per-record` | [`write_per_record`] | one `write` per record |
//! | `bufwriter-8k`, `bufwriter-64k` | [`bufwriter`] | one `write` per full `BufWriter` buffer (std flushes the buffer when a record does not fit) |
//! | `writev-batch` | [`writev_batch`] | one `writev` per [`WRITEV_BATCH`] records, an `iovec` each (no copy) |
//! | `append-file` | [`append_file`] | [`AppendFile`]: one `write` per full buffer (64 KiB by default); records as large as the buffer: one `writev` of buffer + record |
//!
//! Every strategy opens a new file with `O_APPEND` ([`append_records`]) and appends the
//! records in order; with [`Syncs::every`] it makes them durable (`fdatasync`) after every
//! K records and once more for a partial last group. [`AppendFile`] itself, with its
//! durability after each call, lives in [`crate::file`]; `append-file` is that type used as
//! a strategy.
//!
//! `iolab bench append` measures them; it passes a timer to [`append_records`], which
//! wraps only the loop and the final flush or sync, never the `open` (the figures, against
//! C++ `fstream`: docs/findings/append.md).

pub mod append_file;
pub mod bufwriter;
pub mod write_per_record;
pub mod writev_batch;

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

pub use writev_batch::WRITEV_BATCH;

use iolab::AppendFile;

iolab::named_enum! {
    /// A way of appending records, by its kebab-case name.
    #[non_exhaustive]
    pub enum Strategy: "strategy" {
        /// One `write(2)` per record.
        WritePerRecord = "write-per-record",
        /// `std::io::BufWriter` with 8 KiB (std's default capacity, and libstdc++'s `BUFSIZ`).
        BufWriter8k = "bufwriter-8k",
        /// `std::io::BufWriter` with 64 KiB.
        BufWriter64k = "bufwriter-64k",
        /// One `writev(2)` per [`WRITEV_BATCH`] records, each an `iovec` of its own.
        WritevBatch = "writev-batch",
        /// [`AppendFile`] with its default buffer (64 KiB, or this machine's measured one).
        AppendFile = "append-file",
    }
}

impl Strategy {
    /// Whether the strategy can run here. All of them can: they need nothing but
    /// `write`/`writev` and `fdatasync`.
    pub fn availability(self) -> Result<(), String> {
        Ok(())
    }

    /// Whether it gathers records before a system call (the goal of ≤ 0.001 system calls
    /// per 5-byte record applies to these).
    pub fn buffers(self) -> bool {
        self != Strategy::WritePerRecord
    }
}

/// When the records of one call to [`append_records`] are made durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Syncs {
    records: u64,
    every: Option<u64>,
}

impl Syncs {
    /// No `fdatasync`: the records end in the page cache.
    pub fn never(records: u64) -> Syncs {
        Syncs {
            records,
            every: None,
        }
    }

    /// An `fdatasync` after every `k` of `records` records (`k` ≥ 1), and one after a
    /// partial last group; `None` for never.
    pub fn every(records: u64, k: Option<u64>) -> Syncs {
        Syncs {
            records,
            every: k.map(|k| k.max(1)),
        }
    }

    /// Whether record `i` (0-based) ends a group.
    #[inline]
    pub(crate) fn due(&self, i: u64) -> bool {
        self.every.is_some_and(|k| (i + 1).is_multiple_of(k))
    }

    /// Whether a partial group is left after the last record.
    pub(crate) fn tail(&self) -> bool {
        self.every.is_some_and(|k| !self.records.is_multiple_of(k))
    }
}

/// Creates a new file at `path` (`O_APPEND`, failing if it exists) and appends records
/// `0..n` of `record` to it with `strategy`, syncing as `syncs` says (its record count is
/// `n`). `around` receives the appending loop and must call it once: a benchmark times it
/// there, so the `open` is never inside its timer. Returns what `around` returns.
pub fn append_records<'r, T>(
    strategy: Strategy,
    path: &Path,
    syncs: Syncs,
    record: impl Fn(u64) -> &'r [u8],
    around: impl FnOnce(&mut dyn FnMut() -> io::Result<()>) -> io::Result<T>,
) -> io::Result<T> {
    let n = syncs.records;
    let create = || OpenOptions::new().append(true).create_new(true).open(path);
    match strategy {
        Strategy::WritePerRecord => {
            let mut file: File = create()?;
            around(&mut || write_per_record::append(&mut file, n, &record, syncs))
        }
        Strategy::BufWriter8k | Strategy::BufWriter64k => {
            let capacity = if strategy == Strategy::BufWriter8k {
                bufwriter::SMALL_CAPACITY
            } else {
                bufwriter::LARGE_CAPACITY
            };
            let mut out = io::BufWriter::with_capacity(capacity, create()?);
            around(&mut || bufwriter::append(&mut out, n, &record, syncs))
        }
        Strategy::WritevBatch => {
            let mut file = create()?;
            around(&mut || writev_batch::append(&mut file, n, &record, syncs))
        }
        Strategy::AppendFile => append_file_records(None, path, syncs, record, around),
    }
}

/// As [`append_records`] with [`Strategy::AppendFile`], its buffer `buffer` bytes (`None`:
/// what [`AppendFile::create`] takes, [`crate::file::append::default_buffer`]).
pub fn append_file_records<'r, T>(
    buffer: Option<usize>,
    path: &Path,
    syncs: Syncs,
    record: impl Fn(u64) -> &'r [u8],
    around: impl FnOnce(&mut dyn FnMut() -> io::Result<()>) -> io::Result<T>,
) -> io::Result<T> {
    let mut options = iolab::AppendOptions::new();
    if let Some(bytes) = buffer {
        options = options.buffer_size(bytes);
    }
    let mut file: AppendFile = options.open(path)?;
    around(&mut || append_file::append(&mut file, syncs.records, &record, syncs))
}
