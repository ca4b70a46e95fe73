//! The measured backing of [`super::RandomAccessFile::open`]: it asks the page cache and
//! times its own reads.
//!
//! **How**: at each trial the file's share in the page cache is asked (`cachestat`), and
//! the next [`TRIAL_READS`] reads (over all threads) take turns among `pread`, the map and
//! (offered to a file not cached at open) `O_DIRECT`; the lowest time per read serves. The
//! map's time is not its turns' mean but what it would cost serving from now on, its page
//! faults included ([`super::map_cost`]): a fresh map's turns are nearly all first
//! touches, while most of the reads it would serve may not be. A cached file is trialed
//! like any other (it was mapped untimed until 28 Nov 2026: a plain map followed on a warm
//! 4 GiB file read at random at 0.45× a `pread` loop, issue 48), so whatever a profile or
//! the rule starts with, the call's own measurement decides. Trials come back, first
//! [`FIRST_RETRIAL`] later, then twice as long after each that kept the backing (up to
//! [`LAST_RETRIAL`]), so a file that warms or is evicted while open is followed. While the
//! map lost only on the faults it would have to take, its estimate is worked out again
//! (from the blocks the reads touched and what the trials measured: no turns) once the
//! reads since open could have paid for them (and at least twice the reads of the last
//! look), and a trial follows when it would win: a hot set gets its map within a few
//! thousand reads. A thread looks at the clock and the read count once in [`CHECK_EVERY`]
//! of its reads of the file; between trials a read costs a few relaxed atomic operations
//! more (the read count, the block mark).
//!
//! **The margins**: a challenger replaces the serving backing only when faster by
//! [`SWITCH_MARGIN`] (two backings within noise do not flip back and forth). `O_DIRECT`
//! leaves nothing in the page cache, so it is judged against what the cache would have
//! made of its reads: a trial's turns and the reads while `O_DIRECT` serves are noted
//! (they mark their page), and the share of them on a page noted before (which the cache
//! would have served from memory) is taken off the cached backings' times before the
//! comparison, with
//! [`DIRECT_MARGIN`] on top; after a switch to `O_DIRECT` the next trial comes ten times
//! sooner. A skewed workload (a hot set) repeats pages within the first trials and stays
//! cached; a uniform one over a file that fits in memory repeats more the longer it runs,
//! and goes back to the cache once the repeats outweigh `O_DIRECT`'s lead.
//!
//! **Where it starts**: the backing of the machine profile or the residency rule
//! ([`super::auto`]) is the one a trial keeps within the margin; the first read begins the
//! first trial. **Costs**: the block marks take 8 KiB at most, the page marks of the noted
//! reads (for a file offered `O_DIRECT`) a bit per 4 KiB page (128 KiB for 4 GiB); a
//! trial's map turns make four `getrusage` calls each and a few a `pagemap` read.
//! Evidence: docs/findings/random.md.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::Backing;
use super::map_cost::{Bits, MapEstimate, MapModel, MapTurn};

/// The share of the file in the page cache at which a trial charges the map the faults
/// it would take serving ([`super::map_cost`]): what `count` calls warm. Below it the map's
/// turns wait on the device, and their mean time stands (with `O_DIRECT`'s rules).
pub const RESIDENT: f64 = super::auto::RESIDENT;
/// Reads per trial, shared in turn among the backings.
pub const TRIAL_READS: u32 = 96;
/// The first trial after the one at open.
pub const FIRST_RETRIAL: Duration = Duration::from_millis(100);
/// The longest wait between trials.
pub const LAST_RETRIAL: Duration = Duration::from_secs(10);
/// A thread checks whether a trial is due once in this many of its reads of a file.
pub const CHECK_EVERY: u64 = 256;
/// How much faster a challenger must be to replace the serving backing.
pub const SWITCH_MARGIN: f64 = 1.1;
/// How much faster `O_DIRECT` must be than the best cached backing (its time less the
/// share of repeated pages) to serve.
pub const DIRECT_MARGIN: f64 = 1.1;

