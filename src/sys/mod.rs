//! Small wrappers over Linux facilities that more than one module uses. This module
//! imports no other part of iolab: everything else may build on it.

pub mod dio;
pub mod fiemap;
pub mod sigbus;
pub mod uring;

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
