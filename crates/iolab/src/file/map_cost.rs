//! What a map costs a `RandomAccessFile` read in this process, faults included, for the
//! trials of [`super::measured`].
//!
//! **The problem**: a map of a file in the page cache serves a read by a copy, with no
//! system call — once the page is in this process's page tables. Until then each first
//! touch is a page fault, and a fault maps only what the kernel maps around it: on this
//! kernel 16 pages of a file cached in single pages (the fault-around window, 64 KiB), a
//! whole 2 MiB folio of a file cached in large ones. Read at random over a 4 GiB warm file
//! cached in single pages, a fresh plain map faulted 62 822 times in 200 000 reads and read
//! at 0.45× a `pread` loop in issue 48, while a small hot set costs a few faults and then
//! reads faster than `pread`. Timing a trial's turns alone measures neither: a fresh
//! map's turns are nearly all faults, while the reads it would serve for the rest of the
//! run mostly would not be.
//!
//! **What is measured**: each map turn of a trial counts its thread's minor faults around
//! the copy (`getrusage`), so the turns split into faulted and fault-free. A fault-free
//! read's time comes from the fault-free turns, else from a probe: a copy, before the turn,
//! from a page an earlier turn faulted in (mapped; from an earlier trial when there is one,
//! so out of the CPU's caches). A fault's time is what the faulted turns took beyond that,
//! per fault. After a turn's fault, `/proc/self/pagemap` says how much the fault mapped
//! (the run of mapped pages around it: the fault unit). Every read of the file marks its
//! block (64 KiB, the fault-around window, for files up to 4 GiB; larger beyond, so that
//! the bitmap stays at 8 KiB, in the CPU's caches) in a bitmap ([`Bits::blocks`]).
//!
//! **The estimate**: a map that serves from now on reads at the fault-free time plus a
//! fault for each fault unit the reads touch; taking the reads so far as the measure of
//! what is to come (as many reads again, over as many units), that is
//! `mapped + fault × units touched ÷ reads`. It is the ski-rental rule: the map's faults
//! are bought once, and it is taken once the reads have shown they would pay for them.
//! Scattered reads over a big file touch a new unit at almost every read for a long time;
//! a hot set stops touching new ones at once. A unit smaller than a block (a fault that
//! maps single pages) is counted as if the reads had touched every unit of each block they
//! touched (at most one a read): the estimate errs against the map there. Marking each
//! read's 4 KiB page instead cost 3% of a `pread` of a cached block: a 4 GiB file's 128 KiB
//! page map is rarely in the CPU's caches, and the system call waits for the load.
//!
//! **Limits**: the fault unit is measured where a turn faulted; a file partly cached, or
//! reclaim that unmaps pages, makes the map fault more than estimated (the next trials see
//! it in the fault-free times and fault counts they measure). Without `pagemap`, a fault is
//! taken to map one page (the map is charged the most). Evidence: docs/findings/random.md.

use std::sync::atomic::{AtomicU64, Ordering};

use super::Backing;

/// The page size of the page marks.
pub const PAGE_SHIFT: u32 = 12;
/// The smallest block of the block marks: 64 KiB, the kernel's fault-around window.
const BLOCK_SHIFT: u32 = 16;
/// The most bits of the block map: 65 536, 8 KiB.
const BLOCK_BITS: u64 = 1 << 16;
/// Probe offsets kept from the map turns that faulted: one for each map turn of a trial
/// with `pread` and the map taking turns, so that no probe reads a page twice (a page read
/// again is in the CPU's caches, and its copy is faster than a read's).
const PROBES: usize = 48;

/// One bit per block of `1 << shift` bytes of a file.
#[derive(Debug)]
pub(crate) struct Bits {
    words: Box<[AtomicU64]>,
    shift: u32,
}

impl Bits {
    /// Bits for the `1 << shift`-byte blocks of a file of `len` bytes; none when not
    /// `enabled`.
    pub(crate) fn new(len: u64, shift: u32, enabled: bool) -> Bits {
        let words = if enabled {
            usize::try_from(len.div_ceil(1 << shift).div_ceil(64)).unwrap_or(0)
        } else {
            0
        };
        Bits {
            words: (0..words).map(|_| AtomicU64::new(0)).collect(),
            shift,
        }
    }

    /// Bits for the 4 KiB pages of a file of `len` bytes.
    pub(crate) fn pages(len: u64, enabled: bool) -> Bits {
        Bits::new(len, PAGE_SHIFT, enabled)
    }

