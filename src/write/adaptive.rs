//! Adaptive write sizes into a pipe: small writes while the reader runs on another CPU,
//! the pipe's capacity while it shares ours — told apart by the writer's own involuntary
//! context switches.
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
//!   hand-over a cross-CPU wake-up. A slower reader (`pv -q`, `head -c`) gives the same
//!   order: into `pv`, 2 GiB, 5 interleaved runs, 8 KiB 3.66 GB/s, 16 KiB 3.79, 32 KiB
//!   3.44, 64 KiB 2.17 (`yes` 3.62).
//! - reader on the writer's CPU: 64 KiB writes 3.6 GB/s, 8 KiB 2.2: with one CPU every
//!   write wakes the reader, which preempts the writer (39 000 involuntary switches per
//!   GiB at 8 KiB against 15 500 at 64 KiB); fewer, larger writes mean fewer switches.
//!
//! **The signal**: those preemptions. The writer's involuntary context switches
//! (`getrusage(RUSAGE_THREAD)`'s `ru_nivcsw`) per GiB, 1 GiB runs, `/usr/bin/time`:
//!
//! | reader | 8 KiB writes | 64 KiB writes |
//! |---|---|---|
//! | `iolab drain`, unpinned | 8 | 14 |
//! | `pv -q`, unpinned | 19 | 12 |
//! | `iolab drain`, same CPU | 41 913 | 15 604 |
//! | `pv -q`, same CPU | 16 486 | 4 185 |
//!
//! A reader elsewhere never preempts the writer (its waits on a full pipe are voluntary
//! switches), one on its CPU does so thousands of times per GiB, whatever the size. So
//! the writer counts its involuntary switches over each [`WINDOW_BYTES`]: at least
//! [`SHARED_SWITCHES`] means the CPU is shared, and the next window uses the large size;
//! fewer, the small one. The choice follows the scheduler window by window, costs one
//! `getrusage` per window, and involves no clock: an earlier version timed 1 MiB probes
//! of each size and kept the faster, and against a reader that is the bottleneck the
//! probes were coin tosses (it wrote 38–75% of some runs into `pv` in 64 KiB pieces,
//! 0.64–0.76× `yes` over the runs).
//!
//! **Slow consumer, full pipe**: a reader slower than the writer on another CPU makes
//! the writer sleep on the full pipe — voluntary switches, so the small size stays, which
//! measured fastest there too. Another process that takes our CPU counts as sharing;
//! with it, as with the reader, fewer system calls are the better choice. Nothing here
//! blocks longer than the write itself, and a failed write ends the stream as before.

/// The small write: 8 KiB, the largest size that kept both sides streaming with the
/// reader on another CPU (16 KiB fell 2.7× into a `splice` reader); also GNU `yes`'s write.
pub const SMALL_WRITE: usize = 8 << 10;
/// Bytes per window over which the switches are counted: 4 MiB (0.4–3 ms at the rates
/// above; the same-CPU cases make 16–160 involuntary switches in that many bytes).
pub const WINDOW_BYTES: u64 = 4 << 20;
/// Involuntary switches per window that mean the CPU is shared: 4 (the unpinned cases
/// make about 0.1 per window).
pub const SHARED_SWITCHES: u64 = 4;

/// Picks each write's size between [`SMALL_WRITE`] and a large size from the writer's
/// involuntary context switches.
#[derive(Debug, Clone)]
pub struct Adaptive {
    sizes: [usize; 2],
    /// 0 while writing small pieces, 1 while writing large ones.
    choice: usize,
    /// Bytes written in the current window.
    done: u64,
    /// The thread's involuntary switches when the window began (`None`: not read yet, or
    /// `getrusage` failed, and the small size stays).
    switches: Option<u64>,
    /// Bytes written with each size, for reports.
    written: [u64; 2],
}

impl Adaptive {
    /// Adapts between [`SMALL_WRITE`] and `large` (at least the small size).
    pub fn new(large: usize) -> Adaptive {
        Adaptive {
            sizes: [SMALL_WRITE, large.max(SMALL_WRITE)],
            choice: 0,
            done: 0,
            switches: None,
            written: [0; 2],
        }
    }

    /// The size of the next write.
    pub fn next_size(&self) -> usize {
        self.sizes[self.choice]
    }

