//! The AVX2 kernels: 32-byte registers for `kernel/vector.rs`'s algorithms.
//!
//! Count: `vpcmpeqb` yields `0xFF` (-1) for each matching byte, and subtracting it from an
//! accumulator adds one. Replace: `vpblendvb` takes `to` where `vpcmpeqb` matched, stored
//! back only when `vpmovmskb` shows a match (AVX2 has no byte-masked store). Tails go to
//! the portable kernels.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

#[cfg(target_arch = "x86_64")]
use super::vector::{self, Vector};

/// Whether this CPU can run the AVX2 kernels.
pub fn is_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

// SAFETY: every method is only reached from the `avx2` entry points below, whose callers
// checked the CPU.
#[cfg(target_arch = "x86_64")]
unsafe impl Vector for __m256i {
    const BYTES: usize = 32;

    #[inline(always)]
    unsafe fn splat(b: u8) -> Self {
        // SAFETY: AVX2 is available (the trait's contract).
        unsafe { _mm256_set1_epi8(b as i8) }
    }

    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: as above.
        unsafe { _mm256_setzero_si256() }
    }

    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: the caller guarantees 32 readable bytes at `p`; the load is unaligned.
        unsafe { _mm256_loadu_si256(p.cast()) }
    }

    #[inline(always)]
    unsafe fn add_matches(acc: Self, v: Self, needle: Self) -> Self {
        // SAFETY: AVX2 is available.
        unsafe { _mm256_sub_epi8(acc, _mm256_cmpeq_epi8(v, needle)) }
    }

    #[inline(always)]
    unsafe fn fold(sums: Self, acc: Self) -> Self {
        // SAFETY: AVX2 is available.
        unsafe { _mm256_add_epi64(sums, _mm256_sad_epu8(acc, _mm256_setzero_si256())) }
    }

    #[inline(always)]
    unsafe fn sum_u64(self) -> u64 {
        let mut lanes = [0u64; 4];
        // SAFETY: `lanes` is 32 bytes, exactly one unaligned 256-bit store.
        unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), self) };
        lanes.iter().sum()
    }

    #[inline(always)]
    unsafe fn replace_at(p: *mut u8, from: Self, to: Self) -> u64 {
        // SAFETY: the caller guarantees 32 readable and writable bytes at `p`.
        unsafe {
            let v = _mm256_loadu_si256(p.cast());
            let eq = _mm256_cmpeq_epi8(v, from);
            let bits = _mm256_movemask_epi8(eq) as u32;
            if bits == 0 {
                return 0;
            }
            _mm256_storeu_si256(p.cast(), _mm256_blendv_epi8(v, to, eq));
            u64::from(bits.count_ones())
        }
    }
}

/// The number of bytes in `haystack` equal to `needle`.
///
/// # Safety
///
/// The CPU must support AVX2 ([`is_available`] returned `true`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub unsafe fn count(haystack: &[u8], needle: u8) -> u64 {
    // SAFETY: the caller checked AVX2.
    unsafe { vector::count::<__m256i>(haystack, needle) }
}

/// Replaces every `from` byte of `buf` by `to`; returns how many bytes changed.
///
/// # Safety
///
/// The CPU must support AVX2 ([`is_available`] returned `true`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub unsafe fn replace(buf: &mut [u8], from: u8, to: u8) -> u64 {
    // SAFETY: the caller checked AVX2.
    unsafe { vector::replace::<__m256i>(buf, from, to) }
}

/// Stand-in on other architectures; never called because [`is_available`] is `false`.
///
/// # Safety
///
/// Never safe to call: [`is_available`] is `false` on this architecture.
#[cfg(not(target_arch = "x86_64"))]
pub unsafe fn count(_haystack: &[u8], _needle: u8) -> u64 {
    unreachable!("the AVX2 kernels exist only on x86-64")
}

/// Stand-in on other architectures; never called because [`is_available`] is `false`.
///
/// # Safety
///
/// Never safe to call: [`is_available`] is `false` on this architecture.
#[cfg(not(target_arch = "x86_64"))]
pub unsafe fn replace(_buf: &mut [u8], _from: u8, _to: u8) -> u64 {
    unreachable!("the AVX2 kernels exist only on x86-64")
}
