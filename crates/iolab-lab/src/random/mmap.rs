//! `mmap`: blocks copied out of a shared map of the whole file, with the kernel's default
//! read-ahead — fio's `mmap` engine, and LevelDB's `PosixMmapReadableFile`.
//!
//! **System calls**: one `mmap(2)` at open, `munmap(2)` at the end; in between no system
//! call, only page faults: a warm page costs a minor fault the first time it is touched
//! and nothing after; a cold one a major fault, for which the kernel reads ahead around
//! the faulting page (up to `read_ahead_kb`), mostly wasted on random reads.
//! **When it wins**: while the file fits in memory and is cached: a read is a `memcpy`.
//! Beyond memory it collapses (Crotty, Leis and Pavlo, CIDR 2022): read-ahead evicts
//! useful pages, eviction unmaps pages with TLB shootdowns, and faults are serialised on
//! the map's lock. `mmap-random` turns read-ahead off.
//! **Limits and failures**: a read is copied into the caller's buffer, like fio's engine
//! and [`crate::file::RandomAccessFile::read_at`], so the page-fault cost falls inside the
//! timed read. If another process truncates the file, the `SIGBUS` guard
//! ([`crate::sys::sigbus`]) maps zeros over the lost pages and the run ends with
//! [`Error::FileShrank`].

use std::fs::File;

use memmap2::Mmap;

use super::Source;
use crate::sys::sigbus::Guard;
use iolab::{Error, Result};

/// The read-ahead the map asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advice {
    /// The kernel's default (read-ahead around each fault).
    Normal,
    /// `MADV_RANDOM`: fault in only the page touched.
    Random,
}

/// A map of the whole file, guarded against truncation.
pub(crate) struct Mapped {
    // Dropped in order: the guard is unregistered before the map goes.
    guard: Guard,
    map: Mmap,
}

impl Mapped {
    pub(crate) fn new(file: &File, len: u64, advice: Advice) -> Result<Mapped> {
        usize::try_from(len).map_err(|_| {
            Error::InvalidOption("the file is larger than the address space".into())
        })?;
        // SAFETY: iolab maps only files it reads; truncation by another process is caught
        // by the SIGBUS guard below (lost pages read as zeros and fail verification, and
        // `check` reports it); the map is only read through copies.
        let map = unsafe { Mmap::map(file) }.map_err(|e| Error::io("mmap failed", e))?;
        if advice == Advice::Random {
            map.advise(memmap2::Advice::Random)
                .map_err(|e| Error::io("madvise(MADV_RANDOM) failed", e))?;
        }
        let guard = Guard::new(map.as_ptr(), map.len());
        Ok(Mapped { guard, map })
    }

    /// `Err` when the file shrank under the map during the run.
    pub(crate) fn check(&self) -> Result<()> {
        if self.guard.truncated() {
            Err(Error::FileShrank)
        } else {
            Ok(())
        }
    }
}

impl Source for Mapped {
    fn read<'b>(&self, offset: u64, want: usize, buf: &'b mut [u8]) -> Result<&'b [u8]> {
        let start = (offset as usize).min(self.map.len());
        let end = (start + want).min(self.map.len());
        buf[..end - start].copy_from_slice(&self.map[start..end]);
        Ok(&buf[..end - start])
    }
}
