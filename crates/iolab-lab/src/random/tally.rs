//! What each reader thread keeps: its reads, bytes and latencies ([`Tally`]), and how the
//! bytes of its reads are checked ([`Check`]): every read against the offset-derived data of
//! `iolab gen blocks`, or on any other file a sample compared with a second `pread(2)` of the
//! same block after the timed run (the only system call made here, and only then).

use std::fs::File;

use hdrhistogram::Histogram;

use super::{Plan, SAMPLE_BUDGET, SAMPLE_EVERY, histogram};
use crate::generate::blocks;
use iolab::{Error, Result};

/// How a run checks the bytes its reads return.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// The file is offset-derived data (`iolab gen blocks`): every read is verified.
    Generated,
    /// Any other file: every read's length is checked, and a sample of the reads is
    /// compared with a second `pread(2)` of the same block after the run.
    Sampled,
}

impl Check {
    /// Says how the reads were checked, for a person.
    pub fn describe(self) -> &'static str {
        match self {
            Check::Generated => "against the offset-derived data of `iolab gen blocks`",
            Check::Sampled => "a sample compared with a second pread after the run",
        }
    }

    /// Which check suits `file`: `Generated` when any of [`PROBES`] blocks spread over it
    /// is offset-derived data. One block is not enough: a file whose first block was
    /// damaged would otherwise switch its own verification off (every read would then only
    /// be compared with a second read of the same damaged bytes). Bytes that were not
    /// generated match the pattern by chance with a probability of about 2^-32768 per
    /// block, so any match says the file is a generated one, and every read is verified.
    pub(crate) fn of(file: &File, len: u64, block: usize) -> Result<Check> {
        use std::os::unix::fs::FileExt;
        let block = block as u64;
        let blocks = len.div_ceil(block).max(1);
        let mut buf = vec![0; block.min(len) as usize];
        for i in 0..PROBES {
            let offset = blocks * i / PROBES * block;
            let n = block.min(len.saturating_sub(offset)) as usize;
            if n == 0 {
                continue;
            }
            file.read_exact_at(&mut buf[..n], offset)
                .map_err(|e| Error::io("cannot read", e))?;
            if blocks::verify(offset, &buf[..n]) {
                return Ok(Check::Generated);
            }
        }
        Ok(Check::Sampled)
    }
}

/// How many blocks, spread evenly from the first, [`Check::of`] looks at.
const PROBES: u64 = 8;

/// What one thread measured.
pub(crate) struct Tally {
    pub reads: u64,
    pub bytes: u64,
    pub latency: Histogram<u64>,
    pub mismatches: u64,
    pub first_mismatch: Option<u64>,
    pub checked: u64,
    check: Check,
    /// For [`Check::Sampled`]: copies of sampled reads (offset, bytes), checked after the run.
    samples: Vec<(u64, Vec<u8>)>,
    sampled_bytes: usize,
}

impl Tally {
    pub fn new(plan: &Plan<'_>) -> Tally {
        Tally {
            reads: 0,
            bytes: 0,
            latency: histogram(),
            mismatches: 0,
            first_mismatch: None,
            checked: 0,
            check: plan.check,
            samples: Vec::new(),
            sampled_bytes: 0,
        }
    }

    /// Counts one read of `data` for the block at `offset` of `want` bytes.
    #[inline]
    pub fn record(&mut self, offset: u64, want: usize, data: &[u8], ns: u64) {
        self.reads += 1;
        self.bytes += data.len() as u64;
        self.latency.saturating_record(ns.max(1));
        let wrong = data.len() != want
            || match self.check {
                Check::Generated => {
                    self.checked += 1;
                    !blocks::verify(offset, data)
                }
                Check::Sampled => {
                    if (self.reads - 1).is_multiple_of(SAMPLE_EVERY)
                        && self.sampled_bytes + data.len() <= SAMPLE_BUDGET
                    {
                        self.sampled_bytes += data.len();
                        self.samples.push((offset, data.to_vec()));
                    }
                    false
                }
            };
        if wrong {
            self.mismatch(offset);
        }
    }

    fn mismatch(&mut self, offset: u64) {
        self.mismatches += 1;
        self.first_mismatch.get_or_insert(offset);
    }

    /// Compares the sampled reads with a second `pread(2)` of `file` (after the timed run).
    pub(crate) fn check_samples(&mut self, file: &File) -> Result<()> {
        use std::os::unix::fs::FileExt;
        let mut truth = Vec::new();
        for (offset, data) in std::mem::take(&mut self.samples) {
            truth.resize(data.len(), 0);
            file.read_exact_at(&mut truth, offset)
                .map_err(|e| Error::io("cannot read", e))?;
            self.checked += 1;
            if truth != data {
                self.mismatch(offset);
            }
        }
        Ok(())
    }
}
