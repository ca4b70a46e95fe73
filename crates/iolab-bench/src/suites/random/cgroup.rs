//! The `beyond-memory` state: a memory cgroup limited to a quarter of the file, which the
//! child joins before it starts, so the page cache it may fill is smaller than the file.
//!
//! cgroup v2 (`memory.max` in a child of `/sys/fs/cgroup`, when that hierarchy has the
//! `memory` controller), else v1 (`memory.limit_in_bytes` under `/sys/fs/cgroup/memory`).
//! Root only. The child is started through `sh -c`, which writes its own pid to
//! `cgroup.procs`, reads the first quarter of the file (so the cgroup's cache is full when
//! the timed reads start, as in steady state) and `exec`s the measured command. The cgroup
//! is removed when the [`MemoryCgroup`] is dropped.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A memory cgroup made for this run.
#[derive(Debug)]
pub(super) struct MemoryCgroup {
    dir: PathBuf,
}

impl MemoryCgroup {
    /// A cgroup limited to `limit` bytes, or why there cannot be one.
    pub(super) fn create(limit: u64) -> Result<MemoryCgroup, String> {
        // SAFETY: geteuid has no memory effects.
        if unsafe { libc::geteuid() } != 0 {
            return Err("needs root to create a memory cgroup".into());
        }
        let name = format!("iolab-{}", std::process::id());
        let v2_root = Path::new("/sys/fs/cgroup");
        let v2 = std::fs::read_to_string(v2_root.join("cgroup.controllers"))
            .is_ok_and(|c| c.split_whitespace().any(|w| w == "memory"));
        let (dir, file) = if v2 {
            (v2_root.join(&name), "memory.max")
        } else {
            (
                Path::new("/sys/fs/cgroup/memory").join(&name),
                "memory.limit_in_bytes",
            )
        };
        if !dir.parent().is_some_and(Path::is_dir) {
            return Err("no cgroup memory controller is mounted".into());
        }
        std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let cgroup = MemoryCgroup { dir };
        std::fs::write(cgroup.dir.join(file), limit.to_string())
            .map_err(|e| format!("cannot set {file}: {e}"))?;
        Ok(cgroup)
    }

    /// `program args…` wrapped to run inside the cgroup after filling it with the first
    /// `prefill` bytes of `data`.
    pub(super) fn wrap(
        &self,
        program: &Path,
        args: &[OsString],
        data: &Path,
        prefill: u64,
    ) -> (PathBuf, Vec<OsString>) {
        let mut wrapped: Vec<OsString> = vec![
            "-c".into(),
            format!(
                "echo $$ > '{}/cgroup.procs' && head -c {prefill} \"$1\" > /dev/null && shift && exec \"$@\"",
                self.dir.display()
            )
            .into(),
            "sh".into(),
            data.into(),
            program.into(),
        ];
        wrapped.extend(args.iter().cloned());
        (PathBuf::from("/bin/sh"), wrapped)
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        // The children have exited; their cache is handed to the parent cgroup.
        let _ = std::fs::remove_dir(&self.dir);
    }
}
