//! What `iolab bench count` measured as the winners on this machine, kept for `auto`.
//!
//! After a complete, verified `count` run on a data set of at least [`MIN_BYTES`], each
//! cache state's fastest method (with the threads, queue depth or block size it won with)
//! is written to `auto.json` in iolab's cache folder, **for the data set's size class**
//! ([`SizeClass`]: powers of four from 256 MiB), and **only when it beats the fastest other
//! method beyond the noise** (`bench::stats::beats`, the rule `iolab compare` and the
//! verdict use). A tie removes the class's winner, so `auto` keeps its built-in rule there:
//! a winner must mean something, and a 1 GiB result never decides a 22 GiB file.
//!
//! `auto` reads it for files of 1 MiB and more (small files never pay for it) and follows
//! it while the machine is the same one: same kernel release and same number of cores.
//! The file is small and advisory: a missing, unreadable or stale one is ignored, never an
//! error. Files written before size classes existed (`warm`/`cold` at the top level) have
//! their count winners ignored: they were recorded without the noise rule.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::read::Method;

/// The smallest data set whose winners are worth remembering: 256 MiB. Smaller files are
/// dominated by fixed costs and their winners say little about big files.
pub const MIN_BYTES: u64 = 256 << 20;
/// The file name in the cache folder.
pub const FILE_NAME: &str = "auto.json";

/// A method and the settings it won with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Winner {
    /// The method's name.
    pub method: String,
    /// Threads, for the parallel methods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// Reads in flight, for `uring-direct`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<usize>,
    /// Bytes per read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_bytes: Option<usize>,
    /// Its median throughput in the run.
    pub bytes_per_s: f64,
}

impl Winner {
    /// The method, if this iolab knows it and it can run here.
    pub fn method(&self) -> Option<Method> {
        let m: Method = self.method.parse().ok()?;
        (m != Method::Auto && m.availability().is_ok()).then_some(m)
    }
}

/// The remembered winners.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tuning {
    /// When they were measured, RFC 3339 UTC.
    pub measured_at: String,
    /// The kernel release they were measured on.
    pub kernel_release: String,
    /// The cores available then.
    pub cores: usize,
    /// The `count` suite's winners, one per cache state and size class at most.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub count: Vec<CountWinner>,
    /// The `random` suite's winners per size class, for `RandomAccessFile::open`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub random: Vec<RandomWinner>,
}

/// A size class: files from `from_bytes` up to (not including) `to_bytes`. Classes are
/// powers of four from [`MIN_BYTES`]: 256 MiB–1 GiB, 1–4 GiB, 4–16 GiB, 16–64 GiB, … A
/// winner measured on one size decides only files of its class: how the page cache, the
/// read-ahead and the device behave changes with the size (at 22 GiB the file no longer
/// fits beside everything else in memory; at 1 GiB it does).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeClass {
    /// The smallest size in the class.
    pub from_bytes: u64,
    /// The first size above the class.
    pub to_bytes: u64,
}

impl SizeClass {
    /// The class of a `bytes`-long file; `None` below [`MIN_BYTES`], where nothing is
    /// remembered.
    pub fn of(bytes: u64) -> Option<SizeClass> {
        if bytes < MIN_BYTES {
            return None;
        }
        let mut from = MIN_BYTES;
        while from <= u64::MAX / 4 && bytes >= from * 4 {
            from *= 4;
        }
        Some(SizeClass {
            from_bytes: from,
            to_bytes: from.saturating_mul(4),
        })
    }

    /// Whether a `bytes`-long file is in the class.
    pub fn contains(&self, bytes: u64) -> bool {
        (self.from_bytes..self.to_bytes).contains(&bytes)
    }
}

impl std::fmt::Display for SizeClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::units::format_bytes;
        write!(
            f,
            "{} to {}",
            format_bytes(self.from_bytes),
            format_bytes(self.to_bytes)
        )
    }
}

/// The `count` winner for one cache state and size class.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CountWinner {
    /// `warm` or `cold`.
    pub cache: String,
    /// The files it decides.
    pub size_class: SizeClass,
    /// The data set it was measured on.
    pub file_bytes: u64,
    /// The method and its settings.
    #[serde(flatten)]
    pub winner: Winner,
    /// The fastest other method it beat beyond the noise, and that one's throughput.
    pub runner_up: String,
    /// The runner-up's median throughput.
    pub runner_up_bytes_per_s: f64,
}

/// What a benchmark run decided for one cache state: a winner, or a tie (which removes the
/// class's previous winner, so the rule applies again).
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// A method beat every other beyond the noise.
    Winner(CountWinner),
    /// No method did: `auto` keeps its rule for this cache state and size class.
    Tie {
        /// `warm` or `cold`.
        cache: String,
    },
}

impl Tuning {
    /// The `count` winner for a `bytes`-long file in `cache` state (`warm`/`cold`), if one
    /// was measured for its size class.
    pub fn count_winner(&self, cache: &str, bytes: u64) -> Option<&CountWinner> {
        self.count
            .iter()
            .find(|w| w.cache == cache && w.size_class.contains(bytes))
    }
}

