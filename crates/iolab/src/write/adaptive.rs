//! Adaptive write sizes into a pipe: small writes while the reader runs on another CPU,
//! the pipe's capacity while it shares ours — told apart by the writer's own involuntary
//! context switches.
//!
//! **Why**: into a pipe, the best size per `write(2)` depends on where the reader runs,
//! which a writer cannot see. With the reader on another CPU (the scheduler's usual
//! choice), 8 KiB writes stream and larger ones are slower: each copy holds the pipe's
//! lock, and at the pipe's capacity both sides sleep and wake each other. With the reader
//! on the writer's CPU, every write wakes the reader, which preempts the writer, and
//! fewer, larger writes win.
//!
//! **The signal**: those preemptions. A reader elsewhere almost never preempts the writer
//! (its waits on a full pipe are voluntary switches), one on its CPU does so thousands of
//! times per GiB, whatever the size. So the writer counts its involuntary switches
//! (`getrusage(RUSAGE_THREAD)`'s `ru_nivcsw`) over windows of bytes, and calls the CPU
//! shared when at least one write in [`WRITES_PER_PREEMPTION`] was preempted:
//! [`shared_threshold`] switches per window, 32 for 4 MiB of 8 KiB writes and 4 for 4 MiB
//! of 64 KiB ones. The next window then uses the large size; otherwise the small one. A
//! rate, not a fixed count, so that an unpinned writer's stray preemptions keep it on the
//! small size while a real sharing is still followed within a window.
//!
//! **Windows that grow**: reading the counter is not free (3–4% when read every 4 MiB).
//! So the first window is [`WINDOW_BYTES`], each window of small writes that sees
//! no sharing doubles the next up to [`MAX_WINDOW_BYTES`] (one read per 8 192 writes in a
//! steady stream), and any change of size, or writing large, brings it back to 4 MiB:
//! a writer that starts beside its reader is seen within 4 MiB, and one whose reader
//! leaves returns to small writes within 4 MiB. The cost is the delay in seeing a reader
//! that moves onto our CPU mid-stream: it may arrive late in a 64 MiB window and be
//! outvoted there, so up to two such windows (about 80–130 MiB of small writes, 40–60 ms
//! at the same-CPU rate).
//!
//! The choice follows the scheduler window by window and involves no clock: timed probes
//! of each size, kept when faster, were coin tosses against a reader that is the
//! bottleneck (evidence for this module: docs/findings/write.md).
//!
//! **Slow consumer, full pipe**: a reader slower than the writer on another CPU makes
//! the writer sleep on the full pipe — voluntary switches, so the small size stays, which
//! measured fastest there too. Another process that takes our CPU counts as sharing;
//! with it, as with the reader, fewer system calls are the better choice. Nothing here
//! blocks longer than the write itself, and a failed write ends the stream as before.

/// The small write: 8 KiB, the largest size that kept both sides streaming with the
/// reader on another CPU (16 KiB fell 2.7× into a `splice` reader); also GNU `yes`'s write.
pub const SMALL_WRITE: usize = 8 << 10;
/// Bytes of the first window over which the switches are counted, and of every window
/// after a change of size or while writing large: 4 MiB (0.4–3 ms at the pipe rates of
/// docs/findings/write.md; the same-CPU cases make 16–160 involuntary switches in that
/// many bytes).
pub const WINDOW_BYTES: u64 = 4 << 20;
/// The longest window: 64 MiB. Each window of small writes that sees no sharing doubles
/// the next, up to this, so a steady stream reads the counter once per 8 192 writes.
pub const MAX_WINDOW_BYTES: u64 = 64 << 20;
/// The CPU counts as shared when at least one write in this many was preempted: 16. A
/// reader on our CPU preempts one small write in 3–4 (`iolab drain`) or 8 (`pv`); one
/// elsewhere at most one in 23 in the windows measured, except rare bursts of one in 6–9
/// that are a real sharing for a while and are followed. Writes are counted as the window's
/// bytes over the size (short writes count as the whole writes they are part of).
pub const WRITES_PER_PREEMPTION: u64 = 16;

