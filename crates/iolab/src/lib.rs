//! iolab: Linux file I/O at this machine's limits.
//!
//! Each workload has one entry point, re-exported here, whose default is the way
//! `iolab bench` measured fastest on the machine it runs on:
//!
//! | workload | call |
//! |---|---|
//! | count the lines of a file | [`count_lines`]`(Method::Auto, &Input::open(path)?, &ReadOptions::new())` |
//! | write fast to stdout | [`StdoutWriter::new`]`()` |
//! | edit a file in place | [`replace_byte`]`(path, b',', b';', EditStrategy::Mmap)`, [`truncate_after_first_line`] |
//! | append small records | [`AppendFile::open`]`(path)` |
//! | durable appends, group commit | [`Log::open`]`(path)`, [`LogOptions`] |
//! | random block reads | [`RandomAccessFile::open`]`(path)` |
//!
//! The library separates *how bytes reach memory* ([`read::Method`]: `read`, `readv`,
//! `O_DIRECT`, `mmap`, io_uring, …) from *what is done with them* ([`task::Task`]: count
//! lines, checksum, …), and the tasks' inner loops ([`kernel`]) from both.
//!
//! ```no_run
//! use iolab::{Input, Method, ReadOptions, count_lines};
//!
//! let input = Input::open("big.txt".as_ref())?;
//! let count = count_lines(Method::Auto, &input, &ReadOptions::new())?;
//! println!("{} lines, counted with {}", count.lines, count.method);
//! # Ok::<(), iolab::Error>(())
//! ```

#![deny(missing_docs)]

pub mod append;
pub mod buf;
pub mod cache;
pub mod durable;
pub mod edit;
pub mod error;
pub mod file;
pub mod generate;
pub mod input;
pub mod kernel;
pub mod named;
pub mod random;
pub mod read;
pub mod sys;
pub mod sysinfo;
pub mod task;
pub mod units;
pub mod write;

pub use durable::{Log, LogOptions};
pub use edit::{Strategy as EditStrategy, replace_byte, truncate_after_first_line};
pub use error::{Error, Result};
pub use file::{AppendFile, RandomAccessFile};
pub use input::{FileKind, Input};
/// The measured winners `auto` follows; they live with `auto` ([`read::tuning`]).
pub use read::tuning;
pub use read::{LineCount, Method, ReadOptions, count_lines};
pub use write::StdoutWriter;