    /// Records that the last write moved `n` bytes.
    pub fn wrote(&mut self, n: usize) {
        self.account(n, involuntary_switches);
    }

    /// [`Adaptive::wrote`] with the thread's switch counter given by `read`.
    fn account(&mut self, n: usize, read: impl FnOnce() -> Option<u64>) {
        let n = n as u64;
        self.written[self.choice] += n;
        if self.switches.is_none() && self.done == 0 {
            self.switches = read();
            self.done = n;
            return;
        }
        self.done += n;
        if self.done < WINDOW_BYTES {
            return;
        }
        let now = read();
        self.choice = match (self.switches, now) {
            (Some(before), Some(now)) if now.saturating_sub(before) >= SHARED_SWITCHES => 1,
            _ => 0,
        };
        self.switches = now;
        self.done = 0;
    }

    /// The small and the large size, and the bytes each has written so far.
    pub fn report(&self) -> [(usize, u64); 2] {
        [
            (self.sizes[0], self.written[0]),
            (self.sizes[1], self.written[1]),
        ]
    }
}

/// The calling thread's involuntary context switches so far, `None` if `getrusage` fails.
fn involuntary_switches() -> Option<u64> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` is valid for writes of one `rusage`, which the call fills on success.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: `getrusage` returned 0, so it initialised `usage`.
    let usage = unsafe { usage.assume_init() };
    u64::try_from(usage.ru_nivcsw).ok()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `bytes` in pieces of the current size, the switch counter rising by
    /// `per_window` every [`WINDOW_BYTES`]; returns the sizes used, without repeats.
    fn run(a: &mut Adaptive, counter: &mut u64, bytes: u64, per_window: u64) -> Vec<usize> {
        let mut seen = Vec::new();
        let mut total = 0u64;
        while total < bytes {
            let size = a.next_size();
            if seen.last() != Some(&size) {
                seen.push(size);
            }
            let before = total / WINDOW_BYTES;
            total += size as u64;
            *counter += (total / WINDOW_BYTES - before) * per_window;
            let now = *counter;
            a.account(size, || Some(now));
        }
        seen
    }

    #[test]
    fn preemptions_switch_to_the_large_size_and_their_absence_back() {
        let mut a = Adaptive::new(64 << 10);
        let mut counter = 1000;
        assert_eq!(
            run(&mut a, &mut counter, 3 * WINDOW_BYTES, 0),
            [SMALL_WRITE]
        );
        let seen = run(&mut a, &mut counter, 3 * WINDOW_BYTES, 40);
        assert_eq!(seen, [SMALL_WRITE, 64 << 10], "the shared CPU is seen");
        let seen = run(&mut a, &mut counter, 3 * WINDOW_BYTES, SHARED_SWITCHES - 1);
        assert_eq!(
            seen,
            [64 << 10, SMALL_WRITE],
            "a few switches are not sharing"
        );
        let [(small, s), (large, l)] = a.report();
        assert_eq!((small, large), (SMALL_WRITE, 64 << 10));
        assert_eq!(s + l, 9 * WINDOW_BYTES);
        assert!(l >= WINDOW_BYTES, "{l}");
    }

    #[test]
    fn without_a_counter_the_small_size_stays() {
        let mut a = Adaptive::new(64 << 10);
        for _ in 0..(4 * WINDOW_BYTES / SMALL_WRITE as u64) {
            assert_eq!(a.next_size(), SMALL_WRITE);
            a.account(SMALL_WRITE, || None);
        }
        assert_eq!(Adaptive::new(1024).next_size(), SMALL_WRITE);
    }

    #[test]
    fn short_writes_count_what_they_moved() {
        let mut a = Adaptive::new(64 << 10);
        let mut counter = 0;
        for _ in 0..(WINDOW_BYTES / 100) {
            a.account(100, || Some(counter));
        }
        assert_eq!(a.next_size(), SMALL_WRITE);
        counter = 100;
        a.account(100, || Some(counter));
        a.account(100, || Some(counter));
        assert_eq!(a.next_size(), 64 << 10, "a window of short writes ends");
        let [(_, small), (_, large)] = a.report();
        assert_eq!((small, large), (WINDOW_BYTES / 100 * 100 + 100, 100));
    }

    #[test]
    fn the_thread_counter_is_readable() {
        assert!(involuntary_switches().is_some());
    }
}
