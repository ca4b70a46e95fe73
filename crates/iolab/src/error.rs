//! The library's error type.
//!
//! Messages are one line and say what to do where there is something to do. They do not
//! name the file: the caller knows it and prefixes it (the CLI prints `iolab: FILE: …`).

use std::io;

/// Everything that can go wrong in iolab's library calls.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A system call failed; `op` says which step (for example `"cannot open"`).
    #[error("{op}: {}", describe_io(.source))]
    Io {
        /// What was being done, as a short phrase.
        op: &'static str,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The path names a directory.
    #[error("is a directory")]
    IsDirectory,
    /// The method needs a regular file and this is not one.
    #[error("is a {kind}; method '{method}' needs a regular file (use bufread-chunks or auto)")]
    NotRegularFile {
        /// What the file is instead: `FIFO`, `character device`, …
        kind: &'static str,
        /// The method that refused.
        method: &'static str,
    },
    /// The file's reported size cannot be trusted (procfs, sysfs: size 0 or 4096 yet other content).
    #[error(
        "its size is not real (a /proc or /sys file); method '{method}' needs one (use bufread-chunks or auto)"
    )]
    SizeUnknown {
        /// The method that refused.
        method: &'static str,
    },
    /// The method cannot run on this machine or for this file.
    #[error("method '{method}' is unavailable: {reason}")]
    Unavailable {
        /// The method's name.
        method: &'static str,
        /// Why, in a few words.
        reason: String,
    },
    /// The file shrank while it was being read (another process truncated it), so the
    /// bytes read are not the file's.
    /// A mapped page the kernel could not read (an I/O error) raises the same signal and
    /// gives the same error.
    #[error(
        "the file shrank while it was being read (truncated by another process?), or a mapped page could not be read"
    )]
    FileShrank,
    /// `bufread-lines` met bytes that are not UTF-8.
    #[error(
        "invalid UTF-8 on line {line}: bufread-lines reads text only (bufread-chunks or auto count any bytes)"
    )]
    InvalidUtf8 {
        /// The 1-based line on which the invalid bytes start.
        line: u64,
    },
    /// Generating a data set failed.
    #[error("{}: {source}", .path.display())]
    Generate {
        /// The file being generated.
        path: std::path::PathBuf,
        /// What went wrong.
        #[source]
        source: crate::generate::Error,
    },
    /// An access hint was given to a method it does not belong to.
    #[error("hint '{hint}' does not apply to method '{method}'")]
    HintNotApplicable {
        /// The hint.
        hint: &'static str,
        /// The method.
        method: &'static str,
    },
    /// A data-set file name is taken by a file iolab did not make.
    #[error(
        "{}: exists and was not made by iolab (no manifest beside it); iolab will not overwrite it: move it away or choose another --data folder",
        .path.display()
    )]
    NotOurs {
        /// The file.
        path: std::path::PathBuf,
    },
    /// A file that should hold `iolab bench` results does not.
    #[error("{}: not iolab results: {reason}", .path.display())]
    InvalidResults {
        /// The file read.
        path: std::path::PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// An option is out of its range (a block size, a queue depth, a thread count).
    #[error("{0}")]
    InvalidOption(String),
    /// A name iolab does not know (a method, a suite, …), with the valid ones.
    #[error(transparent)]
    UnknownName(#[from] crate::named::UnknownName),
}

impl Error {
    /// Wraps an I/O error with the step that failed.
    pub fn io(op: &'static str, source: io::Error) -> Error {
        Error::Io { op, source }
    }

    /// `true` when the error means "cannot run here" rather than "failed".
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Error::Unavailable { .. })
    }
}

pub use crate::sys::describe_io;

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
