//! Deterministic data sets for the benchmarks: text lines and numeric CSV, of an exact size,
//! written fast and never left half-written.
//!
//! - [`lines`]: printable ASCII words in `\n`-terminated lines of a chosen mean length,
//!   exactly `size` bytes ([`LinesSpec`], [`write_lines`]).
//! - [`csv`]: numeric CSV, `rows` × `cols`, no header ([`CsvSpec`], [`write_csv`]).
//! - [`blocks`]: offset-derived bytes, every block checkable at its offset (random reads).
//! - [`write_file_atomically`] (the library's) puts a file in place with a temporary file, `fsync`
//!   and `rename`, after checking the free space, so an interrupted run never leaves a
//!   half-written file under the final name.
//! - Failures are [`GenerateError`]s: the library's [`iolab::Error`] for the file
//!   operations, and the generators' own refusals.
//!
//! **Determinism**: the same spec (seed included) gives the same bytes on every machine and
//! with every build: the generators use only fixed-width integer arithmetic on a hand-written
//! PRNG (wyrand, in `rng.rs`), never `usize` widths, hashing or floating point, and their
//! output does not depend on how it is split into writes. Bytes may change between iolab
//! versions; the tests pin determinism within one version.
//!
//! **Speed**: each generator fills a 1 MiB buffer with table copies and a few branches per
//! word or field and writes it whole: 3.5 GB/s for lines and 1.7 GB/s for CSV on one core
//! (see each module's docs). Writing a new file is then bound by the kernel's page cache.

pub mod blocks;
pub mod csv;
pub mod lines;
pub(crate) mod rng;
pub mod tree;

use std::io;

pub use crate::atomic::{AtomicOptions, GenerateError, Result, write_file_atomically};
pub use csv::{CsvSpec, rows_for_size, write_csv};
pub use lines::{LinesSpec, write_lines};

/// The seed used when none is given. Any value works; fixing one means two machines that
/// run `iolab gen` with the same arguments benchmark the same bytes.
pub const DEFAULT_SEED: u64 = 0x10_1AB5;

/// The size of the buffer the generators fill and write whole. 1 MiB: the system call cost
/// is noise at this size, and the buffer still fits in the L2 cache of current x86 cores,
/// so the copy into the page cache reads it from cache.
const CHUNK_LEN: usize = 1 << 20;

/// What a generator wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Bytes written.
    pub bytes: u64,
    /// Lines written (`\n` bytes; every generated file ends with one unless it is empty).
    pub lines: u64,
}

pub(crate) use iolab::Error;

/// Writes `buf` with `write_all`, naming the step in the error.
fn write_chunk<W: io::Write + ?Sized>(out: &mut W, buf: &[u8]) -> Result<()> {
    out.write_all(buf)
        .map_err(|e| Error::io("cannot write", e).into())
}
