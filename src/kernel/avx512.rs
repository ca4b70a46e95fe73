//! The AVX-512 (F + BW) kernel: 64 bytes per compare, four vectors per iteration.
//!
//! `vpcmpeqb` writes a 64-bit mask register; `popcnt` of the mask is the count for 64
//! bytes. The tail (under 64 bytes) uses a masked load, which cannot fault on the bytes it
//! leaves out, so no scalar loop is needed.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// Bytes per loop iteration: four 64-byte vectors.
#[cfg(target_arch = "x86_64")]
const STEP: usize = 4 * 64;

/// Whether this CPU can run the AVX-512 kernel (it needs AVX-512 F and BW).
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

/// The number of bytes in `haystack` equal to `needle`.
///
/// # Safety
///
/// The CPU must support AVX-512 F and BW ([`is_available`] returned `true`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
pub unsafe fn count(haystack: &[u8], needle: u8) -> u64 {
    let splat = _mm512_set1_epi8(needle as i8);
    let mut blocks = haystack.chunks_exact(STEP);
    let (mut n0, mut n1, mut n2, mut n3) = (0u64, 0u64, 0u64, 0u64);
    for block in &mut blocks {
        let p = block.as_ptr();
        // SAFETY: `block` is STEP = 256 bytes long, so the four unaligned 64-byte loads at
        // offsets 0, 64, 128 and 192 stay inside it.
        let (v0, v1, v2, v3) = unsafe {
            (
                _mm512_loadu_si512(p as *const __m512i),
                _mm512_loadu_si512(p.add(64) as *const __m512i),
                _mm512_loadu_si512(p.add(128) as *const __m512i),
                _mm512_loadu_si512(p.add(192) as *const __m512i),
            )
        };
        n0 += u64::from(_mm512_cmpeq_epi8_mask(v0, splat).count_ones());
        n1 += u64::from(_mm512_cmpeq_epi8_mask(v1, splat).count_ones());
        n2 += u64::from(_mm512_cmpeq_epi8_mask(v2, splat).count_ones());
        n3 += u64::from(_mm512_cmpeq_epi8_mask(v3, splat).count_ones());
    }
    let mut n = n0 + n1 + n2 + n3;
    for tail in blocks.remainder().chunks(64) {
        // A mask with the low `tail.len()` bits set (tail.len() is 1..=64).
        let keep: __mmask64 = u64::MAX >> (64 - tail.len());
        // SAFETY: a masked load reads only the bytes whose mask bit is set, here the
        // `tail.len()` bytes of `tail`; masked-off bytes are neither read nor faulted on.
        let v = unsafe { _mm512_maskz_loadu_epi8(keep, tail.as_ptr() as *const i8) };
        n += u64::from(_mm512_mask_cmpeq_epi8_mask(keep, v, splat).count_ones());
    }
    n
}

/// Stand-in on other architectures; never called because [`is_available`] is `false`.
///
/// # Safety
///
/// Never safe to call: [`is_available`] is `false` on this architecture.
#[cfg(not(target_arch = "x86_64"))]
pub unsafe fn count(_haystack: &[u8], _needle: u8) -> u64 {
    unreachable!("the AVX-512 kernel exists only on x86-64")
}
