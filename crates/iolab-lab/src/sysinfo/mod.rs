//! Facts about this machine that explain its I/O figures: CPU and caches, memory, the
//! kernel and io_uring, and the storage under the benchmark's data directory.
//!
//! [`collect`] never fails: a fact it cannot learn is `None` (or an empty list), and when
//! the reason is worth knowing it is added to [`SysInfo::notes`]. The result serializes to
//! JSON (`iolab sysinfo --json`) and summarizes in a few lines for report headers
//! ([`SysInfo::summary_lines`]).
//!
//! **Sources**: `/proc/cpuinfo`, `/proc/meminfo`, `/proc/self/mountinfo`, sysfs (CPU caches,
//! transparent huge pages, block-device queues), `uname(2)`, `statfs(2)`, `statvfs(2)`,
//! `stat(2)`, `sysconf(3)`, one pipe for `F_GETPIPE_SZ`, and the cached io_uring probe of
//! [`crate::sys::uring`].
//! **Side effect**: to learn the `O_DIRECT` alignment, [`collect`] creates one empty file
//! in the data directory and removes it again (skipped, with a note, where it cannot).
//!
//! Submodules, one per section: [`cpu`], [`memory`], [`os`], [`storage`].

pub mod cpu;
pub mod memory;
pub mod os;
pub mod storage;

use crate::text::or_dash as opt;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

pub use crate::machine::{mem_available_bytes, now_rfc3339};
pub use cpu::{Cache, Cpu};
pub use memory::Memory;
pub use os::{IoUring, Os};
pub use storage::{BlockDevice, DirectIo, Mount, Storage, fs_type_name, is_tmpfs};

/// Everything about this machine that the benchmark's figures depend on.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SysInfo {
    /// The iolab version that collected this (`CARGO_PKG_VERSION`).
    pub iolab_version: String,
    /// When it was collected, RFC 3339 in UTC (`2025-01-31T12:00:00Z`).
    pub collected_at: String,
    /// The same instant in seconds since the Unix epoch.
    pub collected_at_unix: u64,
    /// The host's name (`uname` node name).
    pub hostname: Option<String>,
    /// Processor, SIMD features, caches and the chosen byte-counting kernel.
    pub cpu: Cpu,
    /// RAM, page size and transparent huge pages.
    pub memory: Memory,
    /// Kernel release, io_uring and pipe sizes.
    pub os: Os,
    /// The file system and block device under the data directory.
    pub storage: Storage,
    /// What could not be learned, and why; one short sentence each.
    pub notes: Vec<String>,
}

/// Collects the facts about this machine, with `data_dir` as the benchmark's data directory.
///
/// Never fails; see the module documentation for what it reads and its one side effect.
pub fn collect(data_dir: &Path) -> SysInfo {
    let mut notes = Vec::new();
    let unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let uname = os::uname();
    let hostname = uname.as_ref().and_then(|u| u.nodename.clone());
    SysInfo {
        iolab_version: env!("CARGO_PKG_VERSION").to_string(),
        collected_at: crate::machine::rfc3339_utc(unix),
        collected_at_unix: unix,
        hostname,
        cpu: cpu::collect(&mut notes),
        memory: memory::collect(&mut notes),
        os: os::collect(uname, &mut notes),
        storage: storage::collect(data_dir, &mut notes),
        notes,
    }
}

impl SysInfo {
    /// A short human summary (eight lines, `key: value`) for the header of a report.
    pub fn summary_lines(&self) -> Vec<String> {
        let (cpu, memory, os, storage) = (&self.cpu, &self.memory, &self.os, &self.storage);
        let rows = [
            ("cpu", cpu.describe_model_and_cores()),
            (
                "simd",
                format!(
                    "{}; count kernel {}",
                    or_none(cpu.simd.join(" ")),
                    cpu.kernel
                ),
            ),
            ("caches", cpu.describe_caches()),
            ("memory", memory.describe()),
            ("kernel", os.describe_kernel()),
            ("io_uring", os.io_uring.describe()),
            ("storage", storage.describe()),
            ("device", storage.describe_device()),
        ];
        let width = rows.iter().map(|(k, _)| k.len() + 1).max().unwrap_or(0);
        rows.into_iter()
            .map(|(key, value)| format!("{:<width$} {value}", format!("{key}:")))
            .collect()
    }

    /// Every fact as `(key, value)` rows, in reading order: the full report of
    /// `iolab sysinfo` (the caller aligns them).
    pub fn details(&self) -> Vec<(String, String)> {
        let mut rows: Vec<(String, String)> = vec![
            ("iolab version".into(), self.iolab_version.clone()),
            ("collected at".into(), self.collected_at.clone()),
            ("hostname".into(), opt(&self.hostname)),
        ];
        rows.extend(self.cpu.details());
        rows.extend(self.memory.details());
        rows.extend(self.os.details());
        rows.extend(self.storage.details());
        for note in &self.notes {
            rows.push(("note".into(), note.clone()));
        }
        rows
    }
}

/// `text`, or `none` when it is empty.
fn or_none(text: String) -> String {
    if text.is_empty() {
        "none".to_string()
    } else {
        text
    }
}

/// This process's peak resident memory: `VmHWM` from `/proc/self/status`.
///
/// Not `getrusage`'s `ru_maxrss`: at `exec` the kernel folds the parent's peak into it (the
/// child starts as a copy of its parent), so a child of a big process, such as a test
/// harness, would report the parent's size. `VmHWM` belongs to the address space `exec`
/// created, so it counts this program alone: the figure `/usr/bin/time` gives when it is
/// the parent. Mapped file pages count while mapped, page-cache pages reached by `pread`
/// and `pwrite` do not.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
