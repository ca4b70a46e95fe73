//! The AVX2 replace kernel: 32 bytes per compare, four vectors per iteration.
//!
//! `vpcmpeqb` marks the bytes equal to `from` with `0xFF`; `vpblendvb` takes `to` there and
//! the old byte elsewhere. A vector is stored back only when `vpmovmskb` shows a match
//! (AVX2 has no byte-masked store; `vmaskmov` works on 32-bit lanes). The tail of fewer
//! than 32 bytes goes to the portable kernel.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// Bytes per vector.
#[cfg(target_arch = "x86_64")]
const LANES: usize = 32;

/// Bytes per loop iteration: four vectors, enough independent loads to hide their latency.
#[cfg(target_arch = "x86_64")]
const STEP: usize = 4 * LANES;

/// Replaces every `from` byte of `buf` by `to`; returns how many bytes changed.
///
/// # Safety
///
/// The CPU must support AVX2 ([`crate::kernel::avx2::is_available`] returned `true`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub unsafe fn replace(buf: &mut [u8], from: u8, to: u8) -> u64 {
    if from == to {
        return 0;
    }
    let splat_from = _mm256_set1_epi8(from as i8);
    let splat_to = _mm256_set1_epi8(to as i8);
    let mut changed = 0u64;
    let mut blocks = buf.chunks_exact_mut(STEP);
    for block in &mut blocks {
        let p = block.as_mut_ptr() as *mut __m256i;
        for i in 0..STEP / LANES {
            // SAFETY: `block` is STEP bytes long and i < STEP / LANES, so the 32 bytes at
            // p + i (in units of 32 bytes) are inside it; both accesses are unaligned ones.
            unsafe { changed += one(p.add(i), splat_from, splat_to) };
        }
    }
    let mut vectors = blocks.into_remainder().chunks_exact_mut(LANES);
    for vector in &mut vectors {
        // SAFETY: `vector` is exactly 32 bytes long.
        unsafe { changed += one(vector.as_mut_ptr() as *mut __m256i, splat_from, splat_to) };
    }
    changed + super::scalar::replace(vectors.into_remainder(), from, to)
}

/// Replaces the matching bytes of the 32 bytes at `p`; returns how many there were.
///
/// # Safety
///
/// `p` must be valid for reads and writes of 32 bytes (any alignment), and the CPU must
/// support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn one(p: *mut __m256i, splat_from: __m256i, splat_to: __m256i) -> u64 {
    // SAFETY: the caller guarantees 32 readable bytes at `p`.
    let v = unsafe { _mm256_loadu_si256(p) };
    let eq = _mm256_cmpeq_epi8(v, splat_from);
    let bits = _mm256_movemask_epi8(eq) as u32;
    if bits == 0 {
        return 0;
    }
    // SAFETY: the caller guarantees 32 writable bytes at `p`.
    unsafe { _mm256_storeu_si256(p, _mm256_blendv_epi8(v, splat_to, eq)) };
    u64::from(bits.count_ones())
}

/// Stand-in on other architectures; never called because AVX2 is never available there.
///
/// # Safety
///
/// Never safe to call: [`crate::kernel::avx2::is_available`] is `false` on this
/// architecture.
#[cfg(not(target_arch = "x86_64"))]
pub unsafe fn replace(_buf: &mut [u8], _from: u8, _to: u8) -> u64 {
    unreachable!("the AVX2 kernel exists only on x86-64")
}
