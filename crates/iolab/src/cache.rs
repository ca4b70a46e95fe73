//! The page cache: how much of a file is cached, and dropping a file's clean pages
//! (the laboratory's `cache` evicts and warms whole files with these).
//!
//! **Residency** is asked with `cachestat(2)` (Linux 6.5+: one system call, no mapping),
//! falling back to `mincore(2)` over a `PROT_NONE`-free read-only map (which faults in
//! nothing; it only asks). **Eviction** is `fdatasync(2)` then
//! `posix_fadvise(POSIX_FADV_DONTNEED)`, which needs no privilege: clean pages of the file
//! are dropped. Pages mapped by another process stay; that is why residency is checked
//! afterwards instead of assumed. Optionally, as root, `/proc/sys/vm/drop_caches` is
//! written too (never through `sudo`).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

use crate::error::{Error, Result};

/// The fraction of `file`'s pages in the page cache, 0.0 to 1.0 (1.0 for an empty file).
#[cfg(any(test, feature = "lab"))]
pub fn residency(file: &File) -> Result<f64> {
    let len = file
        .metadata()
        .map_err(|e| Error::io("cannot stat", e))?
        .len();
    if len == 0 {
        return Ok(1.0);
    }
    match cachestat(file, len) {
        Ok(fraction) => Ok(fraction),
        Err(_) => mincore(file, len),
    }
}

/// Like [`residency`], but cheap on every kernel: where `cachestat(2)` is missing, asks
/// `mincore(2)` about [`SAMPLES`] windows of [`SAMPLE_LEN`] spread over the file rather
/// than about every page.
pub fn residency_sampled(file: &File) -> Result<f64> {
    let len = file
        .metadata()
        .map_err(|e| Error::io("cannot stat", e))?
        .len();
    if len == 0 {
        return Ok(1.0);
    }
    if let Ok(fraction) = cachestat(file, len) {
        return Ok(fraction);
    }
    if len <= SAMPLES * SAMPLE_LEN {
        return mincore(file, len);
    }
    let stride = len / SAMPLES / page_size() * page_size();
    let mut sum = 0.0;
    for i in 0..SAMPLES {
        sum += mincore_range(file, i * stride, SAMPLE_LEN)?;
    }
    Ok(sum / SAMPLES as f64)
}

/// Like [`residency_sampled`], but cheap on every file: a file over [`SAMPLES`] ×
/// [`SAMPLE_LEN`] bytes is asked about those windows only (`cachestat` of each range, else
/// `mincore`). A whole-file `cachestat` walks every entry of the page cache's tree: about
/// 10 ms for a 4 GiB file cached in single pages, which `RandomAccessFile` asked at open and
/// at each trial (issue 48); 16 windows take microseconds. An estimate: a file cached in
/// patches between the windows reads as more or less cached than it is.
pub fn residency_windows(file: &File) -> Result<f64> {
    let len = file
        .metadata()
        .map_err(|e| Error::io("cannot stat", e))?
        .len();
    if len <= SAMPLES * SAMPLE_LEN {
        return residency_sampled(file);
    }
    let stride = len / SAMPLES / page_size() * page_size();
    let mut sum = 0.0;
    for i in 0..SAMPLES {
        sum += match cachestat_range(file, i * stride, SAMPLE_LEN) {
            Ok(fraction) => fraction,
            Err(_) => mincore_range(file, i * stride, SAMPLE_LEN)?,
        };
    }
    Ok(sum / SAMPLES as f64)
}

/// Windows sampled by [`residency_sampled`] without `cachestat`, and by
/// [`residency_windows`].
pub const SAMPLES: u64 = 16;
/// Bytes per sampled window: 256 KiB.
pub const SAMPLE_LEN: u64 = 256 << 10;

/// Number of pages of `len` bytes, rounding up.
fn pages(len: u64) -> u64 {
    len.div_ceil(page_size())
}

pub use crate::sys::page_size;

#[repr(C)]
struct CachestatRange {
    off: u64,
    len: u64,
}

#[repr(C)]
#[derive(Default)]
struct Cachestat {
    nr_cache: u64,
    nr_dirty: u64,
    nr_writeback: u64,
    nr_evicted: u64,
    nr_recently_evicted: u64,
}

/// `cachestat(2)`, Linux 6.5. Same number on every 64-bit architecture's unified table.
const SYS_CACHESTAT: libc::c_long = 451;

fn cachestat(file: &File, len: u64) -> io::Result<f64> {
    cachestat_range(file, 0, len)
}

/// The cached fraction of `len` bytes from `off`.
fn cachestat_range(file: &File, off: u64, len: u64) -> io::Result<f64> {
    let range = CachestatRange { off, len };
    let mut stat = Cachestat::default();
    // SAFETY: both pointers point to live, correctly laid out `repr(C)` structs for the
    // duration of the call; flags must be 0.
    let rc = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            file.as_raw_fd(),
            &range as *const CachestatRange,
            &mut stat as *mut Cachestat,
            0,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((stat.nr_cache as f64 / pages(len) as f64).min(1.0))
}

fn mincore(file: &File, len: u64) -> Result<f64> {
    mincore_range(file, 0, len)
}

/// The resident fraction of `len` bytes from `offset` (a multiple of the page size).
fn mincore_range(file: &File, offset: u64, len: u64) -> Result<f64> {
    let len_usize = usize::try_from(len).map_err(|_| {
        Error::io(
            "mincore",
            io::Error::other("file larger than the address space"),
        )
    })?;
    // SAFETY: a fresh shared read-only mapping of an open file; no memory is touched
    // through it (mincore only asks the kernel), and it is unmapped before returning.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len_usize,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            offset as libc::off_t,
        )
    };
    if addr == libc::MAP_FAILED {
        return Err(Error::io("mmap failed", io::Error::last_os_error()));
    }
    let mut vec = vec![0u8; pages(len) as usize];
    // SAFETY: `addr..addr+len` is the mapping made above and `vec` has one byte per page.
    let rc = unsafe { libc::mincore(addr, len_usize, vec.as_mut_ptr()) };
    let err = io::Error::last_os_error();
    // SAFETY: unmapping exactly the mapping made above, which nothing else refers to.
    unsafe { libc::munmap(addr, len_usize) };
    if rc != 0 {
        return Err(Error::io("mincore failed", err));
    }
    let resident = vec.iter().filter(|&&b| b & 1 == 1).count();
    Ok(resident as f64 / vec.len() as f64)
}

/// Drops `file`'s clean pages from the page cache (`posix_fadvise(POSIX_FADV_DONTNEED)`):
/// the next reads come from the device. Dirty pages, and pages under writeback, stay.
pub fn drop_clean_pages(file: &File) -> io::Result<()> {
    // SAFETY: posix_fadvise on an open descriptor has no memory effects.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    match rc {
        0 => Ok(()),
        rc => Err(io::Error::from_raw_os_error(rc)),
    }
}
