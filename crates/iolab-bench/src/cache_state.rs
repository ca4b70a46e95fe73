//! The page-cache states a run measures its input in ([`iolab_results::cache`]), and
//! when one cannot be had here.

pub use iolab_results::cache::*;

use std::path::Path;

use crate::error::Result;
use iolab_lab::cache;

/// Why inputs of `bytes` at `path` (`copies` of them cached at once) cannot be measured
/// in this state here, if they cannot: a cold file on tmpfs cannot be evicted, and warm
/// ones must fit in 80% of the memory available.
pub fn impossible(
    cache: CacheState,
    path: &std::path::Path,
    bytes: u64,
    copies: u64,
) -> Option<String> {
    use iolab_lab::units::format_bytes;
    match cache {
        CacheState::Cold if iolab_lab::sysinfo::is_tmpfs(path.parent()?) => {
            Some("the data set is on tmpfs: it cannot be evicted".into())
        }
        CacheState::Warm => {
            let available = iolab_lab::sysinfo::mem_available_bytes()?;
            (bytes.saturating_mul(copies) > available / 10 * 8).then(|| match copies {
                1 => format!(
                    "the data set ({}) does not fit in 80% of available memory ({})",
                    format_bytes(bytes),
                    format_bytes(available)
                ),
                n => format!(
                    "{} copies of the data set ({} each) do not fit in 80% of available \
                     memory ({})",
                    if n == 3 {
                        "three".to_string()
                    } else {
                        n.to_string()
                    },
                    format_bytes(bytes),
                    format_bytes(available)
                ),
            })
        }
        CacheState::Cold => None,
    }
}

/// Puts `input` in `cache_state` and returns the residency measured afterwards. A file
/// that is not ours (`ours` false: a user's `--file`) is evicted without `fdatasync`.
pub fn prepare(
    input: &Path,
    cache_state: CacheState,
    drop_caches: bool,
    ours: bool,
) -> Result<f64> {
    match cache_state {
        CacheState::Cold => {
            let first = cache::evict_with(input, drop_caches, ours)?;
            if first.residency <= COLD_MAX_RESIDENCY {
                return Ok(first.residency);
            }
            // Read-ahead of a concurrent reader or a slow writeback: one more try.
            Ok(cache::evict_with(input, drop_caches, ours)?.residency)
        }
        CacheState::Warm => {
            let now = cache::residency_of(input)?;
            if now >= WARM_MIN_RESIDENCY {
                Ok(now)
            } else {
                Ok(cache::warm(input)?)
            }
        }
    }
}

/// Puts `input` in the page cache as a sequential read leaves it: evicted, then read
/// whole in 1 MiB pieces. Resident pages keep the folios of whoever read them last; a
/// previous section's parallel or random reads could leave small ones, and with small
/// folios a warm `mmap` scan faults per 64 KiB instead of per 2 MiB: in two full runs the
/// warm `mmap` rows spent 50–60 ms of system time on 1 GiB against 4 ms.
pub fn settle_warm(input: &Path, ours: bool) -> Result<()> {
    cache::evict_with(input, false, ours)?;
    cache::warm(input)?;
    Ok(())
}

/// Whether a run whose input had `residency` of its pages cached before it started was in
/// `cache` state.
pub fn reached(cache: CacheState, residency: f64) -> bool {
    match cache {
        CacheState::Cold => residency <= COLD_MAX_RESIDENCY,
        CacheState::Warm => residency >= WARM_MIN_RESIDENCY,
    }
}

/// The warning of `missed` counted runs of `what` that started with the cache not in
/// `cache` state; `None` when none did.
pub fn missed_warning(what: &str, missed: usize, cache: CacheState) -> Option<String> {
    (missed > 0).then(|| {
        let c = cache.name();
        format!("{what}: {missed} {c} run(s) started with the cache not {c} (see residency_before)")
    })
}
