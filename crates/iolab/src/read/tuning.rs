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
//! it while the machine is the same one: same kernel release, same number of cores, same
//! CPU model ([`load_checked`] says why not otherwise); a winner a device decides (the
//! edit strategies, the durable policy) only for files on the device it was measured on.
//! And only when this user, this iolab and this machine wrote it ([`Provenance`]): a
//! profile whose file another user owns, or that another user, iolab version or machine
//! wrote, or that does not say who wrote it, is ignored with the reason
//! ([`super::provenance`]; issue 48).
//! The file is small and advisory: a missing, unreadable or stale one is ignored, never an
//! error. Files written before size classes existed (`warm`/`cold` at the top level) have
//! their count winners ignored: they were recorded without the noise rule.
//!
//! It is this machine's profile: besides `count` and `random`, the `edit` suite's winning
//! strategies ([`EditOptions`](crate::lab::edit::EditOptions) without a strategy follows
//! them) and the durable section's winning policy (`Log::open` follows it).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::read::CountMethod;
pub use crate::read::provenance::Provenance;

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
    pub fn method(&self) -> Option<CountMethod> {
        let m: CountMethod = self.method.parse().ok()?;
        (m != CountMethod::Auto && m.availability().is_ok()).then_some(m)
    }
}

/// The remembered winners (`Default`: none, of no machine).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Tuning {
    /// When they were measured, RFC 3339 UTC.
    pub measured_at: String,
    /// The kernel release they were measured on.
    pub kernel_release: String,
    /// The cores available then.
    pub cores: usize,
    /// The CPU model then (`model name` of `/proc/cpuinfo`); empty in files from before
    /// 26 Nov 2026, which are not used.
    #[serde(default)]
    pub cpu_model: String,
    /// Who wrote it: user, iolab version and machine; `None` in profiles from before
    /// 28 Nov 2026, which are not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_by: Option<Provenance>,
    /// The `count` suite's winners, one per cache state and size class at most.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub count: Vec<CountWinner>,
    /// The `random` suite's winners per size class, for `RandomAccessFile::open`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub random: Vec<RandomWinner>,
    /// The `edit` suite's winning strategies (`replace`, `truncate`), for `EditOptions`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edit: Vec<StrategyWinner>,
    /// The durable section's winning policies (8 writers; 1 writer), for `Log::open`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub durable: Vec<StrategyWinner>,
    /// The `write` suite's winning buffer into a file (`file`), for `StdoutWriter::new`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<StrategyWinner>,
    /// The `append` suite's winning `AppendFile` buffer for tiny records (`buffer`), for
    /// `AppendFile::create` and `AppendOptions` without a size.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub append: Vec<StrategyWinner>,
    /// The queue depth each io_uring random-read method read fastest at, per size class
    /// (`iolab bench random --sweep`), for `iolab random` without `--queue-depth`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub random_depth: Vec<RandomDepth>,
}

/// The queue depth an io_uring random-read method read fastest at, beyond the noise of
/// the rule's depth, for a size class (`warm`, `beyond-memory`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RandomDepth {
    /// `warm` or `beyond-memory`.
    pub size_class: String,
    /// `uring` or `uring-direct`.
    pub method: String,
    /// Reads in flight per thread.
    pub queue_depth: usize,
    /// Its median IOPS (4 KiB, uniform, one thread).
    pub iops: f64,
    /// When it was measured, RFC 3339 UTC.
    pub measured_at: String,
}

/// Remembers the depths `iolab bench random --sweep` measured (ignored below
/// [`MIN_BYTES`]): each method and class measured replaces its entry, and one `tied` (no
/// depth beat the rule's beyond the noise) is removed. Returns where they were written.
pub fn save_random_depths(
    file_bytes: u64,
    depths: Vec<RandomDepth>,
    tied: &[(String, String)],
) -> std::io::Result<Option<PathBuf>> {
    if file_bytes < MIN_BYTES || depths.is_empty() && tied.is_empty() {
        return Ok(None);
    }
    update(|t| {
        t.random_depth.retain(|d| {
            let key = (d.method.clone(), d.size_class.clone());
            !tied.contains(&key)
                && !depths
                    .iter()
                    .any(|n| n.method == d.method && n.size_class == d.size_class)
        });
        t.random_depth.extend(depths);
    })
}

/// A strategy that won a condition beyond the noise, where the device it ran on decides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StrategyWinner {
    /// The condition (`replace`, `truncate`, `durable, 8 writers, 512 B`).
    pub condition: String,
    /// The winning strategy's or policy's name.
    pub method: String,
    /// The runner-up it beat.
    pub runner_up: String,
    /// The winner's speed over the runner-up's (above 1).
    pub lead: f64,
    /// When it was measured, RFC 3339 UTC.
    pub measured_at: String,
    /// The device it was measured on ([`device_of`]: `MAJ:MIN`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The size it won with, where the winner is a size (`StdoutWriter`'s buffer into a
    /// file); `None` for a strategy or policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

