//! [`GenerateError`]: what can go wrong while a data set is generated — the library's
//! [`Error`] for the file operations (open, write, sync, rename), and the generators' own
//! refusals (a specification that cannot be made, not enough room, a target that cannot be
//! replaced). The generators are the laboratory's, so their errors stay out of the
//! library's [`Error`].

use std::path::{Path, PathBuf};

use crate::units::format_bytes;
use iolab::{Error, ErrorKind};

/// Everything that can go wrong while generating a data set.
///
/// `Debug` prints the message and the kind, as [`Error`]'s does.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum GenerateError {
    /// A file operation failed, or the target is a folder or exists: the library's error,
    /// naming the path where the generator knows it. `?` converts an [`Error`] into this.
    #[error(transparent)]
    File(Error),
    /// The specification cannot be made (a zero line length, too many files, …).
    #[error("{0}")]
    InvalidSpec(String),
    /// The data set's path has no file name.
    #[error("has no file name")]
    NoFileName,
    /// The data set would replace something that is not a regular file.
    #[error("is a {kind}, not a regular file, so it cannot be replaced atomically")]
    NotReplaceable {
        /// What the file is instead: `FIFO`, `symbolic link`, …
        kind: &'static str,
    },
    /// The data set needs more room than its folder's file system has.
    #[error("not enough free space in {}: {}", .dir.display(), need_and_have(*.need, *.have))]
    NotEnoughSpace {
        /// The folder.
        dir: PathBuf,
        /// Bytes needed.
        need: u64,
        /// Bytes free.
        have: u64,
    },
    /// The data set needs more files than its folder's file system has inodes left.
    #[error("the files and folders need {need} inodes but the file system of {} has {have} free", .dir.display())]
    NotEnoughInodes {
        /// The folder.
        dir: PathBuf,
        /// Inodes needed.
        need: u64,
        /// Inodes free.
        have: u64,
    },
    /// The device filled up while the data set was written; the partial file was removed.
    #[error("no space left in {} after writing {}; the partial file was removed", .dir.display(), format_bytes(*.written))]
    NoSpaceWhileGenerating {
        /// The folder.
        dir: PathBuf,
        /// Bytes written before.
        written: u64,
    },
}

impl GenerateError {
    /// This error, naming `path` when it is a file operation's (the generators' own errors
    /// name their folder, or need no path).
    pub fn at(self, path: impl AsRef<Path>) -> GenerateError {
        match self {
            GenerateError::File(e) => GenerateError::File(e.at(path)),
            other => other,
        }
    }

    /// The path a failed file operation names, when it names one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            GenerateError::File(e) => e.path(),
            _ => None,
        }
    }

    /// What kind of failure this is, in the library's terms.
    pub fn kind(&self) -> ErrorKind {
        match self {
            GenerateError::File(e) => e.kind(),
            GenerateError::InvalidSpec(_) | GenerateError::NoFileName => ErrorKind::InvalidInput,
            GenerateError::NotReplaceable { .. } => ErrorKind::NotRegularFile,
            GenerateError::NotEnoughSpace { .. }
            | GenerateError::NotEnoughInodes { .. }
            | GenerateError::NoSpaceWhileGenerating { .. } => ErrorKind::NoSpace,
        }
    }
}

// Hidden: rustdoc would list this impl on the page of the root's `Error` too, and the
// stable surface's pages link nowhere into the laboratory (the conversion is documented on
// `GenerateError::File`).
#[doc(hidden)]
impl From<Error> for GenerateError {
    fn from(e: Error) -> GenerateError {
        GenerateError::File(e)
    }
}

impl std::fmt::Debug for GenerateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self} ({:?})", self.kind())
    }
}

/// "need 2 GiB, have 1 GiB", in bytes when the rounded sizes would read the same.
fn need_and_have(need: u64, have: u64) -> String {
    let (need_text, have_text) = (format_bytes(need), format_bytes(have));
    if need_text == have_text {
        format!("need {need} bytes, have {have} bytes")
    } else {
        format!("need {need_text}, have {have_text}")
    }
}
