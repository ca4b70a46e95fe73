//! [`RandomAccessFile`]: reads at arbitrary offsets, by `pread` or from a memory map,
//! like LevelDB's `PosixRandomAccessFile` and `PosixMmapReadableFile`.
//!
//! **System calls**: `open`, `fstat`; then either one `pread` per read (continued after
//! short reads and `EINTR`), or, when the file is mapped and a slot is free, one `mmap`
//! at open and `munmap` at drop, with page faults instead of system calls in between.
//!
//! **Which**: [`RandomAccessFile::open`] maps the file when `iolab bench random` measured a
//! map as this machine's winner for a file of its size, else (no measurements) when the
//! file is in the page cache as it opens, and reads with `pread` otherwise
//! ([`crate::random::auto`]); such a map is read by copying into the caller's `scratch` under the
//! `SIGBUS` guard, so a truncation is an [`Error::FileShrank`], not a crash.
//! [`RandomAccessOptions::backing`] picks one instead, and its `unsafe`
//! [`RandomAccessOptions::mmap`] asks for an unguarded map whose slices are returned as
//! they are.
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
//! and sees the file grow.
//!
//! **Limits**: a mapped file is read only up to the size it had when opened. If another
//! process truncates a mapped file, touching the lost pages raises `SIGBUS` and kills the
//! process unless the map is guarded (as [`RandomAccessFile::open`]'s are); if it writes
//! the file, the bytes of a returned slice change under it. That is why an unguarded map
//! is opt-in through the `unsafe` [`RandomAccessOptions::mmap`].
//!
//! **How it fails**: a directory is refused at open ([`Error::IsDirectory`]); read errors
//! (`EIO`) are [`Error::Io`]; reading at or past the end returns 0 bytes, not an error.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use memmap2::Mmap;

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

    /// The process-wide limiter, allowing [`DEFAULT_MMAP_LIMIT`] maps.
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
}

/// How to open a [`RandomAccessFile`]; [`RandomAccessFile::open`] uses the defaults.
#[derive(Clone, Copy, Debug)]
pub struct RandomAccessOptions {
    backing: Option<Backing>,
    mmap: bool,
    limiter: &'static MapLimiter,
}

impl Default for RandomAccessOptions {
    fn default() -> Self {
        RandomAccessOptions {
            backing: None,
            mmap: false,
            limiter: MapLimiter::global(),
        }
    }
}

impl RandomAccessOptions {
    /// Options with every default.
    pub fn new() -> RandomAccessOptions {
        RandomAccessOptions::default()
    }

