//! Read methods: how the bytes of a file reach memory.
//!
//! Each method lives in its own file, whose module doc says which system calls it makes,
//! when it wins, its limits and how it fails. Every method delivers the input to a
//! [`Task`] as consecutive chunks ([`run`]); counting lines is one task
//! ([`count_lines`]), and any other task works with every method unchanged.
//!
//! | name | module | system calls |
//! |---|---|---|
//! | `bufread-lines` | [`bufread_lines`] | `read` into a `BufReader`, one `String` per line |
//! | `bufread-chunks` | [`bufread_chunks`] | `read` into a `BufReader`, no copies |
//! | `direct` | [`direct`] | `pread` with `O_DIRECT` into aligned buffers |
//! | `mmap`, `mmap-avx2`, `mmap-avx512` | [`mmap`] | one `mmap`, then page faults |
//! | `readv` | [`readv`] | `readv` into several buffers |
//! | `uring` | [`uring`] | io_uring, one `READ` in flight |
//! | `uring-readv` | [`uring_readv`] | io_uring, one `READV` in flight |
//! | `auto` | [`auto`] | picks one of the above for the file |

pub mod auto;
pub mod bufread_chunks;
pub mod bufread_lines;
pub mod direct;
pub mod mmap;
pub mod readv;
pub mod uring;
pub mod uring_readv;

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::input::Input;
use crate::kernel::{ByteCounter, Kernel};
use crate::task::{CountLines, Metered, Task};

/// A way of getting a file's bytes into memory, by its kebab-case name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// `BufReader::lines()`: a `String` per line (the write-up's first method).
    BufreadLines,
    /// `BufReader::fill_buf`/`consume`: no per-line work.
    BufreadChunks,
    /// `O_DIRECT` reads into aligned buffers, bypassing the page cache.
    Direct,
    /// A memory map scanned by the portable kernel.
    Mmap,
    /// A memory map scanned by the AVX2 kernel.
    MmapAvx2,
    /// A memory map scanned by the AVX-512 kernel.
    MmapAvx512,
    /// `readv` into several buffers per call.
    Readv,
    /// io_uring with one `READ` in flight.
    Uring,
    /// io_uring with one vectored `READV` in flight.
    UringReadv,
    /// Picks one of the others for the file and machine.
    Auto,
}

impl Method {
    /// Every method, in the order they are listed and benchmarked.
    pub const ALL: [Method; 10] = [
        Method::BufreadLines,
        Method::BufreadChunks,
        Method::Direct,
        Method::Mmap,
        Method::MmapAvx2,
        Method::MmapAvx512,
        Method::Readv,
        Method::Uring,
        Method::UringReadv,
        Method::Auto,
    ];

    /// The method's name, shared by the CLI, JSON results and docs.
    pub fn name(self) -> &'static str {
        match self {
            Method::BufreadLines => "bufread-lines",
            Method::BufreadChunks => "bufread-chunks",
            Method::Direct => "direct",
            Method::Mmap => "mmap",
            Method::MmapAvx2 => "mmap-avx2",
            Method::MmapAvx512 => "mmap-avx512",
            Method::Readv => "readv",
            Method::Uring => "uring",
            Method::UringReadv => "uring-readv",
            Method::Auto => "auto",
        }
    }

    /// The kernel a task should use with this method: the mmap family names its own
    /// (that is what distinguishes them); the others use the fastest this CPU has.
    pub fn kernel(self) -> Kernel {
        match self {
            Method::Mmap => Kernel::Scalar,
            Method::MmapAvx2 => Kernel::Avx2,
            Method::MmapAvx512 => Kernel::Avx512,
            _ => Kernel::best(),
        }
    }

    /// Whether the method can run on this machine at all (CPU features, io_uring).
    ///
    /// A method that is available may still refuse a particular file (O_DIRECT on a file
    /// system without it, a FIFO for a method that needs a size); [`run`] says so then.
    pub fn availability(self) -> Result<(), String> {
        match self {
            Method::Mmap | Method::MmapAvx2 | Method::MmapAvx512 => self.kernel().availability(),
            Method::Uring => uring::availability(),
            Method::UringReadv => uring_readv::availability(),
            _ => Ok(()),
        }
    }

    fn check_available(self) -> Result<()> {
        self.availability().map_err(|reason| Error::Unavailable {
            method: self.name(),
            reason,
        })
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = Error;
    fn from_str(s: &str) -> Result<Method> {
        Method::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| Error::UnknownMethod {
                name: s.to_string(),
                expected: Method::ALL.map(Method::name).join(", "),
            })
    }
}

