//! This machine's profile: the winners `iolab bench` measured here, which the library's
//! defaults follow (`count_lines`'s `auto`, `RandomAccessFile::open`, the edit strategy,
//! `Log::open`'s policy, the stdout and append buffers). One file, `auto.json` in iolab's
//! cache folder; one way to read it ([`load_checked`]); `iolab bench` writes it (its laboratory's
//! `profile::save`).
//!
//! - **What is kept.** Only verified, complete runs on data sets of at least [`MIN_BYTES`],
//!   per size class ([`SizeClass`]: powers of four from 256 MiB), and only a winner that
//!   beats the fastest other method beyond the noise (the verdict's rule); a tie removes
//!   the class's winner, so the built-in rule applies again. A 1 GiB result never decides a
//!   22 GiB file.
//! - **When it is followed.** On the same machine as measured (kernel release, cores, CPU
//!   model: [`load_checked`] says why not otherwise), written by this user, this iolab and
//!   this machine ([`Provenance`], issue 48); a winner a device decides (edit, durable,
//!   buffers into a file) only for files on that device.
//! - **Advisory.** A missing, unreadable or stale profile is ignored with its reason, never
//!   an error.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub mod provenance;
mod winners;

pub use provenance::Provenance;
#[cfg(any(test, feature = "lab"))]
pub use winners::Winner;
pub use winners::{CountWinner, RandomDepth, RandomWinner, SizeClass, Strategies, StrategyWinner};

/// The smallest data set whose winners are worth remembering: 256 MiB. Smaller files are
/// dominated by fixed costs and their winners say little about big files.
pub const MIN_BYTES: u64 = 256 << 20;
/// The file name in the cache folder.
pub const FILE_NAME: &str = "auto.json";

/// The remembered winners (`Default`: none, of no machine).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Profile {
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

/// The block device a path's file system is on, as `MAJ:MIN` (of `st_dev`).
pub fn device_of(path: &std::path::Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path).ok()?.dev();
    Some(format!("{}:{}", libc::major(dev), libc::minor(dev)))
}

impl Profile {
    /// The `count` winner for a `bytes`-long file in `cache` state (`warm`/`cold`), if one
    /// was measured for its size class.
    pub fn count_winner(&self, cache: &str, bytes: u64) -> Option<&CountWinner> {
        self.count
            .iter()
            .find(|w| w.cache == cache && w.size_class.contains(bytes))
    }
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

/// The cores available to this process.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The remembered winners, or why there are none to follow: no profile yet; one this
/// user, this iolab or this machine did not write ([`Provenance::check`]); or one measured
/// under another kernel, core count or CPU.
pub fn load_checked() -> Result<Profile, String> {
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
    let tuning: Profile = serde_json::from_slice(&text).map_err(|e| unreadable(&e))?;
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
    crate::machine::cpu_model_name().unwrap_or_default()
}

/// The winner of `condition` in `profile`'s `which` list that decides for a file at
/// `path`, or why there is none to follow: no profile of this machine, no winner beyond
/// the noise, or one measured on another device.
pub fn strategy_for<'a>(
    profile: &'a Result<Profile, String>,
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
    profile: &Result<Profile, String>,
    which: Strategies,
    condition: &str,
    path: &std::path::Path,
) -> Result<(u64, String), String> {
    let winner = strategy_for(profile, which, condition, path)?;
    let bytes = winner.bytes.ok_or("the measured winner has no size")?;
    Ok((bytes, winner.source()))
}

impl Profile {
    /// The strategy winner of `condition` in the `which` list, if one was measured.
    pub fn strategy_winner(&self, which: Strategies, condition: &str) -> Option<&StrategyWinner> {
        let list: &[StrategyWinner] = match which {
            Strategies::Edit => &self.edit,
            Strategies::Durable => &self.durable,
            Strategies::Write => &self.write,
            Strategies::Append => &self.append,
        };
        list.iter().find(|w| w.condition == condition)
    }
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

    fn profile_with(edit: Vec<StrategyWinner>) -> Result<Profile, String> {
        Ok(Profile {
            edit,
            ..Profile::default()
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
        let none: Result<Profile, String> = Err("no profile of this machine yet".into());
        let why = strategy_for(&none, Strategies::Edit, "replace", &here).unwrap_err();
        assert_eq!(why, "no profile of this machine yet");
    }
}