    /// How reads reach the file: [`Backing::Pread`], or [`Backing::Mmap`], a map read by
    /// copying under the `SIGBUS` guard (safe against truncation; `pread` when no slot or
    /// guard is free).
    ///
    /// By default, the backing `iolab bench random` measured fastest on this machine for
    /// a file of this size, else a map for a file in the page cache and `pread` for one
    /// that is not ([`RandomAccessFile::choice`] says which and why).
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
    /// By default, [`MapLimiter::global`], which allows [`DEFAULT_MMAP_LIMIT`] maps.
    pub fn limiter(mut self, limiter: &'static MapLimiter) -> RandomAccessOptions {
        self.limiter = limiter;
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
            len,
            map: None,
            choice: None,
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
        let choice = match self.backing {
            None => crate::random::auto::choose(&file.file, len),
            Some(backing) => crate::random::auto::Choice {
                method: if backing == Backing::Mmap {
                    "mmap"
                } else {
                    "pread"
                },
                mmap: backing == Backing::Mmap,
                random_advice: false,
                reason: format!("{backing:?}, as the options asked"),
            },
        };
        if choice.mmap {
            file.map = self.limiter.acquire().and_then(|slot| {
                // SAFETY: the map is only read through copies made while its SIGBUS guard
                // is registered (see `read_at`), so truncation is caught and no slice of
                // it outlives a read.
                let map = unsafe { Mmap::map(&file.file) }.ok()?;
                if choice.random_advice {
                    let _ = map.advise(memmap2::Advice::Random);
                }
                // An unguarded map would let a truncation kill the process: `pread` then.
                let guard = crate::sys::sigbus::Guard::new(map.as_ptr(), map.len());
                guard.is_registered().then_some(Mapped {
                    guard: Some(guard),
                    map,
                    _slot: slot,
                })
            });
        }
        file.choice = Some(choice);
        Ok(file)
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
    len: u64,
    map: Option<Mapped>,
    /// What was chosen and why (`None` for an unguarded map or a file that cannot be mapped).
    choice: Option<crate::random::auto::Choice>,
}

impl RandomAccessFile {
    /// Opens `path` with the backing that reads random blocks fastest on this machine for a
    /// file of its size ([`crate::random::auto`]: the winners `iolab bench random`
    /// measured, else a map when the file is in the page cache and `pread` when it is
    /// not); [`RandomAccessFile::choice`] and `Debug` say which and why.
    ///
    /// A map chosen here is safe without any promise: [`RandomAccessFile::read`] copies
    /// from it into `scratch` under the `SIGBUS` guard, and a file that shrank gives
    /// [`Error::FileShrank`] rather than killing the process. Falls back to `pread` when no
    /// map slot is free, the `SIGBUS` guard has no room, or the map fails. A map reads the
    /// file only up to the size it had when opened: for a file that grows, use
    /// `RandomAccessOptions::new().backing(Backing::Pread).open`.
    pub fn open(path: impl AsRef<Path>) -> Result<RandomAccessFile> {
        RandomAccessOptions::new().open(path)
    }

    /// The backing chosen and why (`None` for [`RandomAccessOptions::mmap`] and for a file
    /// that cannot be mapped: empty, or not a regular file).
    pub fn choice(&self) -> Option<&crate::random::auto::Choice> {
        self.choice.as_ref()
    }

    /// Reads up to `scratch.len()` bytes at `offset` and returns them: a slice of the map
    /// (no copy) when mapped, else the filled start of `scratch`. Fewer bytes only at the
    /// end of the file; none at or past it.
    pub fn read<'a>(&'a self, offset: u64, scratch: &'a mut [u8]) -> Result<&'a [u8]> {
        match &self.map {
            Some(mapped) if mapped.guard.is_some() => {
                let n = self.read_at(offset, scratch)?;
                Ok(&scratch[..n])
            }
            Some(mapped) => Ok(window(&mapped.map, offset, scratch.len())),
            None => {
                let n = self.pread_full(offset, scratch)?;
                Ok(&scratch[..n])
            }
        }
    }

    /// Copies up to `buf.len()` bytes at `offset` into `buf` and returns how many. Fewer
    /// only at the end of the file; 0 at or past it.
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        match &self.map {
            Some(mapped) => {
                let src = window(&mapped.map, offset, buf.len());
                buf[..src.len()].copy_from_slice(src);
                if mapped.guard.as_ref().is_some_and(|g| g.truncated()) {
                    return Err(Error::FileShrank);
                }
                Ok(src.len())
            }
            None => self.pread_full(offset, buf),
        }
    }

    /// The file's size when it was opened (a mapped file is read up to this size; with
    /// `pread`, bytes appended later can be read too).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file was empty when opened.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether reads come from a map or from `pread`.
    pub fn backing(&self) -> Backing {
        if self.map.is_some() {
            Backing::Mmap
        } else {
            Backing::Pread
        }
    }

    /// `pread` until `buf` is full or the file ends.
    fn pread_full(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            let Some(at) = offset.checked_add(done as u64) else {
                break;
            };
            match retry_eintr(|| self.file.read_at(&mut buf[done..], at)) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) => return Err(Error::from_io("cannot read", e, 0)),
            }
        }
        Ok(done)
    }
}

/// Up to `len` bytes of `map` from `offset`, fewer at its end.
fn window(map: &[u8], offset: u64, len: usize) -> &[u8] {
    let start = usize::try_from(offset).unwrap_or(usize::MAX).min(map.len());
    let end = start.saturating_add(len).min(map.len());
    &map[start..end]
}
