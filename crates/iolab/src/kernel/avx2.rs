//! The AVX2 kernel: 32 bytes per compare, four vectors per iteration.
//!
//! `vpcmpeqb` yields `0xFF` (-1) for each matching byte; subtracting it from an 8-bit
//! accumulator adds one. An 8-bit lane overflows after 255 additions, so every block of at
//! most 255 iterations is folded into 64-bit lanes with `vpsadbw` against zero.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// Bytes per loop iteration: four 32-byte vectors.
#[cfg(target_arch = "x86_64")]
const STEP: usize = 4 * 32;
/// Iterations per block: an 8-bit lane counts at most 255 matches before it must be folded.
#[cfg(target_arch = "x86_64")]
const MAX_ITERATIONS: usize = 255;

/// Whether this CPU can run the AVX2 kernel.
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

/// The number of bytes in `haystack` equal to `needle`.
///
/// # Safety
///
/// The CPU must support AVX2 ([`is_available`] returned `true`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub unsafe fn count(haystack: &[u8], needle: u8) -> u64 {
    let splat = _mm256_set1_epi8(needle as i8);
    let zero = _mm256_setzero_si256();
    let mut sums = _mm256_setzero_si256();
    let mut blocks = haystack.chunks_exact(STEP);
    let mut pending = 0usize;
    let (mut a0, mut a1, mut a2, mut a3) = (zero, zero, zero, zero);
    for block in &mut blocks {
        let p = block.as_ptr() as *const __m256i;
        // SAFETY: `block` is STEP = 128 bytes long, so the four unaligned 32-byte loads at
        // p, p+1, p+2 and p+3 (in units of 32 bytes) stay inside it.
        let (v0, v1, v2, v3) = unsafe {
            (
                _mm256_loadu_si256(p),
                _mm256_loadu_si256(p.add(1)),
                _mm256_loadu_si256(p.add(2)),
                _mm256_loadu_si256(p.add(3)),
            )
        };
        a0 = _mm256_sub_epi8(a0, _mm256_cmpeq_epi8(v0, splat));
        a1 = _mm256_sub_epi8(a1, _mm256_cmpeq_epi8(v1, splat));
        a2 = _mm256_sub_epi8(a2, _mm256_cmpeq_epi8(v2, splat));
        a3 = _mm256_sub_epi8(a3, _mm256_cmpeq_epi8(v3, splat));
        pending += 1;
        if pending == MAX_ITERATIONS {
            sums = fold(sums, a0, a1, a2, a3);
            (a0, a1, a2, a3) = (zero, zero, zero, zero);
            pending = 0;
        }
    }
    sums = fold(sums, a0, a1, a2, a3);
    let mut lanes = [0u64; 4];
    // SAFETY: `lanes` is 32 bytes, exactly one unaligned 256-bit store.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr() as *mut __m256i, sums) };
    lanes.iter().sum::<u64>() + super::scalar::count(blocks.remainder(), needle)
}

/// Adds the byte counts of four 8-bit accumulators into the four 64-bit lanes of `sums`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn fold(sums: __m256i, a0: __m256i, a1: __m256i, a2: __m256i, a3: __m256i) -> __m256i {
    let zero = _mm256_setzero_si256();
    let s01 = _mm256_add_epi64(_mm256_sad_epu8(a0, zero), _mm256_sad_epu8(a1, zero));
    let s23 = _mm256_add_epi64(_mm256_sad_epu8(a2, zero), _mm256_sad_epu8(a3, zero));
    _mm256_add_epi64(sums, _mm256_add_epi64(s01, s23))
}

/// Stand-in on other architectures; never called because [`is_available`] is `false`.
///
/// # Safety
///
/// Never safe to call: [`is_available`] is `false` on this architecture.
#[cfg(not(target_arch = "x86_64"))]
pub unsafe fn count(_haystack: &[u8], _needle: u8) -> u64 {
    unreachable!("the AVX2 kernel exists only on x86-64")
}