/// Involuntary switches in a window of `window` bytes of `size`-byte writes that mean the
/// CPU is shared: one per [`WRITES_PER_PREEMPTION`] writes, and at least one.
pub fn shared_threshold(size: usize, window: u64) -> u64 {
    (window / size.max(1) as u64 / WRITES_PER_PREEMPTION).max(1)
}

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
    /// Bytes of the current window: [`WINDOW_BYTES`], doubled after each window of small
    /// writes without sharing, up to [`MAX_WINDOW_BYTES`].
    window: u64,
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
            window: WINDOW_BYTES,
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
        if self.done < self.window {
            return;
        }
        let now = read();
        let threshold = shared_threshold(self.sizes[self.choice], self.done);
        let choice = match (self.switches, now) {
            (Some(before), Some(now)) if now.saturating_sub(before) >= threshold => 1,
            _ => 0,
        };
        self.window = if choice == 0 && self.choice == 0 {
            (self.window * 2).min(MAX_WINDOW_BYTES)
        } else {
            WINDOW_BYTES
        };
        self.choice = choice;
        self.switches = now;
        self.done = 0;
    }

    /// The small and the large size, and the bytes each has written so far.
    #[cfg(any(test, feature = "lab"))]
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

    /// Writes `bytes` in pieces of the current size, one involuntary switch every `every`
    /// writes (`0`: none); returns the sizes used, without repeats.
    fn run(a: &mut Adaptive, counter: &mut u64, bytes: u64, every: u64) -> Vec<usize> {
        let mut seen = Vec::new();
        let mut total = 0u64;
        let mut writes = 0u64;
        while total < bytes {
            let size = a.next_size();
            if seen.last() != Some(&size) {
                seen.push(size);
            }
            writes += 1;
            if every > 0 && writes.is_multiple_of(every) {
                *counter += 1;
            }
            total += size as u64;
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
        let rare = WRITES_PER_PREEMPTION + 1;
        let seen = run(&mut a, &mut counter, 4 * MAX_WINDOW_BYTES, rare);
        assert_eq!(seen, [SMALL_WRITE], "stray switches are not sharing");
        let seen = run(
            &mut a,
            &mut counter,
            4 * MAX_WINDOW_BYTES,
            WRITES_PER_PREEMPTION,
        );
        assert_eq!(seen, [SMALL_WRITE, 64 << 10], "the shared CPU is seen");
        let seen = run(
            &mut a,
            &mut counter,
            3 * WINDOW_BYTES,
            WRITES_PER_PREEMPTION,
        );
        assert_eq!(seen, [64 << 10], "sharing keeps the large size");
        let seen = run(&mut a, &mut counter, 3 * WINDOW_BYTES, rare);
        assert_eq!(
            seen,
            [64 << 10, SMALL_WRITE],
            "fewer switches are not sharing"
        );
        let [(small, s), (large, l)] = a.report();
        assert_eq!((small, large), (SMALL_WRITE, 64 << 10));
        assert!(l >= WINDOW_BYTES, "{l}");
        assert!(
            s + l >= 8 * MAX_WINDOW_BYTES + 9 * WINDOW_BYTES,
            "{s} + {l}"
        );
    }

    #[test]
    fn quiet_windows_grow_and_a_change_shrinks_them() {
        let mut a = Adaptive::new(64 << 10);
        let mut counter = 0;
        run(&mut a, &mut counter, 8 * MAX_WINDOW_BYTES, 0);
        assert_eq!(
            a.window, MAX_WINDOW_BYTES,
            "a steady stream reads the counter rarely"
        );
        let seen = run(&mut a, &mut counter, 3 * MAX_WINDOW_BYTES, 1);
        assert_eq!(seen, [SMALL_WRITE, 64 << 10]);
        assert_eq!(
            a.window, WINDOW_BYTES,
            "while writing large, windows stay short"
        );
        let seen = run(&mut a, &mut counter, WINDOW_BYTES, 0);
        assert_eq!(seen, [64 << 10], "one window of large writes");
        assert_eq!(
            a.next_size(),
            SMALL_WRITE,
            "the end of sharing is seen in a window"
        );
        assert_eq!(a.window, WINDOW_BYTES, "and the next window is short again");
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
    fn the_threshold_is_one_preempted_write_in_sixteen() {
        assert_eq!(shared_threshold(SMALL_WRITE, WINDOW_BYTES), 32);
        assert_eq!(shared_threshold(SMALL_WRITE, MAX_WINDOW_BYTES), 512);
        assert_eq!(shared_threshold(64 << 10, WINDOW_BYTES), 4);
        assert_eq!(
            shared_threshold(1 << 20, WINDOW_BYTES),
            1,
            "at least one switch"
        );
        assert_eq!(
            shared_threshold(0, WINDOW_BYTES),
            WINDOW_BYTES / WRITES_PER_PREEMPTION
        );
    }

    #[test]
    fn the_thread_counter_is_readable() {
        assert!(involuntary_switches().is_some());
    }
}
