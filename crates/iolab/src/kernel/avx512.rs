//! The AVX-512 (F + BW) kernel: 64 bytes per compare, four vectors per iteration.
//!
//! `vpcmpeqb` writes a 64-bit mask; a masked `vpsubb` of -1 adds one to the 8-bit lanes
//! that matched (two instructions per 64 bytes, where a `kmov` + `popcnt` per mask would
//! be three and bottleneck on the mask-to-GPR port). Every block of at most 255 iterations
//! is folded into 64-bit lanes with `vpsadbw`, as in the AVX2 kernel. The tail (under 256
//! bytes) uses masked loads, which cannot fault on the bytes they leave out.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// Bytes per loop iteration: four 64-byte vectors.
#[cfg(target_arch = "x86_64")]
const STEP: usize = 4 * 64;
/// Iterations per block: an 8-bit lane counts at most 255 matches before it must be folded.
#[cfg(target_arch = "x86_64")]
const MAX_ITERATIONS: usize = 255;

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
    let minus_one = _mm512_set1_epi8(-1);
    let zero = _mm512_setzero_si512();
    let mut sums = zero;
    let (mut a0, mut a1, mut a2, mut a3) = (zero, zero, zero, zero);
    let mut pending = 0usize;
    let mut blocks = haystack.chunks_exact(STEP);
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
        a0 = _mm512_mask_sub_epi8(a0, _mm512_cmpeq_epi8_mask(v0, splat), a0, minus_one);
        a1 = _mm512_mask_sub_epi8(a1, _mm512_cmpeq_epi8_mask(v1, splat), a1, minus_one);
        a2 = _mm512_mask_sub_epi8(a2, _mm512_cmpeq_epi8_mask(v2, splat), a2, minus_one);
        a3 = _mm512_mask_sub_epi8(a3, _mm512_cmpeq_epi8_mask(v3, splat), a3, minus_one);
        pending += 1;
        if pending == MAX_ITERATIONS {
            sums = fold(sums, a0, a1, a2, a3);
            (a0, a1, a2, a3) = (zero, zero, zero, zero);
            pending = 0;
        }
    }
    sums = fold(sums, a0, a1, a2, a3);
    let mut n = _mm512_reduce_add_epi64(sums) as u64;
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

/// Adds the byte counts of four 8-bit accumulators into the eight 64-bit lanes of `sums`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
fn fold(sums: __m512i, a0: __m512i, a1: __m512i, a2: __m512i, a3: __m512i) -> __m512i {
    let zero = _mm512_setzero_si512();
    let s01 = _mm512_add_epi64(_mm512_sad_epu8(a0, zero), _mm512_sad_epu8(a1, zero));
    let s23 = _mm512_add_epi64(_mm512_sad_epu8(a2, zero), _mm512_sad_epu8(a3, zero));
    _mm512_add_epi64(sums, _mm512_add_epi64(s01, s23))
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
