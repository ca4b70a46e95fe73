//! The ring of the io_uring read methods that keep one read in flight (`uring`,
//! `uring-readv`): set up, and one read submitted and reaped.

use io_uring::IoUring;

use crate::error::{Error, Result};
use crate::sys::uring::{self as ring_support, SMALL_RING_ENTRIES};

/// A ring of `SMALL_RING_ENTRIES` for `method`'s one read at a time; when io_uring cannot
/// be set up here, [`Error::Unavailable`] with the reason.
pub(crate) fn small_ring(method: &'static str) -> Result<IoUring> {
    ring_support::new_ring(SMALL_RING_ENTRIES)
        .map_err(|reason| Error::Unavailable { method, reason })
}

/// `submit_and_wait_one` for a read: the bytes it read, or the failure as iolab reports
/// it (`failed` names the operation, `"io_uring read failed"`). When the wait itself fails
/// the read may still be in flight, so `leak` is called first: it must leak every buffer
/// `entry` points to.
///
/// # Safety
///
/// As for `submit_and_wait_one`, with `leak` doing the leaking it requires.
pub(crate) unsafe fn read_one(
    ring: &mut IoUring,
    entry: &io_uring::squeue::Entry,
    failed: &'static str,
    leak: impl FnOnce(),
) -> Result<usize> {
    // SAFETY: the caller's contract; on a failed wait `leak` keeps the buffers alive.
    match unsafe { ring_support::submit_and_wait_one(ring, entry) } {
        Err(e) => {
            leak();
            Err(Error::io("io_uring wait failed", e))
        }
        Ok(r) if r < 0 => Err(Error::io(failed, std::io::Error::from_raw_os_error(-r))),
        Ok(r) => Ok(r as usize),
    }
}