impl StrategyWinner {
    /// Whether it decides for a file at `path`: measured on the device `path` is on (or
    /// on an unknown one); else why not.
    pub fn decides_for(&self, path: &std::path::Path) -> Result<(), String> {
        match (&self.device, device_of(path)) {
            (Some(measured), Some(here)) if *measured != here => Err(format!(
                "the {} winner was measured on device {measured}, {} is on {here}",
                self.condition,
                path.display()
            )),
            _ => Ok(()),
        }
    }

    /// `the replace winner measured here on 2026-11-26 (1.31x std-stream)`.
    pub fn source(&self) -> String {
        format!(
            "the {} winner `iolab bench` measured here on {} ({:.2}x {})",
            self.condition,
            self.measured_at.get(..10).unwrap_or(&self.measured_at),
            self.lead,
            self.runner_up
        )
    }
}

/// The block device a path's file system is on, as `MAJ:MIN` (of `st_dev`).
pub fn device_of(path: &std::path::Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path).ok()?.dev();
    Some(format!("{}:{}", libc::major(dev), libc::minor(dev)))
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
    update(|t| t.random = winners)
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
    load_checked().ok()
}

/// The remembered winners, or why there are none to follow: no profile yet; one this
/// user, this iolab or this machine did not write ([`Provenance::check`]); or one measured
/// under another kernel, core count or CPU.
pub fn load_checked() -> Result<Tuning, String> {
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;
    let path = cache_dir()
        .ok_or("no cache folder (neither XDG_CACHE_HOME nor HOME)")?
        .join(FILE_NAME);
    let mut file =
        std::fs::File::open(&path).map_err(|_| "no profile of this machine yet".to_string())?;
    let unreadable =
        |e: &dyn std::fmt::Display| format!("the profile {} is unreadable: {e}", path.display());
    // The owner of the file read, not of the path looked up again.
    let owner = file.metadata().map_err(|e| unreadable(&e))?.uid();
    let mut text = Vec::new();
    file.read_to_end(&mut text).map_err(|e| unreadable(&e))?;
    let tuning: Tuning = serde_json::from_slice(&text).map_err(|e| unreadable(&e))?;
    Provenance::check(tuning.written_by.as_ref(), owner, &path)?;
    let (kernel, cpu) = (kernel_release(), cpu_model());
    if tuning.kernel_release != kernel {
        return Err(format!(
            "the profile was measured under kernel {}, this is {kernel}: not used",
            tuning.kernel_release
        ));
    }
    if tuning.cores != cores() {
        return Err(format!(
            "the profile was measured on {} cores, this machine has {}: not used",
            tuning.cores,
            cores()
        ));
    }
    if tuning.cpu_model != cpu {
        return Err(format!(
            "the profile was measured on another CPU ({}): not used",
            if tuning.cpu_model.is_empty() {
                "not recorded"
            } else {
                &tuning.cpu_model
            }
        ));
    }
    Ok(tuning)
}

/// This machine's CPU model, as the profile records it.
pub fn cpu_model() -> String {
    crate::sysinfo::cpu::model_name().unwrap_or_default()
}

/// Rewrites the profile with `change` applied, measured now on this machine by this user
/// and iolab: a profile this process would not follow (another machine, user or version)
/// is started afresh.
fn update(change: impl FnOnce(&mut Tuning)) -> std::io::Result<Option<PathBuf>> {
    let mut tuning = load().unwrap_or_default();
    change(&mut tuning);
    tuning.measured_at = crate::sysinfo::now_rfc3339();
    tuning.kernel_release = kernel_release();
    tuning.cores = cores();
    tuning.cpu_model = cpu_model();
    tuning.written_by = Some(Provenance::here());
    write(tuning)
}

/// Which list of strategy winners.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategies {
    /// [`Tuning::edit`].
    Edit,
    /// [`Tuning::durable`].
    Durable,
    /// [`Tuning::write`].
    Write,
    /// [`Tuning::append`].
    Append,
}

/// Applies a benchmark run's decision for `condition` to the `which` list: `Some` winner
/// replaces the condition's entry, `None` (a tie) removes it, so the rule applies again.
pub fn save_strategy(
    which: Strategies,
    condition: &str,
    winner: Option<StrategyWinner>,
) -> std::io::Result<Option<PathBuf>> {
    update(|t| {
        let list = match which {
            Strategies::Edit => &mut t.edit,
            Strategies::Durable => &mut t.durable,
            Strategies::Write => &mut t.write,
            Strategies::Append => &mut t.append,
        };
        list.retain(|w| w.condition != condition);
        list.extend(winner);
    })
}

