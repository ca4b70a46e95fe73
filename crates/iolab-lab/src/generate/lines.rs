//! `lines`: text lines of printable ASCII words, exactly `size` bytes.
//!
//! **Format**: lowercase words (1 to 13 letters, English-like length mix) separated by single
//! spaces, each line ending in `\n`; no `\r`, tabs or other control bytes. Line lengths
//! (newline included) are uniform in `[mean - mean/2, mean + mean/2]`, so their mean is
//! exactly the requested one (110 by default: the seed write-up's 22 GB in 200 M lines).
//! A line of length 1 is an empty line. The last line is cut short so that the output is
//! exactly `size` bytes and, when `size > 0`, ends with `\n`; so the line count is the
//! number of `\n` bytes, and `wc -l` agrees.
//!
//! **Determinism**: the same [`LinesSpec`] gives the same bytes on every machine (see
//! [`crate::generate`]). A smaller `size` with the same seed and mean gives a prefix of the
//! larger file up to the smaller file's last line, which is the only one cut differently.
//!
//! **Speed**: words are 16-byte table slots copied whole, the next word overwriting the
//! slot's padding, so a word costs one random number, one table load and one unaligned
//! 16-byte store. On one core of the 2-core AMD EPYC VM it was written on: 2 GiB in 0.6 s
//! of CPU (3.5 GB/s into `/dev/null`); into a new page-cache file the kernel's copy into
//! fresh pages costs 4 to 8 times more than generating, as it does for `dd if=/dev/zero`.

use std::io::Write;
use std::ops::RangeInclusive;

use super::rng::{WyRand, below};
use super::{CHUNK_LEN, DEFAULT_SEED, GenerateError, Result, Summary, write_chunk};

/// The default mean line length, newline included: the seed write-up's 22 GB in 200 M lines.
pub const DEFAULT_MEAN_LINE_LEN: u64 = 110;

/// The default size: 1 GiB, the working size of the count findings' throughput table (docs/findings/count.md).
pub const DEFAULT_SIZE: u64 = 1 << 30;

/// The largest mean line length accepted. Far beyond any file the lab writes, and it keeps
/// `mean + mean/2` far from overflowing.
pub const MAX_MEAN_LINE_LEN: u64 = 1 << 48;

/// Longest word inside a line (the last word of a line may be one letter longer).
const MAX_WORD_LEN: usize = 12;

/// Bytes per table slot: a word, its separator, and padding that the next word overwrites.
const SLOT_LEN: usize = 16;

/// Words to draw from (a power of two, so a draw is a mask). 1024 gives text that does not
/// repeat visibly while the table (16 KiB) stays in the L1 cache.
const WORD_COUNT: usize = 1024;

/// Words of each exact length for the end of a line (a power of two).
const END_WORD_VARIANTS: usize = 16;

/// A word and its space are only drawn while the line keeps room for at least one more
/// letter and the newline after it; below this the line is closed with an exact-length word.
const WORD_THRESHOLD: u64 = MAX_WORD_LEN as u64 + 3;

/// Longest last word of a line: what remains below [`WORD_THRESHOLD`], minus the newline.
const MAX_END_WORD_LEN: usize = MAX_WORD_LEN + 1;

/// Room after the end of the chunk for the last slot copied before it is written out.
const SLACK: usize = SLOT_LEN;

/// The vocabulary is the same for every seed; it is built from this fixed seed.
const VOCABULARY_SEED: u64 = 0x0077_6f72_6473; // "words" in ASCII

/// Relative frequencies of word lengths 1..=12, roughly those of English prose.
const LENGTH_WEIGHTS: [u32; MAX_WORD_LEN] = [3, 17, 21, 16, 11, 9, 8, 6, 4, 3, 1, 1];

/// Letters drawn uniformly from this string, so common English letters come up more often.
const LETTERS: &[u8; 32] = b"eeeettaaooiinnsshrdlucmfwypvbgkq";