/// Tuning knobs shared by the read methods. Every field has a per-method default (a named
/// constant in the method's module); `None` keeps it.
#[derive(Clone, Debug, Default)]
pub struct ReadOptions {
    buffer_size: Option<usize>,
    buffers: Option<usize>,
}

impl ReadOptions {
    /// Options with every method's defaults.
    pub fn new() -> ReadOptions {
        ReadOptions::default()
    }

    /// The size of each read buffer in bytes. Default: per method (e.g. 64 KiB for
    /// `bufread-chunks`, 1 MiB for `direct`). `direct` rounds it up to the file system's
    /// alignment.
    pub fn buffer_size(mut self, bytes: usize) -> ReadOptions {
        self.buffer_size = Some(bytes.max(1));
        self
    }

    /// The number of buffers per vectored read (`readv`, `uring-readv`). Default: 16.
    pub fn buffers(mut self, n: usize) -> ReadOptions {
        self.buffers = Some(n.clamp(1, 1024));
        self
    }

    pub(crate) fn buffer_size_or(&self, default: usize) -> usize {
        self.buffer_size.unwrap_or(default)
    }

    pub(crate) fn buffers_or(&self, default: usize) -> usize {
        self.buffers.unwrap_or(default)
    }
}

/// Reads all of `input` with `method`, feeding it to `task` in order.
///
/// Returns the method that actually ran (`auto` resolves to a named one) and the number of
/// bytes delivered.
pub fn run(
    method: Method,
    input: &Input,
    options: &ReadOptions,
    task: &mut dyn Task,
) -> Result<(Method, u64)> {
    let method = match method {
        Method::Auto => auto::choose(input).method,
        m => m,
    };
    method.check_available()?;
    let mut metered = Metered {
        inner: task,
        bytes: 0,
    };
    let task = &mut metered;
    match method {
        Method::BufreadLines => bufread_lines::read(input, options, task)?,
        Method::BufreadChunks => bufread_chunks::read(input, options, task)?,
        Method::Direct => direct::read(input, options, task)?,
        Method::Mmap | Method::MmapAvx2 | Method::MmapAvx512 => {
            mmap::read(input, method.name(), task)?
        }
        Method::Readv => readv::read(input, options, task)?,
        Method::Uring => uring::read(input, options, task)?,
        Method::UringReadv => uring_readv::read(input, options, task)?,
        Method::Auto => unreachable!("auto was resolved above"),
    }
    Ok((method, metered.bytes))
}

/// The outcome of counting one input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineCount {
    /// The number of `\n` bytes, as `wc -l` reports.
    pub lines: u64,
    /// The bytes read.
    pub bytes: u64,
    /// The method that ran (never `auto`).
    pub method: Method,
    /// The kernel that counted.
    pub kernel: Kernel,
}

/// Counts the lines of `input` the way `wc -l` does, with `method`.
pub fn count_lines(method: Method, input: &Input, options: &ReadOptions) -> Result<LineCount> {
    let resolved = match method {
        Method::Auto => auto::choose(input).method,
        m => m,
    };
    resolved.check_available()?;
    let kernel = resolved.kernel();
    let counter = ByteCounter::new(kernel).ok_or_else(|| Error::Unavailable {
        method: resolved.name(),
        reason: format!("kernel {kernel} is not supported by this CPU"),
    })?;
    let mut task = CountLines::new(counter);
    let (method, bytes) = run(resolved, input, options, &mut task)?;
    Ok(LineCount {
        lines: task.lines(),
        bytes,
        method,
        kernel,
    })
}

/// Retries `f` while it fails with `EINTR`.
pub(crate) fn retry_eintr<T>(mut f: impl FnMut() -> std::io::Result<T>) -> std::io::Result<T> {
    loop {
        match f() {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}
