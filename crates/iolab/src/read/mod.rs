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
//! | `mmap-parallel` | [`mmap_parallel`] | one `mmap`, parts scanned by all cores |
//! | `pread-parallel` | [`pread_parallel`] | `pread`, each thread on its own range |
//! | `uring-direct` | [`uring_direct`] | io_uring, `O_DIRECT`, several reads in flight |
//! | `stream` | [`stream`] | `read` after `posix_fadvise(SEQUENTIAL)`, read-ahead kept ahead |
//! | `auto` | [`auto`] | picks one of the above for the file |
//!
//! Many files at once: the laboratory's `read::many::count_files` (parallel across files).
//!
//! How fast each is on the machines iolab was measured on, and why `auto` chooses as it
//! does: docs/findings/count.md.

pub mod auto;
pub mod batching;
pub mod bufread_chunks;
pub mod bufread_lines;
pub mod direct;
pub mod mmap;
pub mod mmap_parallel;
pub mod pread_parallel;
pub mod readv;
pub mod ring;
pub mod stream;
pub mod uring;
pub mod uring_direct;
pub mod uring_readv;

use crate::error::{Error, Result};
use crate::input::Input;
use crate::kernel::{ByteCounter, Kernel};
use crate::task::{CountLines, Metered, SplitTask, Task};

crate::named_enum! {
    /// A way of getting a file's bytes into memory, by its kebab-case name.
    #[non_exhaustive]
    pub enum CountMethod: "method" {
        /// `BufReader::lines()`: a `String` per line (the line-count write-up's first method).
        BufreadLines = "bufread-lines",
        /// `BufReader::fill_buf`/`consume`: no per-line work.
        BufreadChunks = "bufread-chunks",
        /// `O_DIRECT` reads into aligned buffers, bypassing the page cache.
        Direct = "direct",
        /// A memory map scanned by the portable kernel.
        Mmap = "mmap",
        /// A memory map scanned by the AVX2 kernel.
        MmapAvx2 = "mmap-avx2",
        /// A memory map scanned by the AVX-512 kernel.
        MmapAvx512 = "mmap-avx512",
        /// `readv` into several buffers per call.
        Readv = "readv",
        /// io_uring with one `READ` in flight.
        Uring = "uring",
        /// io_uring with one vectored `READV` in flight.
        UringReadv = "uring-readv",
        /// One map, scanned by several threads.
        MmapParallel = "mmap-parallel",
        /// Several threads, each `pread`ing its own range.
        PreadParallel = "pread-parallel",
        /// io_uring over `O_DIRECT` with several reads in flight.
        UringDirect = "uring-direct",
        /// One sequential stream of reads with the read-ahead kept ahead of it.
        Stream = "stream",
        /// Picks one of the others for the file and machine.
        Auto = "auto",
    }
}

/// How a method's bytes reach memory, which decides the hints it takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// Through a memory map of the file.
    Mapped,
    /// Copied out of the page cache by read calls on a descriptor.
    Buffered,
    /// From the device into aligned buffers (`O_DIRECT`), around the page cache.
    Direct,
    /// Whatever `auto` picks for the file.
    Chosen,
}

impl CountMethod {
    /// How the method reaches the bytes. An exhaustive `match`: a new method does not
    /// compile until it is classified here, in [`CountMethod::needs_size`] and in
    /// [`CountMethod::reads_ahead_itself`].
    pub(crate) const fn access(self) -> Access {
        match self {
            CountMethod::Mmap
            | CountMethod::MmapAvx2
            | CountMethod::MmapAvx512
            | CountMethod::MmapParallel => Access::Mapped,
            CountMethod::BufreadLines
            | CountMethod::BufreadChunks
            | CountMethod::Readv
            | CountMethod::Uring
            | CountMethod::UringReadv
            | CountMethod::PreadParallel
            | CountMethod::Stream => Access::Buffered,
            CountMethod::Direct | CountMethod::UringDirect => Access::Direct,
            CountMethod::Auto => Access::Chosen,
        }
    }

    /// Whether the method reads the size the file reported when opened (a map, ranges
    /// split among threads or queued reads) rather than reading until end of file; such a
    /// method reports a file that shrank under it ([`Error::FileShrank`]).
    pub const fn needs_size(self) -> bool {
        match self {
            CountMethod::BufreadLines
            | CountMethod::BufreadChunks
            | CountMethod::Readv
            | CountMethod::Stream
            | CountMethod::Auto => false,
            CountMethod::Direct
            | CountMethod::Mmap
            | CountMethod::MmapAvx2
            | CountMethod::MmapAvx512
            | CountMethod::Uring
            | CountMethod::UringReadv
            | CountMethod::MmapParallel
            | CountMethod::PreadParallel
            | CountMethod::UringDirect => true,
        }
    }

