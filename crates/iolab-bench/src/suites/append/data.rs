//! The `append` suite's data: the records appended, and the folder the files live in.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The record content repeats every 256 records: record *i* starts at `i mod 256` in a
/// pattern of the bytes 0, 1, 2, …
const PATTERN_PERIOD: usize = 256;

/// The records of a run: record *i* is `payload` bytes of `(i + j) mod 256`.
pub struct Records {
    pattern: Vec<u8>,
    payload: usize,
}

impl Records {
    /// The records of `payload` bytes each.
    pub fn new(payload: usize) -> Records {
        Records {
            pattern: (0..PATTERN_PERIOD + payload).map(|k| k as u8).collect(),
            payload,
        }
    }

    /// Record `i`.
    #[inline]
    pub fn get(&self, i: u64) -> &[u8] {
        let start = (i % PATTERN_PERIOD as u64) as usize;
        &self.pattern[start..start + self.payload]
    }
}

/// A folder of our own inside the data folder, holding only files this suite created;
/// they (and it) are removed when it is dropped.
pub(super) struct WorkDir {
    path: PathBuf,
    files: Vec<PathBuf>,
}

/// How many folder names to try when `append-PID` is taken.
const WORK_DIR_ATTEMPTS: u32 = 100;

impl WorkDir {
    pub(super) fn create(data_dir: &Path) -> Result<WorkDir> {
        let pid = std::process::id();
        for attempt in 0..WORK_DIR_ATTEMPTS {
            let path = data_dir.join(format!(".append-{pid}-{attempt}"));
            match fs::create_dir(&path) {
                Ok(()) => {
                    return Ok(WorkDir {
                        path,
                        files: Vec::new(),
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(Error::io("cannot create a folder for the append runs", e)),
            }
        }
        Err(Error::io(
            "cannot create a folder for the append runs",
            io::ErrorKind::AlreadyExists.into(),
        ))
    }

    /// The folder.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// The path of a file of ours called `name`, remembered for removal.
    pub(super) fn file(&mut self, name: &str) -> PathBuf {
        let path = self.path.join(name);
        if !self.files.contains(&path) {
            self.files.push(path.clone());
        }
        path
    }

    /// Removes one of our files now (it may not exist: a run that failed early).
    pub(super) fn remove(&mut self, path: &Path) {
        let _ = fs::remove_file(path);
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        for file in &self.files {
            let _ = fs::remove_file(file);
        }
        // Fails, leaving it, only if someone else put a file in our folder.
        let _ = fs::remove_dir(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_differ_and_repeat_every_256() {
        let r = Records::new(5);
        assert_eq!(r.get(0), &[0, 1, 2, 3, 4]);
        assert_eq!(r.get(255), &[255, 0, 1, 2, 3]);
        assert_eq!(r.get(256), r.get(0));
        assert_ne!(r.get(1), r.get(2));
    }
}