    /// Bits for the blocks of a file of `len` bytes: 64 KiB, or larger for a file over
    /// 4 GiB, so that there are at most [`BLOCK_BITS`].
    pub(crate) fn blocks(len: u64, enabled: bool) -> Bits {
        let per_bit = len.div_ceil(BLOCK_BITS).max(1);
        let shift = (u64::BITS - (per_bit - 1).leading_zeros()).max(BLOCK_SHIFT);
        Bits::new(len, shift, enabled)
    }

    /// Marks the block of `offset`; whether it was marked before (`None`: past the end or
    /// not tracked). A load and, for a block not marked yet, a store: not an atomic `or`,
    /// whose lock would wait for the word's cache line; two threads marking one word at
    /// once may lose a mark, which only makes an estimate a little kinder to the map.
    #[inline]
    pub(crate) fn mark(&self, offset: u64) -> Option<bool> {
        let block = offset >> self.shift;
        let word = self.words.get(usize::try_from(block / 64).ok()?)?;
        let bit = 1u64 << (block % 64);
        let before = word.load(Ordering::Relaxed);
        if before & bit == 0 {
            word.store(before | bit, Ordering::Relaxed);
        }
        Some(before & bit != 0)
    }

    /// How many aligned groups of `per` blocks (a power of two) hold a marked one.
    fn groups(&self, per: usize) -> u64 {
        let words = self.words.iter().map(|w| w.load(Ordering::Relaxed));
        if per >= 64 {
            let all: Vec<u64> = words.collect();
            return all
                .chunks(per / 64)
                .filter(|c| c.iter().any(|&w| w != 0))
                .count() as u64;
        }
        // Fold each `per`-bit lane into its lowest bit, then count the lanes.
        let mut lowest = 0u64;
        for i in (0..64).step_by(per) {
            lowest |= 1 << i;
        }
        words
            .map(|w| {
                let mut x = w;
                let mut s = 1;
                while s < per {
                    x |= x >> s;
                    s <<= 1;
                }
                u64::from((x & lowest).count_ones())
            })
            .sum()
    }

    /// How many aligned units of `unit_pages` pages (rounded down to a power of two, at
    /// most 4096) the marked blocks hold, and whether that is exact: for a unit smaller
    /// than a block, every unit of a marked block counts (at most `reads` in all).
    pub(crate) fn units(&self, unit_pages: usize, reads: u64) -> (u64, bool) {
        let unit = prev_power_of_two(unit_pages.clamp(1, 4096));
        let block_pages = 1usize << (self.shift.saturating_sub(PAGE_SHIFT));
        if unit >= block_pages {
            (self.groups(unit / block_pages), true)
        } else {
            let per_block = (block_pages / unit) as u64;
            ((self.groups(1) * per_block).min(reads), false)
        }
    }
}

fn prev_power_of_two(n: usize) -> usize {
    1 << (usize::BITS - 1 - n.max(1).leading_zeros())
}

/// One map turn of a trial, as [`super::RandomAccessFile`] measured it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct MapTurn {
    /// The copy's time.
    pub(crate) ns: u64,
    /// Minor faults the thread took during it.
    pub(crate) faults: u64,
    /// Where it read.
    pub(crate) offset: u64,
    /// A fault-free probe copy's time, when one was made.
    pub(crate) probe_ns: Option<u64>,
    /// Pages mapped around `offset` after the copy (asked only after a fault).
    pub(crate) run_pages: Option<usize>,
}

/// The map turns of the trial running now.
#[derive(Debug, Default)]
pub(crate) struct MapTurns {
    clean: (u64, u64),
    faulted: (u64, u64),
    faults: u64,
    probes: (u64, u64),
    runs: Vec<usize>,
    faulted_at: Vec<u64>,
}

impl MapTurns {
    /// Adds a turn.
    pub(crate) fn add(&mut self, turn: MapTurn) {
        let tally = if turn.faults == 0 {
            &mut self.clean
        } else {
            &mut self.faulted
        };
        tally.0 += 1;
        tally.1 += turn.ns;
        self.faults += turn.faults;
        if let Some(ns) = turn.probe_ns {
            self.probes.0 += 1;
            self.probes.1 += ns;
        }
        self.runs.extend(turn.run_pages);
        if turn.faults > 0 && self.faulted_at.len() < PROBES {
            self.faulted_at.push(turn.offset);
        }
    }

    /// Whether the next faulted turn should ask how much its fault mapped (a few a trial).
    pub(crate) fn wants_run(&self) -> bool {
        self.runs.len() < 5
    }
}