/// The winner of `condition` in `profile`'s `which` list that decides for a file at
/// `path`, or why there is none to follow: no profile of this machine, no winner beyond
/// the noise, or one measured on another device.
pub fn strategy_for<'a>(
    profile: &'a Result<Tuning, String>,
    which: Strategies,
    condition: &str,
    path: &std::path::Path,
) -> Result<&'a StrategyWinner, String> {
    let profile = profile.as_ref().map_err(Clone::clone)?;
    let winner = profile
        .strategy_winner(which, condition)
        .ok_or("no winner beyond the noise measured here")?;
    winner.decides_for(path)?;
    Ok(winner)
}

/// The size the `which` winner of `condition` won with, for a file at `path`, and where it
/// came from; or why there is none to follow (as [`strategy_for`], or a winner without a
/// size).
pub fn size_for(
    profile: &Result<Tuning, String>,
    which: Strategies,
    condition: &str,
    path: &std::path::Path,
) -> Result<(u64, String), String> {
    let winner = strategy_for(profile, which, condition, path)?;
    let bytes = winner.bytes.ok_or("the measured winner has no size")?;
    Ok((bytes, winner.source()))
}

impl Tuning {
    /// The strategy winner of `condition` in the `which` list, if one was measured.
    pub fn strategy_winner(&self, which: Strategies, condition: &str) -> Option<&StrategyWinner> {
        let list = match which {
            Strategies::Edit => &self.edit,
            Strategies::Durable => &self.durable,
            Strategies::Write => &self.write,
            Strategies::Append => &self.append,
        };
        list.iter().find(|w| w.condition == condition)
    }
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
    update(|t| {
        for decision in decisions {
            let cache = match decision {
                Decision::Winner(w) => &w.cache,
                Decision::Tie { cache } => cache,
            };
            t.count
                .retain(|w| !(w.cache == *cache && w.size_class == class));
            if let Decision::Winner(w) = decision {
                t.count.push(CountWinner {
                    size_class: class,
                    file_bytes,
                    ..w.clone()
                });
            }
        }
        t.count.sort_by(|a, b| {
            (a.size_class.from_bytes, &a.cache).cmp(&(b.size_class.from_bytes, &b.cache))
        });
    })
}

/// Writes `tuning` atomically into the cache folder.
fn write(tuning: Tuning) -> std::io::Result<Option<PathBuf>> {
    let Some(dir) = cache_dir() else {
        return Ok(None);
    };
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(FILE_NAME);
    let json = serde_json::to_vec_pretty(&tuning).expect("tuning serializes");
    crate::generate::write_file_atomically(
        &path,
        &crate::generate::AtomicOptions::new().overwrite(true),
        |out| {
            out.write_all(&json)
                .map_err(|e| crate::error::Error::io("cannot write", e).into())
        },
    )
    .map_err(std::io::Error::other)?;
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

    fn profile_with(edit: Vec<StrategyWinner>) -> Result<Tuning, String> {
        Ok(Tuning {
            edit,
            ..Tuning::default()
        })
    }

    fn winner(condition: &str, device: Option<String>) -> StrategyWinner {
        StrategyWinner {
            condition: condition.into(),
            method: "std-whole".into(),
            runner_up: "mmap".into(),
            lead: 1.3,
            measured_at: "2026-11-26T10:00:00Z".into(),
            device,
            bytes: None,
        }
    }

    #[test]
    fn a_strategy_winner_decides_only_for_files_on_its_device() {
        let here = std::env::temp_dir();
        let device = device_of(&here);
        assert!(
            device.as_deref().is_some_and(|d| d.contains(':')),
            "{device:?}"
        );
        let profile = profile_with(vec![winner("replace", device)]);
        let w = strategy_for(&profile, Strategies::Edit, "replace", &here).unwrap();
        assert_eq!(w.method, "std-whole");
        assert!(
            w.source()
                .contains("measured here on 2026-11-26 (1.30x mmap)"),
            "{}",
            w.source()
        );
        let why = strategy_for(&profile, Strategies::Edit, "truncate", &here).unwrap_err();
        assert_eq!(why, "no winner beyond the noise measured here");
        let elsewhere = profile_with(vec![winner("replace", Some("999:999".into()))]);
        let why = strategy_for(&elsewhere, Strategies::Edit, "replace", &here).unwrap_err();
        assert!(why.contains("measured on device 999:999"), "{why}");
        let unknown = profile_with(vec![winner("replace", None)]);
        assert!(strategy_for(&unknown, Strategies::Edit, "replace", &here).is_ok());
        let none: Result<Tuning, String> = Err("no profile of this machine yet".into());
        let why = strategy_for(&none, Strategies::Edit, "replace", &here).unwrap_err();
        assert_eq!(why, "no profile of this machine yet");
    }
}
