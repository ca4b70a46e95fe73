//! The portable kernels: eight bytes at a time in a `u64` (SWAR), no CPU feature needed.
//!
//! **Count.** Each word is XORed with the needle repeated eight times, so matching bytes
//! become zero; a carry-free test then sets the top bit of every non-zero byte, and the
//! zero bytes are counted with one `popcnt`. Exact, with no false positives, on every input.
//!
//! **Replace.** Each word is XORed with `from` repeated eight times, so matching bytes
//! become zero; the same carry-free test sets
//! the top bit of each zero byte, exactly. Shifting those bits down to bit 0 and
//! multiplying by `0xFF` widens them to whole-byte masks (no carry can cross a byte: `1 ×
//! 0xFF` fits), which select `to` over the old byte. A 64-byte block without a match is not
//! stored.

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
/// Bytes per block: the kernel decides once per block whether to store, because a branch
/// per word is unpredictable on text where a match is as likely as not (CSV commas), while
/// nearly every 64-byte block of such text has one.
const BLOCK: usize = 64;

/// Replaces every `from` byte of `buf` by `to`; returns how many bytes changed.
pub fn replace(buf: &mut [u8], from: u8, to: u8) -> u64 {
    if from == to {
        return 0;
    }
    let splat_from = u64::from_ne_bytes([from; 8]);
    let splat_to = u64::from_ne_bytes([to; 8]);
    let mut changed = 0u64;
    let mut blocks = buf.chunks_exact_mut(BLOCK);
    for block in &mut blocks {
        let mut words = [0u64; BLOCK / 8];
        let mut hits = 0u32;
        for (word, bytes) in words.iter_mut().zip(block.chunks_exact(8)) {
            let (new, n) = replace_word(read_word(bytes), splat_from, splat_to);
            *word = new;
            hits += n;
        }
        if hits != 0 {
            for (word, bytes) in words.iter().zip(block.chunks_exact_mut(8)) {
                bytes.copy_from_slice(&word.to_ne_bytes());
            }
            changed += u64::from(hits);
        }
    }
    let mut words = blocks.into_remainder().chunks_exact_mut(8);
    for bytes in &mut words {
        let (new, n) = replace_word(read_word(bytes), splat_from, splat_to);
        if n != 0 {
            bytes.copy_from_slice(&new.to_ne_bytes());
            changed += u64::from(n);
        }
    }
    for b in words.into_remainder() {
        if *b == from {
            *b = to;
            changed += 1;
        }
    }
    changed
}

fn read_word(bytes: &[u8]) -> u64 {
    u64::from_ne_bytes(bytes.try_into().expect("chunks of 8 bytes"))
}

/// `w` with its `from` bytes replaced (`splat_from`/`splat_to` are the bytes repeated), and
/// how many there were.
#[inline(always)]
fn replace_word(w: u64, splat_from: u64, splat_to: u64) -> (u64, u32) {
    let x = w ^ splat_from;
    // Bit 7 of each byte of `hit` is set exactly when that byte of `x` is zero:
    // (x & 0x7f) + 0x7f cannot carry into the next byte.
    let hit = !(((x & LO7) + LO7) | x) & HI;
    let mask = (hit >> 7) * 0xFF;
    ((w & !mask) | (splat_to & mask), hit.count_ones())
}

/// [`replace`] with the signature shared by the `unsafe` SIMD kernels, for dispatch.
///
/// # Safety
///
/// None: this kernel needs no CPU feature. It is `unsafe fn` only so that it fits the
/// same function-pointer type as the SIMD kernels.
pub unsafe fn replace_unsafe(buf: &mut [u8], from: u8, to: u8) -> u64 {
    replace(buf, from, to)
}
