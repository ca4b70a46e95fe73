//! `auto`: [`crate::file::RandomAccessFile::open`], the library's default, read as a
//! method, so that `iolab bench random` judges its measured backing against the others.
//!
//! **System calls**: those of the backing serving each read (`pread`, a copy from a map,
//! or an `O_DIRECT` `pread`), and the turns among them ([`crate::file::measured`]).
//! **Buffers**: page-aligned, as a storage engine's block buffers are, so an `O_DIRECT`
//! read of a whole block needs no bounce copy.

use std::path::Path;

use super::Source;
use crate::buf::AlignedBuf;
use crate::error::Result;
use crate::file::RandomAccessFile;

/// The page alignment of the readers' buffers.
const ALIGN: usize = 4096;

/// A file opened as the library opens it by default.
pub(crate) struct LibraryDefault(RandomAccessFile);

impl LibraryDefault {
    pub(crate) fn open(path: &Path) -> Result<LibraryDefault> {
        Ok(LibraryDefault(RandomAccessFile::open(path)?))
    }

    /// Which backing served last and why.
    pub(crate) fn why(&self) -> String {
        self.0.why()
    }
}

impl Source for LibraryDefault {
    fn buffer(&self, block: usize) -> AlignedBuf {
        AlignedBuf::new(block, ALIGN)
    }

    fn read<'a>(&self, offset: u64, want: usize, buf: &'a mut [u8]) -> Result<&'a [u8]> {
        let n = self.0.read_at(offset, &mut buf[..want])?;
        Ok(&buf[..n])
    }
}
