//! Helpers shared by the integration tests.

// Each test file includes this module and uses only some of its helpers.
#![allow(dead_code)]

use std::io;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// uid and gid of `nobody`, for tests of permission errors (the tests run as root).
pub const NOBODY: libc::uid_t = 65534;

/// Whether the tests run as root (permission checks are bypassed for root).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Makes `cmd` run as uid/gid 65534 (nobody) with no supplementary groups.
pub fn run_as_nobody(cmd: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec. It only makes the
    // async-signal-safe system calls setgroups, setgid and setuid, and allocates nothing
    // (`last_os_error` just reads errno).
    unsafe {
        cmd.pre_exec(|| {
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(NOBODY) != 0
                || libc::setuid(NOBODY) != 0
            {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// A fresh folder for a test's files, on the target's disk (not tmpfs, so `O_DIRECT`
/// and eviction work as they do for users).
pub fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// Says that the calling test cannot run here and why, as `skipped: <test>: <reason>`;
/// the test then returns.
pub fn skip(reason: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("?");
    eprintln!("skipped: {test}: {reason}");
}
