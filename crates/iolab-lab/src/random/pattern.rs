//! Which block each read asks for: uniform, or Zipfian with θ = 0.99 as YCSB draws keys.
//!
//! **Zipfian**: Gray et al.'s rejection-free method ("Quickly generating billion-record
//! synthetic databases", SIGMOD 1994), exactly as YCSB's `ZipfianGenerator` uses it: rank
//! `r` is drawn with probability ∝ `1 / (r + 1)^θ`. Like YCSB's
//! `ScrambledZipfianGenerator`, the rank is then hashed (FNV-1a) onto the blocks, so the
//! popular blocks are spread over the file instead of packed at its start, where read-ahead
//! and a single huge page would serve them all.
//!
//! `ζ(n, θ)` is summed exactly up to [`EXACT_ZETA_LIMIT`] items (a few milliseconds) and
//! from its Euler–Maclaurin approximation beyond, which is within 1e-6 relative there.

use crate::generate::rng::WyRand;

/// YCSB's Zipfian constant.
pub const ZIPF_THETA: f64 = 0.99;
/// Up to this many blocks ζ is summed term by term: 2^22 (16 GiB of 4 KiB blocks).
pub const EXACT_ZETA_LIMIT: u64 = 1 << 22;

iolab::named_enum! {
    /// How read offsets are drawn.
    #[non_exhaustive]
    pub enum Pattern: "pattern" {
        /// Every block equally likely.
        Uniform = "uniform",
        /// Zipfian over the blocks, θ = [`ZIPF_THETA`], ranks scattered over the file.
        Zipf = "zipf",
    }
}

/// Draws block numbers in `0..blocks`.
#[derive(Clone, Debug)]
pub struct Sampler {
    rng: WyRand,
    blocks: u64,
    zipf: Option<Zipf>,
}

#[derive(Clone, Debug)]
struct Zipf {
    alpha: f64,
    zetan: f64,
    eta: f64,
    half_pow_theta: f64,
}

impl Sampler {
    /// A sampler over `blocks` blocks (at least 1), its stream fixed by `seed`.
    pub fn new(pattern: Pattern, blocks: u64, seed: u64) -> Sampler {
        let blocks = blocks.max(1);
        let zipf = (pattern == Pattern::Zipf).then(|| {
            let theta = ZIPF_THETA;
            let zetan = zeta(blocks, theta);
            let zeta2 = zeta(2, theta);
            Zipf {
                alpha: 1.0 / (1.0 - theta),
                zetan,
                eta: (1.0 - (2.0 / blocks as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
                half_pow_theta: 0.5f64.powf(theta),
            }
        });
        Sampler {
            rng: WyRand::new(seed),
            blocks,
            zipf,
        }
    }

    /// The next block number.
    #[inline]
    pub fn next_block(&mut self) -> u64 {
        let Some(z) = &self.zipf else {
            return self.rng.below(self.blocks);
        };
        // 53 random bits as a uniform in [0, 1).
        let u = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let uz = u * z.zetan;
        let rank = if uz < 1.0 {
            0
        } else if uz < 1.0 + z.half_pow_theta {
            1
        } else {
            ((self.blocks as f64 * (z.eta * u - z.eta + 1.0).powf(z.alpha)) as u64)
                .min(self.blocks - 1)
        };
        fnv1a(rank) % self.blocks
    }
}

/// ζ(n, θ) = Σ_{i=1..n} 1/i^θ.
fn zeta(n: u64, theta: f64) -> f64 {
    if n <= EXACT_ZETA_LIMIT {
        return (1..=n).map(|i| (i as f64).powf(-theta)).sum();
    }
    // Exact head, then Euler–Maclaurin for the tail (m+1..=n).
    let m = EXACT_ZETA_LIMIT;
    let head = zeta(m, theta);
    let f = |x: f64| x.powf(-theta);
    let integral = ((n as f64).powf(1.0 - theta) - (m as f64).powf(1.0 - theta)) / (1.0 - theta);
    head + integral + (f(n as f64) - f(m as f64)) / 2.0
}

/// FNV-1a over the 8 bytes of `x` (YCSB's `fnvhash64`).
fn fnv1a(x: u64) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in x.to_le_bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_patterns_stay_in_range_and_zipf_is_skewed() {
        for pattern in Pattern::ALL {
            let mut s = Sampler::new(pattern, 1000, 7);
            let mut hits = vec![0u32; 1000];
            for _ in 0..100_000 {
                hits[s.next_block() as usize] += 1;
            }
            hits.sort_unstable();
            let top10: u32 = hits.iter().rev().take(10).sum();
            match pattern {
                // 1% of the blocks get about 1% of the reads.
                Pattern::Uniform => assert!(top10 < 2_000, "{top10}"),
                // YCSB's θ = 0.99 over 1000 items: the top 1% get about 40%.
                Pattern::Zipf => assert!(top10 > 30_000, "{top10}"),
            }
        }
        assert_eq!(Sampler::new(Pattern::Zipf, 1, 1).next_block(), 0);
    }
}
