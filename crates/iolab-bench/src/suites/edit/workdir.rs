//! The `edit` suite's working copies: a folder of its own in the data folder and fresh,
//! synced copies of the data sets (reflink, else `copy_file_range`, else read and write).

use super::FICLONE;
use crate::context::Context;
use crate::error::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::{self};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// This process's working folder in the data folder (`edit-work-PID`), with the copy an
/// edit changes and the output a peer writes; all removed when it is dropped.
pub(super) struct WorkDir {
    work: crate::workdir::WorkDir,
    copy: PathBuf,
    output: PathBuf,
}

impl WorkDir {
    pub(super) fn create(data_dir: &Path) -> Result<WorkDir> {
        let mut work = crate::workdir::WorkDir::create(data_dir, "edit-work")?;
        let copy = work.file("copy.csv");
        let output = work.file("out.csv");
        Ok(WorkDir { work, copy, output })
    }

    pub(super) fn copy(&self) -> PathBuf {
        self.copy.clone()
    }

    pub(super) fn output(&self) -> PathBuf {
        self.output.clone()
    }

    /// Removes the copy and the output of the last run.
    pub(super) fn clean(&self) {
        self.work.remove(&self.copy);
        self.work.remove(&self.output);
    }

    /// A fresh, synced copy of `source`; the first copy notes how copies are made.
    pub(super) fn fresh_copy(&self, source: &Path, ctx: &mut Context<'_>) -> Result<PathBuf> {
        self.clean();
        let target = self.copy();
        let how =
            copy_synced(source, &target).map_err(|e| Error::io("cannot copy the data set", e))?;
        let note = format!("edit: working copies are made with {how}, then fdatasync'd");
        if !ctx.notes.contains(&note) {
            ctx.notes.push(note);
        }
        Ok(target)
    }
}

/// Copies `source` to the new file `target` by reflink, else `copy_file_range`, else
/// read/write; syncs it; says which way was taken.
pub(super) fn copy_synced(source: &Path, target: &Path) -> io::Result<&'static str> {
    let mut from = File::open(source)?;
    let mut to = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(target)?;
    // SAFETY: FICLONE takes the source descriptor as its argument; both descriptors are open
    // for the call, and the ioctl has no memory effects in this process.
    let cloned = unsafe { libc::ioctl(to.as_raw_fd(), FICLONE as _, from.as_raw_fd()) } == 0;
    let how = if cloned {
        "FICLONE (reflink: edits pay the copy-on-write)"
    } else {
        let len = from.metadata()?.len();
        let mut copied = 0u64;
        let mut how = "copy_file_range";
        while copied < len {
            // SAFETY: both descriptors are open; null offsets mean "use and advance the
            // file positions", and no memory of this process is passed.
            let n = unsafe {
                libc::copy_file_range(
                    from.as_raw_fd(),
                    std::ptr::null_mut(),
                    to.as_raw_fd(),
                    std::ptr::null_mut(),
                    usize::try_from(len - copied).unwrap_or(usize::MAX),
                    0,
                )
            };
            if n > 0 {
                copied += n as u64;
                continue;
            }
            if n == 0 {
                break;
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EXDEV | libc::ENOSYS | libc::EOPNOTSUPP | libc::EINVAL)
                    if copied == 0 =>
                {
                    io::copy(&mut from, &mut to)?;
                    how = "read and write (copy_file_range is unsupported here)";
                    break;
                }
                _ => return Err(e),
            }
        }
        how
    };
    to.sync_data()?;
    Ok(how)
}