    /// Whether the method calls `readahead(2)` on its own ranges, so the `readahead` hint
    /// must not read the whole file ahead first.
    pub const fn reads_ahead_itself(self) -> bool {
        match self {
            CountMethod::PreadParallel | CountMethod::Stream => true,
            CountMethod::BufreadLines
            | CountMethod::BufreadChunks
            | CountMethod::Direct
            | CountMethod::Mmap
            | CountMethod::MmapAvx2
            | CountMethod::MmapAvx512
            | CountMethod::Readv
            | CountMethod::Uring
            | CountMethod::UringReadv
            | CountMethod::MmapParallel
            | CountMethod::UringDirect
            | CountMethod::Auto => false,
        }
    }

    /// The kernel a task should use with this method: the mmap family names its own
    /// (that is what distinguishes them); the others use the fastest this CPU has.
    pub fn kernel(self) -> Kernel {
        match self {
            CountMethod::Mmap => Kernel::Scalar,
            CountMethod::MmapAvx2 => Kernel::Avx2,
            CountMethod::MmapAvx512 => Kernel::Avx512,
            CountMethod::BufreadLines
            | CountMethod::BufreadChunks
            | CountMethod::Direct
            | CountMethod::Readv
            | CountMethod::Uring
            | CountMethod::UringReadv
            | CountMethod::MmapParallel
            | CountMethod::PreadParallel
            | CountMethod::UringDirect
            | CountMethod::Stream
            | CountMethod::Auto => Kernel::best(),
        }
    }

    /// Whether the method can run on this machine at all (CPU features, io_uring).
    ///
    /// A method that is available may still refuse a particular file (O_DIRECT on a file
    /// system without it, a FIFO for a method that needs a size): the count says so then.
    pub fn availability(self) -> Result<(), String> {
        match self {
            CountMethod::Mmap | CountMethod::MmapAvx2 | CountMethod::MmapAvx512 => {
                self.kernel().availability()
            }
            CountMethod::Uring => uring::availability(),
            CountMethod::UringReadv => uring_readv::availability(),
            CountMethod::UringDirect => uring_direct::availability(),
            CountMethod::BufreadLines
            | CountMethod::BufreadChunks
            | CountMethod::Direct
            | CountMethod::Readv
            | CountMethod::MmapParallel
            | CountMethod::PreadParallel
            | CountMethod::Stream
            | CountMethod::Auto => Ok(()),
        }
    }

    fn check_available(self) -> Result<()> {
        self.availability().map_err(|reason| Error::Unavailable {
            method: self.name(),
            reason,
        })
    }
}

crate::named_enum! {
    /// An access-pattern hint a method passes to the kernel. Each method accepts the hints
    /// that belong to it ([`CountHint::applies_to`]) and refuses the others.
    #[non_exhaustive]
    pub enum CountHint: "hint" {
        /// `madvise(MADV_SEQUENTIAL)` on a map, `posix_fadvise(POSIX_FADV_SEQUENTIAL)` on a
        /// descriptor: read-ahead more aggressively, drop pages behind.
        Sequential = "sequential",
        /// `madvise(MADV_WILLNEED)` / `posix_fadvise(POSIX_FADV_WILLNEED)`: start reading the
        /// whole range now.
        WillNeed = "willneed",
        /// `madvise(MADV_HUGEPAGE)` on a map: back it with huge pages where the page cache can.
        HugePage = "hugepage",
        /// `MAP_POPULATE`: fill the page tables when mapping, instead of one fault at a time.
        Populate = "populate",
        /// `readahead(2)` of each thread's range before reading it.
        Readahead = "readahead",
    }
}

impl CountHint {
    /// Whether `method` takes this hint: map hints for the mmap family, descriptor hints for
    /// the methods that read through the page cache; `O_DIRECT` methods take none.
    pub fn applies_to(self, method: CountMethod) -> bool {
        let access = method.access();
        let mapped = access == Access::Mapped;
        let buffered = access == Access::Buffered;
        match self {
            CountHint::Sequential | CountHint::WillNeed => mapped || buffered,
            CountHint::HugePage | CountHint::Populate => mapped,
            CountHint::Readahead => buffered,
        }
    }
}

