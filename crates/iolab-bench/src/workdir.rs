//! A suite's working folder: a folder of its own inside the data folder, named after the
//! suite and this process, holding only files the suite made there. They, and the folder,
//! are removed when it is dropped (also on an error or Ctrl-C); a file someone else put
//! there is left, and with it the folder.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// How many names to try when `PREFIX-PID` is taken (by a run that died with our pid).
const ATTEMPTS: u32 = 100;

/// A working folder and the files made in it.
#[derive(Debug)]
pub(crate) struct WorkDir {
    path: PathBuf,
    files: Vec<PathBuf>,
}

impl WorkDir {
    /// Creates `data_dir/PREFIX-PID` (or `-PID-N` when that is taken), and `data_dir`
    /// first if need be.
    pub(crate) fn create(data_dir: &Path, prefix: &str) -> Result<WorkDir> {
        let failed = |e| Error::io("cannot create a working folder", e);
        fs::create_dir_all(data_dir).map_err(failed)?;
        let pid = std::process::id();
        for attempt in 0..ATTEMPTS {
            let name = match attempt {
                0 => format!("{prefix}-{pid}"),
                n => format!("{prefix}-{pid}-{n}"),
            };
            let path = data_dir.join(name);
            match fs::create_dir(&path) {
                Ok(()) => {
                    return Ok(WorkDir {
                        path,
                        files: Vec::new(),
                    });
                }
                // Someone else's: not ours to touch.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(failed(e)),
            }
        }
        Err(failed(io::ErrorKind::AlreadyExists.into()))
    }

    /// The folder.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The path of a file of ours called `name`, remembered for removal.
    pub(crate) fn file(&mut self, name: &str) -> PathBuf {
        let path = self.path.join(name);
        if !self.files.contains(&path) {
            self.files.push(path.clone());
        }
        path
    }

    /// Removes one of our files now (it may not exist: a run that failed early).
    pub(crate) fn remove(&self, path: &Path) {
        let _ = fs::remove_file(path);
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        for file in &self.files {
            let _ = fs::remove_file(file);
        }
        let _ = fs::remove_dir(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_work_dir_removes_its_files_and_itself_but_not_a_stranger() {
        let data = tempfile::tempdir().unwrap();
        let mut work = WorkDir::create(data.path(), "suite").unwrap();
        let path = work.path().to_path_buf();
        assert_eq!(
            path.file_name().unwrap(),
            &*format!("suite-{}", std::process::id())
        );
        fs::write(work.file("a"), b"x").unwrap();
        let second = WorkDir::create(data.path(), "suite").unwrap();
        assert_ne!(second.path(), path);
        drop(second);
        drop(work);
        assert!(!path.exists());
        let mut work = WorkDir::create(data.path(), "suite").unwrap();
        fs::write(work.file("a"), b"x").unwrap();
        fs::write(work.path().join("theirs"), b"y").unwrap();
        let path = work.path().to_path_buf();
        drop(work);
        assert!(path.join("theirs").exists() && !path.join("a").exists());
    }
}
