//! The measured backing of [`super::RandomAccessFile::open`]: it asks the page cache and
//! times its own reads.
//!
//! **How**: at each trial the file's share in the page cache is asked (`cachestat`). At
//! [`RESIDENT`] or more, the map (advised `MADV_RANDOM`) serves, untimed: a copy from a
//! mapped page is the cheapest read there is, but only once the page is mapped, and a
//! trial's first touches would charge the map a fault per page that later reads do not
//! pay. Below it, the next [`TRIAL_READS`] reads (over all threads) take turns among
//! `pread`, the map and `O_DIRECT`, and the lowest mean time per read serves. Trials come
//! back, first [`FIRST_RETRIAL`] later, then twice as long after each that kept the
//! backing (up to [`LAST_RETRIAL`]), so a file that warms or is evicted while open is
//! followed. A thread looks at the clock once in [`CHECK_EVERY`] reads; between trials a
//! read costs one relaxed atomic load more.
//!
//! **The margins**: a challenger replaces the serving backing only when faster by
//! [`SWITCH_MARGIN`] (two backings within noise do not flip back and forth). `O_DIRECT`
//! leaves nothing in the page cache, so it is judged against what the cache would have
//! made of its reads: the page of each read of a trial, and of every read while `O_DIRECT`
//! serves, is noted, and the share of those reads of a page read before (which the cache
//! would have served from memory) is taken off the cached backings' times before the
//! comparison, with [`DIRECT_MARGIN`] on top; after a switch to `O_DIRECT` the next trial
//! comes ten times sooner. A skewed workload (a hot set) repeats pages within the first
//! trials and stays cached; a uniform one over a file that fits in memory repeats more the
//! longer it runs, and goes back to the cache once the repeats outweigh `O_DIRECT`'s lead.
//!
//! **Where it starts**: the backing of the machine profile or the residency rule
//! ([`super::auto`]) serves until the first trial ends. Evidence:
//! docs/findings/random.md.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::Backing;

/// The share of the file in the page cache at which the map serves untimed: what
/// `count` calls warm.
pub const RESIDENT: f64 = super::auto::RESIDENT;
/// Reads per trial, shared in turn among the backings.
pub const TRIAL_READS: u32 = 96;
/// The first trial after the one at open.
pub const FIRST_RETRIAL: Duration = Duration::from_millis(100);
/// The longest wait between trials.
pub const LAST_RETRIAL: Duration = Duration::from_secs(10);
/// A thread checks whether a trial is due once in this many of its reads.
pub const CHECK_EVERY: u32 = 256;
/// How much faster a challenger must be to replace the serving backing.
pub const SWITCH_MARGIN: f64 = 1.1;
/// How much faster `O_DIRECT` must be than the best cached backing (its time less the
/// share of repeated pages) to serve.
pub const DIRECT_MARGIN: f64 = 1.1;
/// The page size of the repeat notes.
const PAGE_SHIFT: u32 = 12;

/// The backings in the order of their index in a trial's tallies.
const ORDER: [Backing; 3] = [Backing::Pread, Backing::Mmap, Backing::Direct];
/// Set in `mode` while a trial runs.
const TRIAL: u8 = 0x80;

thread_local! {
    /// This thread's reads, for [`CHECK_EVERY`].
    static TICK: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

fn index(backing: Backing) -> usize {
    ORDER.iter().position(|&b| b == backing).unwrap_or(0)
}

/// What the last trial measured: mean nanoseconds per read of each backing it tried.
#[derive(Clone, Debug, PartialEq)]
pub struct Trial {
    /// The file's share in the page cache when the trial began, if known.
    pub cached: Option<f64>,
    /// `(backing, mean ns per read, reads timed)` for each backing timed (none when the
    /// file was resident).
    pub means: Vec<(Backing, f64, u64)>,
    /// The share of the reads noted since the trial before (a trial's turns, and every read
    /// while `O_DIRECT` serves) that read a page read before.
    pub repeats: f64,
    /// The backing serving after it.
    pub chosen: Backing,
    /// Trials so far.
    pub number: u64,
}

impl std::fmt::Display for Trial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "trial {}: ", self.number)?;
        if let Some(cached) = self.cached {
            write!(f, "{:.0}% in the page cache; ", cached * 100.0)?;
        }
        if self.means.is_empty() {
            return write!(f, "{} serves, untimed", name(self.chosen));
        }
        let means: Vec<String> = self
            .means
            .iter()
            .map(|(b, ns, _)| format!("{} {:.1} µs", name(*b), ns / 1000.0))
            .collect();
        write!(f, "timed {} per read", means.join(", "))?;
        if self.means.iter().any(|(b, _, _)| *b == Backing::Direct) {
            write!(
                f,
                ", {:.0}% of the reads repeated a page",
                self.repeats * 100.0
            )?;
        }
        write!(f, ": {} serves", name(self.chosen))
    }
}

