//! Syncs taken out of a traced program (`iolab crash --drop`): the mutations that show
//! whether a check, and the model, notice a sync that is missing.
//!
//! At the seccomp stop of a call to drop, before the call runs, the tracer rewrites it:
//! - `fsync`/`fdatasync` become `sync_file_range(fd, 0, 0, 0)`, which does nothing and
//!   returns 0 (flags 0 are a no-op, sync_file_range(2)), so the program carries on as if
//!   it had synced, and the journal, which sees the call the kernel ran, records no sync;
//! - `open`/`openat` lose `O_DSYNC` and `O_SYNC` from their flags, so the descriptor's
//!   writes are not synced (`openat2`, whose flags are in memory, is left as it is).
//!
//! Only calls on files and folders under the journaled folder are changed. The kernel
//! checks the rewritten call against the seccomp filter again, without another stop.
//! x86-64 only (the registers are rewritten with `PTRACE_SETREGS`).

use std::path::{Path, PathBuf};

use super::witness::{read_string, resolve};
use crate::backend::DroppedSync;
use crate::procfs::normalize;

/// Whether syncs can be dropped on this architecture.
pub const AVAILABLE: bool = cfg!(target_arch = "x86_64");

/// What the tracer takes out of the command's calls.
pub struct Mutator {
    dir: PathBuf,
    drops: Vec<DroppedSync>,
}

impl Mutator {
    /// Drops `drops` from the calls on files under `dir` (absolute and resolved).
    pub fn new(dir: PathBuf, drops: Vec<DroppedSync>) -> Mutator {
        Mutator { dir, drops }
    }

    fn under(&self, path: &Path) -> bool {
        normalize(path).starts_with(&self.dir)
    }

    /// The call task `tid` is entering, `nr` with `args`, as it should run instead (its
    /// number and arguments), or `None` to leave it.
    fn rewrite(&self, tid: i32, nr: i64, args: &[u64; 6]) -> Option<(i64, [u64; 6])> {
        match nr {
            libc::SYS_fsync | libc::SYS_fdatasync => {
                let fd = args[0] as i32;
                let link = format!("/proc/{tid}/fd/{fd}");
                let target = std::fs::read_link(&link).ok()?;
                let is_dir = std::fs::metadata(&link).ok()?.is_dir();
                let kind = match (is_dir, nr) {
                    (true, _) => DroppedSync::DirFsync,
                    (false, libc::SYS_fsync) => DroppedSync::Fsync,
                    (false, _) => DroppedSync::Fdatasync,
                };
                (self.drops.contains(&kind) && self.under(&target))
                    .then_some((libc::SYS_sync_file_range, [args[0], 0, 0, 0, 0, 0]))
            }
            #[cfg(target_arch = "x86_64")]
            libc::SYS_open => self.without_dsync(tid, nr, args, None, 0, 1),
            libc::SYS_openat => self.without_dsync(tid, nr, args, Some(0), 1, 2),
            _ => None,
        }
    }

    /// `args` of an open with `O_DSYNC`/`O_SYNC` cleared from argument `flags`, when the
    /// path (argument `path`, from `dirfd`) is under the folder and `o-dsync` is dropped.
    fn without_dsync(
        &self,
        tid: i32,
        nr: i64,
        args: &[u64; 6],
        dirfd: Option<usize>,
        path: usize,
        flags: usize,
    ) -> Option<(i64, [u64; 6])> {
        let sync = (libc::O_SYNC | libc::O_DSYNC) as u64;
        if !self.drops.contains(&DroppedSync::ODsync) || args[flags] & sync == 0 {
            return None;
        }
        let text = read_string(tid, args[path])?;
        let mut full = resolve(tid, dirfd.map(|d| args[d] as i32), &text);
        if let Ok(rest) = full.strip_prefix("/proc/self") {
            // A descriptor's link (`/proc/self/fd/N`): the file it names.
            full = std::fs::canonicalize(Path::new(&format!("/proc/{tid}")).join(rest)).ok()?;
        }
        if !self.under(&full) {
            return None;
        }
        let mut changed = *args;
        changed[flags] &= !sync;
        Some((nr, changed))
    }

    /// Rewrites the call task `tid` is stopped entering, if it is one to drop; returns the
    /// call that will run (number, arguments).
    pub fn apply(&self, tid: i32, nr: i64, args: [u64; 6]) -> (i64, [u64; 6]) {
        match self.rewrite(tid, nr, &args) {
            Some((new_nr, new_args)) if set_call(tid, new_nr, &new_args) => (new_nr, new_args),
            _ => (nr, args),
        }
    }
}

/// Sets the call task `tid` is stopped entering to `nr` with `args`; false if it cannot.
#[cfg(target_arch = "x86_64")]
fn set_call(tid: i32, nr: i64, args: &[u64; 6]) -> bool {
    // SAFETY: user_regs_struct is plain integers; all zeros is a valid value to fill.
    let mut regs: libc::user_regs_struct = unsafe { std::mem::zeroed() };
    // SAFETY: `tid` is a tracee stopped at a seccomp stop; `regs` is ours to fill.
    if unsafe { libc::ptrace(libc::PTRACE_GETREGS, tid, 0, &mut regs) } != 0 {
        return false;
    }
    regs.orig_rax = nr as u64;
    regs.rdi = args[0];
    regs.rsi = args[1];
    regs.rdx = args[2];
    regs.r10 = args[3];
    regs.r8 = args[4];
    regs.r9 = args[5];
    // SAFETY: as above; the registers are the tracee's with the call's changed.
    unsafe { libc::ptrace(libc::PTRACE_SETREGS, tid, 0, &regs) == 0 }
}

/// Not on this architecture: the call is left as it is.
#[cfg(not(target_arch = "x86_64"))]
fn set_call(_tid: i32, _nr: i64, _args: &[u64; 6]) -> bool {
    false
}
