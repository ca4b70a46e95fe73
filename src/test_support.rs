//! Helpers for the unit tests.

/// A scratch folder on a real file system (the working folder, the crate's root under
/// `cargo test`, so `O_DIRECT`, FIEMAP and the page cache behave as on a disk) when the
/// current user may write there, else in the system temporary folder (an unprivileged
/// user running tests built by someone else).
pub(crate) fn scratch() -> tempfile::TempDir {
    std::env::current_dir()
        .and_then(tempfile::tempdir_in)
        .or_else(|_| tempfile::tempdir())
        .expect("cannot make a scratch folder")
}
