//! The queue depth `iolab random` takes for the io_uring methods without `--queue-depth`:
//! the depth `iolab bench random --sweep` measured fastest on this machine for the file's
//! size class (the profile's `random_depth`), else [`super::DEFAULT_QUEUE_DEPTH`]; the
//! same choice as the library's batch reads ([`crate::file::auto::queue_depth`]).

/// The queue depth for io_uring random reads with `method` (`uring`, `uring-direct`) of a
/// file of `len` bytes, and why ([`crate::file::auto::queue_depth`]).
pub fn depth_for(method: &str, len: u64) -> (usize, String) {
    crate::file::auto::queue_depth(method, len)
}