/// What to generate: `size` bytes of text lines of mean length `mean_line_len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinesSpec {
    /// The exact output size in bytes. Default [`DEFAULT_SIZE`] (1 GiB).
    pub size: u64,
    /// The mean line length in bytes, newline included; at least 1. Default
    /// [`DEFAULT_MEAN_LINE_LEN`] (110).
    pub mean_line_len: u64,
    /// The PRNG seed. Default [`DEFAULT_SEED`].
    pub seed: u64,
}

impl Default for LinesSpec {
    fn default() -> Self {
        LinesSpec {
            size: DEFAULT_SIZE,
            mean_line_len: DEFAULT_MEAN_LINE_LEN,
            seed: DEFAULT_SEED,
        }
    }
}

impl LinesSpec {
    /// Checks that the spec can be generated.
    pub fn validate(&self) -> Result<()> {
        if self.mean_line_len == 0 {
            return Err(GenerateError::InvalidSpec(
                "the mean line length must be at least 1 (the newline)".into(),
            ));
        }
        if self.mean_line_len > MAX_MEAN_LINE_LEN {
            return Err(GenerateError::InvalidSpec(format!(
                "the mean line length must be at most {MAX_MEAN_LINE_LEN}"
            )));
        }
        Ok(())
    }

    /// The lengths a line can have (newline included), before the last line is cut short.
    pub fn line_len_range(&self) -> RangeInclusive<u64> {
        let half = self.mean_line_len / 2;
        self.mean_line_len - half..=self.mean_line_len + half
    }
}

/// Writes the lines of `spec` to `out`, exactly `spec.size` bytes, in 1 MiB writes.
pub fn write_lines<W: Write + ?Sized>(out: &mut W, spec: &LinesSpec) -> Result<Summary> {
    spec.validate()?;
    let vocabulary = Vocabulary::new();
    let range = spec.line_len_range();
    let (shortest, spread) = (*range.start(), range.end() - range.start() + 1);

    let mut rng = WyRand::new(spec.seed);
    let mut buf = vec![0u8; CHUNK_LEN + SLACK];
    let mut pos = 0usize;
    let mut unplanned = spec.size; // bytes not yet given to a line
    let mut line_left = 0u64; // bytes of the current line still to write, newline included
    let mut lines = 0u64;
    loop {
        if line_left == 0 {
            if unplanned == 0 {
                break;
            }
            line_left = (shortest + rng.below(spread)).min(unplanned);
            unplanned -= line_left;
        }
        // The hot loop: whole words with their space, while the line has room for another
        // word after this one and the chunk has room for the slot.
        while line_left >= WORD_THRESHOLD && pos < CHUNK_LEN {
            let word = (rng.next_u64() % WORD_COUNT as u64) as usize;
            buf[pos..pos + SLOT_LEN].copy_from_slice(&vocabulary.words[word]);
            let len = vocabulary.word_lens[word];
            pos += usize::from(len);
            line_left -= u64::from(len);
        }
        if pos < CHUNK_LEN {
            // Close the line: a word of exactly the remaining length, then the newline.
            let end_len = (line_left - 1) as usize; // 0..=MAX_END_WORD_LEN
            let variant = (rng.next_u64() % END_WORD_VARIANTS as u64) as usize;
            buf[pos..pos + SLOT_LEN].copy_from_slice(&vocabulary.end_words[end_len][variant]);
            pos += end_len + 1;
            line_left = 0;
            lines += 1;
        }
        if pos >= CHUNK_LEN {
            write_chunk(out, &buf[..CHUNK_LEN])?;
            buf.copy_within(CHUNK_LEN..pos, 0);
            pos -= CHUNK_LEN;
        }
    }
    write_chunk(out, &buf[..pos])?;
    Ok(Summary {
        bytes: spec.size,
        lines,
    })
}

/// The word tables, as 16-byte slots ready to copy.
struct Vocabulary {
    /// Words followed by a space.
    words: Box<[[u8; SLOT_LEN]; WORD_COUNT]>,
    /// The length of each of `words`, its space included.
    word_lens: Box<[u8; WORD_COUNT]>,
    /// `end_words[n]`: words of exactly `n` letters followed by `\n` (`n = 0` is just `\n`).
    end_words: [[[u8; SLOT_LEN]; END_WORD_VARIANTS]; MAX_END_WORD_LEN + 1],
}

