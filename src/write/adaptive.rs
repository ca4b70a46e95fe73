//! Adaptive write sizes into a pipe: the writer times its own throughput with small and
//! with large writes, keeps the faster, and checks again from time to time.
//!
//! **Why**: into a pipe, the best size per `write(2)` depends on where the reader runs,
//! which a writer cannot see. Measured on the development VM (2 vCPUs, default 64 KiB
//! pipes, 1 GiB per run, `iolab write -m raw-fd | iolab drain`):
//! - reader on the other CPU (the scheduler's usual choice): 8 KiB writes 7.7–10.5 GB/s,
//!   16 KiB 3.9, 32 KiB 3.5, 64 KiB 1.4–2.0. Up to 32 KiB neither side sleeps (about 100
//!   context switches per GiB each side): the two CPUs stream, and throughput is the
//!   cost of each write's copy under the pipe's lock, against the reader's splice taking
//!   the pages; at the pipe's capacity (64 KiB) each write fills the pipe, the writer sleeps
//!   until the reader has emptied it, and both switch about 10 600 times per GiB, every
//!   hand-over a cross-CPU wake-up.
//! - reader on the writer's CPU: 64 KiB writes 3.6 GB/s, 8 KiB 2.2: with one CPU every
//!   write wakes the reader, which preempts the writer (39 000 involuntary switches per
//!   GiB at 8 KiB against 15 500 at 64 KiB); fewer, larger writes mean fewer switches.
//!
//! So neither size wins everywhere, and the writer measures: it writes
//! [`PROBE_BYTES`] with [`SMALL_WRITE`], then with the large size (the pipe's capacity),
//! then again both (ABAB, so a drift does not pick a side), keeps the size with the shorter
//! total time, and probes again after [`FIRST_SETTLE_BYTES`], doubling the interval each
//! time up to [`MAX_SETTLE_BYTES`] (the scheduler may move the reader).
//!
//! **Slow consumer, full pipe**: when the reader is the bottleneck, both sizes take the
//! reader's time and the probe is a tie; a tie (within [`TIE`]) keeps the large size,
//! which makes fewer system calls. A consumer that stalls during a probe makes that
//! probe's size look slow; the next probe corrects it. Nothing here blocks longer than
//! the write itself, and a failed write ends the stream as before.

use std::time::{Duration, Instant};

/// The small write: 8 KiB, the largest size that kept both sides streaming with the
/// reader on another CPU (16 KiB fell 2.7×); also GNU `yes`'s write.
pub const SMALL_WRITE: usize = 8 << 10;
/// Bytes written with each size per probe phase: 1 MiB (0.1–0.5 ms at the rates above,
/// long against a cross-CPU wake-up, and 6% of the benchmark's 64 MiB runs for a probe).
pub const PROBE_BYTES: u64 = 1 << 20;
/// Bytes written with the chosen size before the first new probe: 64 MiB.
pub const FIRST_SETTLE_BYTES: u64 = 64 << 20;
/// The longest interval between probes: 1 GiB.
pub const MAX_SETTLE_BYTES: u64 = 1 << 30;
/// How much faster the small size must be to be chosen: 10%.
pub const TIE: f64 = 1.10;

/// The order of a probe's phases: small, large, small, large.
const PHASES: [usize; 4] = [0, 1, 0, 1];

/// Picks each write's size between [`SMALL_WRITE`] and a large size by measuring.
#[derive(Debug, Clone)]
pub struct Adaptive {
    sizes: [usize; 2],
    state: State,
    settle: u64,
    /// Bytes written with each size, for reports.
    written: [u64; 2],
}

#[derive(Debug, Clone)]
enum State {
    /// In phase `phase` of [`PHASES`], since `start`, `done` bytes into it.
    Probe {
        phase: usize,
        start: Instant,
        done: u64,
        time: [Duration; 2],
    },
    /// Writing with `sizes[choice]` for `left` more bytes.
    Settled { choice: usize, left: u64 },
}

impl Adaptive {
    /// Adapts between [`SMALL_WRITE`] and `large` (at least the small size).
    pub fn new(large: usize) -> Adaptive {
        Adaptive {
            sizes: [SMALL_WRITE, large.max(SMALL_WRITE)],
            state: State::probing(),
            settle: FIRST_SETTLE_BYTES,
            written: [0; 2],
        }
    }

    /// The size of the next write.
    pub fn next_size(&self) -> usize {
        match self.state {
            State::Probe { phase, .. } => self.sizes[PHASES[phase]],
            State::Settled { choice, .. } => self.sizes[choice],
        }
    }

