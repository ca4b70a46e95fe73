//! iolab's laboratory: what `iolab bench`, `iolab trace` and the `iolab` command drive
//! besides the library — the tiny-append strategies and their timed engine
//! ([`append::append_records`]), the random-read driver ([`random::run`], with its latency
//! histograms), the data-set generators ([`generate`]) and the library calls a verdict
//! hands over, as Rust that compiles ([`snippet`]), and the machine a results file
//! describes ([`sysinfo`]). Not published: a program links the
//! `iolab` library, whose calls are the winners these measure.
//!
//! The library's own methods, kernels and system facts are reached through `iolab::lab`
//! and re-exported here, so the laboratory's crates have one path for all of it.

#![deny(missing_docs)]

pub mod append;
pub mod atomic;
pub mod cache;
pub mod generate;
pub mod machine;
mod procfs;
pub mod profile;
pub mod random;
pub mod read;
pub mod snippet;
pub mod sys;
pub mod sysinfo;
pub mod task;
mod text;
pub mod units;
pub mod write;

pub use iolab::lab::{buf, durable, edit, error, file, kernel, named};
