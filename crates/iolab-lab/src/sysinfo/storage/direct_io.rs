//! The `O_DIRECT` probe of the data folder: an empty probe file is created there, asked
//! for its alignment ([`crate::sys::dio::alignment`]), reopened with `O_DIRECT` to see
//! whether the file system accepts the flag, and removed.

use super::{DirectIo, describe};
use crate::sys::dio as direct;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// An empty file created for the probe, removed when dropped.
pub(super) struct ProbeFile {
    path: PathBuf,
    file: File,
}

impl ProbeFile {
    fn create(dir: &Path) -> io::Result<ProbeFile> {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
        for _ in 0..16 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!(".iolab-sysinfo-{}-{n}", std::process::id()));
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
            {
                Ok(file) => return Ok(ProbeFile { path, file }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
                Err(e) => return Err(e),
            }
        }
        Err(last)
    }
}

impl Drop for ProbeFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

pub(super) fn probe_direct_io(dir: &Path) -> DirectIo {
    let probe = match ProbeFile::create(dir) {
        Ok(probe) => probe,
        Err(e) => {
            return DirectIo::not_probed(format!(
                "cannot create a probe file in the data directory ({})",
                describe(&e)
            ));
        }
    };
    let align = match direct::alignment(&probe.file) {
        Ok(align) => align,
        Err(reason) => return DirectIo::unsupported(reason),
    };
    // statx can say nothing (older kernels): opening with the flag is the real test.
    if let Err(e) = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&probe.path)
    {
        return DirectIo::unsupported(format!(
            "the file system refuses O_DIRECT (open: {})",
            describe(&e)
        ));
    }
    DirectIo {
        supported: Some(true),
        memory_align: Some(align.memory),
        offset_align: Some(align.offset),
        source: Some(align.source.to_string()),
        note: None,
    }
}