/// What the map turns measured, kept across trials.
#[derive(Debug, Default)]
pub(crate) struct MapModel {
    /// The turns of the trial running now.
    pub(crate) turns: MapTurns,
    mapped_ns: Option<f64>,
    fault_ns: Option<f64>,
    unit_pages: Option<usize>,
    /// Offsets map turns faulted in (mapped since), for probes: the last trial's, or, in
    /// the first, this one's so far.
    probe_at: Vec<u64>,
    /// Whether `probe_at` is an earlier trial's.
    old: bool,
    /// The next of `probe_at` to probe.
    next_probe: usize,
}

/// How a trial estimated the map's time per read: what [`super::measured::Trial`] shows.
#[derive(Clone, Debug, PartialEq)]
pub struct MapEstimate {
    /// Map turns timed, and how many of them faulted.
    pub turns: u64,
    /// Turns that took a fault.
    pub faulted: u64,
    /// The faults they took.
    pub faults: u64,
    /// ns of a read from a mapped page: the mean of this trial's fault-free turns and
    /// probes (else an earlier trial's).
    pub mapped_ns: f64,
    /// This trial's fault-free turns and probe copies.
    pub fault_free: (u64, u64),
    /// ns a fault adds to a read.
    pub fault_ns: f64,
    /// Bytes one fault maps (the run of mapped pages around a faulted turn's page).
    pub unit_bytes: u64,
    /// Units of that size the reads touched: counted, or at most that many for a unit
    /// smaller than a block (`exact` false).
    pub units: u64,
    /// Whether `units` is counted rather than bounded.
    pub exact: bool,
    /// Reads of the file so far.
    pub reads: u64,
    /// The estimate: `mapped_ns + fault_ns × units ÷ reads`.
    pub ns: f64,
}

impl std::fmt::Display for MapEstimate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the map: {} of {} turns faulted ({:.1} µs a fault; {:.1} µs a read once mapped, \
             {} fault-free turns and {} probes); a fault maps {}, and the {} reads so far \
             touched {}{} such blocks: {:.1} µs a read over as many reads again",
            self.faulted,
            self.turns,
            self.fault_ns / 1000.0,
            self.mapped_ns / 1000.0,
            self.fault_free.0,
            self.fault_free.1,
            crate::units::format_bytes(self.unit_bytes),
            self.reads,
            if self.exact { "" } else { "at most " },
            self.units,
            self.ns / 1000.0
        )
    }
}

impl MapEstimate {
    /// The read count at which this map, not serving while `chosen` serves at `held` ns a
    /// read, would win, were the units it touched the same (they can only grow, so it is
    /// looked at again then): `None` when the map serves. At least `reads × (1 + 1/step)`,
    /// so that the looks, and the trials they ask for, come at most once per that growth
    /// of the reads. A map that would not win even with every page mapped is due again
    /// when the reads have doubled: its fault-free time is measured again then (one trial
    /// preempted on a loaded machine must not write the map off until the clock's next
    /// trial). A challenging map needs no margin (see `Measured::finish`).
    pub(crate) fn reads_until_it_pays(&self, chosen: Backing, held: f64, step: u64) -> Option<u64> {
        if chosen == Backing::Mmap {
            return None;
        }
        let floor = self
            .reads
            .saturating_add(self.reads / step.max(1))
            .max(self.reads + 1);
        if self.mapped_ns >= held {
            return Some(self.reads.saturating_mul(2).max(floor));
        }
        // mapped + fault × units ÷ reads < held  ⇔  reads > fault × units ÷ (held − mapped)
        let needed = self.fault_ns * self.units as f64 / (held - self.mapped_ns);
        Some((needed.ceil() as u64).max(floor))
    }
}

impl MapModel {
    /// Starts a trial's turns.
    pub(crate) fn start(&mut self) {
        self.turns = MapTurns::default();
        self.next_probe = 0;
    }

    /// An offset to probe a fault-free copy at, each once a trial: one an earlier trial's
    /// turn faulted in (out of the CPU's caches by now), or in the first trial one an
    /// earlier turn of it did.
    pub(crate) fn probe(&mut self) -> Option<u64> {
        let at = *self.probe_at.get(self.next_probe)?;
        self.next_probe += 1;
        Some(at)
    }

    /// Records a turn; in the first trial its fault offset becomes a probe for later turns.
    pub(crate) fn add(&mut self, turn: MapTurn) {
        if !self.old && turn.faults > 0 && self.probe_at.len() < PROBES {
            self.probe_at.push(turn.offset);
        }
        self.turns.add(turn);
    }

