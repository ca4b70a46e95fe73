//! Descriptor 1 pointed elsewhere for a while, for tests of writers to standard output.
//! A test binary that uses it should hold one test function: libtest prints each finished
//! test's result on descriptor 1, into whatever a test has put there.

use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Points file descriptor 1 somewhere until dropped.
pub struct Redirect {
    saved: OwnedFd,
}

impl Redirect {
    pub fn to(target: &impl AsRawFd) -> Redirect {
        io::stdout().flush().unwrap();
        // SAFETY: dup of descriptor 1, which is open (libtest writes to it).
        let saved = unsafe { libc::dup(1) };
        assert!(saved >= 0, "dup(1): {}", io::Error::last_os_error());
        // SAFETY: `saved` is a fresh descriptor that nothing else owns.
        let saved = unsafe { OwnedFd::from_raw_fd(saved) };
        // SAFETY: both descriptors are open; dup2 only replaces descriptor 1.
        let rc = unsafe { libc::dup2(target.as_raw_fd(), 1) };
        assert_eq!(rc, 1, "dup2: {}", io::Error::last_os_error());
        Redirect { saved }
    }
}

impl Drop for Redirect {
    fn drop(&mut self) {
        // SAFETY: `saved` is open; dup2 puts the original back on descriptor 1 (closing our
        // copy of the target there, so a pipe's reader can see end of file).
        unsafe { libc::dup2(self.saved.as_raw_fd(), 1) };
    }
}
