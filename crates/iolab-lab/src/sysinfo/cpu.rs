//! The processor: model, cores, SIMD features, caches, and the kernel iolab counts with.
//!
//! Cache sizes come from `/sys/devices/system/cpu/cpu0/cache/index*/` and are **per
//! instance** (per core for L1 and usually L2), which is what a buffer-size discussion
//! needs; `lscpu` prints totals over all instances instead ("64 KiB (2 instances)").

pub use crate::machine::cpu_model_name as model_name;
use std::collections::BTreeSet;
use std::fs;
use std::num::NonZero;

use serde::{Deserialize, Serialize};

use super::or_none;
use crate::kernel::Kernel;
use crate::procfs::read_trimmed;
use crate::text::or_dash as opt;

const CPU_SYSFS: &str = "/sys/devices/system/cpu";

/// The processor.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cpu {
    /// `model name` from `/proc/cpuinfo`.
    pub model: Option<String>,
    /// CPUs this process may use (`std::thread::available_parallelism`: affinity, cgroup quota).
    pub available_parallelism: Option<usize>,
    /// CPUs online in the system (`/sys/devices/system/cpu/online`).
    pub online: Option<usize>,
    /// The SIMD features relevant to iolab's kernels that this CPU has, as
    /// `/proc/cpuinfo` names them (`sse2`, `avx2`, `avx512f`, `avx512bw`, `avx512vl`,
    /// `avx512_vpopcntdq`).
    pub simd: Vec<String>,
    /// The byte-counting kernel iolab picks here ([`Kernel::best`]).
    pub kernel: String,
    /// Level-1 data cache of one core, in bytes.
    pub l1d_bytes: Option<u64>,
    /// Level-2 cache of one instance, in bytes.
    pub l2_bytes: Option<u64>,
    /// Level-3 cache of one instance, in bytes.
    pub l3_bytes: Option<u64>,
    /// Every cache of CPU 0, by level.
    pub caches: Vec<Cache>,
}

/// One cache as seen from CPU 0.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cache {
    /// 1, 2, 3, …
    pub level: u8,
    /// `Data`, `Instruction` or `Unified`, as sysfs says.
    pub kind: String,
    /// The size of one instance, in bytes.
    pub size_bytes: u64,
    /// How many CPUs share one instance (from `shared_cpu_list`).
    pub shared_by_cpus: Option<usize>,
    /// How many instances the system has (distinct `shared_cpu_list`s over all CPUs).
    pub instances: Option<usize>,
}

impl Cache {
    /// `L1d`, `L1i`, `L2`, `L3`, as `lscpu` names them.
    pub fn label(&self) -> String {
        match self.kind.as_str() {
            "Data" => format!("L{}d", self.level),
            "Instruction" => format!("L{}i", self.level),
            _ => format!("L{}", self.level),
        }
    }
}

pub(super) fn collect(notes: &mut Vec<String>) -> Cpu {
    let model = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| crate::machine::cpuinfo_model(&text));
    if model.is_none() {
        notes.push("cpu: no 'model name' in /proc/cpuinfo".into());
    }
    let online = read_trimmed(format!("{CPU_SYSFS}/online"))
        .and_then(|list| count_cpu_list(&list))
        .or_else(sysconf_online);
    let caches = caches();
    if caches.is_empty() {
        notes.push(format!(
            "cpu: no cache information under {CPU_SYSFS}/cpu0/cache"
        ));
    }
    let size_of = |level: u8, kinds: &[&str]| {
        caches
            .iter()
            .find(|c| c.level == level && kinds.contains(&c.kind.as_str()))
            .map(|c| c.size_bytes)
    };
    Cpu {
        model,
        available_parallelism: std::thread::available_parallelism().ok().map(NonZero::get),
        online,
        simd: simd_features(),
        kernel: Kernel::best().name().to_string(),
        l1d_bytes: size_of(1, &["Data", "Unified"]),
        l2_bytes: size_of(2, &["Unified", "Data"]),
        l3_bytes: size_of(3, &["Unified", "Data"]),
        caches,
    }
}

impl Cpu {
    /// `AMD EPYC, 2 cores available (2 online)`.
    pub(super) fn describe_model_and_cores(&self) -> String {
        format!(
            "{}, {} cores available ({} online)",
            self.model.as_deref().unwrap_or("unknown model"),
            opt(&self.available_parallelism),
            opt(&self.online)
        )
    }

    /// `L1d 32 KiB x2, L2 1 MiB x2, L3 32 MiB x1` (size of one instance x instances).
    pub(super) fn describe_caches(&self) -> String {
        let parts: Vec<String> = self
            .caches
            .iter()
            .filter(|c| c.kind != "Instruction")
            .map(|c| match c.instances {
                Some(n) => format!(
                    "{} {} x{n}",
                    c.label(),
                    crate::units::format_bytes(c.size_bytes)
                ),
                None => format!("{} {}", c.label(), crate::units::format_bytes(c.size_bytes)),
            })
            .collect();
        if parts.is_empty() {
            "unknown".to_string()
        } else {
            parts.join(", ")
        }
    }

