//! The tracer's errors: each one line that says what to do.

use std::io;
use std::path::PathBuf;

use iolab_lab::error::describe_io;

/// Why a trace could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No command was given.
    #[error("no command to trace: iolab trace [OPTIONS] -- CMD [ARGS…]")]
    NoCommand,
    /// The command is not on `PATH` (or the path given does not exist). A shell exits 127.
    #[error("{name}: command not found")]
    NotFound {
        /// The command as given.
        name: String,
    },
    /// The command exists but cannot be run (no permission, not an executable). A shell
    /// exits 126.
    #[error("{name}: cannot execute: {}", describe_io(.source))]
    CannotExecute {
        /// The command as given.
        name: String,
        /// What `execve` or the checks before it said.
        source: io::Error,
    },
    /// The command is a script whose `#!` interpreter cannot be run (it does not exist, or
    /// may not be executed): `execve` fails although the script exists. A shell exits 126.
    #[error("{name}: bad interpreter: {interpreter}: {}", describe_io(.source))]
    BadInterpreter {
        /// The command as given.
        name: String,
        /// The interpreter its first line names.
        interpreter: String,
        /// What `execve` said.
        source: io::Error,
    },
    /// No backend may trace here: each one's reason, and how to allow one.
    #[error("cannot trace: {0}")]
    NotPermitted(String),
    /// The backend asked for cannot run here.
    #[error("backend {backend} is not available: {reason}")]
    Unavailable {
        /// The backend's name.
        backend: &'static str,
        /// Why.
        reason: String,
    },
    /// The tracer broke while tracing (the kernel refused the eBPF program, a ptrace request failed).
    #[error("the {backend} backend failed: {reason}")]
    Backend {
        /// The backend's name.
        backend: &'static str,
        /// What happened.
        reason: String,
    },
    /// A signal (Ctrl-C) arrived before the command started; it did not run.
    #[error("interrupted by signal {signal} before the command started")]
    Interrupted {
        /// The signal.
        signal: i32,
    },
    /// The benchmark results given cannot be read.
    #[error("{}: {reason}", path.display())]
    Results {
        /// The results file or folder.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A system call of the tracer failed.
    #[error("{context}: {}", describe_io(.source))]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        source: io::Error,
    },
}

impl Error {
    /// An [`Error::Io`] with the last OS error.
    pub fn last_os(context: impl Into<String>) -> Error {
        Error::Io {
            context: context.into(),
            source: io::Error::last_os_error(),
        }
    }

    /// An [`Error::Io`].
    pub fn io(context: impl Into<String>, source: io::Error) -> Error {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// The exit code a shell would give for this error: 127 for a command not found (or a
    /// program whose loader is missing, as bash 5.2 says "required file not found"), 126
    /// for one that cannot run or a bad interpreter, 2 for no command, 128 + N when signal
    /// N interrupted the start, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::NotFound { .. } => 127,
            Error::CannotExecute { source, .. } if source.kind() == io::ErrorKind::NotFound => 127,
            Error::CannotExecute { .. } | Error::BadInterpreter { .. } => 126,
            Error::NoCommand => 2,
            Error::Interrupted { signal } => 128 + signal,
            _ => 1,
        }
    }
}

/// The tracer's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
