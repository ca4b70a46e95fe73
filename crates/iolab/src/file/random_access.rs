//! [`RandomAccessFile`]: reads at arbitrary offsets, by `pread` or from a memory map,
//! like LevelDB's `PosixRandomAccessFile` and `PosixMmapReadableFile`.
//!
//! **System calls**: `open`, `fstat`; then per read a `pread`, a copy from a map (one
//! `mmap` at open and `munmap` at drop, page faults instead of system calls), or an
//! `O_DIRECT` `pread` (a second descriptor, opened at open through `/proc/self/fd`).
//!
//! **Which**: [`RandomAccessFile::open`] measures ([`super::measured`]): from its first
//! read, and now and then after, its reads take turns among `pread`, the map and
//! `O_DIRECT` (offered only to a file not cached at open), and the fastest serves
//! ([`RandomAccessFile::why`] says which and the times). The map is charged the page
//! faults it would take serving ([`super::map_cost`]): on a cached file a fresh map's
//! first touches can cost more than `pread` saves (issue 48). What the winner
//! `iolab bench random` saved for the file's size class (when this user, iolab and machine
//! saved it), else the residency rule ([`super::auto`]), names is where the trials start:
//! the backing a challenger must beat by the margin. A map is read by copying into the
//! caller's `scratch` under the `SIGBUS` guard, so a truncation is an
//! [`Error::FileShrank`], not a crash. [`RandomAccessOptions::backing`] picks one instead,
//! and its `unsafe` [`RandomAccessOptions::mmap`] asks for an unguarded map whose slices
//! are returned as they are.
//!
//! **Many reads at once**: [`RandomAccessFile::read_batch`] takes a list of `(offset, len)`
//! requests and lends each block to a callback as it lands, with io_uring at the measured
//! queue depth (`O_DIRECT` for a file not in the page cache), the map for one that is, or
//! `pread` where io_uring cannot run ([`super::batch`]; [`RandomAccessFile::batch_why`]).
//! Cold, it is what reaches the device's depth: one call per block waits for each.
//!
//! **Map slots**: every map costs address space and a kernel VMA, and a process has at
//! most `vm.max_map_count` (65530 by default) of them, so the live maps are capped by a
//! [`MapLimiter`], a shared atomic counter. The global one allows [`DEFAULT_MMAP_LIMIT`]
//! maps (1000 on 64-bit targets, none on 32-bit: LevelDB's `kDefaultMmapLimit`). A file
//! opened while every slot is taken (or whose map fails) falls back to `pread`, silently:
//! [`RandomAccessFile::backing`] says which it got.
//!
//! **When each wins**: a map serves repeated small reads of a warm file without a system
//! call (and, with [`RandomAccessOptions::mmap`], without a copy); `pread` costs
//! a system call and a copy per read but no page-table work, is safe against truncation,
//! and sees the file grow; `O_DIRECT` skips the page cache's insertions and evictions,
//! which pays on a device as fast as memory, and loses whatever the cache would have kept
//! (docs/findings/random.md).
//!
//! **Limits**: a mapped file is read only up to the size it had when opened. If another
//! process truncates a mapped file, touching the lost pages raises `SIGBUS` and kills the
//! process unless the map is guarded (as [`RandomAccessFile::open`]'s are); if it writes
//! the file, the bytes of a returned slice change under it. That is why an unguarded map
//! is opt-in through the `unsafe` [`RandomAccessOptions::mmap`].
//!
//! **How it fails**: a directory is refused at open ([`Error::IsDirectory`]); read errors
//! (`EIO`) are [`Error::Io`], a guarded map's lost page [`Error::FileShrank`], each naming
//! the path the file was opened by ([`Error::path`]; its [`Error::cause`] is the variant);
//! reading at or past the end returns 0 bytes, not an error.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use std::time::Instant;

use memmap2::Mmap;

#[cfg(any(test, feature = "lab"))]
use super::auto::Choice;
use super::batch::{BatchBacking, Batcher, ReadInto, Target};
use super::direct::DirectReader;
use super::map_cost::MapTurn;
use super::measured::{self, Measured};
use super::{Error, Result, open_error, retry_eintr};

/// The global limiter's cap on live maps: 1000 on 64-bit targets, 0 (never map) on
/// 32-bit ones, where address space is scarce. LevelDB's `kDefaultMmapLimit`.
pub const DEFAULT_MMAP_LIMIT: usize = if usize::BITS >= 64 { 1000 } else { 0 };

