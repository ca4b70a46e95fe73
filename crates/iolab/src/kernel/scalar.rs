//! The portable kernel: eight bytes at a time in a `u64` (SWAR), no CPU feature needed.
//!
//! Each word is XORed with the needle repeated eight times, so matching bytes become zero;
//! a carry-free test then sets the top bit of every non-zero byte, and the zero bytes are
//! counted with one `popcnt`. Exact, with no false positives, on every input.

const LO7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
const HI: u64 = 0x8080_8080_8080_8080;

/// The number of bytes in `haystack` equal to `needle`.
pub fn count(haystack: &[u8], needle: u8) -> u64 {
    let splat = u64::from_ne_bytes([needle; 8]);
    let mut words = haystack.chunks_exact(8);
    let mut n = 0u64;
    for word in &mut words {
        let w = u64::from_ne_bytes(word.try_into().expect("chunks_exact(8) yields 8 bytes"));
        let x = w ^ splat;
        // Bit 7 of each byte of `t` is set exactly when that byte of `x` is non-zero:
        // (x & 0x7f) + 0x7f <= 0xfe cannot carry into the next byte.
        let t = ((x & LO7) + LO7) | x;
        n += u64::from((!t & HI).count_ones());
    }
    n + words.remainder().iter().filter(|&&b| b == needle).count() as u64
}

/// [`count`] with the signature shared by the `unsafe` SIMD kernels, for dispatch.
///
/// # Safety
///
/// None: this kernel needs no CPU feature. It is `unsafe fn` only so that it fits the
/// same function-pointer type as the SIMD kernels.
pub unsafe fn count_unsafe(haystack: &[u8], needle: u8) -> u64 {
    count(haystack, needle)
}
