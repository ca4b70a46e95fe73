//! iolab: a Linux file-I/O laboratory.
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
pub mod random;
pub mod read;

pub mod sys;
pub mod sysinfo;
pub mod task;
pub mod units;
pub mod write;

pub use error::{Error, Result};
pub use input::{FileKind, Input};
/// The measured winners `auto` follows; they live with `auto` ([`read::tuning`]).
pub use read::tuning;
pub use read::{LineCount, Method, ReadOptions, count_lines};
