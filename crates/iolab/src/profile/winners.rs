//! The winners a machine profile holds ([`super::Profile`]): each suite's, with what it
//! beat and what it decides (a size class, a cache state, a device).

use serde::{Deserialize, Serialize};

use super::{MIN_BYTES, device_of};

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

/// Which list of strategy winners.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategies {
    /// [`super::Profile::edit`].
    Edit,
    /// [`super::Profile::durable`].
    Durable,
    /// [`super::Profile::write`].
    Write,
    /// [`super::Profile::append`].
    Append,
}
