//! Whether a standard descriptor was closed when the process started.
//!
//! **System calls**: `fcntl(fd, F_GETFL)` and `fstat(fd)`.
//!
//! Rust's runtime, before `main`, opens `/dev/null` read-write on any of descriptors 0–2
//! that is closed, so a program started with `<&-` or `>&-` reads nothing and writes into
//! nothing, successfully, where `wc -l` fails with `EBADF`. A shell's `< /dev/null` opens
//! it read-only and `> /dev/null` write-only, and so do `std::process::Stdio::null()` for
//! a child; so a read-write `/dev/null` on a standard descriptor reads as "closed at
//! start". The one false alarm is an explicit `<>/dev/null` (or `1<>/dev/null`).

use std::os::fd::RawFd;

/// The device numbers of `/dev/null` (major 1, minor 3 on Linux).
const DEV_NULL: (u32, u32) = (1, 3);

/// Whether `st` describes `/dev/null`.
pub fn is_dev_null(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFCHR
        && (libc::major(st.st_rdev), libc::minor(st.st_rdev)) == DEV_NULL
}

/// Whether descriptor `fd` is the read-write `/dev/null` Rust's runtime opens in place of a
/// closed standard descriptor (see the module documentation). A descriptor that is closed
/// now also counts.
pub fn closed_at_start(fd: RawFd) -> bool {
    // SAFETY: F_GETFL only reads the descriptor's flags; a closed one gives EBADF.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return true;
    }
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `st` is writable memory of the size and layout fstat fills.
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return false;
    }
    // SAFETY: fstat returned 0, so it filled `st`.
    let st = unsafe { st.assume_init() };
    flags & libc::O_ACCMODE == libc::O_RDWR && is_dev_null(&st)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn only_a_read_write_dev_null_reads_as_closed() {
        let rw = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null")
            .unwrap();
        assert!(closed_at_start(rw.as_raw_fd()));
        let wo = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .unwrap();
        assert!(!closed_at_start(wo.as_raw_fd()));
        let file = tempfile::tempfile().unwrap();
        assert!(!closed_at_start(file.as_raw_fd()));
        let fd = rw.as_raw_fd();
        drop(rw);
        assert!(closed_at_start(fd), "a descriptor closed now");
    }
}