/// A backing's name in reasons.
pub(crate) fn name(backing: Backing) -> &'static str {
    match backing {
        Backing::Pread => "pread",
        Backing::Mmap => "mmap-random",
        Backing::Direct => "O_DIRECT",
    }
}

/// The backing to serve after a trial: `means[i]` is the mean ns per read of
/// `ORDER[i]` (`None` when not tried), `repeats` the share of reads that read a page read
/// before (which a cached backing serves from memory), `serving` the backing before it.
pub fn decide(serving: Backing, means: [Option<f64>; 3], repeats: f64) -> Backing {
    let direct = index(Backing::Direct);
    let cached = |i: usize| means[i].map(|m| m * (1.0 - repeats.clamp(0.0, 1.0)));
    let best_cached = (0..3)
        .filter(|&i| i != direct)
        .filter_map(|i| means[i].map(|m| (i, m)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    let Some((best, best_mean)) = best_cached else {
        return if means[direct].is_some() {
            Backing::Direct
        } else {
            serving
        };
    };
    if let (Some(d), Some(c)) = (means[direct], cached(best))
        && d * DIRECT_MARGIN < c
    {
        return Backing::Direct;
    }
    // Between the cached backings, the serving one stays within the switch margin.
    match means[index(serving)] {
        Some(held) if serving != Backing::Direct && best_mean * SWITCH_MARGIN >= held => serving,
        _ => ORDER[best],
    }
}

/// The trial state of one file, shared by the threads reading it.
pub(crate) struct Measured {
    /// The serving backing's index, with [`TRIAL`] set while a trial runs.
    mode: AtomicU8,
    /// Which backings can be tried (bit `i` for `ORDER[i]`).
    offered: AtomicU8,
    /// Reads handed out in this trial.
    handed: AtomicU32,
    /// Reads timed in this trial.
    timed: AtomicU32,
    ns: [AtomicU64; 3],
    reads: [AtomicU64; 3],
    /// The file's share in the page cache as the timed trial began (`f64` bits;
    /// `u64::MAX`: unknown).
    cached: AtomicU64,
    /// When the next trial is due, in ns since `epoch`.
    due: AtomicU64,
    /// The wait after the next trial if it keeps the backing.
    wait: AtomicU64,
    epoch: Instant,
    last: Mutex<Option<Trial>>,
    trials: AtomicU64,
    /// One bit per page read by a noted read (allocated when `O_DIRECT` is offered).
    pages: Box<[AtomicU64]>,
    /// Reads noted since the last trial ended, and those of a page read before.
    noted: AtomicU64,
    repeats: AtomicU64,
}

impl std::fmt::Debug for Measured {
    /// The serving backing and the last trial (not the page notes, which can be large).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Measured")
            .field("serving", &self.serving())
            .field("last", &self.last())
            .finish_non_exhaustive()
    }
}

impl Measured {
    /// Starts with `serving`, among `offered`, for a file of `len` bytes; the first read
    /// begins a trial.
    pub(crate) fn new(serving: Backing, offered: &[Backing], len: u64) -> Measured {
        let bits = offered.iter().fold(0u8, |acc, &b| acc | 1 << index(b));
        let words = if offered.contains(&Backing::Direct) {
            usize::try_from(len.div_ceil(1 << PAGE_SHIFT).div_ceil(64)).unwrap_or(0)
        } else {
            0
        };
        let zero = || [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];
        Measured {
            mode: AtomicU8::new(index(serving) as u8),
            offered: AtomicU8::new(bits),
            handed: AtomicU32::new(0),
            timed: AtomicU32::new(0),
            ns: zero(),
            reads: zero(),
            cached: AtomicU64::new(u64::MAX),
            // Due at once: the first read's thread begins the first trial.
            due: AtomicU64::new(0),
            wait: AtomicU64::new(FIRST_RETRIAL.as_nanos() as u64),
            epoch: Instant::now(),
            last: Mutex::new(None),
            trials: AtomicU64::new(0),
            pages: (0..words).map(|_| AtomicU64::new(0)).collect(),
            noted: AtomicU64::new(0),
            repeats: AtomicU64::new(0),
        }
    }

    /// Notes a read at `offset` (a trial's turn, or any read while `O_DIRECT` serves): its
    /// page is marked read, and a read of a page read before counts as a repeat.
    pub(crate) fn note(&self, offset: u64) {
        let page = offset >> PAGE_SHIFT;
        let Some(word) = usize::try_from(page / 64)
            .ok()
            .and_then(|w| self.pages.get(w))
        else {
            return;
        };
        let bit = 1u64 << (page % 64);
        let before = word.fetch_or(bit, Ordering::Relaxed);
        self.noted.fetch_add(1, Ordering::Relaxed);
        if before & bit != 0 {
            self.repeats.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Whether reads served now (outside trials) are to be noted: while `O_DIRECT` serves.
    #[inline]
    pub(crate) fn noting(&self, backing: Backing) -> bool {
        backing == Backing::Direct && !self.pages.is_empty()
    }

    /// The backing serving now (between trials, or the one a trial started from).
    pub(crate) fn serving(&self) -> Backing {
        ORDER[usize::from(self.mode.load(Ordering::Relaxed) & !TRIAL)]
    }

    /// The last trial's figures, if one has ended.
    pub(crate) fn last(&self) -> Option<Trial> {
        self.last.lock().map(|t| t.clone()).unwrap_or(None)
    }

    /// Takes `backing` out of the trials (its read failed as unavailable).
    pub(crate) fn withdraw(&self, backing: Backing) {
        self.offered
            .fetch_and(!(1 << index(backing)), Ordering::Relaxed);
        let mode = self.mode.load(Ordering::Relaxed);
        if ORDER[usize::from(mode & !TRIAL)] == backing {
            self.mode.store(
                index(Backing::Pread) as u8 | (mode & TRIAL),
                Ordering::Relaxed,
            );
        }
    }

    /// The backing for the next read, and whether to time it for the trial. When a trial
    /// is due, `cached` is asked for the file's share in the page cache.
    #[inline]
    pub(crate) fn pick(&self, cached: impl FnOnce() -> Option<f64>) -> (Backing, bool) {
        let mode = self.mode.load(Ordering::Relaxed);
        if mode & TRIAL == 0 {
            let tick = TICK.get().wrapping_add(1);
            TICK.set(tick);
            let due = self.due.load(Ordering::Relaxed);
            if (due == 0 || tick.is_multiple_of(CHECK_EVERY)) && self.now() >= due {
                return self.begin(mode, cached);
            }
            return (ORDER[usize::from(mode)], false);
        }
        self.turn(mode)
    }

    /// A read during a trial (`mode` has [`TRIAL`]): the next turn, or the serving
    /// backing once every turn is handed out.
    fn turn(&self, mode: u8) -> (Backing, bool) {
        let i = self.handed.fetch_add(1, Ordering::Relaxed);
        let serving = ORDER[usize::from(mode & !TRIAL)];
        if i >= TRIAL_READS {
            return (serving, false);
        }
        let offered = self.offered.load(Ordering::Relaxed);
        let turn = i % offered.count_ones().max(1);
        match (0..3).filter(|b| offered & 1 << b != 0).nth(turn as usize) {
            Some(b) => (ORDER[b], true),
            None => (serving, false),
        }
    }

    /// Records a timed read of `backing` that took `took`; the read that completes the
    /// trial decides it.
    pub(crate) fn record(&self, backing: Backing, took: Duration) {
        let i = index(backing);
        self.ns[i].fetch_add(took.as_nanos() as u64, Ordering::Relaxed);
        self.reads[i].fetch_add(1, Ordering::Relaxed);
        if self.timed.fetch_add(1, Ordering::AcqRel) + 1 == TRIAL_READS {
            self.finish();
        }
    }

    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Begins a trial (unless another thread just did) and returns this read's backing:
    /// a resident file's map at once, untimed; else the first turn.
    fn begin(&self, mode: u8, cached: impl FnOnce() -> Option<f64>) -> (Backing, bool) {
        let serving = ORDER[usize::from(mode)];
        if self
            .mode
            .compare_exchange(mode, mode | TRIAL, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            return (serving, false);
        }
        self.due.store(u64::MAX, Ordering::Relaxed);
        let cached = cached();
        let offered = self.offered.load(Ordering::Relaxed);
        if cached.is_some_and(|c| c >= RESIDENT) || offered.count_ones() < 2 {
            let chosen = if offered & 1 << index(Backing::Mmap) != 0 {
                Backing::Mmap
            } else {
                Backing::Pread
            };
            self.settle(serving, chosen, cached, Vec::new(), 0.0);
            return (chosen, false);
        }
        self.cached
            .store(cached.map_or(u64::MAX, f64::to_bits), Ordering::Relaxed);
        for i in 0..3 {
            self.ns[i].store(0, Ordering::Relaxed);
            self.reads[i].store(0, Ordering::Relaxed);
        }
        self.timed.store(0, Ordering::Relaxed);
        self.handed.store(0, Ordering::Release);
        self.turn(mode | TRIAL)
    }

    /// Ends a timed trial: the backing to serve.
    fn finish(&self) {
        let offered = self.offered.load(Ordering::Relaxed);
        let mut means = [None; 3];
        let mut timed = Vec::new();
        for i in 0..3 {
            let n = self.reads[i].load(Ordering::Relaxed);
            if n > 0 && offered & 1 << i != 0 {
                let mean = self.ns[i].load(Ordering::Relaxed) as f64 / n as f64;
                means[i] = Some(mean);
                timed.push((ORDER[i], mean, n));
            }
        }
        let serving = self.serving();
        let bits = self.cached.load(Ordering::Relaxed);
        let cached = (bits != u64::MAX).then(|| f64::from_bits(bits));
        let noted = self.noted.swap(0, Ordering::Relaxed);
        let repeats = self.repeats.swap(0, Ordering::Relaxed) as f64 / noted.max(1) as f64;
        self.settle(
            serving,
            decide(serving, means, repeats),
            cached,
            timed,
            repeats,
        );
    }

    /// Serves `chosen` after a trial that began with `serving`, and sets the next one due:
    /// twice the last wait when the backing is kept, the first wait when it changed.
    fn settle(
        &self,
        serving: Backing,
        chosen: Backing,
        cached: Option<f64>,
        means: Vec<(Backing, f64, u64)>,
        repeats: f64,
    ) {
        let first = FIRST_RETRIAL.as_nanos() as u64;
        let number = self.trials.fetch_add(1, Ordering::Relaxed) + 1;
        let wait = if chosen == serving && number > 1 {
            (self.wait.load(Ordering::Relaxed) * 2).min(LAST_RETRIAL.as_nanos() as u64)
        } else if chosen == Backing::Direct {
            // Its reads leave the cache cold: whether they repeat pages is checked soon.
            first / 10
        } else {
            first
        };
        if let Ok(mut last) = self.last.lock() {
            *last = Some(Trial {
                cached,
                means,
                repeats,
                chosen,
                number,
            });
        }
        self.wait.store(wait, Ordering::Relaxed);
        self.due.store(self.now() + wait, Ordering::Relaxed);
        self.mode.store(index(chosen) as u8, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fastest_serves_but_only_beyond_the_margins() {
        let p = Backing::Pread;
        let m = Backing::Mmap;
        let d = Backing::Direct;
        // A map five times faster than pread replaces it.
        assert_eq!(decide(p, [Some(1500.0), Some(300.0), None], 0.0), m);
        // Within the switch margin the serving backing stays.
        assert_eq!(decide(p, [Some(1000.0), Some(950.0), None], 0.0), p);
        assert_eq!(decide(m, [Some(950.0), Some(1000.0), None], 0.0), m);
        // O_DIRECT 1.05x faster than pread is not enough; 1.5x is.
        assert_eq!(
            decide(p, [Some(3300.0), Some(3400.0), Some(3150.0)], 0.0),
            p
        );
        assert_eq!(
            decide(p, [Some(3300.0), Some(3400.0), Some(2200.0)], 0.0),
            d
        );
        // Serving O_DIRECT, a cached backing that catches up takes over.
        assert_eq!(decide(d, [Some(3000.0), None, Some(2800.0)], 0.0), p);
        // Nothing timed keeps the serving one.
        assert_eq!(decide(m, [None, None, None], 0.0), m);
        // The serving backing not timed (withdrawn): the best timed.
        assert_eq!(decide(d, [Some(2000.0), Some(1000.0), None], 0.0), m);
    }

    #[test]
    fn repeated_pages_count_for_the_cache_against_o_direct() {
        let (p, d) = (Backing::Pread, Backing::Direct);
        // zram, cold: pread 4.8 µs, O_DIRECT 3.1 µs. With no page read twice O_DIRECT
        // serves; once 30% of its reads repeat a page, the cache would have done better.
        let times = [Some(4800.0), None, Some(3100.0)];
        assert_eq!(decide(p, times, 0.0), d);
        assert_eq!(decide(d, times, 0.1), d);
        assert_eq!(decide(d, times, 0.3), p);
        // The notes: a read of a page read before is a repeat.
        let m = Measured::new(p, &[p, d], 64 << 12);
        m.note(5 << 12);
        m.note((5 << 12) + 100);
        m.note(6 << 12);
        m.note(1 << 40); // past the end: not noted
        assert_eq!(m.noted.load(Ordering::Relaxed), 3);
        assert_eq!(m.repeats.load(Ordering::Relaxed), 1);
        assert!(m.noting(d) && !m.noting(p));
        // Without O_DIRECT offered there is nothing to note.
        assert!(!Measured::new(p, &[p], 64 << 12).noting(d));
    }

    /// Answers a trial's question about the page cache.
    fn cold() -> Option<f64> {
        Some(0.02)
    }

    /// Runs one timed trial's reads, with mmap-random at 0.3 µs and the others 1.5 µs.
    fn timed_trial(m: &Measured) -> [u32; 3] {
        let mut turns = [0; 3];
        for _ in 0..TRIAL_READS {
            let (b, timed) = m.pick(cold);
            assert!(timed);
            turns[index(b)] += 1;
            let ns = if b == Backing::Mmap { 300 } else { 1500 };
            m.record(b, Duration::from_nanos(ns));
        }
        turns
    }

    #[test]
    fn a_trial_takes_turns_then_serves_the_faster_and_waits_longer_after_a_keep() {
        let m = Measured::new(Backing::Pread, &[Backing::Pread, Backing::Mmap], 1 << 30);
        assert_eq!(timed_trial(&m), [TRIAL_READS / 2, TRIAL_READS / 2, 0]);
        assert_eq!(m.serving(), Backing::Mmap);
        let last = m.last().unwrap();
        assert_eq!((last.number, last.chosen), (1, Backing::Mmap));
        assert!(
            last.to_string()
                .contains("2% in the page cache; timed pread 1.5 µs, mmap-random 0.3 µs"),
            "{last}"
        );
        assert_eq!(m.pick(cold), (Backing::Mmap, false));
        let first = FIRST_RETRIAL.as_nanos() as u64;
        assert_eq!(m.wait.load(Ordering::Relaxed), first);
        // Due now: a check begins a trial, which keeps the map and doubles the wait.
        m.due.store(1, Ordering::Relaxed);
        for _ in 0..CHECK_EVERY {
            match m.pick(cold) {
                // The read that began it is its first turn.
                (b, true) => {
                    assert_eq!(b, Backing::Pread);
                    m.record(b, Duration::from_nanos(1500));
                    break;
                }
                other => assert_eq!(other, (Backing::Mmap, false)),
            }
        }
        assert!(m.mode.load(Ordering::Relaxed) & TRIAL != 0);
        for _ in 1..TRIAL_READS {
            let (b, _) = m.pick(cold);
            let ns = if b == Backing::Mmap { 300 } else { 1500 };
            m.record(b, Duration::from_nanos(ns));
        }
        assert_eq!(m.serving(), Backing::Mmap);
        assert_eq!(m.last().unwrap().number, 2);
        assert_eq!(m.wait.load(Ordering::Relaxed), 2 * first);
    }

    #[test]
    fn a_file_in_the_page_cache_is_mapped_untimed() {
        let m = Measured::new(
            Backing::Pread,
            &[Backing::Pread, Backing::Mmap, Backing::Direct],
            1 << 30,
        );
        assert_eq!(m.pick(|| Some(0.97)), (Backing::Mmap, false));
        assert_eq!(m.serving(), Backing::Mmap);
        let last = m.last().unwrap();
        assert!(last.means.is_empty());
        assert_eq!(
            last.to_string(),
            "trial 1: 97% in the page cache; mmap-random serves, untimed"
        );
        // Without a map (no slot), pread.
        let m = Measured::new(Backing::Pread, &[Backing::Pread, Backing::Direct], 1 << 30);
        assert_eq!(m.pick(|| Some(1.0)), (Backing::Pread, false));
    }

    #[test]
    fn one_backing_needs_no_trial_and_a_withdrawn_one_is_not_tried() {
        let m = Measured::new(Backing::Pread, &[Backing::Pread], 1 << 30);
        assert_eq!(m.pick(cold), (Backing::Pread, false));
        assert_eq!(m.pick(cold), (Backing::Pread, false));
        let m = Measured::new(Backing::Direct, &[Backing::Pread, Backing::Direct], 1 << 30);
        m.withdraw(Backing::Direct);
        assert_eq!(m.serving(), Backing::Pread);
        for _ in 0..TRIAL_READS {
            let (b, _) = m.pick(cold);
            assert_eq!(b, Backing::Pread);
        }
    }
}