/// The largest read buffer [`ReadOptions::buffer_size`] accepts: 1 GiB (the methods that
/// keep several buffers allocate a multiple of it).
pub const MAX_BUFFER_SIZE: usize = 1 << 30;

/// Profile knobs shared by the read methods. Every field has a per-method default (a named
/// constant in the method's module); `None` keeps it.
#[derive(Clone, Debug, Default)]
pub struct ReadOptions {
    buffer_size: Option<usize>,
    buffers: Option<usize>,
    threads: Option<usize>,
    queue_depth: Option<usize>,
    hints: Vec<CountHint>,
}

impl ReadOptions {
    /// Options with every method's defaults.
    pub fn new() -> ReadOptions {
        ReadOptions::default()
    }

    /// The size of each read buffer in bytes, clamped to 1..=[`MAX_BUFFER_SIZE`]. Default:
    /// per method (e.g. 64 KiB for `bufread-chunks`, 1 MiB for `direct`). `direct` rounds
    /// it up to the file system's alignment.
    pub fn buffer_size(mut self, bytes: usize) -> ReadOptions {
        self.buffer_size = Some(bytes.clamp(1, MAX_BUFFER_SIZE));
        self
    }

    /// The number of buffers per vectored read (`readv`, `uring-readv`). Default: 16.
    pub fn buffers(mut self, n: usize) -> ReadOptions {
        self.buffers = Some(n.clamp(1, 1024));
        self
    }

    /// Threads for the parallel methods. Default: the cores available to the process.
    pub fn threads(mut self, n: usize) -> ReadOptions {
        self.threads = Some(n.clamp(1, 1024));
        self
    }

    /// Reads in flight for `uring-direct`. Default: 8.
    pub fn queue_depth(mut self, n: usize) -> ReadOptions {
        self.queue_depth = Some(n.clamp(1, 4096));
        self
    }

    /// Adds an access hint; [`run`] refuses a hint that does not belong to the method.
    pub fn hint(mut self, hint: CountHint) -> ReadOptions {
        if !self.hints.contains(&hint) {
            self.hints.push(hint);
        }
        self
    }

    /// The hints set.
    pub fn hints(&self) -> &[CountHint] {
        &self.hints
    }

    /// These options with `threads`, `queue_depth` and `buffer_size` set where they are
    /// still open (`auto` fills in the settings a measured winner won with).
    pub(crate) fn with_defaults(
        &self,
        threads: Option<usize>,
        queue_depth: Option<usize>,
        buffer_size: Option<usize>,
    ) -> ReadOptions {
        let mut o = self.clone();
        o.threads = o.threads.or(threads);
        o.queue_depth = o.queue_depth.or(queue_depth);
        o.buffer_size = o.buffer_size.or(buffer_size);
        o
    }

    pub(crate) fn has_hint(&self, hint: CountHint) -> bool {
        self.hints.contains(&hint)
    }

    /// The threads asked for, or else the cores available.
    pub fn threads_or_cores(&self) -> usize {
        self.threads.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
    }