static GLOBAL_LIMITER: MapLimiter = MapLimiter::new(DEFAULT_MMAP_LIMIT);

/// Caps how many memory maps are alive at once (LevelDB's `Limiter`).
#[derive(Debug)]
pub struct MapLimiter {
    live: AtomicUsize,
    max: usize,
}

impl MapLimiter {
    /// A limiter allowing `max` live maps.
    pub const fn new(max: usize) -> MapLimiter {
        MapLimiter {
            live: AtomicUsize::new(0),
            max,
        }
    }

    /// The process-wide limiter, allowing 1000 maps on 64-bit targets and none on 32-bit
    /// ones, where address space is scarce (LevelDB's `kDefaultMmapLimit`).
    pub fn global() -> &'static MapLimiter {
        &GLOBAL_LIMITER
    }

    /// Maps alive now.
    pub fn live(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    /// The cap.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Takes a slot if one is free.
    fn acquire(&'static self) -> Option<MapSlot> {
        self.live
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max).then_some(n + 1)
            })
            .ok()
            .map(|_| MapSlot { limiter: self })
    }
}

/// One taken slot, given back when dropped.
#[derive(Debug)]
struct MapSlot {
    limiter: &'static MapLimiter,
}

impl Drop for MapSlot {
    fn drop(&mut self) {
        self.limiter.live.fetch_sub(1, Ordering::AcqRel);
    }
}

/// How a [`RandomAccessFile`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backing {
    /// One `pread` per read.
    Pread,
    /// Slices of a memory map.
    Mmap,
    /// `pread` with `O_DIRECT`, past the page cache, through an aligned bounce buffer for
    /// reads that are not aligned.
    Direct,
}

/// How to open a [`RandomAccessFile`]; [`RandomAccessFile::open`] uses the defaults.
#[derive(Clone, Copy, Debug)]
pub struct RandomAccessOptions {
    backing: Option<Backing>,
    mmap: bool,
    limiter: &'static MapLimiter,
    batch: Option<BatchBacking>,
    queue_depth: Option<usize>,
}

impl Default for RandomAccessOptions {
    fn default() -> Self {
        RandomAccessOptions {
            backing: None,
            mmap: false,
            limiter: MapLimiter::global(),
            batch: None,
            queue_depth: None,
        }
    }
}

impl RandomAccessOptions {
    /// Options with every default.
    pub fn new() -> RandomAccessOptions {
        RandomAccessOptions::default()
    }

    /// How reads reach the file: [`Backing::Pread`]; [`Backing::Mmap`], a map read by
    /// copying under the `SIGBUS` guard (safe against truncation; `pread` when no slot or
    /// guard is free); or [`Backing::Direct`] (refused where the file system refuses
    /// `O_DIRECT`).
    ///
    /// By default, measured: the reads take turns among the backings at first and now and
    /// then, and the fastest serves ([`RandomAccessFile::why`] says which and why).
    ///
    /// This is the backing of [`RandomAccessFile::read_at`] and [`RandomAccessFile::read`];
    /// [`RandomAccessFile::read_batch`] has its own ([`RandomAccessOptions::batch_backing`]),
    /// and can copy from the map only when this one makes one.
    pub fn backing(mut self, backing: Backing) -> RandomAccessOptions {
        self.backing = Some(backing);
        self
    }

    /// Whether to map the file, unguarded, when the limiter has a free slot:
    /// [`RandomAccessFile::read`] then returns slices of the map, without a copy.
    ///
    /// By default, `false`.
    ///
    /// # Safety
    ///
    /// With `true`, while the [`RandomAccessFile`] (and any slice [`RandomAccessFile::read`]
    /// returned) is alive, no one may truncate the file (touching a lost page raises
    /// `SIGBUS`) or modify the bytes being read (a `&[u8]` must not change under its
    /// holder). Files that are written once and then only read — LevelDB's tables, iolab's
    /// data sets — meet this.
    pub unsafe fn mmap(mut self, enabled: bool) -> RandomAccessOptions {
        self.mmap = enabled;
        self
    }

    /// The limiter to take a map slot from.
    ///
    /// By default, [`MapLimiter::global`], which allows 1000 maps on 64-bit targets (none
    /// on 32-bit ones).
    pub fn limiter(mut self, limiter: &'static MapLimiter) -> RandomAccessOptions {
        self.limiter = limiter;
        self
    }

