//! The backing [`crate::file::RandomAccessFile::open`] chooses for a file, and why.
//!
//! **Measured winners**: when `iolab bench random` has measured this machine (same kernel,
//! same cores; the tuning file of [`crate::lab::read::tuning`]), the winner of the file's size class
//! is followed: `warm` for a file that fits in the memory available now, `beyond-memory`
//! for one that does not. Only `pread`, `mmap` and `mmap-random` can back a
//! `RandomAccessFile`; the suite records the best of those at queue depth 1 (and `pread`
//! when a map wins by less than the noise).
//!
//! **The rule** otherwise: `pread`. It is never far behind warm (a system call and a 4 KiB
//! copy, about a microsecond, against a `memcpy` from a map), holds beyond memory where a
//! map collapses (CIDR 2022: cold, a map's read-ahead is wasted), and needs no map slot
//! (evidence: docs/findings/random.md).
//!
//! **System calls**: a read of `/proc/meminfo` and of the small tuning file.

use crate::read::tuning;

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
/// available; `beyond-memory`) on this machine, if one is saved: its method, whether it is
/// a map, its IOPS.
fn measured(class: &str) -> Option<(&'static str, bool, f64)> {
    let w = tuning::load()
        .into_iter()
        .flat_map(|t| t.random)
        .find(|w| w.size_class == class)?;
    let mmap = tuning::RandomWinner::backing_of(&w.method)?;
    let method = match w.method.as_str() {
        "mmap" => "mmap",
        "mmap-random" => "mmap-random",
        _ => "pread",
    };
    Some((method, mmap, w.iops))
}

/// The random-read method [`choose`] follows for files of size class `class` (`warm` or
/// `beyond-memory`): the winner measured here, else `pread`.
pub fn method_for_class(class: &str) -> &'static str {
    measured(class).map_or("pread", |(method, _, _)| method)
}

/// The backing for a file of `len` bytes.
pub fn choose(len: u64) -> Choice {
    let available = crate::sysinfo::mem_available_bytes();
    let class = match available {
        Some(m) if len > m => "beyond-memory",
        _ => "warm",
    };
    let fits = match available {
        Some(m) if len > m => format!("{len} bytes, more than the {m} bytes of memory available"),
        Some(m) => format!("{len} bytes, within the {m} bytes of memory available"),
        None => format!("{len} bytes"),
    };
    if let Some((method, mmap, iops)) = measured(class) {
        return Choice {
            method,
            mmap,
            random_advice: method == "mmap-random",
            reason: format!(
                "{fits}: the {class} winner measured by `iolab bench random` on this machine \
                 ({iops:.0} IOPS)"
            ),
        };
    }
    Choice {
        method: "pread",
        mmap: false,
        random_advice: false,
        reason: format!(
            "{fits}: pread, the rule without measurements (close to a map warm, safe beyond memory)"
        ),
    }
}
