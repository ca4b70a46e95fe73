//! Deterministic test content: one seeded generator, so every corpus is the same on every
//! run and a failure names a case that can be rebuilt, and the text and bytes built from it.

use std::fs;
use std::path::{Path, PathBuf};

pub const KIB: usize = 1 << 10;
pub const MIB: usize = 1 << 20;

/// A deterministic xorshift64 generator: the fixed corpora are the same on every run, so a
/// failure names a case that can be rebuilt, and no extra dependency is needed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // Any non-zero state works; mixing the seed keeps nearby seeds apart.
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    pub fn byte(&mut self) -> u8 {
        (self.next_u64() >> 56) as u8
    }
}

/// `len` bytes of ASCII text with a newline about every `mean_line` bytes, at positions
/// that depend on `seed` (so it may end mid-line).
pub fn text(len: usize, mean_line: u64, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    (0..len)
        .map(|_| {
            if rng.below(mean_line) == 0 {
                b'\n'
            } else {
                b' ' + rng.below(95) as u8
            }
        })
        .collect()
}

/// `len` random bytes, about one in eight a newline (almost surely invalid UTF-8).
pub fn binary(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    (0..len)
        .map(|_| if rng.below(8) == 0 { b'\n' } else { rng.byte() })
        .collect()
}

/// A file of `bytes` bytes in `dir`: one CSV-like line of 40 bytes over and over, so a
/// tool that reads lines or fields sees the same ones everywhere.
pub fn text_file(dir: &Path, name: &str, bytes: usize) -> PathBuf {
    let path = dir.join(name);
    let line = b"0123456789,abcdefghij,klmnopqrst,uvwxyz\n";
    let text: Vec<u8> = line.iter().copied().cycle().take(bytes).collect();
    fs::write(&path, text).unwrap();
    path
}
