//! Opening a log file that exists: its lock first, then what its first bytes say it is.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::header::{self, LOG_HEADER_LEN};
use super::{fail, lock, not_regular, pwrite_all, reader, record};
use crate::file::{Error, Result, open_error, retry_eintr};

/// A log file opened, locked and known to be a log with a header.
pub(crate) struct Opened {
    pub(crate) file: File,
    /// Its length when it was opened (to go back to if the open fails after growing it).
    pub(crate) len: u64,
    /// Whether this open made it.
    pub(crate) created: bool,
}

/// Opens the existing file at `path` as a log: takes its lock, then checks its header
/// (writing one into an empty file). `None` when no file is there.
pub(crate) fn existing(path: &Path, wait: bool) -> Result<Option<Opened>> {
    loop {
        let file = match OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(open_error("cannot open", e)),
        };
        let meta = file
            .metadata()
            .map_err(|e| Error::from_io("cannot stat", e, 0))?;
        if !meta.is_file() {
            return Err(not_regular());
        }
        lock::exclusive(&file, wait)?;
        // Locked, but perhaps a file that has lost its name meanwhile (an opener that
        // failed after giving the name removes it): a lock on it would guard nothing.
        if !lock::still_named(&file, path) {
            continue;
        }
        let len = file
            .metadata()
            .map_err(|e| Error::from_io("cannot stat", e, 0))?
            .len();
        let (kind, _) = reader::identify(&file, len)?;
        match kind {
            header::Kind::Log => {}
            header::Kind::Unstarted => {
                // Empty, or a header whose first write was cut short: nothing of anyone's.
                pwrite_all(&file, &header::encode(), 0)
                    .and_then(|()| retry_eintr(|| file.sync_all()))
                    .map_err(|e| {
                        let _ = file.set_len(len);
                        fail("cannot write the log header", e)
                    })?;
            }
            header::Kind::Headerless => {
                return Err(Error::NotALog {
                    reason: header::HEADERLESS_REFUSED.into(),
                });
            }
            header::Kind::Foreign(reason) => return Err(Error::NotALog { reason }),
        }
        return Ok(Some(Opened {
            file,
            len,
            created: false,
        }));
    }
}

/// The log's end, recovered from its records after the header.
pub(crate) fn recover_end(file: &File) -> Result<u64> {
    let mut reader = file;
    io::Seek::seek(&mut reader, io::SeekFrom::Start(LOG_HEADER_LEN))
        .and_then(|_| record::scan(reader, LOG_HEADER_LEN, |_| {}))
        .map_err(|e| Error::from_io("cannot read", e, 0))
}