    /// How [`RandomAccessFile::read_batch`] reads: [`BatchBacking::Map`] (needs the map
    /// the default or [`Backing::Mmap`] makes), [`BatchBacking::Pread`],
    /// [`BatchBacking::Uring`] or [`BatchBacking::UringDirect`]; a batch by one that cannot
    /// run here fails with [`Error::Unavailable`] and the reason.
    ///
    /// By default, measured: the map for a file in the page cache, io_uring with
    /// `O_DIRECT` for one that is not, buffered io_uring for one that is not but whose
    /// requests keep coming back to a hot set of blocks (a quarter of them or more) and
    /// where `O_DIRECT` is refused, `pread` where io_uring is unavailable
    /// ([`RandomAccessFile::batch_why`] says which and why).
    pub fn batch_backing(mut self, backing: BatchBacking) -> RandomAccessOptions {
        self.batch = Some(backing);
        self
    }

    /// Reads in flight at once in a [`RandomAccessFile::read_batch`] through io_uring, from
    /// 1 to 256.
    ///
    /// By default, the depth `iolab bench random --sweep` measured fastest on this machine
    /// for the file's size class, else 32.
    pub fn queue_depth(mut self, depth: usize) -> RandomAccessOptions {
        self.queue_depth = Some(depth);
        self
    }

    /// Opens `path` for reading at offsets. A failure names `path`.
    pub fn open(&self, path: impl AsRef<Path>) -> Result<RandomAccessFile> {
        let path = path.as_ref();
        self.open_at(path).map_err(|e| e.at(path))
    }

    fn open_at(&self, path: &Path) -> Result<RandomAccessFile> {
        let file = retry_eintr(|| File::open(path)).map_err(|e| open_error("cannot open", e))?;
        let meta = file.metadata().map_err(|e| open_error("cannot stat", e))?;
        if meta.is_dir() {
            return Err(Error::IsDirectory);
        }
        let len = meta.len();
        let mut file = RandomAccessFile {
            file,
            path: path.to_path_buf(),
            len,
            map: None,
            direct: None,
            choice: None,
            measured: None,
            batch: Batcher::new(self.batch, self.queue_depth, len),
        };
        // Only a regular, non-empty file can be mapped (a zero-length map is invalid).
        if !meta.is_file() || len == 0 {
            return Ok(file);
        }
        if self.mmap {
            file.map = self.limiter.acquire().and_then(|slot| {
                // SAFETY: the caller of `RandomAccessOptions::mmap(true)` promised that the
                // file is neither truncated nor modified while this map and its slices live.
                // A failed map is no error: the slot is released and `pread` is used.
                unsafe { Mmap::map(&file.file) }.ok().map(|map| Mapped {
                    guard: None,
                    map,
                    _slot: slot,
                })
            });
            return Ok(file);
        }
        match self.backing {
            Some(Backing::Pread) => {}
            Some(Backing::Mmap) => file.map = self.guarded_map(&file.file, true),
            Some(Backing::Direct) => file.direct = Some(DirectReader::open(&file.file)?),
            None => {
                // One look at the page cache serves the start and the O_DIRECT offer.
                let cached = crate::cache::residency_windows(&file.file).ok();
                let choice = super::auto::choose_cached(len, cached);
                // Advised MADV_RANDOM: a trial's turns on a file not in memory must not
                // read ahead megabytes per fault.
                file.map = self.guarded_map(&file.file, false);
                // O_DIRECT cannot win on a file in memory: offered only to one that is not.
                if cached.unwrap_or(0.0) < super::auto::RESIDENT {
                    file.direct = DirectReader::open(&file.file).ok();
                }
                let mut offered = vec![Backing::Pread];
                offered.extend(file.map.as_ref().map(|_| Backing::Mmap));
                offered.extend(file.direct.as_ref().map(|_| Backing::Direct));
                let first = if choice.mmap && file.map.is_some() {
                    Backing::Mmap
                } else {
                    Backing::Pread
                };
                file.measured = Some(Measured::new(first, &offered, len));
                file.choice = Some(choice);
            }
        }
        Ok(file)
    }

