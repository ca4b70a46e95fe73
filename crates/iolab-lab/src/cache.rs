//! Making a file cold or warm for a measurement: eviction is `fdatasync(2)` then
//! `posix_fadvise(POSIX_FADV_DONTNEED)` ([`drop_clean_pages`]), which needs no privilege,
//! and, as root when asked, `/proc/sys/vm/drop_caches` (never through `sudo`); pages mapped
//! by another process stay, which is why the residency is measured afterwards instead of
//! assumed. Warming reads the file once. Residency itself is the library's ([`residency`]).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

use iolab::{Error, Result};

pub use iolab::lab::cache::*;

/// [`residency`] for a path.
pub fn residency_of(path: &Path) -> Result<f64> {
    residency(&File::open(path).map_err(|e| Error::io("cannot open", e))?)
}

/// How eviction went.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Eviction {
    /// Residency right after, 0.0 to 1.0.
    pub residency: f64,
    /// Whether `/proc/sys/vm/drop_caches` was written.
    pub dropped_caches: bool,
}

/// Drops `path`'s pages from the page cache: `fdatasync`, `POSIX_FADV_DONTNEED`, and, when
/// `drop_caches` is set and the process is root, `/proc/sys/vm/drop_caches`. Returns the
/// residency measured afterwards.
pub fn evict(path: &Path, drop_caches: bool) -> Result<Eviction> {
    evict_with(path, drop_caches, true)
}

/// Drops `path`'s pages as [`evict`] does, but without the `fdatasync` when `sync` is
/// false: for a file that is not ours (a user's `--file`), which only
/// `POSIX_FADV_DONTNEED` (and `drop_caches`) may touch; its dirty pages, if any, stay.
pub fn evict_with(path: &Path, drop_caches: bool, sync: bool) -> Result<Eviction> {
    let file = File::open(path).map_err(|e| Error::io("cannot open", e))?;
    // Dirty pages cannot be dropped; write them out first. A read-only descriptor can be
    // synced on Linux.
    if sync {
        file.sync_data()
            .map_err(|e| Error::io("fdatasync failed", e))?;
    }
    drop_clean_pages(&file).map_err(|e| Error::io("posix_fadvise(DONTNEED) failed", e))?;
    // SAFETY: geteuid has no memory effects.
    let dropped_caches = drop_caches && unsafe { libc::geteuid() } == 0 && {
        // SAFETY: sync has no memory effects.
        unsafe { libc::sync() };
        std::fs::write("/proc/sys/vm/drop_caches", "3\n").is_ok()
    };
    Ok(Eviction {
        residency: residency(&file)?,
        dropped_caches,
    })
}

/// Reads `path` once so its pages are cached; returns the residency afterwards.
pub fn warm(path: &Path) -> Result<f64> {
    use std::io::Read;
    let mut file = File::open(path).map_err(|e| Error::io("cannot open", e))?;
    // SAFETY: posix_fadvise is only a hint and has no memory effects.
    unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_WILLNEED) };
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io("read failed", e)),
        }
    }
    residency(&file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn data_file(len: usize) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = iolab_testkit::scratch();
        let path = dir.path().join("data");
        let mut f = File::create(&path).unwrap();
        let chunk = vec![b'x'; 1 << 20];
        let mut left = len;
        while left > 0 {
            let n = left.min(chunk.len());
            f.write_all(&chunk[..n]).unwrap();
            left -= n;
        }
        (dir, path)
    }

    #[test]
    fn warming_makes_a_file_resident_and_both_ways_of_asking_agree() {
        let (_dir, path) = data_file(8 << 20);
        let warmed = warm(&path).unwrap();
        assert!(warmed >= 0.95, "residency after warming: {warmed}");
        let file = File::open(&path).unwrap();
        let sampled = residency_sampled(&file).unwrap();
        assert!(sampled >= 0.95, "sampled residency says {sampled}");
    }

    #[test]
    fn empty_file_is_fully_resident() {
        let (_dir, path) = data_file(0);
        assert_eq!(residency_of(&path).unwrap(), 1.0);
    }
}
