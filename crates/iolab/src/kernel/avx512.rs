//! The AVX-512 (F + BW) kernels: 64-byte registers for `kernel/vector.rs`'s algorithms.
//!
//! Count: `vpcmpeqb` writes a 64-bit mask, and a masked `vpsubb` of -1 adds one to the
//! lanes that matched (two instructions per 64 bytes, where `kmov` + `popcnt` per mask
//! would be three and bottleneck on the mask-to-GPR port). Replace: a byte-masked store of
//! `to`. Tails use masked loads and stores, which cannot fault on the bytes they leave out.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

#[cfg(target_arch = "x86_64")]
use super::vector::{self, Vector};

/// Whether this CPU can run the AVX-512 kernels (they need AVX-512 F and BW).
pub fn is_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The matches of `needle` in the `keep` bytes at `p`, and the register loaded.
///
/// # Safety
///
/// AVX-512 F and BW; `p` valid for reads of the bytes whose `keep` bit is set (masked-off
/// bytes are neither read nor faulted on).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn masked_eq(p: *const u8, keep: __mmask64, needle: __m512i) -> (__m512i, __mmask64) {
    // SAFETY: the caller's contract.
    unsafe {
        let v = _mm512_maskz_loadu_epi8(keep, p.cast());
        (v, _mm512_mask_cmpeq_epi8_mask(keep, v, needle))
    }
}

/// A mask of the low `len` bits (`len` is 1..=64).
#[cfg(target_arch = "x86_64")]
fn low_bits(len: usize) -> __mmask64 {
    u64::MAX >> (64 - len)
}

// SAFETY: every method is only reached from the `avx512f,avx512bw` entry points below,
// whose callers checked the CPU.
#[cfg(target_arch = "x86_64")]
unsafe impl Vector for __m512i {
    const BYTES: usize = 64;

    #[inline(always)]
    unsafe fn splat(b: u8) -> Self {
        // SAFETY: AVX-512 is available (the trait's contract).
        unsafe { _mm512_set1_epi8(b as i8) }
    }

    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: as above.
        unsafe { _mm512_setzero_si512() }
    }

    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: the caller guarantees 64 readable bytes at `p`; the load is unaligned.
        unsafe { _mm512_loadu_si512(p.cast()) }
    }

    #[inline(always)]
    unsafe fn add_matches(acc: Self, v: Self, needle: Self) -> Self {
        // SAFETY: AVX-512 is available.
        unsafe {
            let hit = _mm512_cmpeq_epi8_mask(v, needle);
            _mm512_mask_sub_epi8(acc, hit, acc, _mm512_set1_epi8(-1))
        }
    }

    #[inline(always)]
    unsafe fn fold(sums: Self, acc: Self) -> Self {
        // SAFETY: AVX-512 is available.
        unsafe { _mm512_add_epi64(sums, _mm512_sad_epu8(acc, _mm512_setzero_si512())) }
    }

    #[inline(always)]
    unsafe fn sum_u64(self) -> u64 {
        // SAFETY: AVX-512 is available.
        unsafe { _mm512_reduce_add_epi64(self) as u64 }
    }

    #[inline(always)]
    unsafe fn count_tail(tail: &[u8], needle: u8) -> u64 {
        let mut n = 0;
        for part in tail.chunks(64) {
            // SAFETY: the mask keeps the `part.len()` bytes of `part`.
            let (_, hit) =
                unsafe { masked_eq(part.as_ptr(), low_bits(part.len()), Self::splat(needle)) };
            n += u64::from(hit.count_ones());
        }
        n
    }

    #[inline(always)]
    unsafe fn replace_at(p: *mut u8, from: Self, to: Self) -> u64 {
        // SAFETY: the caller guarantees 64 readable and writable bytes at `p`.
        unsafe { replace_masked(p, u64::MAX, from, to) }
    }

    #[inline(always)]
    unsafe fn replace_tail(tail: &mut [u8], from: u8, to: u8) -> u64 {
        if tail.is_empty() {
            return 0;
        }
        // SAFETY: the mask keeps the `tail.len()` bytes of `tail`.
        unsafe {
            replace_masked(
                tail.as_mut_ptr(),
                low_bits(tail.len()),
                Self::splat(from),
                Self::splat(to),
            )
        }
    }
}

/// Writes `to` over the `keep` bytes at `p` equal to `from`; returns how many.
///
/// # Safety
///
/// AVX-512 F and BW; `p` valid for reads and writes of the bytes whose `keep` bit is set.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn replace_masked(p: *mut u8, keep: __mmask64, from: __m512i, to: __m512i) -> u64 {
    // SAFETY: the caller's contract; the store writes only the matching bytes.
    unsafe {
        let (_, hit) = masked_eq(p, keep, from);
        if hit == 0 {
            return 0;
        }
        _mm512_mask_storeu_epi8(p.cast(), hit, to);
        u64::from(hit.count_ones())
    }
}

/// The number of bytes in `haystack` equal to `needle`.
///
/// # Safety
///
/// The CPU must support AVX-512 F and BW ([`is_available`] returned `true`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
pub unsafe fn count(haystack: &[u8], needle: u8) -> u64 {
    // SAFETY: the caller checked AVX-512 F and BW.
    unsafe { vector::count::<__m512i>(haystack, needle) }
}

/// Replaces every `from` byte of `buf` by `to`; returns how many bytes changed.
///
/// # Safety
///
/// The CPU must support AVX-512 F and BW ([`is_available`] returned `true`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
pub unsafe fn replace(buf: &mut [u8], from: u8, to: u8) -> u64 {
    // SAFETY: the caller checked AVX-512 F and BW.
    unsafe { vector::replace::<__m512i>(buf, from, to) }
}

/// Stand-in on other architectures; never called because [`is_available`] is `false`.
///
/// # Safety
///
/// Never safe to call: [`is_available`] is `false` on this architecture.
#[cfg(not(target_arch = "x86_64"))]
pub unsafe fn count(_haystack: &[u8], _needle: u8) -> u64 {
    unreachable!("the AVX-512 kernels exist only on x86-64")
}

/// Stand-in on other architectures; never called because [`is_available`] is `false`.
///
/// # Safety
///
/// Never safe to call: [`is_available`] is `false` on this architecture.
#[cfg(not(target_arch = "x86_64"))]
pub unsafe fn replace(_buf: &mut [u8], _from: u8, _to: u8) -> u64 {
    unreachable!("the AVX-512 kernels exist only on x86-64")
}