    /// A map read by copying under the `SIGBUS` guard, advised `MADV_RANDOM` unless
    /// `readahead`; `None` when no slot or guard is free or the map fails.
    fn guarded_map(&self, file: &File, readahead: bool) -> Option<Mapped> {
        self.limiter.acquire().and_then(|slot| {
            // SAFETY: the map is only read through copies made while its SIGBUS guard
            // is registered (see `read_at`), so truncation is caught and no slice of
            // it outlives a read.
            let map = unsafe { Mmap::map(file) }.ok()?;
            if !readahead {
                let _ = map.advise(memmap2::Advice::Random);
            }
            // An unguarded map would let a truncation kill the process: `pread` then.
            let guard = crate::sys::sigbus::Guard::new(map.as_ptr(), map.len());
            guard.is_registered().then_some(Mapped {
                guard: Some(guard),
                map,
                _slot: slot,
            })
        })
    }
}

/// A live map and the slot it holds. Fields drop in order: the guard is unregistered and
/// the map unmapped before the slot is given back.
#[derive(Debug)]
struct Mapped {
    /// Set for maps chosen by [`RandomAccessFile::open`]: reads copy under the `SIGBUS`
    /// guard instead of handing out slices, so no caller promise is needed.
    guard: Option<crate::sys::sigbus::Guard>,
    map: Mmap,
    _slot: MapSlot,
}

/// A file read at arbitrary offsets. `Send + Sync`: reads take `&self`, so threads can
/// share one.
///
/// ```no_run
/// use iolab::RandomAccessFile;
///
/// let table = RandomAccessFile::open("table.sst")?;
/// let mut scratch = [0u8; 4096];
/// let block = table.read(8192, &mut scratch)?; // up to 4096 bytes from offset 8192
/// # Ok::<(), iolab::Error>(())
/// ```
#[derive(Debug)]
pub struct RandomAccessFile {
    file: File,
    /// The path it was opened by, which its read errors name.
    path: PathBuf,
    len: u64,
    map: Option<Mapped>,
    /// The same file opened with `O_DIRECT`, when that backing is asked for or offered.
    direct: Option<DirectReader>,
    /// Where the measured default started and why (`None` when a backing was asked for,
    /// for an unguarded map, or a file that cannot be mapped).
    choice: Option<super::auto::Choice>,
    /// The measured default's trials (`None` as for `choice`).
    measured: Option<Measured>,
    /// How batches read, and why.
    batch: Batcher,
}

impl RandomAccessFile {
    /// Opens `path` with a measured backing: its first reads take turns among `pread`, a
    /// map advised `MADV_RANDOM` and, for a file not in the page cache, `O_DIRECT`, and
    /// the fastest serves, the map charged the page faults it would take; the turns come
    /// back now and then, so a file that warms or is evicted while open, or a hot set
    /// that would pay for the map's faults, is followed (docs/findings/random.md). The
    /// backing `iolab bench random` measured fastest here for a file of its size, else a
    /// map for a file in the page cache and `pread` for one that is not, is the one the
    /// first trial keeps within its margin. [`RandomAccessFile::why`] and `Debug` say which
    /// and why.
    ///
    /// A map used here is safe without any promise: [`RandomAccessFile::read`] copies
    /// from it into `scratch` under the `SIGBUS` guard, and a file that shrank gives
    /// [`Error::FileShrank`] rather than killing the process. No map is offered when no
    /// map slot is free, the `SIGBUS` guard has no room, or the map fails. Every backing
    /// reads the file up to the size it had when opened: for a file that grows, use
    /// `RandomAccessOptions::new().backing(Backing::Pread).open`.
    pub fn open(path: impl AsRef<Path>) -> Result<RandomAccessFile> {
        RandomAccessOptions::new().open(path)
    }

    /// Which backing serves now and why: asked for, or measured (where it started, and
    /// the last turns' time per read of each backing).
    pub fn why(&self) -> String {
        let Some(measured) = &self.measured else {
            return format!("{:?}, as the options asked", self.backing());
        };
        let start = self.choice.as_ref().map_or("", |c| c.reason.as_str());
        match (measured.last(), &self.choice) {
            (Some(trial), _) => format!("{trial} (it started from: {start})"),
            // Before any trial the backing is the one chosen at open (a plain `mmap` when
            // the profile's winner was one), unless no map could be had.
            (None, Some(c)) if c.mmap == (measured.serving() == Backing::Mmap) => {
                format!("{} until the first turns end ({start})", c.method)
            }
            (None, _) => format!(
                "{} until the first turns end ({start})",
                measured::name(measured.serving())
            ),
        }
    }

