//! Write leases (`fcntl(F_SETLEASE, F_WRLCK)`): while one is held on a descriptor, another
//! process that opens the file, or truncates it by name, waits until it is released (at
//! most `/proc/sys/fs/lease-break-time`, 45 s by default). An edit holds one for the few
//! microseconds between checking the file and writing it, so no other process can slip a
//! truncation or an append in between.
//!
//! A write lease can only be had when no other descriptor of the file is open anywhere (a
//! logger that keeps it open, `tail -f`), by the file's owner or with `CAP_LEASE`, on a
//! file system that supports leases; [`WriteLease::take`] answers `None` otherwise and the
//! caller does without. A breaking open is announced by a signal; the lease asks for
//! `SIGURG`, ignored by default, and is not taken when the program handles `SIGURG` itself.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// `F_SETSIG` from `<fcntl.h>` (Linux; not in the libc crate): the signal a lease break or
/// an I/O readiness notice sends.
const F_SETSIG: libc::c_int = 10;

/// A write lease on a file, released when dropped.
pub struct WriteLease<'a> {
    file: &'a File,
}

impl<'a> WriteLease<'a> {
    /// Takes a write lease on `file` (open for writing), retrying for up to `patience`
    /// while other descriptors of it are open (a writer that reopens the file for every
    /// line closes it in between); `None` when it cannot be had.
    pub fn take(file: &'a File, patience: Duration) -> Option<WriteLease<'a>> {
        if !sigurg_is_free() {
            return None;
        }
        let fd = file.as_raw_fd();
        // SAFETY: F_SETSIG on an open descriptor has no memory effects; it names the
        // signal a lease break sends (SIGURG: ignored unless handled, checked above).
        if unsafe { libc::fcntl(fd, F_SETSIG, libc::SIGURG) } == -1 {
            return None;
        }
        let deadline = Instant::now() + patience;
        loop {
            // SAFETY: F_SETLEASE on an open descriptor has no memory effects.
            if unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_WRLCK) } == 0 {
                return Some(WriteLease { file });
            }
            let busy = std::io::Error::last_os_error().raw_os_error() == Some(libc::EAGAIN);
            if !busy || Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_micros(20));
        }
    }
}

impl Drop for WriteLease<'_> {
    fn drop(&mut self) {
        // SAFETY: F_SETLEASE on an open descriptor has no memory effects; F_UNLCK releases
        // the lease and lets any waiting opener go on.
        unsafe { libc::fcntl(self.file.as_raw_fd(), libc::F_SETLEASE, libc::F_UNLCK) };
    }
}

/// Whether `SIGURG` has its default disposition (ignore) or is ignored: the program does
/// not use it for anything of its own.
fn sigurg_is_free() -> bool {
    // SAFETY: a zeroed sigaction is a valid output buffer; querying (a null new action)
    // changes nothing.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGURG, std::ptr::null(), &mut old) == 0
            && (old.sa_sigaction == libc::SIG_DFL || old.sa_sigaction == libc::SIG_IGN)
    }
}
