//! Reading a log back: [`LogReader`] streams its records in constant memory;
//! [`read_records`] collects them.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::header::{self, Kind, LOG_HEADER_LEN};
use super::record::{FRAME_HEADER_LEN, Frames, MAX_RECORD};
use crate::file::{Error, Result, open_error};

/// The records of a log, read in order from its file in constant memory (a 256 KiB read
/// buffer and one record's bytes), as [`Log::records`](crate::Log::records) opens it.
///
/// **What is returned** — the recovery rule, the same [`Log::open`](crate::Log::open)
/// applies: records in the order they were appended, up to the first frame that is not
/// whole and valid (a length over 16 MiB, a record cut short by the end of the file, a
/// checksum that does not hold, the zeros ahead of a preallocated log). That frame and
/// everything after it are never returned: a record torn by a crash is dropped, never
/// returned cut short or damaged. Every record whose
/// [`append_durable`](crate::Log::append_durable) returned `Ok` lies before that point.
/// Reaching it is not an error; an I/O error is (the iterator yields it, then ends).
///
/// A reader takes no lock: reading a log while its `Log` appends returns a prefix of its
/// records (at least the ones acknowledged before the reader reached them).
///
/// ```no_run
/// let mut total = 0usize;
/// for record in iolab::Log::records("wal.log")? {
///     total += record?.len();
/// }
/// # Ok::<(), iolab::Error>(())
/// ```
pub struct LogReader {
    frames: Frames<File>,
    path: PathBuf,
    format: u16,
    failed: bool,
}

impl std::fmt::Debug for LogReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogReader")
            .field("path", &self.path)
            .field("format", &self.format)
            .field("end", &self.frames.end())
            .finish()
    }
}

impl LogReader {
    /// Opens the log at `path` for reading. A file that is not an iolab log, or is one of
    /// a newer format, is refused with [`ErrorKind::NotALog`](crate::ErrorKind::NotALog);
    /// an empty file reads as a log without records; a log written by iolab before log
    /// headers (format 0) is read from its first byte.
    pub fn open(path: impl AsRef<Path>) -> Result<LogReader> {
        let path = path.as_ref();
        LogReader::open_at(path).map_err(|e| e.at(path))
    }

    fn open_at(path: &Path) -> Result<LogReader> {
        let file = File::open(path).map_err(|e| open_error("cannot open", e))?;
        let meta = file
            .metadata()
            .map_err(|e| Error::from_io("cannot stat", e, 0))?;
        if !meta.is_file() {
            return Err(super::not_regular());
        }
        let (kind, _) = identify(&file, meta.len())?;
        let (start, format) = match kind {
            Kind::Log => (LOG_HEADER_LEN, header::FORMAT),
            // Nothing was ever appended to it: no records, wherever they would start.
            Kind::Unstarted => (meta.len(), header::FORMAT),
            Kind::Headerless => (0, 0),
            Kind::Foreign(reason) => return Err(Error::NotALog { reason }),
        };
        let mut file = file;
        if start > 0 {
            std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(start))
                .map_err(|e| Error::from_io("cannot read", e, 0))?;
        }
        Ok(LogReader {
            frames: Frames::new(file, start),
            path: path.to_path_buf(),
            format,
            failed: false,
        })
    }

    /// The next record, borrowed until the next call; `None` at the log's end. Reads
    /// without allocating once the buffer has grown to the longest record.
    pub fn next_record(&mut self) -> Result<Option<&[u8]>> {
        if self.failed {
            return Ok(None);
        }
        match self.frames.next_payload() {
            Ok(p) => Ok(p),
            Err(e) => {
                self.failed = true;
                Err(Error::from_io("cannot read", e, 0).at(&self.path))
            }
        }
    }

    /// The file offset just past the last record returned: once the reader has returned
    /// `None`, the log's end (where the next append will go).
    pub fn end(&self) -> u64 {
        self.frames.end()
    }

    /// The log's format: 1 (with a header), or 0 for a log written before headers.
    pub fn format(&self) -> u16 {
        self.format
    }
}

impl Iterator for LogReader {
    type Item = Result<Vec<u8>>;

    /// The next record as an owned buffer (see [`LogReader::next_record`] to borrow it).
    fn next(&mut self) -> Option<Result<Vec<u8>>> {
        self.next_record()
            .map(|r| r.map(<[u8]>::to_vec))
            .transpose()
    }
}

/// What recovery found in a log file: [`read_records`]'s answer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    /// The payloads of the valid records, in order.
    pub records: Vec<Vec<u8>>,
    /// The logical end: the file offset just past the last valid record.
    pub end: u64,
    /// The file's length; more than `end` for a preallocated log or a torn tail.
    pub file_len: u64,
}

/// Reads every record of the log at `path` into memory (the rule: [`LogReader`]). For a
/// log of any size, [`Log::records`](crate::Log::records) streams them instead.
pub fn read_records(path: impl AsRef<Path>) -> Result<Recovered> {
    let path = path.as_ref();
    let mut reader = LogReader::open(path)?;
    let mut records = Vec::new();
    while let Some(r) = reader.next_record()? {
        records.push(r.to_vec());
    }
    let file_len = reader
        .frames
        .get_ref()
        .metadata()
        .map_err(|e| Error::from_io("cannot stat", e, 0).at(path))?
        .len();
    Ok(Recovered {
        records,
        end: reader.end(),
        file_len,
    })
}

/// What `file` (of `len` bytes) is, from its first bytes, and those bytes.
pub(crate) fn identify(file: &File, len: u64) -> Result<(Kind, Vec<u8>)> {
    // Enough for the header, or for a header-less log's first frame when it is short.
    let want = len.min(LOG_HEADER_LEN) as usize;
    let mut start = vec![0u8; want];
    file.read_exact_at(&mut start, 0)
        .map_err(|e| Error::from_io("cannot read", e, 0))?;
    let first_frame_valid = start[..].get(..8) != Some(&header::MAGIC[..]) && {
        let frame_len = start
            .get(..4)
            .map(|l| u32::from_le_bytes(l.try_into().expect("4 bytes")) as usize);
        match frame_len {
            Some(n) if n <= MAX_RECORD && (FRAME_HEADER_LEN + n) as u64 <= len => {
                let mut frame = vec![0u8; FRAME_HEADER_LEN + n];
                file.read_exact_at(&mut frame, 0)
                    .map_err(|e| Error::from_io("cannot read", e, 0))?;
                header::starts_with_frame(&frame)
            }
            _ => false,
        }
    };
    Ok((header::classify(&start, len, first_frame_valid), start))
}
