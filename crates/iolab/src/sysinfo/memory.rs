//! Memory: RAM from `/proc/meminfo`, the page size, and transparent huge pages, which
//! decide how many page faults an `mmap` scan takes.

use serde::{Deserialize, Serialize};

use crate::sys::procfs::{bracketed, read_trimmed};
use crate::units::{bytes_exact, or_dash as opt};

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
    let total_bytes = meminfo_bytes(&meminfo, "MemTotal");
    if total_bytes.is_none() {
        notes.push("memory: cannot read MemTotal from /proc/meminfo".into());
    }
    let thp = |file: &str| read_trimmed(format!("{THP_SYSFS}/{file}")).and_then(|s| bracketed(&s));
    Memory {
        total_bytes,
        available_bytes: meminfo_bytes(&meminfo, "MemAvailable"),
        page_size: page_size(),
        thp_enabled: thp("enabled"),
        thp_defrag: thp("defrag"),
    }
}

/// `MemAvailable` from /proc/meminfo, read now.
pub(super) fn available_now() -> Option<u64> {
    meminfo_bytes(
        &std::fs::read_to_string("/proc/meminfo").ok()?,
        "MemAvailable",
    )
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

/// A `/proc/meminfo` field (`MemTotal:  24684092 kB`) in bytes.
fn meminfo_bytes(meminfo: &str, key: &str) -> Option<u64> {
    meminfo.lines().find_map(|line| {
        let (name, rest) = line.split_once(':')?;
        if name != key {
            return None;
        }
        let mut words = rest.split_whitespace();
        let value: u64 = words.next()?.parse().ok()?;
        match words.next() {
            Some("kB") => value.checked_mul(1024),
            None => Some(value),
            Some(_) => None,
        }
    })
}

fn page_size() -> Option<u64> {
    // SAFETY: sysconf only reads a system setting.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).ok().filter(|&n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_fields() {
        let text = "MemTotal:       24684092 kB\nMemFree:        22669812 kB\n\
                    MemAvailable:   24136588 kB\nHugePages_Total:       0\n";
        assert_eq!(meminfo_bytes(text, "MemTotal"), Some(24_684_092 * 1024));
        assert_eq!(meminfo_bytes(text, "MemAvailable"), Some(24_136_588 * 1024));
        assert_eq!(meminfo_bytes(text, "HugePages_Total"), Some(0));
        assert_eq!(meminfo_bytes(text, "Mem"), None);
    }
}
