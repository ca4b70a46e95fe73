//! Memory: RAM from `/proc/meminfo`, the page size, and transparent huge pages, which
//! decide how many page faults an `mmap` scan takes.

use serde::{Deserialize, Serialize};

use crate::procfs::{bracketed, read_trimmed};
use crate::text::{bytes_exact, or_dash as opt};

const THP_SYSFS: &str = "/sys/kernel/mm/transparent_hugepage";

/// RAM and paging.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Memory {
    /// `MemTotal`, in bytes.
    pub total_bytes: Option<u64>,
    /// `MemAvailable`: what can be allocated without swapping, page cache included.
    pub available_bytes: Option<u64>,
    /// The base page size in bytes (`sysconf(_SC_PAGESIZE)`).
    pub page_size: Option<u64>,
    /// Transparent huge pages mode: `always`, `madvise` or `never`.
    pub thp_enabled: Option<String>,
    /// Transparent huge pages defrag mode: `always`, `defer`, `defer+madvise`, `madvise`, `never`.
    pub thp_defrag: Option<String>,
}

pub(super) fn collect(notes: &mut Vec<String>) -> Memory {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let total_bytes = crate::machine::meminfo_bytes(&meminfo, "MemTotal");
    if total_bytes.is_none() {
        notes.push("memory: cannot read MemTotal from /proc/meminfo".into());
    }
    let thp = |file: &str| read_trimmed(format!("{THP_SYSFS}/{file}")).and_then(|s| bracketed(&s));
    Memory {
        total_bytes,
        available_bytes: crate::machine::meminfo_bytes(&meminfo, "MemAvailable"),
        page_size: page_size(),
        thp_enabled: thp("enabled"),
        thp_defrag: thp("defrag"),
    }
}

impl Memory {
    /// `23.5 GiB total, 23.0 GiB available; page 4 KiB; THP madvise (defrag madvise)`.
    pub(super) fn describe(&self) -> String {
        format!(
            "{} total, {} available; page {}; THP {} (defrag {})",
            bytes_or_dash(self.total_bytes),
            bytes_or_dash(self.available_bytes),
            bytes_or_dash(self.page_size),
            opt(&self.thp_enabled),
            opt(&self.thp_defrag)
        )
    }

    pub(super) fn details(&self) -> Vec<(String, String)> {
        vec![
            ("memory total".into(), bytes_exact(self.total_bytes)),
            ("memory available".into(), bytes_exact(self.available_bytes)),
            ("page size".into(), opt(&self.page_size)),
            (
                "transparent hugepages".into(),
                format!(
                    "{} (defrag {})",
                    opt(&self.thp_enabled),
                    opt(&self.thp_defrag)
                ),
            ),
        ]
    }
}

fn bytes_or_dash(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "-".into(), crate::units::format_bytes)
}

fn page_size() -> Option<u64> {
    // SAFETY: sysconf only reads a system setting.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).ok().filter(|&n| n > 0)
}