    /// Ends the trial's turns: the estimate for a file whose `reads` so far touched the
    /// blocks of `touched`, or `None` when nothing is known of faults (no turn ever
    /// faulted: the turns' mean time is the map's time) or of fault-free reads.
    pub(crate) fn finish(&mut self, touched: &Bits, reads: u64) -> Option<MapEstimate> {
        let t = std::mem::take(&mut self.turns);
        // This trial's faulted offsets are probes from an earlier trial for the next one.
        if !t.faulted_at.is_empty() {
            self.probe_at.clone_from(&t.faulted_at);
            self.old = true;
        }
        self.next_probe = 0;
        // Fault-free turns and probes are both reads of mapped pages: a trial has few of
        // the first on a fresh map, and up to one probe a turn.
        let fault_free = (t.clean.0, t.probes.0);
        if t.clean.0 + t.probes.0 > 0 {
            self.mapped_ns =
                Some((t.clean.1 + t.probes.1) as f64 / (t.clean.0 + t.probes.0) as f64);
        }
        if let (Some(mapped), true) = (self.mapped_ns, t.faults > 0) {
            let extra = t.faulted.1 as f64 - t.faulted.0 as f64 * mapped;
            self.fault_ns = Some((extra / t.faults as f64).max(0.0));
        }
        if !t.runs.is_empty() {
            let mut runs = t.runs;
            runs.sort_unstable();
            self.unit_pages = Some(runs[runs.len() / 2]);
        }
        let mut estimate = self.estimate(touched, reads)?;
        estimate.turns = t.clean.0 + t.faulted.0;
        estimate.faulted = t.faulted.0;
        estimate.faults = t.faults;
        estimate.fault_free = fault_free;
        Some(estimate)
    }

