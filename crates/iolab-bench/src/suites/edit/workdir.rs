//! The `edit` suite's working copies: a folder of its own in the data folder and fresh,
//! synced copies of the data sets (reflink, else `copy_file_range`, else read and write).

use super::*;

/// This process's working folder in the data folder: the copies live here, and the whole
/// folder is removed when it is dropped (also on an error or Ctrl-C).
pub(super) struct WorkDir {
    path: PathBuf,
}

/// How many names to try for the working folder when `edit-work-PID` is taken.
pub(super) const WORK_DIR_ATTEMPTS: u32 = 100;

impl WorkDir {
    pub(super) fn create(data_dir: &Path) -> Result<WorkDir> {
        fs::create_dir_all(data_dir).map_err(|e| Error::io("cannot create the data folder", e))?;
        let pid = std::process::id();
        for attempt in 0..WORK_DIR_ATTEMPTS {
            let mut name = format!("edit-work-{pid}");
            if attempt > 0 {
                name.push_str(&format!("-{attempt}"));
            }
            let path = data_dir.join(name);
            match fs::create_dir(&path) {
                Ok(()) => return Ok(WorkDir { path }),
                // Someone else's (a run that died with the same pid): not ours to touch.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(Error::io("cannot create a working folder", e)),
            }
        }
        Err(Error::io(
            "cannot create a working folder",
            io::Error::from(io::ErrorKind::AlreadyExists),
        ))
    }

    pub(super) fn copy(&self) -> PathBuf {
        self.path.join("copy.csv")
    }

    pub(super) fn output(&self) -> PathBuf {
        self.path.join("out.csv")
    }

    /// Removes the copy and the output of the last run.
    pub(super) fn clean(&self) {
        let _ = fs::remove_file(self.copy());
        let _ = fs::remove_file(self.output());
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

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
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
