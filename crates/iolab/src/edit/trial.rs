//! The default replace where this machine has no measured winner: it measures `mmap` and
//! `std-stream` on the first part of the file, then replaces the rest with the faster.
//!
//! **How**: the first [`TRIAL_CHUNKS`] chunks of [`TRIAL_CHUNK`] bytes are replaced by the
//! two strategies in turn (`mmap`, `std-stream`, `std-stream`, `mmap`, …, so a drift in the
//! machine's speed falls on both), each chunk timed; the strategy whose fastest chunk was
//! faster replaces the rest of the file (another process's load only ever adds to a chunk's
//! time, so the fastest one is the least disturbed). Nothing is replaced twice: the trial
//! is part of the work. Every byte is replaced exactly as by either strategy alone, since a
//! replace is the same byte by byte whoever makes it.
//! **When it is used**: [`crate::lab::edit::EditOptions::replace_byte`] with no strategy
//! set, no winner in the machine profile, and a file of at least [`TRIAL_MIN`] bytes;
//! smaller files take the rule ([`super::DEFAULT_REPLACE`]), where the difference is
//! microseconds.
//! **Durability**: no `mmap` chunk is synced on its own; the edit's one `fdatasync` at the
//! end covers the pages written through the maps (unmapping leaves them dirty in the page
//! cache) and by `pwrite` alike.
//! **Evidence** (one strategy winning on one VM and losing on another, 0.72–0.79× here):
//! docs/findings/edit.md, docs/findings/defaults.md.

use std::ops::Range;
use std::time::{Duration, Instant};

use super::watch::Watch;
use super::{EditStrategy, Job, Phases, Replace, Result, mmap, std_stream};

/// Bytes per trial chunk: 8 MiB (a multiple of the page size and of [`mmap::WINDOW`]),
/// milliseconds at memory speed and long enough that a chunk's map and unmap are noise.
pub const TRIAL_CHUNK: u64 = 8 << 20;
/// Trial chunks: 8, four per strategy, 64 MiB in all.
pub const TRIAL_CHUNKS: usize = 8;
/// The smallest file measured: 128 MiB, so that the trial is at most half the work.
pub const TRIAL_MIN: u64 = 128 << 20;

/// The order the strategies take the trial chunks in.
const ORDER: [EditStrategy; TRIAL_CHUNKS] = [
    EditStrategy::Mmap,
    EditStrategy::StdStream,
    EditStrategy::StdStream,
    EditStrategy::Mmap,
    EditStrategy::StdStream,
    EditStrategy::Mmap,
    EditStrategy::Mmap,
    EditStrategy::StdStream,
];

/// What the trial found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Trial {
    /// The strategy that replaced the rest.
    pub(crate) chosen: EditStrategy,
    /// The fastest chunk of `mmap`, and of `std-stream`.
    pub(crate) fastest: [Duration; 2],
}

impl Trial {
    /// The reason, for [`super::EditReport::why`], given why no measured winner was followed.
    pub(crate) fn why(&self, why_not: &str) -> String {
        let rate = |d: Duration| TRIAL_CHUNK as f64 / d.as_secs_f64().max(1e-9) / 1e6;
        format!(
            "the rule, measured on the first {} MiB: mmap {:.0} MB/s, std-stream {:.0} MB/s at \
             best per {} MiB chunk; {} replaced the rest ({why_not})",
            (TRIAL_CHUNK * TRIAL_CHUNKS as u64) >> 20,
            rate(self.fastest[0]),
            rate(self.fastest[1]),
            TRIAL_CHUNK >> 20,
            self.chosen
        )
    }
}

/// Replaces every matching byte of the job's file as described in the module docs; returns
/// how many changed and what the trial found. `job.len` must be at least [`TRIAL_MIN`].
pub(crate) fn replace(
    job: &Job<'_>,
    edit: &Replace,
    buffer_size: usize,
    watch: &mut Watch<'_>,
    phases: &mut Phases,
) -> Result<(u64, Trial)> {
    debug_assert!(job.len >= TRIAL_MIN);
    let mut one = |strategy, range: Range<u64>, phases: &mut Phases| match strategy {
        EditStrategy::Mmap => mmap::replace_range(job, edit, watch, phases, range, false),
        _ => std_stream::replace_range(job, edit, buffer_size, watch, phases, range),
    };
    let mut fastest = [Duration::MAX; 2];
    let mut changed = 0;
    let mut offset = 0;
    for strategy in ORDER {
        let end = job.len.min(offset + TRIAL_CHUNK);
        let start = Instant::now();
        changed += one(strategy, offset..end, phases)?;
        let slot = &mut fastest[usize::from(strategy == EditStrategy::StdStream)];
        *slot = (*slot).min(start.elapsed());
        offset = end;
    }
    let chosen = if fastest[1] < fastest[0] {
        EditStrategy::StdStream
    } else {
        EditStrategy::Mmap
    };
    changed += one(chosen, offset..job.len, phases)?;
    Ok((changed, Trial { chosen, fastest }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_strategy_takes_half_the_chunks_and_the_first_and_last_alternate() {
        for s in [EditStrategy::Mmap, EditStrategy::StdStream] {
            assert_eq!(ORDER.iter().filter(|&&o| o == s).count(), TRIAL_CHUNKS / 2);
        }
        assert!(TRIAL_CHUNK * TRIAL_CHUNKS as u64 <= TRIAL_MIN / 2);
        assert_eq!(TRIAL_CHUNK % mmap::WINDOW as u64, 0);
        assert_ne!(ORDER[0], ORDER[TRIAL_CHUNKS - 1]);
    }

    #[test]
    fn the_reason_names_both_rates_and_the_choice() {
        let t = Trial {
            chosen: EditStrategy::StdStream,
            fastest: [Duration::from_millis(4), Duration::from_millis(2)],
        };
        let why = t.why("no profile of this machine yet");
        assert!(
            why.starts_with("the rule, measured on the first 64 MiB"),
            "{why}"
        );
        assert!(why.contains("mmap 2097 MB/s"), "{why}");
        assert!(why.contains("std-stream 4194 MB/s"), "{why}");
        assert!(
            why.ends_with("std-stream replaced the rest (no profile of this machine yet)"),
            "{why}"
        );
    }
}