/// The random-read method that won for a size class (`warm`: the file fits in memory and
/// is cached; `beyond-memory`: it does not fit), measured by `iolab bench random`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RandomWinner {
    /// `warm` or `beyond-memory`.
    pub size_class: String,
    /// The method's name (`pread`, `mmap`, `mmap-random`, …).
    pub method: String,
    /// Its median IOPS (4 KiB, uniform, queue depth 1).
    pub iops: f64,
}

impl RandomWinner {
    /// The `RandomAccessFile` backing a random-read method maps to: `Some(true)` for a
    /// map, `Some(false)` for `pread`; `None` for methods a `RandomAccessFile` cannot be
    /// (`O_DIRECT` and io_uring ones).
    pub fn backing_of(method: &str) -> Option<bool> {
        match method {
            "pread" => Some(false),
            "mmap" | "mmap-random" => Some(true),
            _ => None,
        }
    }
}

/// Remembers the `random` suite's winners (ignored below [`MIN_BYTES`]), keeping the
/// `count` winners. Returns where they were written.
pub fn save_random(
    file_bytes: u64,
    winners: Vec<RandomWinner>,
) -> std::io::Result<Option<PathBuf>> {
    if file_bytes < MIN_BYTES || winners.is_empty() {
        return Ok(None);
    }
    let previous = load();
    write(Tuning {
        measured_at: crate::sysinfo::now_rfc3339(),
        kernel_release: kernel_release(),
        cores: cores(),
        count: previous.map(|p| p.count).unwrap_or_default(),
        random: winners,
    })
}

/// iolab's cache folder: `$XDG_CACHE_HOME/iolab`, else `~/.cache/iolab`.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(x).join("iolab"));
    }
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(|home| PathBuf::from(home).join(".cache").join("iolab"))
}

/// The running kernel's release string (`uname -r`).
pub fn kernel_release() -> String {
    // SAFETY: an all-zero utsname is valid, and uname fills it.
    let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `uts` is valid for writes.
    if unsafe { libc::uname(&mut uts) } != 0 {
        return String::new();
    }
    let bytes: Vec<u8> = uts
        .release
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The remembered winners, when they exist and were measured on this machine as it is.
pub fn load() -> Option<Tuning> {
    let text = std::fs::read(cache_dir()?.join(FILE_NAME)).ok()?;
    let tuning: Tuning = serde_json::from_slice(&text).ok()?;
    (tuning.kernel_release == kernel_release() && tuning.cores == cores()).then_some(tuning)
}

/// Applies a benchmark run's `decisions` for a `file_bytes` data set (ignored below
/// [`MIN_BYTES`]): each winner replaces its cache state's entry for that size class, each
/// tie removes it; other classes and the `random` winners are kept. Returns where they
/// were written.
pub fn save_count(file_bytes: u64, decisions: &[Decision]) -> std::io::Result<Option<PathBuf>> {
    let Some(class) = SizeClass::of(file_bytes) else {
        return Ok(None);
    };
    if decisions.is_empty() {
        return Ok(None);
    }
    let previous = load();
    let mut count = previous
        .as_ref()
        .map(|p| p.count.clone())
        .unwrap_or_default();
    for decision in decisions {
        let cache = match decision {
            Decision::Winner(w) => &w.cache,
            Decision::Tie { cache } => cache,
        };
        count.retain(|w| !(w.cache == *cache && w.size_class == class));
        if let Decision::Winner(w) = decision {
            count.push(CountWinner {
                size_class: class,
                file_bytes,
                ..w.clone()
            });
        }
    }
    count.sort_by(|a, b| {
        (a.size_class.from_bytes, &a.cache).cmp(&(b.size_class.from_bytes, &b.cache))
    });
    write(Tuning {
        measured_at: crate::sysinfo::now_rfc3339(),
        kernel_release: kernel_release(),
        cores: cores(),
        count,
        random: previous.map(|p| p.random).unwrap_or_default(),
    })
}

/// Writes `tuning` atomically into the cache folder.
fn write(tuning: Tuning) -> std::io::Result<Option<PathBuf>> {
    let Some(dir) = cache_dir() else {
        return Ok(None);
    };
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(FILE_NAME);
    let tmp = dir.join(format!(".{FILE_NAME}.tmp-{}", std::process::id()));
    std::fs::write(
        &tmp,
        serde_json::to_vec_pretty(&tuning).expect("tuning serializes"),
    )?;
    std::fs::rename(&tmp, &path)?;
    Ok(Some(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_classes_are_powers_of_four_from_256_mib() {
        const GIB: u64 = 1 << 30;
        assert_eq!(SizeClass::of(MIN_BYTES - 1), None);
        let c = SizeClass::of(GIB).unwrap();
        assert_eq!((c.from_bytes, c.to_bytes), (GIB, 4 * GIB));
        assert_eq!(SizeClass::of(2 * GIB), Some(c));
        assert!(c.contains(4 * GIB - 1) && !c.contains(4 * GIB) && !c.contains(GIB - 1));
        let big = SizeClass::of(22 * GIB).unwrap();
        assert_eq!((big.from_bytes, big.to_bytes), (16 * GIB, 64 * GIB));
        assert_eq!(SizeClass::of(300 << 20).unwrap().from_bytes, MIN_BYTES);
        assert!(SizeClass::of(u64::MAX).is_some());
    }
}
