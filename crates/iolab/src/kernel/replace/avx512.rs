//! The AVX-512 (F + BW) replace kernel: 64 bytes per compare, four vectors per iteration.
//!
//! `vpcmpeqb` writes a 64-bit mask of the bytes equal to `from`; a byte-masked store
//! (`vmovdqu8 [p]{k}`) writes `to` into exactly those bytes and nothing else, so a vector
//! without a match is not written at all. The tail (under 64 bytes) uses the same masked
//! store after a masked load, which cannot fault on the bytes it leaves out.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// Bytes per vector.
#[cfg(target_arch = "x86_64")]
const LANES: usize = 64;

/// Bytes per loop iteration: four vectors, enough independent loads to hide their latency.
#[cfg(target_arch = "x86_64")]
const STEP: usize = 4 * LANES;

/// Replaces every `from` byte of `buf` by `to`; returns how many bytes changed.
///
/// # Safety
///
/// The CPU must support AVX-512 F and BW ([`crate::kernel::avx512::is_available`] returned
/// `true`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
pub unsafe fn replace(buf: &mut [u8], from: u8, to: u8) -> u64 {
    if from == to {
        return 0;
    }
    let splat_from = _mm512_set1_epi8(from as i8);
    let splat_to = _mm512_set1_epi8(to as i8);
    let mut changed = 0u64;
    let mut blocks = buf.chunks_exact_mut(STEP);
    for block in &mut blocks {
        let p = block.as_mut_ptr();
        for i in 0..STEP / LANES {
            // SAFETY: `block` is STEP bytes long and i < STEP / LANES, so the 64 bytes at
            // p + 64 i are inside it; a full mask reads and may write all of them.
            unsafe { changed += masked(p.add(i * LANES), u64::MAX, splat_from, splat_to) };
        }
    }
    for tail in blocks.into_remainder().chunks_mut(LANES) {
        // The low `tail.len()` bits (tail.len() is 1..=64).
        let keep: __mmask64 = u64::MAX >> (LANES - tail.len());
        // SAFETY: `keep` selects exactly the `tail.len()` bytes of `tail`; the masked load
        // and store touch no byte outside the mask (masked-off bytes are not accessed and
        // cannot fault).
        unsafe { changed += masked(tail.as_mut_ptr(), keep, splat_from, splat_to) };
    }
    changed
}

/// Replaces the matching bytes among those of the 64 bytes at `p` selected by `keep`;
/// returns how many there were.
///
/// # Safety
///
/// Every byte at `p + i` whose bit `i` of `keep` is set must be valid for reads and writes;
/// the other bytes are not accessed. The CPU must support AVX-512 F and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
unsafe fn masked(p: *mut u8, keep: __mmask64, splat_from: __m512i, splat_to: __m512i) -> u64 {
    // SAFETY: the caller guarantees the bytes selected by `keep` are readable; a masked
    // load does not access the others.
    let v = unsafe { _mm512_maskz_loadu_epi8(keep, p as *const i8) };
    let hit = _mm512_mask_cmpeq_epi8_mask(keep, v, splat_from);
    if hit == 0 {
        return 0;
    }
    // SAFETY: `hit` is a subset of `keep`, whose bytes the caller guarantees writable;
    // a masked store does not access the others.
    unsafe { _mm512_mask_storeu_epi8(p as *mut i8, hit, splat_to) };
    u64::from(hit.count_ones())
}

/// Stand-in on other architectures; never called because AVX-512 is never available there.
///
/// # Safety
///
/// Never safe to call: [`crate::kernel::avx512::is_available`] is `false` on this
/// architecture.
#[cfg(not(target_arch = "x86_64"))]
pub unsafe fn replace(_buf: &mut [u8], _from: u8, _to: u8) -> u64 {
    unreachable!("the AVX-512 kernel exists only on x86-64")
}
