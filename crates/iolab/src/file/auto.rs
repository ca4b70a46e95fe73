//! Where [`crate::file::RandomAccessFile::open`]'s measured backing starts, and why: the
//! backing its first trial keeps unless a challenger beats it by the margin
//! ([`super::measured`]; the first read begins that trial, so no choice made here serves a
//! read unmeasured).
//!
//! **Measured winners**: when `iolab bench random` has measured this machine (same kernel,
//! same cores, written by this user and this iolab: the tuning file of
//! [`crate::lab::profile`]; else the reason is in [`Choice::reason`]), the winner of
//! the file's size class is followed: `warm` for a file that fits in the memory available
//! now, `beyond-memory` for one that does not. Only `pread`, `mmap` and `mmap-random` can
//! back a `RandomAccessFile`; the suite records the best of those at queue depth 1 (and
//! `pread` when a map wins by less than the noise). A map starts advised `MADV_RANDOM`
//! whichever map won.
//!
//! **The rule** otherwise asks the file's cache state at open (`cachestat(2)` of 16
//! windows; sampled `mincore(2)` on older kernels): a file at least [`RESIDENT`] in the
//! page cache starts on a map advised `MADV_RANDOM` (`mmap-random`: a copy from memory and
//! no system call), any other on `pread` (a map's faults and read-ahead are wasted there:
//! CIDR 2022). Evidence: docs/findings/random.md, docs/findings/defaults.md.
//!
//! **Queue depth** of io_uring reads ([`queue_depth`], for [`crate::RandomAccessFile::read_batch`]
//! and `iolab random`): the depth `iolab bench random --sweep` measured fastest here for the
//! file's size class (the profile's `random_depth`), else [`DEFAULT_QUEUE_DEPTH`].
//!
//! **System calls**: a read of `/proc/meminfo` and of the small tuning file, and the
//! residency question.

use crate::profile;

/// A choice of backing and the reason for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The random-read method it follows: `pread`, `mmap` or `mmap-random`.
    pub method: &'static str,
    /// Whether that is a map.
    pub mmap: bool,
    /// Whether the map is advised `MADV_RANDOM`.
    pub random_advice: bool,
    /// Why, in a few words.
    pub reason: String,
}

/// The measured winner of size class `class` (`warm`: files that fit in the memory
/// available; `beyond-memory`) on this machine: its method, whether it is a map, its IOPS;
/// or why there is none to follow (no profile, one this process does not follow, no
/// winner for the class).
fn measured(class: &str) -> Result<(&'static str, bool, f64), String> {
    let w = profile::load_checked()?
        .random
        .into_iter()
        .find(|w| w.size_class == class && profile::RandomWinner::backing_of(&w.method).is_some())
        .ok_or_else(|| format!("the profile has no {class} winner a RandomAccessFile can be"))?;
    let mmap = profile::RandomWinner::backing_of(&w.method).unwrap_or(false);
    // A map starts advised `MADV_RANDOM` whichever map won warm (the two tie there): read
    // ahead, the reads of a file that is not in memory fault in megabytes each.
    let method = if mmap { "mmap-random" } else { "pread" };
    Ok((method, mmap, w.iops))
}

/// The share of a file the page cache must hold for the rule to map it: what `count`
/// calls warm, 90%.
pub const RESIDENT: f64 = crate::read::auto::WARM_RESIDENCY;

/// The rule's method for a file that is `resident` or not.
fn rule(resident: bool) -> &'static str {
    if resident { "mmap-random" } else { "pread" }
}

/// The backing for `file`, `len` bytes long.
#[cfg(any(test, feature = "lab"))]
pub fn choose(file: &std::fs::File, len: u64) -> Choice {
    choose_cached(len, crate::cache::residency_windows(file).ok())
}

/// As [`choose`], for a file whose share in the page cache is `cached` (asked already).
pub(crate) fn choose_cached(len: u64, cached: Option<f64>) -> Choice {
    let available = crate::machine::mem_available_bytes();
    let class = class_of(len, available);
    let fits = match available {
        Some(m) if len > m => format!("{len} bytes, more than the {m} bytes of memory available"),
        Some(m) => format!("{len} bytes, within the {m} bytes of memory available"),
        None => format!("{len} bytes"),
    };
    let why_not = match measured(class) {
        Ok((method, mmap, iops)) => {
            return Choice {
                method,
                mmap,
                random_advice: method == "mmap-random",
                reason: format!(
                    "{fits}: the {class} winner measured by `iolab bench random` on this \
                     machine ({iops:.0} IOPS)"
                ),
            };
        }
        Err(why_not) => why_not,
    };
    let resident = cached.is_some_and(|f| f >= RESIDENT);
    let method = rule(resident);
    let state = match cached {
        Some(f) => format!("{:.0}% in the page cache", f * 100.0),
        None => "its cache state unknown".into(),
    };
    let reason = if resident {
        "a map, the rule for a file in memory (no system call per read)"
    } else {
        "pread, the rule for a file not in memory (a map's faults and read-ahead are wasted)"
    };
    Choice {
        method,
        mmap: resident,
        random_advice: resident,
        reason: format!("{fits}, {state}: {reason}; no measurements of this machine ({why_not})"),
    }
}

/// The size class of a file of `len` bytes: `warm` when it fits in the memory available
/// now, `beyond-memory` when it does not.
pub fn size_class(len: u64) -> &'static str {
    class_of(len, crate::machine::mem_available_bytes())
}

/// The size class of `len` bytes with `available` bytes of memory.
fn class_of(len: u64, available: Option<u64>) -> &'static str {
    match available {
        Some(m) if len > m => "beyond-memory",
        _ => "warm",
    }
}

/// The queue depth of io_uring random reads when neither the caller nor this machine's
/// profile gives one: 32, fio's common setting and the random suite's.
pub const DEFAULT_QUEUE_DEPTH: usize = 32;
/// The deepest queue: 256 reads in flight per thread.
pub const MAX_QUEUE_DEPTH: usize = 256;

/// The queue depth for io_uring random reads with `method` (`uring`, `uring-direct`) of a
/// file of `len` bytes, and why: the depth `iolab bench random --sweep` measured fastest
/// here for the file's size class, beyond the noise of [`DEFAULT_QUEUE_DEPTH`], else that
/// depth (fio's and the suite's 32).
pub fn queue_depth(method: &str, len: u64) -> (usize, String) {
    let class = size_class(len);
    let rule = DEFAULT_QUEUE_DEPTH;
    let measured = profile::load_checked().map(|t| {
        t.random_depth
            .into_iter()
            .find(|d| d.method == method && d.size_class == class)
    });
    match measured {
        Ok(Some(d)) => (
            d.queue_depth.clamp(1, MAX_QUEUE_DEPTH),
            format!(
                "the {class} depth `iolab bench random --sweep` measured fastest here on {} \
                 ({:.0} IOPS)",
                d.measured_at.get(..10).unwrap_or(&d.measured_at),
                d.iops
            ),
        ),
        Ok(None) => (
            rule,
            format!("the rule, {rule} (no {class} depth for {method} measured beyond the noise)"),
        ),
        Err(why) => (rule, format!("the rule, {rule} ({why})")),
    }
}
