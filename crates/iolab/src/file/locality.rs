//! How often a file's batched requests come back to a block asked for shortly before: the
//! share that decides whether [`read_batch`](super::RandomAccessFile::read_batch) reads a
//! file that is not in the page cache past it (`O_DIRECT`) or through it.
//!
//! **How**: each request's 4 KiB block number goes into a direct-mapped table of
//! [`SLOTS`] entries (a multiplicative hash picks the slot); a request whose slot already
//! holds its block is a repeat. The share is taken over windows of [`WINDOW`] requests,
//! against all the table remembers.
//! Spread evenly over a file of `B` blocks, about `SLOTS / B` of the requests repeat
//! (4–6% for 1 GiB); a skewed access (Zipf, a hot index) repeats most of the time.
//! **When it matters**: a file beyond memory read at random with a hot set — reading past
//! the page cache pays the device for every read of a hot block, while buffered reads
//! keep them cached: on the random suite's Zipf condition buffered io_uring read 2.2× as
//! many blocks per second as `O_DIRECT`, which won the uniform ones by 1.1×
//! (docs/findings/random.md).
//! **Limits**: a table, not an exact count: collisions forget blocks (under-counting a
//! hot set much larger than the table), and only the block a request starts in counts.
//! Costs a hash and a compare per request, and 128 KiB per file once batches are read.

/// Entries in the table: 16 384 block numbers.
pub const SLOTS: usize = 1 << 14;
/// Requests per measured window: 2 048, so that the first choice comes early (23 ms of
/// reads at 90 000 a second). Zipf's θ = 0.99 over 2^18 blocks repeats 37–42% of its first
/// 2 048 requests (then ~60% against the whole table), uniform reads 0.4%.
pub const WINDOW: u64 = 1 << 11;
/// The share of repeats from which buffered reads serve a file that is not cached: a
/// quarter. Uniform reads of a file too big for memory repeat far less (about `SLOTS` /
/// the file's blocks); a quarter of reads served from memory more than makes up for the
/// ~10% buffered reads lose to `O_DIRECT` on the others.
pub const REPEATS: f64 = 0.25;

/// The table and the last window's share.
#[derive(Debug, Default)]
pub(crate) struct Locality {
    seen: Vec<u64>,
    asked: u64,
    repeats: u64,
    last: Option<f64>,
}

impl Locality {
    /// Counts `requests`.
    pub(crate) fn note(&mut self, requests: &[(u64, usize)]) {
        if self.seen.is_empty() {
            self.seen = vec![0; SLOTS];
        }
        for &(offset, _) in requests {
            // Block numbers from 1, so that an empty slot (0) never matches.
            let block = offset / 4096 + 1;
            let slot = (block.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOTS.trailing_zeros()))
                as usize;
            if self.seen[slot] == block {
                self.repeats += 1;
            } else {
                self.seen[slot] = block;
            }
            self.asked += 1;
            if self.asked == WINDOW {
                self.last = Some(self.repeats as f64 / WINDOW as f64);
                (self.asked, self.repeats) = (0, 0);
            }
        }
    }

    /// The share of the last full window's requests that repeated a recent block; `None`
    /// before the first window.
    pub(crate) fn repeat_share(&self) -> Option<f64> {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small xorshift, for offsets.
    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn uniform_reads_of_a_big_file_rarely_repeat_and_a_hot_set_mostly_does() {
        let mut uniform = Locality::default();
        let mut hot = Locality::default();
        assert_eq!(uniform.repeat_share(), None);
        let mut state = 7;
        let blocks = 1 << 18; // 1 GiB of 4 KiB blocks
        for _ in 0..4 {
            let requests: Vec<(u64, usize)> = (0..WINDOW)
                .map(|_| (xorshift(&mut state) % blocks * 4096, 4096))
                .collect();
            uniform.note(&requests);
            // Nine requests in ten to 1 000 hot blocks, the rest anywhere.
            let requests: Vec<(u64, usize)> = (0..WINDOW)
                .map(|i| {
                    let r = xorshift(&mut state);
                    let block = if i % 10 == 0 { r % blocks } else { r % 1000 };
                    (block * 4096 + r % 4096, 512)
                })
                .collect();
            hot.note(&requests);
        }
        let (u, h) = (uniform.repeat_share().unwrap(), hot.repeat_share().unwrap());
        assert!(u < 0.1, "uniform {u}");
        assert!(h > 0.8, "hot {h}");
        assert!(u < REPEATS && h >= REPEATS);
    }
}
