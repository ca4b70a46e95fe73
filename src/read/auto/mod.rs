//! `auto`: picks a method for this input and machine, and says why.
//!
//! **The rule**, from the `count` suite's measurements on a 2-core AVX-512 VM (see the
//! README): what matters is whether the bytes come from memory or from the device.
//! - No trustworthy size (pipes, standard input, `/proc` files): `bufread-chunks`, the
//!   only kind of method that works on them.
//! - Under [`SMALL_FILE`]: `bufread-chunks`. One or two `read`s cost less than setting up a
//!   map, a thread or a ring; a 1 KiB file must not pay for any of them.
//! - Otherwise `mmap-parallel`: the map scanned by every core with the best kernel (one
//!   thread below 16 MiB; the single-threaded `mmap-*` with the best kernel on a one-core
//!   machine). Warm, it runs at memory speed. Cold, on the 2-core VM it was measured on,
//!   the kernel's read-ahead behind the page faults of two threads beat deep-queue
//!   `O_DIRECT` reads (2.5 GB/s against 2.2 GB/s at best, and 1.2 GB/s at the usual
//!   queue depth 8 × 1 MiB): the host caches too. Where the device rewards deep queues,
//!   a benchmark run finds `uring-direct` the cold winner, and `auto` then follows it.
//!
//! **Measured winners**: when `iolab bench count` has measured this machine (same kernel,
//! same cores; see [`tuning`]), its warm and cold winners, with the threads, queue
//! depth or block size they won with, replace the two rules above for files of at least
//! [`SMALL_FILE`]. `--verbose` says which applied.
//!
//! **System calls**: `fstatfs(2)` (pseudo file systems), `cachestat(2)` (one call for the
//! whole file, Linux 6.5; else `mincore(2)` on a sample of the file), a read of the small
//! `auto.json` for files of 1 MiB and more, then those of the chosen method.

pub mod tuning;

use super::{Method, ReadOptions};
use crate::input::Input;
use crate::kernel::Kernel;

/// Below this size a plain read beats every set-up: 1 MiB.
pub const SMALL_FILE: u64 = 1 << 20;
/// At or above this page-cache residency the file counts as warm.
pub const WARM_RESIDENCY: f64 = 0.9;
/// At or below this residency the file counts as cold.
pub const COLD_RESIDENCY: f64 = 0.1;

/// The method `auto` chose and the reason, for `--verbose`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The chosen method (never `auto`).
    pub method: Method,
    /// Why, in a few words.
    pub reason: String,
    /// Threads the method won with, when a measured winner was followed.
    pub threads: Option<usize>,
    /// Queue depth the method won with.
    pub queue_depth: Option<usize>,
    /// Block size the method won with.
    pub block: Option<usize>,
}

impl Choice {
    fn rule(method: Method, reason: String) -> Choice {
        Choice {
            method,
            reason,
            threads: None,
            queue_depth: None,
            block: None,
        }
    }

    /// `options` with the settings this choice won with, where `options` leaves them open.
    pub fn apply(&self, options: &ReadOptions) -> ReadOptions {
        options.with_defaults(self.threads, self.queue_depth, self.block)
    }
}

fn measured(winner: &tuning::Winner, state: &str, cached: &str) -> Option<Choice> {
    let method = winner.method()?;
    Some(Choice {
        method,
        reason: format!(
            "{cached}: the {state} winner measured by `iolab bench count` on this machine ({})",
            crate::units::format_rate(winner.bytes_per_s)
        ),
        threads: winner.threads,
        queue_depth: winner.queue_depth,
        block: winner.block_bytes,
    })
}

/// The single-threaded mapped method with the best kernel.
fn best_mmap() -> Method {
    match Kernel::best() {
        Kernel::Avx512 => Method::MmapAvx512,
        Kernel::Avx2 => Method::MmapAvx2,
        Kernel::Scalar => Method::Mmap,
    }
}

/// Chooses a method for `input`.
pub fn choose(input: &Input, options: &ReadOptions) -> Choice {
    if !input.is_sized() {
        return Choice::rule(
            Method::BufreadChunks,
            format!(
                "a {} without a trustworthy size: streaming reads",
                input.kind().describe()
            ),
        );
    }
    let len = input.reported_len() - input.start();
    if len < SMALL_FILE {
        return Choice::rule(
            Method::BufreadChunks,
            format!("{len} bytes is under {SMALL_FILE}: plain reads beat any set-up"),
        );
    }
    let residency = crate::cache::residency_sampled(input.file()).unwrap_or(1.0);
    let cores = options.threads_or_cores();
    let cached = format!("{len} bytes, {:.0}% cached", residency * 100.0);
    let tuning = tuning::load();
    if residency >= WARM_RESIDENCY
        && let Some(choice) = tuning
            .as_ref()
            .and_then(|t| t.warm.as_ref())
            .and_then(|w| measured(w, "warm", &cached))
    {
        return choice;
    }
    if residency <= COLD_RESIDENCY
        && let Some(choice) = tuning
            .as_ref()
            .and_then(|t| t.cold.as_ref())
            .and_then(|w| measured(w, "cold", &cached))
    {
        return choice;
    }
    let method = if cores > 1 {
        Method::MmapParallel
    } else {
        best_mmap()
    };
    Choice::rule(
        method,
        format!(
            "{cached}: map it and scan with the {} kernel on {cores} thread(s)",
            Kernel::best()
        ),
    )
}

/// What `auto` runs when its first choice turns out to be unavailable for this file (an
/// `O_DIRECT` refusal is only known when opening): parallel buffered reads.
pub const FALLBACK: Method = Method::PreadParallel;