    /// The estimate from what the trials so far measured, for a file whose `reads` so far
    /// touched the blocks of `touched`, without new turns (no turn in its counts); `None`
    /// as for [`MapModel::finish`].
    pub(crate) fn estimate(&self, touched: &Bits, reads: u64) -> Option<MapEstimate> {
        let (mapped, fault) = (self.mapped_ns?, self.fault_ns?);
        let unit = prev_power_of_two(self.unit_pages.unwrap_or(1).clamp(1, 4096));
        let (units, exact) = touched.units(unit, reads);
        let ns = mapped + fault * units as f64 / reads.max(1) as f64;
        Some(MapEstimate {
            turns: 0,
            faulted: 0,
            faults: 0,
            mapped_ns: mapped,
            fault_free: (0, 0),
            fault_ns: fault,
            unit_bytes: (unit as u64) << PAGE_SHIFT,
            units,
            exact,
            reads,
            ns,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touched_blocks_count_by_unit() {
        let t = Bits::blocks(1 << 30, true);
        assert!(Bits::blocks(1 << 30, false).mark(0).is_none());
        assert_eq!(t.mark(0), Some(false));
        assert_eq!(t.mark(100), Some(true));
        assert_eq!(t.mark(5 << 16), Some(false));
        assert_eq!(t.mark(17 << 16), Some(false));
        assert_eq!(t.mark(1000 << 16), Some(false));
        assert_eq!(t.mark(1 << 40), None);
        // Blocks 0, 5, 17, 1000 of 64 KiB (16 pages).
        assert_eq!(t.units(16, 1_000), (4, true));
        assert_eq!(t.units(24, 1_000), (4, true)); // rounded down to 16
        assert_eq!(t.units(128, 1_000), (3, true)); // 0..8 holds 0 and 5
        assert_eq!(t.units(512, 1_000), (2, true)); // 0..32 holds 0, 5, 17
        // Below a block: every unit of a marked block, at most one a read.
        assert_eq!(t.units(1, 1_000), (64, false));
        assert_eq!(t.units(4, 1_000), (16, false));
        assert_eq!(t.units(1, 10), (10, false));
        // Files over 4 GiB get larger blocks: 128 KiB for 8 GiB.
        let big = Bits::blocks(8 << 30, true);
        big.mark(0);
        big.mark(100 << 10);
        assert_eq!(big.units(32, 10), (1, true));
        assert_eq!(big.units(16, 10), (2, false));
        // Pages, for the notes of O_DIRECT's repeats.
        let pages = Bits::pages(1 << 20, true);
        assert_eq!(
            (pages.mark(4096), pages.mark(8191)),
            (Some(false), Some(true))
        );
    }

    fn turn(ns: u64, faults: u64, offset: u64) -> MapTurn {
        MapTurn {
            ns,
            faults,
            offset,
            ..MapTurn::default()
        }
    }

    #[test]
    fn scattered_reads_charge_the_map_its_faults_and_a_hot_set_does_not() {
        let mut m = MapModel::default();
        // 40 turns faulting once at 4.5 µs, 8 fault-free at 0.5 µs; a fault maps 16 pages.
        for i in 0..48u64 {
            let mut t = if i < 40 {
                turn(4500, 1, i << 20)
            } else {
                turn(500, 0, i << 20)
            };
            t.run_pages = (i < 3).then_some(16);
            m.add(t);
        }
        // Scattered: 96 reads so far, 96 blocks of 64 KiB touched.
        let touched = Bits::blocks(1 << 32, true);
        for i in 0..96u64 {
            touched.mark(i * (1 << 24));
        }
        let e = m.finish(&touched, 96).unwrap();
        assert_eq!((e.turns, e.faulted, e.faults), (48, 40, 40));
        assert_eq!(
            (e.mapped_ns, e.fault_ns, e.unit_bytes),
            (500.0, 4000.0, 64 << 10)
        );
        assert_eq!(e.units, 96);
        assert_eq!(e.ns, 4500.0);
        assert!(
            e.to_string().starts_with(
                "the map: 40 of 48 turns faulted (4.0 µs a fault; 0.5 µs a read once mapped, 8 \
                 fault-free turns and 0 probes); a fault maps 64.0 KiB, and the 96 reads so far \
                 touched 96 such blocks: 4.5 µs"
            ),
            "{e}"
        );
        // The next trial: its turns all fault; the fault-free time comes from probes at the
        // offsets the last trial's turns faulted in.
        let probe = m.probe().unwrap();
        assert!(probe < 40 << 20, "{probe}");
        for i in 0..48u64 {
            let mut t = turn(4500, 1, (100 + i) << 20);
            t.probe_ns = Some(700);
            m.add(t);
        }
        // A hot set: 800 000 reads touched 20 blocks.
        let hot = Bits::blocks(1 << 32, true);
        for i in 0..20u64 {
            hot.mark(i << 16);
        }
        let e = m.finish(&hot, 800_000).unwrap();
        assert_eq!((e.fault_free, e.mapped_ns), ((0, 48), 700.0), "{e:?}");
        assert_eq!(e.fault_ns, 3800.0);
        assert_eq!((e.units, e.exact), (20, true));
        assert!(
            (e.ns - (700.0 + 3800.0 * 20.0 / 800_000.0)).abs() < 1e-6,
            "{e:?}"
        );
        // A fault that maps single pages: every page of the 20 blocks counts.
        let mut m = MapModel::default();
        for i in 0..48u64 {
            let mut t = turn(4500, 1, i << 20);
            t.probe_ns = Some(500);
            t.run_pages = Some(1);
            m.add(t);
        }
        let e = m.finish(&hot, 8_000).unwrap();
        assert_eq!((e.unit_bytes, e.units, e.exact), (4096, 320, false));
        assert!(
            e.to_string()
                .contains("and the 8000 reads so far touched at most 320 such")
        );
    }

    #[test]
    fn a_map_that_would_win_once_mapped_is_looked_at_again_when_the_reads_could_pay() {
        let e = MapEstimate {
            turns: 48,
            faulted: 48,
            faults: 48,
            mapped_ns: 500.0,
            fault_free: (0, 48),
            fault_ns: 4000.0,
            unit_bytes: 64 << 10,
            units: 1000,
            exact: true,
            reads: 2000,
            ns: 2500.0,
        };
        // 4 µs × 1000 units paid by 0.5 µs a read saved: 8000 reads.
        assert_eq!(e.reads_until_it_pays(Backing::Pread, 1000.0, 4), Some(8000));
        // At least a quarter (or a doubling) more reads than now.
        let near = MapEstimate {
            units: 10,
            ..e.clone()
        };
        assert_eq!(
            near.reads_until_it_pays(Backing::Pread, 1000.0, 4),
            Some(2500)
        );
        assert_eq!(
            near.reads_until_it_pays(Backing::Pread, 1000.0, 1),
            Some(4000)
        );
        // Not winning even mapped: measured again when the reads doubled.
        assert_eq!(e.reads_until_it_pays(Backing::Pread, 450.0, 4), Some(4000));
        // Serving: never.
        assert_eq!(e.reads_until_it_pays(Backing::Mmap, 1000.0, 4), None);
    }

    #[test]
    fn without_faults_or_a_fault_free_time_there_is_no_estimate() {
        let touched = Bits::blocks(1 << 20, true);
        let mut m = MapModel::default();
        m.add(turn(300, 0, 0));
        // A fault-free time but no fault ever seen: the turns' own time stands.
        assert_eq!(m.finish(&touched, 10), None);
        let mut m = MapModel::default();
        m.add(turn(5000, 1, 0));
        // Faults but no fault-free time yet (no probe either).
        assert_eq!(m.finish(&touched, 10), None);
        assert_eq!(m.probe(), Some(0));
    }
}
