//! The `edit` suite's verification: the reference results computed from the original
//! file, and the digest every edited file must match.

use super::{Expected, IO_CHUNK, Op};
use crate::data::Dataset;
use crate::error::{Error, Result};
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

pub(super) fn expected_for(expected: &Expected, op: Op) -> &str {
    match op {
        Op::Truncate => &expected.truncate,
        Op::Count => &expected.lines,
        Op::Replace => &expected.replace,
    }
}

/// The reference results of `dataset`, computed from the original file: the digest of
/// its first line, of the file with every `,` replaced by `;` (with the portable kernel,
/// which the tests hold equal to the naive loop), and its line count.
pub(super) fn expected_results(dataset: &Dataset) -> Result<Expected> {
    let mut file =
        File::open(&dataset.path).map_err(|e| Error::io("cannot open the data set", e))?;
    let mut buf = vec![0u8; IO_CHUNK];
    let (mut first_line, mut replaced) = (Digest::default(), Digest::default());
    let mut first_line_done = false;
    // Counted here rather than taken from the manifest: a user's --file has none.
    let mut lines = 0u64;
    loop {
        let n = read_retrying(&mut file, &mut buf)?;
        if n == 0 {
            break;
        }
        let chunk = &mut buf[..n];
        lines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        if !first_line_done {
            match memchr::memchr(b'\n', chunk) {
                Some(at) => {
                    first_line.feed(&chunk[..=at]);
                    first_line_done = true;
                }
                None => first_line.feed(chunk),
            }
        }
        iolab_lab::kernel::scalar::replace(chunk, b',', b';');
        replaced.feed(chunk);
    }
    Ok(Expected {
        truncate: first_line.finish(),
        replace: replaced.finish(),
        lines: lines.to_string(),
    })
}

/// The digest of the file at `path`, as [`Digest::finish`] prints it.
pub(super) fn digest_file(path: &Path) -> Result<String> {
    let mut file = File::open(path).map_err(|e| Error::io("cannot open an edited copy", e))?;
    let mut buf = vec![0u8; IO_CHUNK];
    let mut digest = Digest::default();
    loop {
        let n = read_retrying(&mut file, &mut buf)?;
        if n == 0 {
            return Ok(digest.finish());
        }
        digest.feed(&buf[..n]);
    }
}

pub(super) fn read_retrying(file: &mut File, buf: &mut [u8]) -> Result<usize> {
    loop {
        match file.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other.map_err(|e| Error::io("read failed", e)),
        }
    }
}

/// A fast 64-bit digest to compare files, not to resist an adversary: four lanes, each
/// `(lane ^ word) × odd constant`, rotated, per 8 bytes (a bijection of the lane for a
/// given word, so no input collapses the state), then the lanes and the length folded
/// with a final avalanche. About 15 GB/s, where `Fnv1a`'s byte loop does 1. The result
/// does not depend on how the input is split into `feed` calls.
#[derive(Clone, Debug)]
pub(super) struct Digest {
    lanes: [u64; 4],
    pending: [u8; 32],
    pending_len: usize,
    len: u64,
}

impl Default for Digest {
    fn default() -> Digest {
        Digest {
            // Arbitrary distinct odd starting values (digits of pi).
            lanes: [
                0x243f_6a88_85a3_08d3,
                0x1319_8a2e_0370_7345,
                0xa409_3822_299f_31d1,
                0x082e_fa98_ec4e_6c89,
            ],
            pending: [0; 32],
            pending_len: 0,
            len: 0,
        }
    }
}

/// An odd 64-bit multiplier with well-spread bits (from wyhash).
pub(super) const MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;

impl Digest {
    fn feed(&mut self, mut data: &[u8]) {
        self.len += data.len() as u64;
        if self.pending_len > 0 {
            let take = (32 - self.pending_len).min(data.len());
            self.pending[self.pending_len..self.pending_len + take].copy_from_slice(&data[..take]);
            self.pending_len += take;
            data = &data[take..];
            if self.pending_len < 32 {
                return;
            }
            let block = self.pending;
            self.block(&block);
            self.pending_len = 0;
        }
        let mut blocks = data.chunks_exact(32);
        for block in &mut blocks {
            self.block(block);
        }
        let rest = blocks.remainder();
        self.pending[..rest.len()].copy_from_slice(rest);
        self.pending_len = rest.len();
    }

    #[inline(always)]
    fn block(&mut self, block: &[u8]) {
        for (lane, word) in self.lanes.iter_mut().zip(block.chunks_exact(8)) {
            let w = u64::from_le_bytes(word.try_into().expect("8-byte words"));
            *lane = ((*lane ^ w).wrapping_mul(MULTIPLIER)).rotate_left(29);
        }
    }

    /// 16 hexadecimal digits.
    fn finish(mut self) -> String {
        if self.pending_len > 0 {
            // Zero padding is unambiguous because the length is folded in below.
            let mut block = [0u8; 32];
            block[..self.pending_len].copy_from_slice(&self.pending[..self.pending_len]);
            self.block(&block);
        }
        let mut h = self.len;
        for lane in self.lanes {
            h = ((h ^ lane).wrapping_mul(MULTIPLIER)).rotate_left(31);
        }
        // A final avalanche (splitmix64's).
        h ^= h >> 30;
        h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^= h >> 27;
        h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^= h >> 31;
        format!("{h:016x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_does_not_depend_on_how_the_input_is_split() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut whole = Digest::default();
        whole.feed(&data);
        let whole = whole.finish();
        for split in [1, 5, 31, 32, 33, 100, 999] {
            let mut parts = Digest::default();
            for chunk in data.chunks(split) {
                parts.feed(chunk);
            }
            assert_eq!(parts.finish(), whole, "split {split}");
        }
    }

    #[test]
    fn digest_sees_every_byte_and_the_length() {
        let data = vec![b'a'; 100];
        let base = {
            let mut d = Digest::default();
            d.feed(&data);
            d.finish()
        };
        for at in [0, 31, 32, 63, 99] {
            let mut changed = data.clone();
            changed[at] = b'b';
            let mut d = Digest::default();
            d.feed(&changed);
            assert_ne!(d.finish(), base, "a change at {at}");
        }
        let mut longer = Digest::default();
        longer.feed(&[b'a'; 101]);
        assert_ne!(longer.finish(), base);
        let mut padded = Digest::default();
        padded.feed(&[0u8; 3]);
        let mut shorter = Digest::default();
        shorter.feed(&[0u8; 2]);
        assert_ne!(
            padded.finish(),
            shorter.finish(),
            "zero padding is not ambiguous"
        );
    }
}
