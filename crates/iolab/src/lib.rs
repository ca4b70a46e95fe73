//! iolab: Linux file I/O at this machine's limits.
//!
//! Six workloads, each with a one-line call whose default is the way `iolab bench`
//! measured fastest (on this machine where it ran, else the rule documented with the
//! call), and one options builder for the rest:
//!
//! | workload | the call | its options |
//! |---|---|---|
//! | count the lines of a file | [`count_lines`]`(path)?` | [`CountOptions`] |
//! | write fast to standard output | [`StdoutWriter::new`]`()?` | [`WriteOptions`] |
//! | edit a file in place | [`replace_byte`]`(path, b',', b';')?`, [`truncate_after_first_line`]`(path)?` | [`EditOptions`] |
//! | append small records | [`AppendFile::create`]`(path)?` | [`AppendOptions`] |
//! | durable appends, group commit | [`Log::open`]`(path)?` | [`LogOptions`] |
//! | random block reads | [`RandomAccessFile::open`]`(path)?`, then [`RandomAccessFile::read_batch`] for many at once | [`RandomAccessOptions`] |
//!
//! Every call returns [`Result`], with one [`Error`] whose [`Error::kind`] a program can
//! match and whose message names the path and the cause; `?` converts it to and from
//! [`std::io::Error`]. `use iolab::prelude::*;` brings the calls, options and choices in.
//!
//! ```no_run
//! use std::io::Write;
//!
//! fn main() -> iolab::Result<()> {
//!     let count = iolab::count_lines("big.txt")?;
//!     let mut out = iolab::StdoutWriter::new()?;
//!     writeln!(out, "{} lines, counted with {}", count.lines, count.method)?;
//!     out.finish()
//! }
//! ```
//!
//! The machinery `iolab bench` and `iolab trace` drive (the benchmark engines, the
//! data-set generators, the system facts) is in the workspace's unpublished `iolab-lab`
//! crate; it reaches the library's methods one by one through the `lab` module, which
//! exists only with the off-by-default `lab` feature and is outside the stable surface.

#![deny(missing_docs)]

mod buf;
mod cache;
mod count;
mod durable;
mod edit;
mod error;
mod file;
mod input;
mod kernel;
mod machine;
/// Where `named_enum!`'s expansion finds its trait in other crates (`$crate::named`);
/// documented as `lab::named` (with the `lab` feature).
#[doc(hidden)]
pub mod named;
mod profile;
mod read;
mod sys;
mod task;
mod units;
mod write;

#[cfg(feature = "lab")]
pub mod lab;
pub mod prelude;

pub use count::{CountOptions, count_lines};
pub use durable::{Log, LogObserver, LogOptions, LogPolicy, LogReader, Recovered, read_records};
pub use edit::{
    EditOp, EditOptions, EditOutcome, EditReport, EditStrategy, replace_byte,
    truncate_after_first_line,
};
pub use error::{Error, ErrorKind, Result};
pub use file::{
    AppendFile, AppendOptions, Backing, BatchBacking, Creation, MapLimiter, RandomAccessFile,
    RandomAccessOptions, SequentialFile,
};
pub use input::{FileKind, Input};
pub use kernel::Kernel;
pub use named::UnknownName;
pub use read::{CountHint, CountMethod, LineCount};
pub use write::raw_fd::RawStdout;
pub use write::{StdoutWriter, WriteOptions};