    pub(crate) fn queue_depth_or(&self, default: usize) -> usize {
        self.queue_depth.unwrap_or(default)
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
/// bytes delivered. The parallel methods deliver in order on one thread here, because a
/// plain [`Task`] cannot be split; [`run_split`] runs them on every core.
pub fn run(
    method: CountMethod,
    input: &Input,
    options: &ReadOptions,
    task: &mut dyn Task,
) -> Result<(CountMethod, u64)> {
    let (method, options) = prepare(method, input, options)?;
    let options = &options;
    let mut metered = Metered {
        inner: task,
        bytes: 0,
    };
    let task = &mut metered;
    match method {
        CountMethod::BufreadLines => bufread_lines::read(input, options, task)?,
        CountMethod::BufreadChunks => bufread_chunks::read(input, options, task)?,
        CountMethod::Direct => direct::read(input, options, task)?,
        CountMethod::Mmap
        | CountMethod::MmapAvx2
        | CountMethod::MmapAvx512
        | CountMethod::MmapParallel => mmap::read(input, method.name(), options, task)?,
        CountMethod::Readv => readv::read(input, options, task)?,
        CountMethod::Uring => uring::read(input, options, task)?,
        CountMethod::UringReadv => uring_readv::read(input, options, task)?,
        CountMethod::PreadParallel => {
            pread_parallel::read(input, options, task)?;
        }
        CountMethod::UringDirect => uring_direct::read(input, options, task)?,
        CountMethod::Stream => stream::read(input, options, task)?,
        CountMethod::Auto => unreachable!("auto was resolved by prepare"),
    }
    check_complete(method, input, metered.bytes)?;
    Ok((method, metered.bytes))
}

/// Methods that read a size fixed at open must have delivered all of it: fewer bytes mean
/// the file shrank meanwhile, and the result would describe a file that never existed.
fn check_complete(method: CountMethod, input: &Input, bytes: u64) -> Result<()> {
    if method.needs_size() && bytes < input.reported_len() - input.start() {
        return Err(Error::FileShrank);
    }
    Ok(())
}

/// [`run`] for a task that can be split across threads: the parallel methods then use
/// every core (or `options`' threads); the others behave as in [`run`].
pub fn run_split<T: SplitTask>(
    method: CountMethod,
    input: &Input,
    options: &ReadOptions,
    task: &mut T,
) -> Result<(CountMethod, u64)> {
    let (resolved, options) = prepare(method, input, options)?;
    let options = &options;
    let bytes = match resolved {
        CountMethod::MmapParallel => mmap_parallel::read_split(input, options, task)?,
        CountMethod::PreadParallel => pread_parallel::read_split(input, options, task)?,
        _ => return run(resolved, input, options, task),
    };
    check_complete(resolved, input, bytes)?;
    Ok((resolved, bytes))
}

/// Resolves `auto`, checks that the method can run and takes the hints, and applies the
/// descriptor hints (`posix_fadvise`, `readahead`) that are not the method's own.
fn prepare(
    method: CountMethod,
    input: &Input,
    options: &ReadOptions,
) -> Result<(CountMethod, ReadOptions)> {
    let (method, options) = match method {
        CountMethod::Auto => {
            let choice = auto::choose(input, options);
            (choice.method, choice.apply(options))
        }
        m => (m, options.clone()),
    };
    let options = &options;
    method.check_available()?;
    for &hint in options.hints() {
        if !hint.applies_to(method) {
            return Err(Error::HintNotApplicable {
                hint: hint.name(),
                method: method.name(),
            });
        }
    }
    if method.access() != Access::Mapped && input.kind() == crate::input::FileKind::Regular {
        for (hint, advice) in [
            (CountHint::Sequential, libc::POSIX_FADV_SEQUENTIAL),
            (CountHint::WillNeed, libc::POSIX_FADV_WILLNEED),
        ] {
            if options.has_hint(hint) {
                // SAFETY: posix_fadvise on an open descriptor has no memory effects.
                unsafe { libc::posix_fadvise(input.fd(), 0, 0, advice) };
            }
        }
        if options.has_hint(CountHint::Readahead) && !method.reads_ahead_itself() {
            // SAFETY: readahead on an open descriptor has no memory effects; a hint.
            unsafe { libc::readahead(input.fd(), 0, input.reported_len() as usize) };
        }
    }
    Ok((method, options.clone()))
}

/// The outcome of counting one input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineCount {
    /// The number of `\n` bytes, as `wc -l` reports.
    pub lines: u64,
    /// The bytes read.
    pub bytes: u64,
    /// The method that ran (never `auto`).
    pub method: CountMethod,
    /// The kernel that counted.
    pub kernel: Kernel,
}

/// Counts the lines of `input` the way `wc -l` does, with `method` (the lab's call;
/// programs use [`crate::count_lines`] or [`crate::CountOptions`]).
pub fn count_input(method: CountMethod, input: &Input, options: &ReadOptions) -> Result<LineCount> {
    let (resolved, tuned) = match method {
        CountMethod::Auto => {
            let choice = auto::choose(input, options);
            (choice.method, choice.apply(options))
        }
        m => (m, options.clone()),
    };
    let options = &tuned;
    resolved.check_available()?;
    let kernel = resolved.kernel();
    let counter = ByteCounter::new(kernel).ok_or_else(|| Error::Unavailable {
        method: resolved.name(),
        reason: format!("kernel {kernel} is not supported by this CPU"),
    })?;
    let mut task = CountLines::new(counter);
    let (method, bytes) = match run_split(resolved, input, options, &mut task) {
        // auto's choice can turn out to be refused only when it opens the file (O_DIRECT):
        // then it takes its fallback, which reads by offset and so can start over.
        Err(e)
            if method == CountMethod::Auto && e.is_unavailable() && resolved != auto::FALLBACK =>
        {
            task = task.fork();
            run_split(auto::FALLBACK, input, options, &mut task)?
        }
        other => other?,
    };
    Ok(LineCount {
        lines: task.lines(),
        bytes,
        method,
        kernel,
    })
}

pub use crate::sys::retry_eintr;
