//! The `append` suite's data: the records appended (their folder is a `WorkDir`).

/// The record content repeats every 256 records: record *i* starts at `i mod 256` in a
/// pattern of the bytes 0, 1, 2, …
const PATTERN_PERIOD: usize = 256;

/// The records of a run: record *i* is `payload` bytes of `(i + j) mod 256`.
pub struct Records {
    pattern: Vec<u8>,
    payload: usize,
}

impl Records {
    /// The records of `payload` bytes each.
    pub fn new(payload: usize) -> Records {
        Records {
            pattern: (0..PATTERN_PERIOD + payload).map(|k| k as u8).collect(),
            payload,
        }
    }

    /// Record `i`.
    #[inline]
    pub fn get(&self, i: u64) -> &[u8] {
        let start = (i % PATTERN_PERIOD as u64) as usize;
        &self.pattern[start..start + self.payload]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_differ_and_repeat_every_256() {
        let r = Records::new(5);
        assert_eq!(r.get(0), &[0, 1, 2, 3, 4]);
        assert_eq!(r.get(255), &[255, 0, 1, 2, 3]);
        assert_eq!(r.get(256), r.get(0));
        assert_ne!(r.get(1), r.get(2));
    }
}
