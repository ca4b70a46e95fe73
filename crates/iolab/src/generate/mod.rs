//! Deterministic data sets for the benchmarks: text lines and numeric CSV, of an exact size,
//! written fast and never left half-written.
//!
//! - [`lines`]: printable ASCII words in `\n`-terminated lines of a chosen mean length,
//!   exactly `size` bytes ([`LinesSpec`], [`write_lines`]).
//! - [`csv`]: numeric CSV, `rows` × `cols`, no header ([`CsvSpec`], [`write_csv`]).
//! - [`blocks`]: offset-derived bytes, every block checkable at its offset (random reads).
//! - [`atomic`]: [`write_file_atomically`] puts a file in place with a temporary file, `fsync`
//!   and `rename`, after checking the free space, so an interrupted run never leaves a
//!   half-written file under the final name.
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

pub mod atomic;
pub mod blocks;
pub mod csv;
pub mod lines;
pub(crate) mod rng;
pub mod tree;

use std::io;
use std::path::PathBuf;

use crate::units::format_bytes;

pub use atomic::{AtomicOptions, write_file_atomically};
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

/// Everything that can go wrong while generating a data set or putting it in place.
///
/// Messages are one line and do not name the file: the caller prefixes it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A system call failed; `op` says which step (for example `"cannot write"`).
    #[error("{op}: {}", crate::sys::describe_io(.source))]
    Io {
        /// What was being done, as a short phrase.
        op: &'static str,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The spec cannot be generated (a zero mean line length, zero columns, …).
    #[error("{0}")]
    InvalidSpec(String),
    /// The path ends in `/`, `..` or is empty, so there is no file name to write.
    #[error("has no file name")]
    NoFileName,
    /// The path names a directory.
    #[error("is a directory")]
    IsDirectory,
    /// The path exists but is not a regular file (a device, FIFO, socket or symbolic link),
    /// which a rename would replace rather than write to.
    #[error("is a {kind}, not a regular file, so it cannot be replaced atomically")]
    NotRegularFile {
        /// What it is instead.
        kind: &'static str,
    },
    /// The file exists and overwriting was not allowed.
    #[error("already exists (refusing to overwrite it)")]
    Exists,
    /// A step failed on one file or folder of a set of files (a tree), which the message
    /// names: the caller knows only the set's folder.
    #[error("{}: {source}", .path.display())]
    AtPath {
        /// The file or folder.
        path: PathBuf,
        /// What went wrong there.
        #[source]
        source: Box<Error>,
    },
    /// The free space checked before writing is smaller than the expected size.
    #[error("not enough free space in {}: {}", .dir.display(), need_and_have(*.need, *.have))]
    NotEnoughSpace {
        /// The directory the file was to be written in.
        dir: PathBuf,
        /// The bytes the file needs.
        need: u64,
        /// The bytes available to this user there.
        have: u64,
    },
    /// The device filled up (`ENOSPC` or `EDQUOT`) while writing; the partial temporary file
    /// has been removed.
    #[error("no space left in {} after writing {}; the partial file was removed", .dir.display(), format_bytes(*.written))]
    NoSpace {
        /// The directory the file was being written in.
        dir: PathBuf,
        /// The bytes that had reached the file.
        written: u64,
    },
}

impl Error {
    /// Wraps an I/O error with the step that failed.
    pub fn io(op: &'static str, source: io::Error) -> Error {
        Error::Io { op, source }
    }

    /// This error, as having happened to `path` ([`Error::AtPath`]).
    pub fn at(self, path: &std::path::Path) -> Error {
        Error::AtPath {
            path: path.to_path_buf(),
            source: Box::new(self),
        }
    }
}

/// `need X, have Y` in rounded units, or in exact bytes when rounding would hide the shortfall.
fn need_and_have(need: u64, have: u64) -> String {
    let (need_text, have_text) = (format_bytes(need), format_bytes(have));
    if need_text == have_text {
        format!("need {need} bytes, have {have} bytes")
    } else {
        format!("need {need_text}, have {have_text}")
    }
}

/// The generators' result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Writes `buf` with `write_all`, naming the step in the error.
fn write_chunk<W: io::Write + ?Sized>(out: &mut W, buf: &[u8]) -> Result<()> {
    out.write_all(buf).map_err(|e| Error::io("cannot write", e))
}
