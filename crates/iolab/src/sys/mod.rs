//! Small wrappers over Linux facilities that more than one module uses. This module
//! imports no other part of iolab: everything else may build on it.

pub mod dio;
pub(crate) mod faults;
pub mod lease;
pub mod sigbus;
pub mod uring;

/// A name for a file type that is neither a regular file nor a directory, for messages:
/// "symbolic link", "FIFO", "character device", "block device", "socket" or "special file".
pub fn special_kind_name(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_symlink() {
        "symbolic link"
    } else if kind.is_fifo() {
        "FIFO"
    } else if kind.is_char_device() {
        "character device"
    } else if kind.is_block_device() {
        "block device"
    } else if kind.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// The system's page size in bytes.
pub fn page_size() -> u64 {
    // SAFETY: sysconf has no memory effects.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 { size as u64 } else { 4096 }
}

/// An error's text without Rust's " (os error N)" suffix.
pub fn describe_io(e: &dyn std::error::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// Retries `f` while it fails with `EINTR`.
pub fn retry_eintr<T>(mut f: impl FnMut() -> std::io::Result<T>) -> std::io::Result<T> {
    loop {
        match f() {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}
