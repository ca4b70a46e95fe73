//! [`Backing::Direct`](super::Backing::Direct): a [`super::RandomAccessFile`]'s reads with
//! `O_DIRECT`, at any offset and length, past the page cache.
//!
//! **System calls**: at open, `statx(2)` for the alignment and one `open(2)` of
//! `/proc/self/fd/N` with `O_DIRECT` (a second descriptor of the same open file, so a file
//! renamed or unlinked since is still the one read); then one `pread(2)` per read of the
//! aligned span that covers it. A read whose offset, length and buffer are aligned goes
//! straight into the caller's buffer; any other is read into this thread's aligned bounce
//! buffer and copied out.
//!
//! **When it wins**: a file much larger than memory, or one a device as fast as memory
//! (zram, NVMe) serves faster than the page cache can insert and evict it; never warm.
//! The measured default takes it only by a margin ([`super::measured`]).
//!
//! **How it fails**: a file system that refuses `O_DIRECT` (tmpfs, some FUSE) or a system
//! without `/proc`: [`Error::Unavailable`] at open.

use std::cell::RefCell;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::{Error, Result, retry_eintr};
use crate::buf::AlignedBuf;
use crate::sys::dio::{self, DirectAlignment};

const METHOD: &str = "O_DIRECT backing";

thread_local! {
    /// This thread's bounce buffer, grown to the largest aligned span read so far.
    static BOUNCE: RefCell<Option<AlignedBuf>> = const { RefCell::new(None) };
}

/// The same open file read with `O_DIRECT`, and the alignment it needs.
#[derive(Debug)]
pub(crate) struct DirectReader {
    file: File,
    align: DirectAlignment,
}

impl DirectReader {
    /// Reopens `file` with `O_DIRECT`, or says why that cannot be done.
    pub(crate) fn open(file: &File) -> Result<DirectReader> {
        let align = dio::alignment(file).map_err(|reason| Error::Unavailable {
            method: METHOD,
            reason,
        })?;
        let path = format!("/proc/self/fd/{}", file.as_raw_fd());
        let file = crate::read::direct::open_direct_path(Path::new(&path), METHOD)?;
        Ok(DirectReader { file, align })
    }

    /// The `O_DIRECT` descriptor, for a ring's reads.
    pub(crate) fn fd(&self) -> std::os::fd::RawFd {
        self.file.as_raw_fd()
    }

    /// The alignment its reads need.
    pub(crate) fn alignment(&self) -> DirectAlignment {
        self.align
    }

    /// Copies up to `buf.len()` bytes at `offset` into `buf`, stopping at `end` (the
    /// file's size at open), and returns how many.
    pub(crate) fn read_at(&self, offset: u64, buf: &mut [u8], end: u64) -> Result<usize> {
        let want = usize::try_from(end.saturating_sub(offset))
            .unwrap_or(usize::MAX)
            .min(buf.len());
        if want == 0 {
            return Ok(0);
        }
        let unit = self.align.offset as u64;
        let aligned = offset.is_multiple_of(unit)
            && want.is_multiple_of(self.align.offset)
            && (buf.as_ptr() as usize).is_multiple_of(self.align.memory);
        if aligned {
            return self.read_span(offset, &mut buf[..want]);
        }
        let start = offset - offset % unit;
        let skip = (offset - start) as usize;
        let span = (skip + want).next_multiple_of(self.align.offset);
        BOUNCE.with_borrow_mut(|bounce| {
            if bounce.as_ref().is_none_or(|b| b.len() < span) {
                *bounce = Some(AlignedBuf::new(span, self.align.buffer_align()));
            }
            let bounce = bounce.as_mut().expect("just made");
            let got = self.read_span(start, &mut bounce[..span])?;
            let n = got.saturating_sub(skip).min(want);
            buf[..n].copy_from_slice(&bounce[skip..skip + n]);
            Ok(n)
        })
    }

    /// Reads the aligned span at `offset` into `buf` until it is full or the file ends.
    fn read_span(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match retry_eintr(|| self.file.read_at(&mut buf[done..], offset + done as u64)) {
                Ok(0) => break,
                // O_DIRECT returns whole units except at the end of the file.
                Ok(n) if !n.is_multiple_of(self.align.offset) => {
                    done += n;
                    break;
                }
                Ok(n) => done += n,
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    return Err(Error::Unavailable {
                        method: METHOD,
                        reason: "the O_DIRECT read was rejected (EINVAL)".into(),
                    });
                }
                Err(e) => return Err(Error::from_io("cannot read", e, 0)),
            }
        }
        Ok(done)
    }
}