impl Vocabulary {
    fn new() -> Vocabulary {
        let mut rng = WyRand::new(VOCABULARY_SEED);
        let total_weight: u32 = LENGTH_WEIGHTS.iter().sum();
        let mut words = Box::new([[b' '; SLOT_LEN]; WORD_COUNT]);
        let mut word_lens = Box::new([0u8; WORD_COUNT]);
        for (slot, slot_len) in words.iter_mut().zip(word_lens.iter_mut()) {
            let mut pick = below(rng.next_u64(), u64::from(total_weight)) as u32;
            let mut len = 1;
            for (i, &weight) in LENGTH_WEIGHTS.iter().enumerate() {
                if pick < weight {
                    len = i + 1;
                    break;
                }
                pick -= weight;
            }
            fill_letters(&mut slot[..len], &mut rng);
            slot[len] = b' ';
            *slot_len = (len + 1) as u8;
        }
        let mut end_words = [[[b'\n'; SLOT_LEN]; END_WORD_VARIANTS]; MAX_END_WORD_LEN + 1];
        for (len, variants) in end_words.iter_mut().enumerate() {
            for slot in variants.iter_mut() {
                fill_letters(&mut slot[..len], &mut rng);
                slot[len] = b'\n';
            }
        }
        Vocabulary {
            words,
            word_lens,
            end_words,
        }
    }
}

fn fill_letters(word: &mut [u8], rng: &mut WyRand) {
    for letter in word {
        *letter = LETTERS[(rng.next_u64() % LETTERS.len() as u64) as usize];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generate(spec: &LinesSpec) -> (Vec<u8>, Summary) {
        let mut out = Vec::new();
        let summary = write_lines(&mut out, spec).unwrap();
        (out, summary)
    }

    #[test]
    fn vocabulary_is_printable_and_fits_its_slots() {
        let vocabulary = Vocabulary::new();
        for (slot, &len) in vocabulary.words.iter().zip(vocabulary.word_lens.iter()) {
            let len = usize::from(len);
            assert!((2..=MAX_WORD_LEN + 1).contains(&len));
            assert!(slot[..len - 1].iter().all(u8::is_ascii_lowercase));
            assert_eq!(slot[len - 1], b' ');
        }
        for (len, variants) in vocabulary.end_words.iter().enumerate() {
            for slot in variants {
                assert!(slot[..len].iter().all(u8::is_ascii_lowercase));
                assert_eq!(slot[len], b'\n');
            }
        }
    }

    #[test]
    fn lines_cross_chunk_boundaries_intact() {
        let spec = LinesSpec {
            size: CHUNK_LEN as u64 * 2 + 12345,
            ..LinesSpec::default()
        };
        let (out, summary) = generate(&spec);
        assert_eq!(out.len() as u64, spec.size);
        assert_eq!(
            out.iter().filter(|&&b| b == b'\n').count() as u64,
            summary.lines
        );
        assert!(
            out.iter()
                .all(|&b| b == b'\n' || b == b' ' || b.is_ascii_lowercase())
        );
        let range = spec.line_len_range();
        let mut lines = out.split_inclusive(|&b| b == b'\n').peekable();
        while let Some(line) = lines.next() {
            if lines.peek().is_some() {
                assert!(range.contains(&(line.len() as u64)), "{}", line.len());
            }
            assert!(!line.starts_with(b" ") && !line.ends_with(b" \n"));
            assert!(!line.windows(2).any(|pair| pair == b"  "));
        }
    }

    #[test]
    fn tiny_means() {
        for mean in 1..=4 {
            let spec = LinesSpec {
                size: 1000,
                mean_line_len: mean,
                seed: 3,
            };
            let (out, summary) = generate(&spec);
            assert_eq!(out.len(), 1000);
            assert_eq!(out.last(), Some(&b'\n'));
            assert_eq!(
                out.iter().filter(|&&b| b == b'\n').count() as u64,
                summary.lines
            );
        }
        assert!(matches!(
            LinesSpec {
                mean_line_len: 0,
                ..LinesSpec::default()
            }
            .validate(),
            Err(GenerateError::InvalidSpec(_))
        ));
    }
}
