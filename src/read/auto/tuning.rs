//! What `iolab bench count` measured as the winners on this machine, kept for `auto`.
//!
//! After a complete, verified `count` run on a data set of at least [`MIN_BYTES`], the
//! fastest method for each cache state (with the threads, queue depth or block size it
//! won with) is written to `auto.json` in iolab's cache folder. `auto` reads it for files
//! of 1 MiB and more (small files never pay for it) and follows it while the machine is
//! the same one: same kernel release and same number of cores. Without it, `auto` uses
//! its built-in rule. The file is small and advisory: a missing, unreadable or stale one is
//! ignored, never an error.

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
    /// The data set's size.
    pub file_bytes: u64,
    /// The winner with the file in the page cache.
    pub warm: Option<Winner>,
    /// The winner with the file evicted.
    pub cold: Option<Winner>,
    /// The `random` suite's winners per size class, for `RandomAccessFile::open`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub random: Vec<RandomWinner>,
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
        file_bytes: previous.as_ref().map_or(file_bytes, |p| p.file_bytes),
        warm: previous.as_ref().and_then(|p| p.warm.clone()),
        cold: previous.and_then(|p| p.cold),
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

/// Remembers `warm` and `cold` winners measured on a `file_bytes` data set (ignored below
/// [`MIN_BYTES`]). Returns where they were written.
pub fn save(
    file_bytes: u64,
    warm: Option<Winner>,
    cold: Option<Winner>,
) -> std::io::Result<Option<PathBuf>> {
    if file_bytes < MIN_BYTES || (warm.is_none() && cold.is_none()) {
        return Ok(None);
    }
    // Keep what this run did not measure (a warm-only run keeps the cold winner).
    let previous = load();
    let tuning = Tuning {
        measured_at: crate::sysinfo::now_rfc3339(),
        kernel_release: kernel_release(),
        cores: cores(),
        file_bytes,
        warm: warm.or_else(|| previous.as_ref().and_then(|p| p.warm.clone())),
        cold: cold.or_else(|| previous.as_ref().and_then(|p| p.cold.clone())),
        random: previous.map(|p| p.random).unwrap_or_default(),
    };
    write(tuning)
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