    /// Records that the last write moved `n` bytes.
    pub fn wrote(&mut self, n: usize) {
        let n = n as u64;
        let current = self.sizes.iter().position(|&s| s == self.next_size());
        if let Some(i) = current {
            self.written[i] += n;
        }
        match &mut self.state {
            State::Probe {
                phase,
                start,
                done,
                time,
            } => {
                *done += n;
                if *done < PROBE_BYTES {
                    return;
                }
                let now = Instant::now();
                time[PHASES[*phase]] += now - *start;
                if *phase + 1 < PHASES.len() {
                    *phase += 1;
                    *start = now;
                    *done = 0;
                    return;
                }
                let choice = choose(time[0], time[1]);
                self.state = State::Settled {
                    choice,
                    left: self.settle,
                };
                self.settle = (self.settle * 2).min(MAX_SETTLE_BYTES);
            }
            State::Settled { left, .. } => {
                *left = left.saturating_sub(n);
                if *left == 0 {
                    self.state = State::probing();
                }
            }
        }
    }

    /// The small and the large size, and the bytes each has written so far.
    pub fn report(&self) -> [(usize, u64); 2] {
        [
            (self.sizes[0], self.written[0]),
            (self.sizes[1], self.written[1]),
        ]
    }
}

/// How a method sizes its writes: a fixed size (`--buffer`, or a sink that is not a pipe)
/// or [`Adaptive`].
#[derive(Debug, Clone)]
pub enum Sizing {
    /// Every write this size (the last one shorter).
    Fixed(usize),
    /// Chosen by measuring.
    Adaptive(Adaptive),
}

/// A method's run in progress: how it sizes its writes, and the bytes the kernel has
/// accepted so far (so a failure can say how far it got).
#[derive(Debug, Clone)]
pub(crate) struct Run {
    pub(crate) sizing: Sizing,
    pub(crate) written: u64,
}

impl Sizing {
    /// The size of the next write.
    pub fn next_size(&self) -> usize {
        match self {
            Sizing::Fixed(size) => *size,
            Sizing::Adaptive(a) => a.next_size(),
        }
    }

    /// Records that the last write moved `n` bytes.
    pub fn wrote(&mut self, n: usize) {
        if let Sizing::Adaptive(a) = self {
            a.wrote(n);
        }
    }
}

impl State {
    fn probing() -> State {
        State::Probe {
            phase: 0,
            start: Instant::now(),
            done: 0,
            time: [Duration::ZERO; 2],
        }
    }
}

/// 0 (small) when it took less than the large size's time by [`TIE`], else 1 (large).
fn choose(small: Duration, large: Duration) -> usize {
    if small.as_secs_f64() * TIE < large.as_secs_f64() {
        0
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_alternates_small_and_large_then_settles_and_probes_again() {
        let mut a = Adaptive::new(64 << 10);
        let mut seen = Vec::new();
        let mut total = 0u64;
        while total < 4 * PROBE_BYTES {
            let size = a.next_size();
            if seen.last() != Some(&size) {
                seen.push(size);
            }
            a.wrote(size);
            total += size as u64;
        }
        assert_eq!(seen, [SMALL_WRITE, 64 << 10, SMALL_WRITE, 64 << 10]);
        let settled = a.next_size();
        assert!(matches!(a.state, State::Settled { .. }));
        let mut left = FIRST_SETTLE_BYTES;
        while left > 0 {
            assert_eq!(a.next_size(), settled);
            a.wrote(settled);
            left = left.saturating_sub(settled as u64);
        }
        assert!(matches!(a.state, State::Probe { phase: 0, .. }));
        assert_eq!(a.settle, 2 * FIRST_SETTLE_BYTES);
        let [(small, s), (large, l)] = a.report();
        assert_eq!((small, large), (SMALL_WRITE, 64 << 10));
        assert_eq!(
            s + l,
            total + FIRST_SETTLE_BYTES.div_ceil(settled as u64) * settled as u64
        );
    }

    #[test]
    fn short_writes_count_what_they_moved() {
        let mut a = Adaptive::new(64 << 10);
        for _ in 0..(PROBE_BYTES / 100) {
            a.wrote(100);
        }
        assert_eq!(a.next_size(), SMALL_WRITE);
        a.wrote(100);
        a.wrote(100);
        assert_eq!(
            a.next_size(),
            64 << 10,
            "the second phase is the large size"
        );
    }

    #[test]
    fn the_small_size_must_win_clearly() {
        let ms = Duration::from_millis;
        assert_eq!(choose(ms(10), ms(30)), 0);
        assert_eq!(choose(ms(10), ms(10)), 1, "a tie keeps the large size");
        assert_eq!(choose(ms(10), ms(10) + ms(10) / 20), 1, "5% is a tie");
        assert_eq!(choose(ms(30), ms(10)), 1);
        assert_eq!(Adaptive::new(1024).next_size(), SMALL_WRITE);
    }
}
