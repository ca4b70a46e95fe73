//! The SIMD kernels' algorithms, written once over a [`Vector`] (memchr's pattern): each
//! instruction set implements the few operations below for its register type, and its
//! `#[target_feature]` entry points instantiate [`count`] and [`replace`] with it, so the
//! generic code is compiled with that instruction set.
//!
//! **Count**: four vectors per iteration are compared with the needle, and each match adds
//! one to an 8-bit lane of an accumulator; an 8-bit lane overflows after 255 additions, so
//! every block of at most 255 iterations is folded into 64-bit lanes (`vpsadbw` against
//! zero: bytecount's trick). **Replace**: a vector is stored back only when it holds a
//! `from` byte, so a page of a map without one stays clean.

/// Iterations per block: an 8-bit lane counts at most 255 matches before it must be folded.
const MAX_ITERATIONS: usize = 255;

/// A SIMD register of bytes and the operations the kernels need.
///
/// # Safety
///
/// Every method may only run on a CPU with the implementing instruction set (the entry
/// points that use it are `#[target_feature]` functions whose callers checked).
pub(crate) unsafe trait Vector: Copy {
    /// Bytes per register.
    const BYTES: usize;

    /// Every byte `b`.
    unsafe fn splat(b: u8) -> Self;

    /// All zero.
    unsafe fn zero() -> Self;

    /// `BYTES` bytes from `p`, which need not be aligned.
    ///
    /// # Safety
    ///
    /// `p` must be valid for reads of `BYTES` bytes.
    unsafe fn load(p: *const u8) -> Self;

    /// `acc` plus one in each 8-bit lane where `v` equals `needle`.
    unsafe fn add_matches(acc: Self, v: Self, needle: Self) -> Self;

    /// `sums` (64-bit lanes) plus the sums of `acc`'s 8-bit lanes.
    unsafe fn fold(sums: Self, acc: Self) -> Self;

    /// The sum of the 64-bit lanes.
    unsafe fn sum_u64(self) -> u64;

    /// The `needle` bytes in `tail`, shorter than four registers.
    unsafe fn count_tail(tail: &[u8], needle: u8) -> u64 {
        super::scalar::count(tail, needle)
    }

    /// Writes `to` over the bytes of the register at `p` that equal `from`, storing only
    /// when there is one; returns how many there were.
    ///
    /// # Safety
    ///
    /// `p` must be valid for reads and writes of `BYTES` bytes.
    unsafe fn replace_at(p: *mut u8, from: Self, to: Self) -> u64;

    /// [`Vector::replace_at`] for `tail`, shorter than a register.
    unsafe fn replace_tail(tail: &mut [u8], from: u8, to: u8) -> u64 {
        super::scalar::replace(tail, from, to)
    }
}

/// The number of bytes in `haystack` equal to `needle`.
///
/// # Safety
///
/// The CPU must have `V`'s instruction set.
#[inline(always)]
pub(crate) unsafe fn count<V: Vector>(haystack: &[u8], needle: u8) -> u64 {
    // SAFETY: the caller guarantees `V`'s instruction set (so in every block below).
    let (splat, zero) = unsafe { (V::splat(needle), V::zero()) };
    let mut sums = zero;
    let (mut a0, mut a1, mut a2, mut a3) = (zero, zero, zero, zero);
    let mut pending = 0usize;
    let mut blocks = haystack.chunks_exact(4 * V::BYTES);
    for block in &mut blocks {
        let p = block.as_ptr();
        // SAFETY: `block` is 4 × BYTES long, so the four loads at p, p + BYTES, p + 2 ×
        // BYTES and p + 3 × BYTES stay inside it.
        unsafe {
            a0 = V::add_matches(a0, V::load(p), splat);
            a1 = V::add_matches(a1, V::load(p.add(V::BYTES)), splat);
            a2 = V::add_matches(a2, V::load(p.add(2 * V::BYTES)), splat);
            a3 = V::add_matches(a3, V::load(p.add(3 * V::BYTES)), splat);
        }
        pending += 1;
        if pending == MAX_ITERATIONS {
            // SAFETY: see above.
            sums = unsafe { fold4(sums, a0, a1, a2, a3) };
            (a0, a1, a2, a3) = (zero, zero, zero, zero);
            pending = 0;
        }
    }
    // SAFETY: see above.
    unsafe { fold4(sums, a0, a1, a2, a3).sum_u64() + V::count_tail(blocks.remainder(), needle) }
}

/// `sums` plus the 8-bit lanes of four accumulators.
#[inline(always)]
unsafe fn fold4<V: Vector>(sums: V, a0: V, a1: V, a2: V, a3: V) -> V {
    // SAFETY: the caller guarantees `V`'s instruction set.
    unsafe { V::fold(V::fold(V::fold(V::fold(sums, a0), a1), a2), a3) }
}

/// Replaces every `from` byte of `buf` by `to`; returns how many bytes changed.
///
/// # Safety
///
/// The CPU must have `V`'s instruction set.
#[inline(always)]
pub(crate) unsafe fn replace<V: Vector>(buf: &mut [u8], from: u8, to: u8) -> u64 {
    if from == to {
        return 0;
    }
    // SAFETY: the caller guarantees `V`'s instruction set (so in every block below).
    let (splat_from, splat_to) = unsafe { (V::splat(from), V::splat(to)) };
    let mut changed = 0u64;
    // Four registers per iteration: enough independent loads to hide their latency.
    let mut blocks = buf.chunks_exact_mut(4 * V::BYTES);
    for block in &mut blocks {
        let p = block.as_mut_ptr();
        for i in 0..4 {
            // SAFETY: `block` is 4 × BYTES long, so the register at p + i × BYTES is
            // inside it.
            changed += unsafe { V::replace_at(p.add(i * V::BYTES), splat_from, splat_to) };
        }
    }
    let mut vectors = blocks.into_remainder().chunks_exact_mut(V::BYTES);
    for vector in &mut vectors {
        // SAFETY: `vector` is exactly BYTES long.
        changed += unsafe { V::replace_at(vector.as_mut_ptr(), splat_from, splat_to) };
    }
    // SAFETY: see above.
    changed + unsafe { V::replace_tail(vectors.into_remainder(), from, to) }
}
