//! How many queued reads a ring hands over per `io_uring_enter(2)`, decided while it runs.
//!
//! **Inline**: while every read completes at submission (buffered reads of cached pages),
//! all queued reads go in one call — each call saved is a microsecond.
//!
//! **Device**: while reads wait for the device, the best batch depends on the device. A
//! slow virtual disk that served 32 reads as one burst fell into lockstep with large
//! batches (batches of 4 were best there); a fast one wants every freed slot refilled at
//! once. So the ring measures: it tries each batch size of [`CANDIDATES`] (those up to its
//! queue depth) for [`EPOCH`] completions, twice, in turn, keeps the one that completed
//! its reads in the least time, uses it for [`EXPLOIT_EPOCHS`] epochs, then measures again
//! (the device's speed changes with the host's load). At queue depth 1 there is nothing to
//! decide. Evidence, both machines: docs/findings/random.md.

use std::time::{Duration, Instant};

use super::ring::DeepRing;
use crate::error::Result;

/// The batch sizes tried while reads go to the device (capped at the queue depth).
pub const CANDIDATES: [usize; 4] = [1, 2, 4, 8];

/// Completions per trial of one batch size.
pub const EPOCH: u32 = 256;

/// Trials of every candidate per measurement.
pub const PASSES: u32 = 2;

/// Epochs the chosen size is kept before the ring measures again.
pub const EXPLOIT_EPOCHS: u32 = 64;

/// What the next submissions hand over, and what the ring has learnt.
#[derive(Clone, Debug)]
pub struct Batching {
    /// Whether the last submission completed every read it handed over.
    inline: bool,
    /// The candidate sizes (at most the queue depth, at least one).
    sizes: Vec<usize>,
    /// Time spent per candidate in this measurement.
    spent: Vec<Duration>,
    /// Exploring: the trial under way (candidate index + pass × candidates); exploiting:
    /// `None`.
    trial: Option<usize>,
    /// The chosen candidate while exploiting.
    chosen: usize,
    /// Epochs left before measuring again.
    exploit_left: u32,
    /// Completions in the current epoch, and when it started.
    done: u32,
    since: Option<Instant>,
}

impl Batching {
    /// A ring's batching at queue depth `depth`: device batches first, until a submission
    /// shows reads completing inline.
    pub fn new(depth: usize) -> Batching {
        let mut sizes: Vec<usize> = CANDIDATES.iter().map(|&c| c.min(depth.max(1))).collect();
        sizes.dedup();
        let n = sizes.len();
        Batching {
            inline: false,
            spent: vec![Duration::ZERO; n],
            trial: (n > 1).then_some(0),
            chosen: 0,
            exploit_left: 0,
            done: 0,
            since: None,
            sizes,
        }
    }

    /// The queued reads that trigger a submission.
    pub fn size(&self) -> usize {
        if self.inline {
            return usize::MAX;
        }
        match self.trial {
            Some(t) => self.sizes[t % self.sizes.len()],
            None => self.sizes[self.chosen],
        }
    }

    /// Whether reads complete inline, so every queued one goes at once.
    pub fn is_inline(&self) -> bool {
        self.inline
    }

    /// After a submission of `submitted` reads of which `inline` had completed when it
    /// returned.
    pub fn submitted(&mut self, submitted: usize, inline: usize) {
        self.inline = submitted > 0 && inline >= submitted;
    }

    /// After `n` reads were reaped at `now`: ends the epoch when it is full and moves the
    /// measurement on.
    pub fn reaped(&mut self, n: usize, now: Instant) {
        if self.sizes.len() == 1 || self.inline {
            // Nothing to choose, or nothing the device decides: the clock restarts.
            self.since = None;
            self.done = 0;
            return;
        }
        let Some(since) = self.since else {
            self.since = Some(now);
            return;
        };
        self.done = self.done.saturating_add(n as u32);
        if self.done < EPOCH {
            return;
        }
        let took = now.saturating_duration_since(since);
        self.since = Some(now);
        self.done = 0;
        let n = self.sizes.len();
        match self.trial {
            Some(t) => {
                self.spent[t % n] += took;
                if t + 1 < n * PASSES as usize {
                    self.trial = Some(t + 1);
                } else {
                    self.chosen = (0..n).min_by_key(|&i| self.spent[i]).unwrap_or(0);
                    self.spent.iter_mut().for_each(|s| *s = Duration::ZERO);
                    self.trial = None;
                    self.exploit_left = EXPLOIT_EPOCHS;
                }
            }
            None => {
                self.exploit_left = self.exploit_left.saturating_sub(1);
                if self.exploit_left == 0 {
                    self.trial = Some(0);
                }
            }
        }
    }
}

/// Hands every queued read of `ring` to the kernel, and tells `batching` how many
/// completed inline.
pub fn flush(ring: &mut DeepRing, batching: &mut Batching) -> Result<()> {
    let before = ring.ready();
    let submitted = ring.submit()?;
    let inline = ring.ready().saturating_sub(before);
    batching.submitted(submitted, inline);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs whole epochs from `now`, in which candidate size `s` takes `cost(s)` per
    /// epoch; returns the time after them.
    fn run(
        b: &mut Batching,
        mut now: Instant,
        epochs: usize,
        cost: impl Fn(usize) -> u64,
    ) -> Instant {
        b.reaped(0, now);
        for _ in 0..epochs {
            now += Duration::from_micros(cost(b.size()));
            b.reaped(EPOCH as usize, now);
        }
        now
    }

    #[test]
    fn batches_are_whole_only_while_every_read_completes_at_submission() {
        let mut b = Batching::new(32);
        b.submitted(32, 32);
        assert!(b.is_inline());
        assert!(b.size() > 256, "more than any queue depth");
        b.submitted(4, 5);
        assert!(b.is_inline(), "an earlier read landed too");
        b.submitted(32, 31);
        assert!(!b.is_inline());
        b.submitted(0, 0);
        assert!(!b.is_inline(), "nothing submitted says nothing");
        assert!(b.size() <= 8);
    }

    #[test]
    fn the_size_that_completes_reads_fastest_is_chosen_and_measured_again_later() {
        for best in CANDIDATES {
            let mut b = Batching::new(32);
            let cost = |s: usize| if s == best { 1000 } else { 1300 };
            let now = run(
                &mut b,
                Instant::now(),
                CANDIDATES.len() * PASSES as usize,
                cost,
            );
            assert_eq!(b.size(), best);
            assert!(b.trial.is_none());
            // Kept for the exploit epochs, then measured again.
            let now = run(&mut b, now, EXPLOIT_EPOCHS as usize - 1, cost);
            assert_eq!(b.size(), best);
            assert!(b.trial.is_none());
            run(&mut b, now, 1, cost);
            assert!(b.trial.is_some(), "measuring again");
        }
    }

    #[test]
    fn a_shallow_queue_tries_only_the_sizes_it_can_hold() {
        let b = Batching::new(1);
        assert_eq!(b.sizes, vec![1]);
        assert!(b.trial.is_none(), "nothing to decide at depth 1");
        assert_eq!(Batching::new(3).sizes, vec![1, 2, 3]);
        let mut b = Batching::new(2);
        run(
            &mut b,
            Instant::now(),
            4,
            |s| if s == 2 { 500 } else { 900 },
        );
        assert_eq!(b.size(), 2);
    }

    #[test]
    fn inline_reads_do_not_count_as_device_time() {
        let mut b = Batching::new(32);
        b.submitted(8, 8);
        let start = b.trial;
        run(&mut b, Instant::now(), 20, |_| 1000);
        assert_eq!(b.trial, start, "no epoch ends while reads complete inline");
    }
}