    /// Reads up to `scratch.len()` bytes at `offset` and returns them: a slice of the map
    /// (no copy) for an unguarded map, else the filled start of `scratch`. Fewer bytes
    /// only at the end of the file; none at or past it. An error names the file's path.
    pub fn read<'a>(&'a self, offset: u64, scratch: &'a mut [u8]) -> Result<&'a [u8]> {
        match &self.map {
            Some(mapped) if mapped.guard.is_none() => {
                Ok(window(&mapped.map, offset, scratch.len()))
            }
            _ => {
                let n = self.read_at(offset, scratch)?;
                Ok(&scratch[..n])
            }
        }
    }

    /// Copies up to `buf.len()` bytes at `offset` into `buf` and returns how many. Fewer
    /// only at the end of the file; 0 at or past it. An error names the file's path.
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.read_measured(offset, buf)
            .map_err(|e| e.at(&self.path))
    }

    /// [`RandomAccessFile::read_at`] without the path on errors.
    fn read_measured(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let Some(measured) = &self.measured else {
            return self.read_by(self.backing(), offset, buf, None);
        };
        let cached = || crate::cache::residency_windows(&self.file).ok();
        let (backing, timed) = measured.pick(offset, cached);
        if let (Backing::Mmap, true, Some(mapped)) = (backing, timed, &self.map)
            && let Some(plan) = measured.map_turn_plan()
        {
            return self.map_turn(measured, mapped, plan, offset, buf);
        }
        let start = timed.then(Instant::now);
        let mut got = self.read_by(backing, offset, buf, Some(self.len));
        if let Some(start) = start {
            measured.record(backing, start.elapsed());
        }
        if backing == Backing::Direct && matches!(got, Err(Error::Unavailable { .. })) {
            measured.withdraw(Backing::Direct);
            got = self.read_by(Backing::Pread, offset, buf, Some(self.len));
        }
        got
    }

    /// A trial's turn of the map on a warm file: timed, with the faults the thread took
    /// during the copy, a fault-free probe copy before it (at `plan.0`) and, after a fault,
    /// how much the fault mapped (when `plan.1`; [`super::map_cost`]).
    fn map_turn(
        &self,
        measured: &Measured,
        mapped: &Mapped,
        (probe_at, wants_run): (Option<u64>, bool),
        offset: u64,
        buf: &mut [u8],
    ) -> Result<usize> {
        use crate::sys::faults::{mapped_run, thread_minor_faults};
        let len = window(&mapped.map, offset, buf.len()).len();
        // The caller's buffer written first (each byte as it is), so that its own
        // first-touch fault is not charged to the map.
        for i in (0..len).step_by(4096) {
            buf[i] = std::hint::black_box(buf[i]);
        }
        // The probe copies into the bytes the read then overwrites.
        let probe_ns = probe_at.and_then(|at| {
            let before = thread_minor_faults();
            let start = Instant::now();
            let src = window(&mapped.map, at, len);
            buf[..src.len()].copy_from_slice(src);
            std::hint::black_box(&mut buf[..]);
            let ns = start.elapsed().as_nanos() as u64;
            (thread_minor_faults() == before).then_some(ns)
        });
        let before = thread_minor_faults();
        let start = Instant::now();
        let got = self.read_by(Backing::Mmap, offset, buf, Some(self.len));
        let ns = start.elapsed().as_nanos() as u64;
        let faults = thread_minor_faults().saturating_sub(before);
        let run_pages = if faults > 0 && wants_run && len > 0 {
            let base = mapped.map.as_ptr();
            // `offset` is inside the map: `len > 0`.
            mapped_run(base, mapped.map.len(), base.wrapping_add(offset as usize))
        } else {
            None
        };
        measured.record_map(MapTurn {
            ns,
            faults,
            offset,
            probe_ns,
            run_pages,
        });
        got
    }

    /// One read by `backing`, up to `end` when given (else, by `pread`, to the file's end
    /// now).
    fn read_by(
        &self,
        backing: Backing,
        offset: u64,
        buf: &mut [u8],
        end: Option<u64>,
    ) -> Result<usize> {
        match (backing, &self.map, &self.direct) {
            (Backing::Mmap, Some(mapped), _) => {
                let src = window(&mapped.map, offset, buf.len());
                buf[..src.len()].copy_from_slice(src);
                if mapped.guard.as_ref().is_some_and(|g| g.truncated()) {
                    return Err(Error::FileShrank);
                }
                Ok(src.len())
            }
            (Backing::Direct, _, Some(direct)) => {
                direct.read_at(offset, buf, end.unwrap_or(self.len))
            }
            _ => {
                let room = end.map_or(buf.len(), |end| {
                    usize::try_from(end.saturating_sub(offset))
                        .map_or(buf.len(), |r| r.min(buf.len()))
                });
                self.pread_full(offset, &mut buf[..room])
            }
        }
    }

    /// Reads many blocks in one call: each request `(offset, len)` of `requests` is read
    /// and its bytes lent to `each` with the request's index, as it lands — in any order,
    /// each exactly once — through io_uring with up to the queue depth in flight, a map, or
    /// `pread`, as measured ([`RandomAccessOptions::batch_backing`];
    /// [`RandomAccessFile::batch_why`] says which and why).
    ///
    /// A block is `len` bytes, fewer where the file ended when opened, and empty for a
    /// request at or past that end; any offset and length work, `O_DIRECT` included (the
    /// aligned range around it is read). The slice lent is valid during the call to
    /// `each`: copy what is kept. A read that fails is that request's `Err`, naming the
    /// file; a file that shrank since open gives short or empty blocks (or, from a map,
    /// [`Error::FileShrank`]), never wrong bytes. The call returns `Err` only when reading
    /// could not go on (a ring that cannot be set up, a failed submission); requests not
    /// answered by then get no call.
    ///
    /// ```no_run
    /// let table = iolab::RandomAccessFile::open("table.sst")?;
    /// let requests = [(0, 4096), (1 << 20, 4096), (123_456, 100)];
    /// let mut sizes = [0; 3];
    /// table.read_batch(&requests, |i, block| {
    ///     if let Ok(block) = block {
    ///         sizes[i] = block.len();
    ///     }
    /// })?;
    /// # Ok::<(), iolab::Error>(())
    /// ```
    pub fn read_batch(
        &self,
        requests: &[(u64, usize)],
        mut each: impl FnMut(usize, Result<&[u8]>),
    ) -> Result<()> {
        let map = |offset, buf: &mut [u8]| self.read_by(Backing::Mmap, offset, buf, Some(self.len));
        let target = Target {
            file: &self.file,
            end: self.len,
            map: self.map.as_ref().map(|_| &map as &ReadInto<'_>),
            direct: self.direct.as_ref(),
        };
        let path = &self.path;
        let mut lend = |i: usize, block: Result<&[u8]>| each(i, block.map_err(|e| e.at(path)));
        self.batch
            .read(&target, requests, &mut lend)
            .map_err(|e| e.at(path))
    }

    /// Which backing the last [`RandomAccessFile::read_batch`] read by, and why (with the
    /// queue depth of a ring and where it came from).
    pub fn batch_why(&self) -> String {
        self.batch.why()
    }

    /// The backing the last [`RandomAccessFile::read_batch`] read by; `None` before the
    /// first.
    pub fn batch_backing(&self) -> Option<BatchBacking> {
        self.batch.serving()
    }

    /// The file's size when it was opened: the default and a map read up to this size;
    /// with `pread` asked for, bytes appended later can be read too.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file was empty when opened.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The backing serving reads now (with the measured default, it may change).
    pub fn backing(&self) -> Backing {
        match (&self.measured, &self.map, &self.direct) {
            (Some(measured), _, _) => measured.serving(),
            (None, Some(_), _) => Backing::Mmap,
            (None, None, Some(_)) => Backing::Direct,
            (None, None, None) => Backing::Pread,
        }
    }

    /// `pread` until `buf` is full or the file ends.
    fn pread_full(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        super::pread_full(&self.file, offset, buf)
    }
}

/// Where `file`'s measured backing started and why (`None` when a backing was asked for,
/// for [`RandomAccessOptions::mmap`], and for a file that cannot be mapped: empty, or not a
/// regular file). The laboratory's view; a program reads [`RandomAccessFile::why`].
#[cfg(any(test, feature = "lab"))]
pub fn starting_choice(file: &RandomAccessFile) -> Option<&Choice> {
    file.choice.as_ref()
}

/// Up to `len` bytes of `map` from `offset`, fewer at its end.
fn window(map: &[u8], offset: u64, len: usize) -> &[u8] {
    let start = usize::try_from(offset).unwrap_or(usize::MAX).min(map.len());
    let end = start.saturating_add(len).min(map.len());
    &map[start..end]
}
