//! Counting the lines of a file: [`count_lines`] for the default, [`CountOptions`] for a
//! method and its settings.
//!
//! The default method is `auto`: it follows the winner `iolab bench` measured on this
//! machine for a file of this size and cache state, and a documented rule where nothing
//! was measured (`auto`'s module doc in `read/auto.rs`; evidence: docs/findings/count.md).

use std::path::Path;

use crate::error::Result;
use crate::input::Input;
use crate::read::{self, CountHint, CountMethod, LineCount, ReadOptions};

/// Counts the `\n` bytes of the file at `path`, as `wc -l` does, the way this machine
/// measured fastest for it.
///
/// ```no_run
/// let count = iolab::count_lines("big.txt")?;
/// println!("{} lines, counted with {}", count.lines, count.method);
/// # Ok::<(), iolab::Error>(())
/// ```
///
/// A failure names `path` ([`crate::Error::path`]).
pub fn count_lines(path: impl AsRef<Path>) -> Result<LineCount> {
    CountOptions::new().count_lines(path)
}

/// How to count lines: the method and its settings. [`count_lines`] uses the defaults.
///
/// ```no_run
/// use iolab::prelude::*;
///
/// let count = CountOptions::new()
///     .method(CountMethod::MmapParallel)
///     .threads(2)
///     .count_lines("big.txt")?;
/// # Ok::<(), iolab::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct CountOptions {
    method: CountMethod,
    read: ReadOptions,
}

impl Default for CountOptions {
    fn default() -> Self {
        CountOptions {
            method: CountMethod::Auto,
            read: ReadOptions::new(),
        }
    }
}

impl CountOptions {
    /// Options with every default.
    pub fn new() -> CountOptions {
        CountOptions::default()
    }

    /// How the bytes reach memory (`mmap`, `uring-direct`, …).
    ///
    /// By default, [`CountMethod::Auto`]: this machine's measured winner
    /// for the file's size and cache state, or the documented rule.
    pub fn method(mut self, method: CountMethod) -> CountOptions {
        self.method = method;
        self
    }

    /// The size of each read buffer in bytes, clamped to 1 B..=1 GiB; `direct` rounds it
    /// up to the file system's alignment.
    ///
    /// By default, the method's own (64 KiB for `bufread-chunks`, 1 MiB for `direct`, what
    /// the measured winner used for `auto`).
    pub fn buffer_size(mut self, bytes: usize) -> CountOptions {
        self.read = self.read.buffer_size(bytes);
        self
    }

    /// The number of buffers per vectored read (`readv`, `uring-readv`).
    ///
    /// By default, 16.
    pub fn buffers(mut self, n: usize) -> CountOptions {
        self.read = self.read.buffers(n);
        self
    }

    /// Threads for the parallel methods (`mmap-parallel`, `pread-parallel`).
    ///
    /// By default, the cores available to the process.
    pub fn threads(mut self, n: usize) -> CountOptions {
        self.read = self.read.threads(n);
        self
    }

    /// Reads in flight for `uring-direct`.
    ///
    /// By default, 8 (or what the measured winner used, for `auto`).
    pub fn queue_depth(mut self, n: usize) -> CountOptions {
        self.read = self.read.queue_depth(n);
        self
    }

    /// Adds an access hint (`madvise`/`posix_fadvise`); a hint that does not belong to
    /// the method is refused when counting ([`crate::Error::HintNotApplicable`]).
    ///
    /// By default, none.
    pub fn hint(mut self, hint: CountHint) -> CountOptions {
        self.read = self.read.hint(hint);
        self
    }

    /// Counts the lines of the file at `path`. A failure names `path`.
    pub fn count_lines(&self, path: impl AsRef<Path>) -> Result<LineCount> {
        let path = path.as_ref();
        Input::open(path)
            .and_then(|input| self.count_input(&input))
            .map_err(|e| e.at(path))
    }

    /// Counts the lines of an open input: standard input ([`Input::stdin`]), a pipe, or a
    /// file opened elsewhere ([`Input::from_file`]).
    pub fn count_input(&self, input: &Input) -> Result<LineCount> {
        read::count_input(self.method, input, &self.read)
    }
}
