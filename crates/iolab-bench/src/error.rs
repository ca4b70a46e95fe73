//! The harness's errors: the library's ([`iolab::Error`]), and what only the lab meets (a
//! data set that failed to generate, with the generators' error, a file iolab did not make
//! where a data set goes, a results file that is not iolab's).

use std::io;
use std::path::PathBuf;

/// What can go wrong while benchmarking, reporting or comparing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A library call failed.
    #[error(transparent)]
    Lab(#[from] iolab::Error),
    /// Generating a data set failed.
    #[error("{}: {source}", .path.display())]
    Generate {
        /// The file being generated.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: iolab_lab::generate::GenerateError,
    },
    /// A data-set file name is taken by a file iolab did not make.
    #[error(
        "{}: exists and was not made by iolab (no manifest beside it); iolab will not overwrite it: move it away or choose another --data folder",
        .path.display()
    )]
    NotOurs {
        /// The file.
        path: PathBuf,
    },
    /// A file that should hold `iolab bench` results does not.
    #[error("{}: not iolab results: {reason}", .path.display())]
    InvalidResults {
        /// The file read.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

impl Error {
    /// A system call that failed doing `op`.
    pub fn io(op: &'static str, source: io::Error) -> Error {
        Error::Lab(iolab::Error::io(op, source))
    }

    /// `true` when the error means "cannot run here" rather than "failed".
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Error::Lab(e) if e.is_unavailable())
    }
}

impl From<iolab::UnknownName> for Error {
    fn from(e: iolab::UnknownName) -> Error {
        Error::Lab(e.into())
    }
}

/// The harness's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