/// The backings in the order of their index in a trial's tallies.
const ORDER: [Backing; 3] = [Backing::Pread, Backing::Mmap, Backing::Direct];
/// Set in `mode` while a trial runs.
const TRIAL: u8 = 0x80;
/// The map's estimate is looked at again, without a trial, once the reads grew by at
/// least a quarter (a trial: doubled).
const LOOK_STEP: u64 = 4;
/// Counters of a file's reads, one per group of threads, so that threads reading one file
/// do not write one cache line.
const SHARDS: usize = 8;

/// A read counter on a cache line of its own.
#[repr(align(64))]
#[derive(Default)]
struct Shard(AtomicU64);

thread_local! {
    /// This thread's read counter (an index into a file's shards).
    static SHARD: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
}
static NEXT_SHARD: AtomicUsize = AtomicUsize::new(0);

/// This thread's shard, handed out in turn at its first read.
fn shard() -> usize {
    SHARD.with(|s| {
        if s.get() == usize::MAX {
            s.set(NEXT_SHARD.fetch_add(1, Ordering::Relaxed) % SHARDS);
        }
        s.get()
    })
}

fn index(backing: Backing) -> usize {
    ORDER.iter().position(|&b| b == backing).unwrap_or(0)
}

/// What the last trial measured: mean nanoseconds per read of each backing it tried.
#[derive(Clone, Debug, PartialEq)]
pub struct Trial {
    /// The file's share in the page cache when the trial began, if known.
    pub cached: Option<f64>,
    /// `(backing, mean ns per read, reads timed)` for each backing timed (none when only
    /// one backing could serve).
    pub means: Vec<(Backing, f64, u64)>,
    /// What the map would cost serving from now on, faults included, when its turns
    /// faulted (else its turns' mean stands).
    pub map: Option<MapEstimate>,
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
        if let Some(map) = &self.map {
            write!(f, "; {map}")?;
        }
        if self.means.iter().any(|(b, _, _)| *b == Backing::Direct) {
            write!(
                f,
                "; {:.0}% of the reads repeated a page",
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
/// `ORDER[i]` (`None` when not tried; the map's is its estimate), `repeats` the share of
/// reads that read a page read before (which a cached backing serves from memory),
/// `serving` the backing before it.
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
    /// Whether that was [`RESIDENT`] or more: the map's turns are charged its faults.
    warm: AtomicBool,
    /// When the next trial is due, in ns since `epoch`.
    due: AtomicU64,
    /// The read count at which the map's estimate is due again (`u64::MAX`: never).
    due_reads: AtomicU64,
    /// The serving backing's mean ns per read in the last trial (`f64` bits), which the
    /// map must beat by the margin.
    held: AtomicU64,
    /// The wait after the next trial if it keeps the backing.
    wait: AtomicU64,
    epoch: Instant,
    last: Mutex<Option<Trial>>,
    trials: AtomicU64,
    /// The file's reads since open, by groups of threads.
    counts: [Shard; SHARDS],
    /// The blocks every read touched since open (when a trial can take place: two
    /// backings offered), for the map's estimate.
    blocks: Bits,
    /// The pages the noted reads touched since open, for the repeat share (when
    /// `O_DIRECT` is offered).
    pages: Bits,
    /// Reads noted since the last trial ended, and those of a page read before.
    noted: AtomicU64,
    repeats: AtomicU64,
    /// The map turns and what they measured.
    map: Mutex<MapModel>,
}

impl std::fmt::Debug for Measured {
    /// The serving backing and the last trial (not the page marks, which can be large).
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
        let zero = || [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];
        Measured {
            mode: AtomicU8::new(index(serving) as u8),
            offered: AtomicU8::new(bits),
            handed: AtomicU32::new(0),
            timed: AtomicU32::new(0),
            ns: zero(),
            reads: zero(),
            cached: AtomicU64::new(u64::MAX),
            warm: AtomicBool::new(false),
            // Due at once: the first read's thread begins the first trial.
            due: AtomicU64::new(0),
            due_reads: AtomicU64::new(u64::MAX),
            held: AtomicU64::new(f64::INFINITY.to_bits()),
            wait: AtomicU64::new(FIRST_RETRIAL.as_nanos() as u64),
            epoch: Instant::now(),
            last: Mutex::new(None),
            trials: AtomicU64::new(0),
            counts: Default::default(),
            blocks: Bits::blocks(len, bits.count_ones() >= 2),
            // Only O_DIRECT's judgement needs them (a 1 TiB file's take 32 MiB).
            pages: Bits::pages(len, offered.contains(&Backing::Direct)),
            noted: AtomicU64::new(0),
            repeats: AtomicU64::new(0),
            map: Mutex::new(MapModel::default()),
        }
    }

    /// The file's reads so far (over all threads).
    fn reads_so_far(&self) -> u64 {
        self.counts
            .iter()
            .map(|c| c.0.load(Ordering::Relaxed))
            .sum()
    }

    /// Counts a read on this thread's shard; the shard's count after it.
    #[inline]
    fn count(&self) -> u64 {
        let c = &self.counts[shard()].0;
        // Not an atomic add: a thread owns its shard but for the rare threads that share
        // one, where a lost count is harmless.
        let n = c.load(Ordering::Relaxed) + 1;
        c.store(n, Ordering::Relaxed);
        n
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

    /// The backing for the next read, at `offset`, and whether to time it for the trial.
    /// When a trial is due, `cached` is asked for the file's share in the page cache.
    #[inline]
    pub(crate) fn pick(
        &self,
        offset: u64,
        cached: impl FnOnce() -> Option<f64>,
    ) -> (Backing, bool) {
        let n = self.count();
        self.blocks.mark(offset);
        let mode = self.mode.load(Ordering::Relaxed);
        let (backing, timed) = if mode & TRIAL != 0 {
            self.turn(mode)
        } else {
            let due = self.due.load(Ordering::Relaxed);
            if (due == 0 || n.is_multiple_of(CHECK_EVERY)) && self.now() >= due {
                self.begin(mode, cached)
            } else if n.is_multiple_of(CHECK_EVERY)
                && self.reads_so_far() >= self.due_reads.load(Ordering::Relaxed)
            {
                self.recheck(mode, cached)
            } else {
                (ORDER[usize::from(mode)], false)
            }
        };
        // A trial's turns, and O_DIRECT's reads, are noted: they mark their page and count
        // for the repeat share.
        if (timed || backing == Backing::Direct)
            && let Some(seen) = self.pages.mark(offset)
        {
            self.noted.fetch_add(1, Ordering::Relaxed);
            if seen {
                self.repeats.fetch_add(1, Ordering::Relaxed);
            }
        }
        (backing, timed)
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

    /// Before a map turn of a trial on a warm file: an offset to time a fault-free probe
    /// copy at (one an earlier turn faulted in), and whether to ask how much a fault of
    /// this turn maps; `None` on a file that is not warm (a plain timed turn).
    pub(crate) fn map_turn_plan(&self) -> Option<(Option<u64>, bool)> {
        if !self.warm.load(Ordering::Relaxed) {
            return None;
        }
        let mut m = self.map.lock().ok()?;
        Some((m.probe(), m.turns.wants_run()))
    }

    /// Records a timed map turn, its faults and probe.
    pub(crate) fn record_map(&self, turn: MapTurn) {
        if let Ok(mut m) = self.map.lock() {
            m.add(turn);
        }
        self.record(Backing::Mmap, Duration::from_nanos(turn.ns));
    }

    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// When the reads have reached the count at which the map could pay for its faults:
    /// the estimate again, from the blocks touched since and what the trials measured (no
    /// turns: the bitmap's count only); a trial when the map would now win, else the next
    /// count due.
    fn recheck(&self, mode: u8, cached: impl FnOnce() -> Option<f64>) -> (Backing, bool) {
        let serving = ORDER[usize::from(mode)];
        let due_reads = self.due_reads.load(Ordering::Relaxed);
        // One thread rechecks.
        if due_reads == u64::MAX
            || self
                .due_reads
                .compare_exchange(due_reads, u64::MAX, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
        {
            return (serving, false);
        }
        let held = f64::from_bits(self.held.load(Ordering::Relaxed));
        let reads = self.reads_so_far();
        let estimate = match self.map.lock() {
            Ok(m) => m.estimate(&self.blocks, reads),
            Err(_) => None,
        };
        match estimate {
            // The map would win now, or its fault-free time is to be measured again.
            Some(e) if e.ns < held || e.mapped_ns >= held => self.begin(mode, cached),
            Some(e) => {
                // A look costs a scan of the 8 KiB block map: looks may come often.
                let next = e.reads_until_it_pays(serving, held, LOOK_STEP);
                self.due_reads
                    .store(next.unwrap_or(u64::MAX), Ordering::Relaxed);
                (serving, false)
            }
            None => (serving, false),
        }
    }

    /// Begins a trial (unless another thread just did) and returns this read's backing:
    /// the first turn, or, when only one backing is left, that one, untimed.
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
        self.due_reads.store(u64::MAX, Ordering::Relaxed);
        let cached = cached();
        let offered = self.offered.load(Ordering::Relaxed);
        if offered.count_ones() < 2 {
            let chosen = (0..3)
                .find(|&i| offered & 1 << i != 0)
                .map_or(serving, |i| ORDER[i]);
            let trial = Trial {
                cached,
                means: Vec::new(),
                map: None,
                repeats: 0.0,
                chosen,
                number: 0,
            };
            self.settle(serving, trial, None);
            return (chosen, false);
        }
        self.cached
            .store(cached.map_or(u64::MAX, f64::to_bits), Ordering::Relaxed);
        self.warm
            .store(cached.is_some_and(|c| c >= RESIDENT), Ordering::Relaxed);
        for i in 0..3 {
            self.ns[i].store(0, Ordering::Relaxed);
            self.reads[i].store(0, Ordering::Relaxed);
        }
        if let Ok(mut m) = self.map.lock() {
            m.start();
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
        // On a warm file the map's time is its estimate, faults included. The estimate
        // errs against the map (its fault-free reads are timed between other backings'
        // reads, the page tables' cache lines cold: 0.8 µs a read on a warm 1 GiB file in
        // trials, 0.6 µs serving), so a map that is not serving needs no margin to take
        // over; once it serves, its turns time it serving, and the margin holds.
        let warm = self.warm.load(Ordering::Relaxed);
        let map = match (means[index(Backing::Mmap)], self.map.lock()) {
            (Some(_), Ok(mut m)) if warm => m.finish(&self.blocks, self.reads_so_far()),
            _ => None,
        };
        if let Some(estimate) = &map {
            let margin = if self.serving() == Backing::Mmap {
                1.0
            } else {
                SWITCH_MARGIN
            };
            means[index(Backing::Mmap)] = Some(estimate.ns / margin);
        }
        let serving = self.serving();
        let bits = self.cached.load(Ordering::Relaxed);
        let cached = (bits != u64::MAX).then(|| f64::from_bits(bits));
        let noted = self.noted.swap(0, Ordering::Relaxed);
        let repeats = self.repeats.swap(0, Ordering::Relaxed) as f64 / noted.max(1) as f64;
        let chosen = decide(serving, means, repeats);
        let held = means[index(chosen)];
        self.held
            .store(held.unwrap_or(f64::INFINITY).to_bits(), Ordering::Relaxed);
        let due_reads = map
            .as_ref()
            .and_then(|e| e.reads_until_it_pays(chosen, held?, 1));
        let trial = Trial {
            cached,
            means: timed,
            map,
            repeats,
            chosen,
            number: 0,
        };
        self.settle(serving, trial, due_reads);
    }

    /// Serves the `trial`'s choice after a trial that began with `serving`, numbers it and
    /// sets the next one due: twice the last wait when the backing is kept, the first wait
    /// when it changed; or at `due_reads` reads, if that comes first.
    fn settle(&self, serving: Backing, mut trial: Trial, due_reads: Option<u64>) {
        let chosen = trial.chosen;
        let first = FIRST_RETRIAL.as_nanos() as u64;
        let number = self.trials.fetch_add(1, Ordering::Relaxed) + 1;
        trial.number = number;
        let wait = if chosen == serving && number > 1 {
            (self.wait.load(Ordering::Relaxed) * 2).min(LAST_RETRIAL.as_nanos() as u64)
        } else if chosen == Backing::Direct {
            // Its reads leave the cache cold: whether they repeat pages is checked soon.
            first / 10
        } else {
            first
        };
        if let Ok(mut last) = self.last.lock() {
            *last = Some(trial);
        }
        self.wait.store(wait, Ordering::Relaxed);
        self.due_reads
            .store(due_reads.unwrap_or(u64::MAX), Ordering::Relaxed);
        self.due.store(self.now() + wait, Ordering::Relaxed);
        self.mode.store(index(chosen) as u8, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ops::Range;

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
        // The notes: a trial's turn on a page read before is a repeat.
        let m = Measured::new(p, &[p, d], 64 << 12);
        assert!(m.pick(5 << 12, cold).1);
        assert!(m.pick((5 << 12) + 100, cold).1);
        assert!(m.pick(6 << 12, cold).1);
        assert!(m.pick(1 << 40, cold).1); // past the end: not noted
        assert_eq!(m.noted.load(Ordering::Relaxed), 3);
        assert_eq!(m.repeats.load(Ordering::Relaxed), 1);
        // One backing: no trial, nothing to mark.
        assert!(Measured::new(p, &[p], 64 << 12).pages.mark(0).is_none());
    }

    /// Answers a trial's question about the page cache.
    fn cold() -> Option<f64> {
        Some(0.02)
    }

    /// Runs one timed trial's reads, with mmap-random at 0.3 µs and the others 1.5 µs.
    fn timed_trial(m: &Measured) -> [u32; 3] {
        let mut turns = [0; 3];
        for _ in 0..TRIAL_READS {
            let (b, timed) = m.pick(0, cold);
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
        // A file mostly not in the page cache: the map's turns are plain timed reads.
        assert!(m.map_turn_plan().is_none() && m.last().unwrap().map.is_none());
        assert_eq!(m.serving(), Backing::Mmap);
        let last = m.last().unwrap();
        assert_eq!((last.number, last.chosen), (1, Backing::Mmap));
        assert!(
            last.to_string()
                .contains("2% in the page cache; timed pread 1.5 µs, mmap-random 0.3 µs"),
            "{last}"
        );
        assert_eq!(m.pick(0, cold), (Backing::Mmap, false));
        let first = FIRST_RETRIAL.as_nanos() as u64;
        assert_eq!(m.wait.load(Ordering::Relaxed), first);
        // Due now: a check begins a trial, which keeps the map and doubles the wait.
        m.due.store(1, Ordering::Relaxed);
        for _ in 0..CHECK_EVERY {
            match m.pick(0, cold) {
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
            let (b, _) = m.pick(0, cold);
            let ns = if b == Backing::Mmap { 300 } else { 1500 };
            m.record(b, Duration::from_nanos(ns));
        }
        assert_eq!(m.serving(), Backing::Mmap);
        assert_eq!(m.last().unwrap().number, 2);
        assert_eq!(m.wait.load(Ordering::Relaxed), 2 * first);
    }

    #[test]
    fn a_file_in_the_page_cache_is_timed_like_any_other() {
        let all = [Backing::Pread, Backing::Mmap, Backing::Direct];
        let m = Measured::new(Backing::Mmap, &all, 1 << 30);
        // The first read begins a timed trial, whatever the cache holds.
        assert!(m.pick(0, || Some(0.97)).1);
        // Without a map (no slot), pread, untimed.
        let m = Measured::new(Backing::Pread, &[Backing::Pread], 1 << 30);
        assert_eq!(m.pick(0, || Some(1.0)), (Backing::Pread, false));
        assert_eq!(
            m.last().unwrap().to_string(),
            "trial 1: 100% in the page cache; pread serves, untimed"
        );
    }

    fn warm() -> Option<f64> {
        Some(1.0)
    }

    /// Runs a trial's turns `turns` at `offset(i)` for the i-th: pread at 1.2 µs; the
    /// map at 4.5 µs with a fault (its probes 0.5 µs, a fault mapping 16 pages) or,
    /// `clean`, 0.5 µs without.
    fn map_trial(m: &Measured, turns: Range<u64>, offset: impl Fn(u64) -> u64, clean: bool) {
        for i in turns {
            let (b, timed) = m.pick(offset(i), warm);
            assert!(timed, "read {i} of the trial");
            if b == Backing::Mmap {
                let (probe, wants_run) = m.map_turn_plan().expect("a warm trial");
                m.record_map(MapTurn {
                    ns: if clean { 500 } else { 4500 },
                    faults: u64::from(!clean),
                    offset: offset(i),
                    probe_ns: probe.map(|_| 500),
                    run_pages: (wants_run && !clean).then_some(16),
                });
            } else {
                m.record(b, Duration::from_nanos(1200));
            }
        }
    }

    #[test]
    fn a_map_that_lost_on_its_faults_is_tried_again_once_the_reads_could_pay_for_them() {
        let m = Measured::new(Backing::Mmap, &[Backing::Pread, Backing::Mmap], 1 << 32);
        // Trial 1, scattered reads 16 MiB apart: the map's turns all fault, and a map
        // serving from now on would fault at every read: 0.5 + 4.0 µs. pread serves,
        // though a profile started the map.
        map_trial(&m, 0..TRIAL_READS.into(), |i| i << 24, false);
        let last = m.last().unwrap();
        assert_eq!(last.chosen, Backing::Pread);
        let map = last.map.clone().unwrap();
        assert_eq!(
            (map.turns, map.faulted, map.units, map.reads),
            (48, 48, 96, 96)
        );
        assert_eq!(
            (map.mapped_ns, map.fault_ns, map.ns),
            (500.0, 4000.0, 4500.0)
        );
        assert!(
            last.to_string().contains(
                "timed pread 1.2 µs, mmap-random 4.5 µs per read; the map: 48 of 48 turns \
                 faulted (4.0 µs a fault; 0.5 µs a read once mapped, 0 fault-free turns and 47 \
                 probes); a fault maps 64.0 KiB, and the 96 reads so far touched 96 such \
                 blocks: 4.5 µs a read over as many reads again: pread serves"
            ),
            "{last}"
        );
        // Once mapped it would win (0.5 < 1.2 µs): due when 4.0 µs × 96 blocks could have
        // been paid by the 0.7 µs a read it would save.
        assert_eq!(m.due_reads.load(Ordering::Relaxed), 549);
        // A hot set of four blocks from now on: no trial until the reads reach the count
        // due (checked every CHECK_EVERY reads), then trials whose map turns no longer
        // fault, until the hot set's few blocks weigh little enough against the reads.
        let mut n = TRIAL_READS as u64;
        while m.serving() == Backing::Pread {
            let due = m.due_reads.load(Ordering::Relaxed);
            assert!(due < u64::MAX, "no trial due by the count: {:?}", m.last());
            while m.mode.load(Ordering::Relaxed) & TRIAL == 0 {
                assert!(n < 2 * due, "no trial by read {n}, due at {due}");
                n += 1;
                let (b, timed) = m.pick((n % 4) << 16, warm);
                if timed {
                    // The read that began the trial is its first turn.
                    m.record(b, Duration::from_nanos(1200));
                } else {
                    assert_eq!(b, Backing::Pread);
                }
            }
            assert!(n >= due, "{n}");
            map_trial(&m, 1..TRIAL_READS.into(), |i| (i % 4) << 16, true);
            n += u64::from(TRIAL_READS) - 1;
        }
        let last = m.last().unwrap();
        assert_eq!(last.chosen, Backing::Mmap, "{last}");
        assert!(last.number <= 5 && n < 10_000, "{n} reads, {last}");
        let map = last.map.unwrap();
        assert_eq!(map.units, 99); // the first block was read in trial 1 too
        assert!(map.ns < 1200.0, "{map:?}");
        // Serving, the map asks no trial by the count.
        assert_eq!(m.due_reads.load(Ordering::Relaxed), u64::MAX);
    }

    #[test]
    fn one_backing_needs_no_trial_and_a_withdrawn_one_is_not_tried() {
        let m = Measured::new(Backing::Pread, &[Backing::Pread], 1 << 30);
        assert_eq!(m.pick(0, cold), (Backing::Pread, false));
        assert_eq!(m.pick(0, cold), (Backing::Pread, false));
        let m = Measured::new(Backing::Direct, &[Backing::Pread, Backing::Direct], 1 << 30);
        m.withdraw(Backing::Direct);
        assert_eq!(m.serving(), Backing::Pread);
        for _ in 0..TRIAL_READS {
            let (b, _) = m.pick(0, cold);
            assert_eq!(b, Backing::Pread);
        }
    }
}
