//! A file's bytes in the model file system: blocks of [`BLOCK`] bytes shared between the
//! crash states built from one run (a state is a copy of the first state with changes
//! applied, so a copy must cost little), and blocks of zeros not stored at all (a log
//! preallocated with 64 MiB of zeros costs nothing to copy, compare or write out).
//!
//! Two values with the same length and bytes are equal and hash alike, however they were
//! written: a block that becomes all zeros is dropped, and the bytes past the length are
//! zeros.

use std::collections::BTreeMap;
use std::sync::Arc;

/// The size of a stored block.
pub const BLOCK: usize = 4096;

/// A block of zeros, to compare with (`==` on slices is a `memcmp`).
const ZEROS: [u8; BLOCK] = [0; BLOCK];

/// Whether `data` is all zeros.
pub fn all_zeros(data: &[u8]) -> bool {
    data.chunks(BLOCK).all(|c| c == &ZEROS[..c.len()])
}

/// A file's bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Bytes {
    len: u64,
    /// Block index → its [`BLOCK`] bytes, never all zeros.
    blocks: BTreeMap<u64, Arc<Vec<u8>>>,
}

impl Bytes {
    /// No bytes.
    pub fn new() -> Bytes {
        Bytes::default()
    }

    /// The file's length.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Writes `len` zeros at `offset`, growing the file if they end past it: only the
    /// stored blocks in the range are touched.
    pub fn write_zeros(&mut self, offset: u64, len: u64) {
        let end = offset + len;
        self.len = self.len.max(end);
        if len == 0 {
            return;
        }
        let (first, last) = (offset / BLOCK as u64, (end - 1) / BLOCK as u64);
        let stored: Vec<u64> = self.blocks.range(first..=last).map(|(i, _)| *i).collect();
        for index in stored {
            let at = (index * BLOCK as u64).max(offset);
            let to = ((index + 1) * BLOCK as u64).min(end);
            let start = (at % BLOCK as u64) as usize;
            self.put(index, start, &ZEROS[..(to - at) as usize]);
        }
    }

    /// Writes `data` at `offset`, growing the file if it ends past it.
    pub fn write(&mut self, offset: u64, data: &[u8]) {
        let end = offset + data.len() as u64;
        self.len = self.len.max(end);
        let mut at = offset;
        while at < end {
            let index = at / BLOCK as u64;
            let start = (at % BLOCK as u64) as usize;
            let n = (BLOCK - start).min((end - at) as usize);
            let piece = &data[(at - offset) as usize..][..n];
            self.put(index, start, piece);
            at += n as u64;
        }
    }

    /// Copies `piece` into block `index` at `start`, keeping the no-zero-block rule.
    fn put(&mut self, index: u64, start: usize, piece: &[u8]) {
        let zeros = piece == &ZEROS[..piece.len()];
        let Some(block) = self.blocks.get_mut(&index) else {
            if !zeros {
                let mut block = vec![0u8; BLOCK];
                block[start..start + piece.len()].copy_from_slice(piece);
                self.blocks.insert(index, Arc::new(block));
            }
            return;
        };
        if block[start..start + piece.len()] == *piece {
            return;
        }
        Arc::make_mut(block)[start..start + piece.len()].copy_from_slice(piece);
        if zeros && block[..] == ZEROS[..] {
            self.blocks.remove(&index);
        }
    }

    /// Sets the length: a shorter file loses its tail, a longer one grows with zeros.
    pub fn set_len(&mut self, size: u64) {
        if size < self.len {
            let first_gone = size.div_ceil(BLOCK as u64);
            self.blocks.split_off(&first_gone);
            let cut = (size % BLOCK as u64) as usize;
            if cut != 0 {
                let zeros = vec![0u8; BLOCK - cut];
                self.put(size / BLOCK as u64, cut, &zeros);
            }
        }
        self.len = size;
    }

    /// The bytes at `offset`, at most `n` of them (fewer at the end of the file).
    pub fn read(&self, offset: u64, n: usize) -> Vec<u8> {
        let end = self.len.min(offset.saturating_add(n as u64));
        let mut out = vec![0u8; end.saturating_sub(offset) as usize];
        for (at, block) in self.stored() {
            let (from, to) = (at.max(offset), (at + block.len() as u64).min(end));
            if from < to {
                let dst = &mut out[(from - offset) as usize..(to - offset) as usize];
                dst.copy_from_slice(&block[(from - at) as usize..(to - at) as usize]);
            }
        }
        out
    }

    /// Every byte, in one vector.
    pub fn to_vec(&self) -> Vec<u8> {
        self.read(0, self.len as usize)
    }

    /// The stored (not all-zero) blocks, each with its offset, cut at the file's end.
    pub fn stored(&self) -> impl Iterator<Item = (u64, &[u8])> {
        self.blocks.iter().map(move |(index, block)| {
            let at = index * BLOCK as u64;
            let n = (self.len - at).min(BLOCK as u64) as usize;
            (at, &block[..n])
        })
    }
}

impl From<&[u8]> for Bytes {
    fn from(data: &[u8]) -> Bytes {
        let mut bytes = Bytes::new();
        bytes.write(0, data);
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A change to a file: a write or a new length.
    #[derive(Clone, Debug)]
    enum Change {
        Write(u64, Vec<u8>),
        SetLen(u64),
    }

    fn change() -> impl Strategy<Value = Change> {
        let data = prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..3 * BLOCK),
            (0..3 * BLOCK).prop_map(|n| vec![0u8; n]),
        ];
        prop_oneof![
            (0..4 * BLOCK as u64, data).prop_map(|(at, d)| Change::Write(at, d)),
            (0..6 * BLOCK as u64).prop_map(Change::SetLen),
        ]
    }

    proptest! {
        /// Blocks hold what a plain vector holds after the same changes, and two values
        /// with the same bytes are equal however they got them.
        #[test]
        fn blocks_hold_what_a_vector_holds(changes in proptest::collection::vec(change(), 0..12)) {
            let mut bytes = Bytes::new();
            let mut plain: Vec<u8> = Vec::new();
            for c in &changes {
                match c {
                    Change::Write(at, data) => {
                        if all_zeros(data) && data.len() % 3 == 0 {
                            bytes.write_zeros(*at, data.len() as u64);
                        } else {
                            bytes.write(*at, data);
                        }
                        let end = *at as usize + data.len();
                        if plain.len() < end {
                            plain.resize(end, 0);
                        }
                        plain[*at as usize..end].copy_from_slice(data);
                    }
                    Change::SetLen(n) => {
                        bytes.set_len(*n);
                        plain.resize(*n as usize, 0);
                    }
                }
            }
            prop_assert_eq!(bytes.len(), plain.len() as u64);
            prop_assert_eq!(bytes.to_vec(), plain.clone());
            prop_assert_eq!(&bytes, &Bytes::from(plain.as_slice()));
            prop_assert!(bytes.blocks.values().all(|b| b.iter().any(|&x| x != 0)));
        }
    }

    #[test]
    fn zeros_take_no_blocks_and_copies_share_them() {
        let mut bytes = Bytes::new();
        bytes.write(0, &vec![0u8; 64 << 20]);
        assert_eq!(bytes.len(), 64 << 20);
        assert_eq!(bytes.stored().count(), 0);
        bytes.write(5000, b"x");
        let copy = bytes.clone();
        assert!(Arc::ptr_eq(&bytes.blocks[&1], &copy.blocks[&1]));
        assert_eq!(copy.read(4999, 3), b"\0x\0");
    }
}
