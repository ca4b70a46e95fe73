//! `auto`: picks a method for this input and machine, and says why.
//!
//! **The rule**, from the `count` suite's measurements on 2-core EPYC VMs (AVX-512 on
//! the first, AVX2 since): what matters is whether the bytes come from memory or from the
//! device.
//! - No trustworthy size (pipes, standard input, `/proc` files): `bufread-chunks`, the
//!   only kind of method that works on them.
//! - Under [`SMALL_FILE`]: `bufread-chunks`. One or two `read`s cost less than setting up a
//!   map, a thread or a ring; a 1 KiB file must not pay for any of them.
//! - Cold (at most [`COLD_RESIDENCY`] of it cached, `cachestat(2)` at open), where io_uring
//!   can run: `uring-direct`, 8 reads of 1 MiB in flight into huge-page buffers, with no
//!   page-cache work at all. Since its buffers are on huge pages (one request per read, not
//!   two) it was the fastest cold method on this project's disk at 1 GiB (0.31 s against
//!   0.34–0.70 s for `mmap-parallel`) and 22 GiB (6.7 s against 8.5–20 s; fio's best 7.3 s)
//!   (evidence: docs/findings/count.md, 26 Nov). A file system that refuses `O_DIRECT` gets
//!   [`FALLBACK`].
//! - Otherwise `mmap-parallel`: the map scanned by every core with the best kernel (one
//!   thread below 16 MiB; the single-threaded `mmap-*` with the best kernel on a one-core
//!   machine), at memory speed when warm.
//!
//! **Measured winners**: when `iolab bench count` has measured this machine (same kernel,
//! same cores; see [`crate::lab::profile`]), the winner for the file's cache state and size class
//! (powers of four from 256 MiB: 1–4 GiB, 16–64 GiB, …), with the threads, queue depth
//! or block size it won with, replaces the rule for files of at least [`SMALL_FILE`];
//! it was recorded only if it beat the fastest other method beyond the noise. `--verbose`
//! says which applied: the winner and its class, or that none was measured for the class.
//!
//! **System calls**: `fstatfs(2)` (pseudo file systems), `cachestat(2)` (one call for the
//! whole file, Linux 6.5; else `mincore(2)` on a sample of the file), a read of the small
//! `auto.json` for files of 1 MiB and more, then those of the chosen method.

use crate::profile;

use super::{CountMethod, ReadOptions};
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
    pub method: CountMethod,
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
    fn rule(method: CountMethod, reason: String) -> Choice {
        Choice {
            method,
            reason,
            threads: None,
            queue_depth: None,
            block: None,
        }
    }

    /// `options` with the settings this choice won with, where `options` leaves them open,
    /// and only the hints that belong to the chosen method (a hint asks for an access
    /// pattern; `auto` does not refuse one that its choice has no use for).
    pub fn apply(&self, options: &ReadOptions) -> ReadOptions {
        let mut options = options.with_defaults(self.threads, self.queue_depth, self.block);
        options.hints.retain(|hint| hint.applies_to(self.method));
        options
    }
}

fn measured(winner: &profile::CountWinner, cached: &str) -> Option<Choice> {
    let w = &winner.winner;
    // The method, if this iolab knows it and it can run here.
    let method: CountMethod = w.method.parse().ok()?;
    if method == CountMethod::Auto || method.availability().is_err() {
        return None;
    }
    Some(Choice {
        method,
        reason: format!(
            "{cached}: the {} winner for files of {} measured by `iolab bench count` on this \
             machine ({}, beyond the noise over {} at {})",
            winner.cache,
            winner.size_class,
            crate::units::format_rate(w.bytes_per_s),
            winner.runner_up,
            crate::units::format_rate(winner.runner_up_bytes_per_s),
        ),
        threads: w.threads,
        queue_depth: w.queue_depth,
        block: w.block_bytes,
    })
}

/// The single-threaded mapped method with the best kernel.
fn best_mmap() -> CountMethod {
    match Kernel::best() {
        Kernel::Avx512 => CountMethod::MmapAvx512,
        Kernel::Avx2 => CountMethod::MmapAvx2,
        Kernel::Scalar => CountMethod::Mmap,
    }
}

/// Chooses a method for `input`.
pub fn choose(input: &Input, options: &ReadOptions) -> Choice {
    if !input.is_sized() {
        return Choice::rule(
            CountMethod::BufreadChunks,
            format!(
                "a {} without a trustworthy size: streaming reads",
                input.kind().describe()
            ),
        );
    }
    let len = input.reported_len() - input.start();
    if len < SMALL_FILE {
        return Choice::rule(
            CountMethod::BufreadChunks,
            format!("{len} bytes is under {SMALL_FILE}: plain reads beat any set-up"),
        );
    }
    let residency = crate::cache::residency_sampled(input.file()).unwrap_or(1.0);
    let cores = options.threads_or_cores();
    let cached = format!("{len} bytes, {:.0}% cached", residency * 100.0);
    let state = if residency >= WARM_RESIDENCY {
        Some("warm")
    } else if residency <= COLD_RESIDENCY {
        Some("cold")
    } else {
        None
    };
    let class = profile::SizeClass::of(len);
    let profile = state.map(|_| profile::load_checked());
    if let (Some(state), Some(Ok(tuning))) = (state, &profile)
        && let Some(choice) = tuning
            .count_winner(state, len)
            .and_then(|w| measured(w, &cached))
    {
        return choice;
    }
    let unmeasured = match (state, class, profile) {
        (Some(_), Some(_), Some(Err(why))) => format!(" (the rule: {why})"),
        (Some(state), Some(class), _) => format!(
            " (no {state} winner beyond the noise measured for files of {class} here: the rule)"
        ),
        _ => " (the rule)".to_string(),
    };
    if state == Some("cold") && super::uring_direct::availability().is_ok() {
        return Choice::rule(
            CountMethod::UringDirect,
            format!(
                "{cached}: read it from the device with io_uring and O_DIRECT, {} reads of \
                 {} in flight{unmeasured}",
                super::uring_direct::DEFAULT_QUEUE_DEPTH,
                crate::units::format_bytes(super::uring_direct::DEFAULT_BLOCK_SIZE as u64)
            ),
        );
    }
    let method = if cores > 1 {
        CountMethod::MmapParallel
    } else {
        best_mmap()
    };
    Choice::rule(
        method,
        format!(
            "{cached}: map it and scan with the {} kernel on {cores} thread(s){unmeasured}",
            Kernel::best()
        ),
    )
}

/// What `auto` runs when its first choice turns out to be unavailable for this file (an
/// `O_DIRECT` refusal is only known when opening): parallel buffered reads.
pub const FALLBACK: CountMethod = CountMethod::PreadParallel;