    pub(super) fn details(&self) -> Vec<(String, String)> {
        let mut rows = vec![
            (
                "cpu model".to_string(),
                self.model.clone().unwrap_or_else(|| "-".into()),
            ),
            (
                "cpu cores".into(),
                format!(
                    "{} available to this process, {} online",
                    opt(&self.available_parallelism),
                    opt(&self.online)
                ),
            ),
            ("simd".into(), or_none(self.simd.join(" "))),
            ("count kernel".into(), self.kernel.clone()),
        ];
        for cache in &self.caches {
            let mut value = crate::units::format_bytes(cache.size_bytes);
            if let Some(n) = cache.shared_by_cpus {
                let s = if n == 1 { "" } else { "s" };
                value.push_str(&format!(", shared by {n} cpu{s}"));
            }
            if let Some(n) = cache.instances {
                let s = if n == 1 { "" } else { "s" };
                value.push_str(&format!(", {n} instance{s}"));
            }
            rows.push((format!("cache {}", cache.label()), value));
        }
        rows
    }
}

/// The number of CPUs in a sysfs CPU list such as `0-3,8,10-11`.
fn count_cpu_list(list: &str) -> Option<usize> {
    let mut count = 0;
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        count += match part.split_once('-') {
            Some((first, last)) => {
                let (first, last): (usize, usize) = (first.parse().ok()?, last.parse().ok()?);
                last.checked_sub(first)? + 1
            }
            None => {
                part.parse::<usize>().ok()?;
                1
            }
        };
    }
    Some(count)
}

fn sysconf_online() -> Option<usize> {
    // SAFETY: sysconf only reads a system setting.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).ok().filter(|&n| n > 0)
}

/// A sysfs cache size: `32K`, `1024K`, `32M` (binary multiples), or plain bytes.
fn parse_cache_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, multiplier) = match text.as_bytes().last()? {
        b'K' => (&text[..text.len() - 1], 1 << 10),
        b'M' => (&text[..text.len() - 1], 1 << 20),
        b'G' => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(multiplier)
}

/// The caches of CPU 0, sorted by level then kind.
fn caches() -> Vec<Cache> {
    let dir = format!("{CPU_SYSFS}/cpu0/cache");
    let Ok(entries) = fs::read_dir(&dir) else {
        return Vec::new();
    };
    let cpu_dirs = cpu_dirs();
    let mut caches: Vec<Cache> = entries
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.strip_prefix("index")?.parse::<u32>().ok()?;
            let base = format!("{dir}/{name}");
            let level = read_trimmed(format!("{base}/level"))?.parse().ok()?;
            let kind = read_trimmed(format!("{base}/type"))?;
            let size_bytes = parse_cache_size(&read_trimmed(format!("{base}/size"))?)?;
            let shared_by_cpus = read_trimmed(format!("{base}/shared_cpu_list"))
                .and_then(|list| count_cpu_list(&list));
            // One instance per distinct set of CPUs sharing this index.
            let sharing: BTreeSet<String> = cpu_dirs
                .iter()
                .filter_map(|cpu| read_trimmed(format!("{cpu}/cache/{name}/shared_cpu_list")))
                .collect();
            Some(Cache {
                level,
                kind,
                size_bytes,
                shared_by_cpus,
                instances: (!sharing.is_empty()).then_some(sharing.len()),
            })
        })
        .collect();
    caches.sort_by(|a, b| (a.level, &a.kind).cmp(&(b.level, &b.kind)));
    caches
}

/// `/sys/devices/system/cpu/cpuN` for every CPU.
fn cpu_dirs() -> Vec<String> {
    let Ok(entries) = fs::read_dir(CPU_SYSFS) else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            let number = name.strip_prefix("cpu")?;
            (!number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()))
                .then(|| format!("{CPU_SYSFS}/{name}"))
        })
        .collect()
}

/// The SIMD features iolab's kernels care about that this CPU has.
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
fn simd_features() -> Vec<String> {
    let mut found: Vec<&str> = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        let checks = [
            ("sse2", is_x86_feature_detected!("sse2")),
            ("avx2", is_x86_feature_detected!("avx2")),
            ("avx512f", is_x86_feature_detected!("avx512f")),
            ("avx512bw", is_x86_feature_detected!("avx512bw")),
            ("avx512vl", is_x86_feature_detected!("avx512vl")),
            (
                "avx512_vpopcntdq",
                is_x86_feature_detected!("avx512vpopcntdq"),
            ),
        ];
        found.extend(checks.iter().filter(|(_, on)| *on).map(|(name, _)| *name));
    }
    found.into_iter().map(String::from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(count_cpu_list("0"), Some(1));
        assert_eq!(count_cpu_list("0-1\n"), Some(2));
        assert_eq!(count_cpu_list("0-3,8,10-11"), Some(7));
        assert_eq!(count_cpu_list("3-1"), None);
        assert_eq!(count_cpu_list("x"), None);
    }

    #[test]
    fn cache_sizes() {
        assert_eq!(parse_cache_size("32K"), Some(32 << 10));
        assert_eq!(parse_cache_size("1024K\n"), Some(1 << 20));
        assert_eq!(parse_cache_size("32M"), Some(32 << 20));
        assert_eq!(parse_cache_size("512"), Some(512));
        assert_eq!(parse_cache_size("K"), None);
    }
}
