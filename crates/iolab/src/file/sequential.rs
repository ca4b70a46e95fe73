//! [`SequentialFile`]: reads a file from the start, in pieces the caller chooses, like
//! LevelDB's `PosixSequentialFile` (which reads a log back after a crash).
//!
//! **System calls**: `open`, `fstat`; `read` of 64 KiB at a time into a buffer; `lseek`
//! to skip past the buffer on a regular file (on a pipe, skipped bytes are read and
//! dropped).
//!
//! **Built on `bufread-chunks`**: it is the same reader as the `bufread-chunks` read
//! method — a `BufReader` of [`DEFAULT_BUFFER_SIZE`] (64 KiB) over the file — turned
//! around so the caller pulls. The other read methods do not fit: they push a whole file
//! into a [`Task`](crate::task::Task), while a log reader asks for a header, then for as
//! many bytes as the header says; `mmap` and `O_DIRECT` need a size fixed at open, while a
//! log being read may still be growing (each `read` sees bytes appended since); io_uring
//! only pays with several reads in flight. Reads of a few bytes come from the buffer
//! without a system call; a read larger than the buffer goes straight into the caller's
//! memory.
//!
//! **Limits**: one reader, one direction: there is no seeking back.
//!
//! **How it fails**: a directory is refused at open ([`Error::IsDirectory`]); `EINTR` is
//! retried; other read errors are [`Error::Io`]. The end of the file is not an error:
//! reads return 0 and skips stop there.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use super::{Error, Result, open_error, retry_eintr};

pub use crate::read::bufread_chunks::DEFAULT_BUFFER_SIZE;

/// A file read front to back.
///
/// ```no_run
/// use iolab::SequentialFile;
///
/// let mut log = SequentialFile::open("wal.log")?;
/// let mut header = [0u8; 8];
/// while log.read_full(&mut header)? == header.len() {
///     let len = u64::from_le_bytes(header);
///     log.skip(len)?; // or read the record
/// }
/// # Ok::<(), iolab::Error>(())
/// ```
#[derive(Debug)]
pub struct SequentialFile {
    reader: BufReader<File>,
    /// Regular files skip by `lseek`; pipes and devices by reading.
    seekable: bool,
}

impl SequentialFile {
    /// Opens `path` with the default 64 KiB buffer.
    pub fn open(path: impl AsRef<Path>) -> Result<SequentialFile> {
        SequentialFile::with_capacity(path, DEFAULT_BUFFER_SIZE)
    }

    /// Opens `path` with a buffer of `capacity` bytes (at least 1).
    pub fn with_capacity(path: impl AsRef<Path>, capacity: usize) -> Result<SequentialFile> {
        let path = path.as_ref();
        retry_eintr(|| File::open(path))
            .map_err(|e| open_error("cannot open", e))
            .and_then(|file| SequentialFile::from_file(file, capacity))
            .map_err(|e| e.at(path))
    }

    /// Reads an already open file (or pipe) from its current position, with a buffer of
    /// `capacity` bytes (at least 1).
    pub fn from_file(file: File, capacity: usize) -> Result<SequentialFile> {
        let meta = file.metadata().map_err(|e| open_error("cannot stat", e))?;
        if meta.is_dir() {
            return Err(Error::IsDirectory);
        }
        Ok(SequentialFile {
            reader: BufReader::with_capacity(capacity.max(1), file),
            seekable: meta.is_file(),
        })
    }

    /// Reads up to `buf.len()` bytes and returns how many; 0 only at the end of the file
    /// (or for an empty `buf`). May return fewer than asked before the end, like
    /// `read(2)`: see [`read_full`](Self::read_full).
    pub fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        retry_eintr(|| self.reader.read(buf)).map_err(|e| Error::from_io("cannot read", e, 0))
    }

    /// Reads until `buf` is full or the file ends, and returns how many bytes it got:
    /// `buf.len()` unless the file ended first.
    pub fn read_full(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match self.read(&mut buf[done..])? {
                0 => break,
                n => done += n,
            }
        }
        Ok(done)
    }

    /// Skips `n` bytes and returns how many it skipped: `n` unless the file ended first.
    pub fn skip(&mut self, n: u64) -> Result<u64> {
        let buffered = self.reader.buffer().len() as u64;
        if n <= buffered {
            self.reader.consume(n as usize);
            return Ok(n);
        }
        self.reader.consume(buffered as usize);
        let rest = n - buffered;
        let skipped = if self.seekable {
            self.seek_forward(rest)?
        } else {
            self.read_and_drop(rest)?
        };
        Ok(buffered + skipped)
    }

    /// On a regular file with an empty buffer: moves the position forward by up to `n`,
    /// stopping at the end of the file.
    fn seek_forward(&mut self, n: u64) -> Result<u64> {
        let file = self.reader.get_mut();
        let size = file
            .metadata()
            .map_err(|e| Error::from_io("cannot stat", e, 0))?
            .len();
        let pos =
            io::Seek::stream_position(file).map_err(|e| Error::from_io("cannot seek", e, 0))?;
        let step = n.min(size.saturating_sub(pos));
        // `step` ≤ the file size, which fits in an i64 (`off_t`).
        self.reader
            .seek_relative(step as i64)
            .map_err(|e| Error::from_io("cannot seek", e, 0))?;
        Ok(step)
    }

    /// Reads and drops up to `n` bytes (pipes cannot seek).
    fn read_and_drop(&mut self, n: u64) -> Result<u64> {
        let mut done = 0;
        while done < n {
            let available = match self.reader.fill_buf() {
                Ok(chunk) => chunk.len() as u64,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::from_io("cannot read", e, 0)),
            };
            if available == 0 {
                break;
            }
            let take = available.min(n - done);
            self.reader.consume(take as usize);
            done += take;
        }
        Ok(done)
    }
}

impl Read for SequentialFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reader.read(buf)
    }
}
