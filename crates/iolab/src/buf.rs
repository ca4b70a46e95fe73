//! A heap buffer with a chosen alignment, for `O_DIRECT` and registered io_uring buffers.
//!
//! Buffers for large `O_DIRECT` reads come from transparent huge pages
//! ([`AlignedBuf::for_device`]): a device takes a bounded number of memory segments per
//! request (virtio-blk 254, many NVMe drives far fewer), and a 1 MiB read into 4 KiB pages
//! that are not physically adjacent is 256 of them, so the block layer splits every such
//! read in two. On huge pages the read is one segment and one request: a 22 GiB file read
//! by `uring-direct` at depth 32 went from 15–17 s to 7.3–7.5 s (fio: 7.2–7.6 s), and a
//! 1 GiB one at depth 8 from 0.91 s to 0.31 s (docs/findings/count.md, 26 Nov).

use std::alloc::{self, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::Arc;

/// A huge page's size on x86-64 and arm64 with 4 KiB pages.
const HUGE_PAGE: usize = 2 << 20;

/// The smallest [`AlignedBuf::for_device`] buffer put on huge pages: 256 KiB, 64 pages of
/// 4 KiB (devices take from 33 to 254 segments per request).
pub const HUGE_FROM: usize = 256 << 10;

/// A zero-initialised heap buffer whose start is aligned to a power of two.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    /// What frees the memory: the buffer's own allocation, or a huge-page region shared by
    /// several buffers, freed with the last of them.
    _owner: Arc<Allocation>,
}

/// Memory from the global allocator, freed on drop.
struct Allocation {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: an `Allocation` is only a pointer to memory nobody else frees; freeing it from
// another thread is what the global allocator allows.
unsafe impl Send for Allocation {}
// SAFETY: an `Allocation` gives no access to its bytes.
unsafe impl Sync for Allocation {}

impl Drop for Allocation {
    fn drop(&mut self) {
        // SAFETY: `ptr` was allocated by the global allocator with exactly this layout.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

// SAFETY: `AlignedBuf` has exclusive access to its `len` bytes (no two buffers of a shared
// region overlap), like a `Box<[u8]>`.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared access only hands out `&[u8]`, like a `Box<[u8]>`.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// A buffer of `len` bytes (at least 1) aligned to `align` (a power of two).
    ///
    /// # Panics
    ///
    /// When `align` is not a power of two or the size overflows, as `Layout` requires.
    pub fn new(len: usize, align: usize) -> AlignedBuf {
        let layout = Layout::from_size_align(len.max(1), align)
            .expect("alignment is a power of two and the size fits in isize");
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        AlignedBuf {
            ptr,
            len: layout.size(),
            _owner: Arc::new(Allocation { ptr, layout }),
        }
    }

    /// `count` buffers of `len` bytes each, aligned to `align`, for `O_DIRECT` reads: from
    /// [`HUGE_FROM`] bytes on, laid end to end in one region on transparent huge pages
    /// (aligned to 2 MiB and advised `MADV_HUGEPAGE` before its pages are first touched), so
    /// that each buffer is physically contiguous and a read into it is one request to the
    /// device (see the module docs); smaller ones, and all where the kernel has no THP, are
    /// ordinary pages. The memory is what the buffers need, rounded up to 2 MiB.
    ///
    /// # Panics
    ///
    /// When `align` is not a power of two or the size overflows, as `Layout` requires.
    pub fn for_device(count: usize, len: usize, align: usize) -> Vec<AlignedBuf> {
        let len = len.max(1);
        if len < HUGE_FROM || align > HUGE_PAGE || !len.is_multiple_of(align) {
            return (0..count).map(|_| AlignedBuf::new(len, align)).collect();
        }
        let total = len
            .checked_mul(count.max(1))
            .expect("the buffers' size fits in usize");
        let layout = Layout::from_size_align(total.next_multiple_of(HUGE_PAGE), HUGE_PAGE)
            .expect("the size fits in isize");
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc::alloc(layout) };
        let base = NonNull::new(raw).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        // SAFETY: madvise on memory this region owns only changes how it is backed; a
        // failure (no THP here) leaves ordinary pages.
        unsafe { libc::madvise(base.as_ptr().cast(), layout.size(), libc::MADV_HUGEPAGE) };
        // SAFETY: `base` is valid for writes of `layout.size()` bytes; zeroing initialises
        // the buffers, as `new`'s are, and faults the pages in, huge where possible.
        unsafe { base.as_ptr().write_bytes(0, layout.size()) };
        let region = Arc::new(Allocation { ptr: base, layout });
        (0..count)
            .map(|i| AlignedBuf {
                // SAFETY: `i * len + len <= total <= layout.size()`: in the region, and
                // each buffer's bytes are its own (they follow each other without overlap).
                ptr: unsafe { base.add(i * len) },
                len,
                _owner: Arc::clone(&region),
            })
            .collect()
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` points to `len` initialised (zeroed) bytes that only this buffer
        // hands out, alive as long as its owner.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_buffers_are_aligned_apart_zeroed_and_outlive_each_other() {
        for (count, len, align) in [(8, 1 << 20, 512), (3, 768 << 10, 4096), (4, 4096, 4096)] {
            let mut bufs = AlignedBuf::for_device(count, len, align);
            assert_eq!(bufs.len(), count);
            for (i, b) in bufs.iter_mut().enumerate() {
                assert_eq!(b.len(), len);
                assert_eq!(b.as_ptr() as usize % align, 0);
                assert!(b.iter().all(|&x| x == 0));
                b.fill(i as u8 + 1);
            }
            // Each buffer kept its own bytes, and dropping some leaves the others whole.
            let last = bufs.pop().unwrap();
            drop(bufs);
            assert!(last.iter().all(|&x| x == count as u8));
        }
    }
}
