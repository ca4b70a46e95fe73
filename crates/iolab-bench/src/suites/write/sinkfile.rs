//! The `write` suite's `file` sink: a regular file in the data folder, created fresh
//! before each run and removed at the end.

use crate::error::{Error, Result};
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

/// The file sink: a name in the data folder that did not exist before, removed on drop
/// (the suite never touches a file it did not create).
pub(super) struct SinkFile {
    pub(super) path: PathBuf,
}

impl SinkFile {
    pub(super) fn create(dir: &Path) -> Result<SinkFile> {
        for attempt in 0..100u32 {
            let path = dir.join(format!(
                "iolab-write-sink-{}-{attempt}.tmp",
                std::process::id()
            ));
            match File::options().write(true).create_new(true).open(&path) {
                Ok(_) => return Ok(SinkFile { path }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(Error::io("cannot create the write suite's sink file", e)),
            }
        }
        Err(Error::io(
            "cannot create the write suite's sink file",
            io::Error::new(io::ErrorKind::AlreadyExists, "100 names taken"),
        ))
    }
}

impl Drop for SinkFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}
