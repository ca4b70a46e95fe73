//! A heap buffer with a chosen alignment, for `O_DIRECT` and registered io_uring buffers.

use std::alloc::{self, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// A zero-initialised heap buffer whose start is aligned to a power of two.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: `AlignedBuf` owns its allocation exclusively, like a `Box<[u8]>`.
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
        AlignedBuf { ptr, layout }
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` points to `layout.size()` initialised (zeroed) bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: `ptr` was allocated by `alloc_zeroed` with exactly this layout.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}
