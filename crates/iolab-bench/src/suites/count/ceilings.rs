//! The `count` suite's ceilings: the memory scan (warm) and the device read (cold) probes
//! sampled between a state's runs, and each row's share of its state's ceiling.

use std::path::Path;

use serde_json::json;

use crate::cache_state::CacheState;
use crate::context::Config;
use crate::probes::{self, DeviceRead, MemoryScan, Probe, Sampler};
use crate::results::Row;

/// The device probe's sweep with `--sweep`, as fio would run it (each point reads the whole
/// file once per sample).
const PROBE_QUEUE_DEPTHS: &[usize] = &[2, 8, 32];
const PROBE_BLOCK_SIZES: &[usize] = &[256 << 10, 1 << 20, 4 << 20];
/// The device probe's `O_DIRECT` point by default: 8 × 1 MiB, where the sweep's best points
/// have been (3 samples, besides the buffered point's 3).
const PROBE_DEFAULT_QUEUE_DEPTHS: &[usize] = &[8];
const PROBE_DEFAULT_BLOCK_SIZES: &[usize] = &[1 << 20];

/// A ceiling's sampler for one cache state, and how many samples it takes.
pub(super) struct Probing {
    pub(super) sampler: Box<dyn Sampler>,
    pub(super) samples: usize,
}

impl Probing {
    /// The probe: the samples still owed taken now (unless `interrupted`), then the
    /// medians.
    pub(super) fn finish(mut self, interrupted: bool) -> Probe {
        if !interrupted {
            probes::sample_up_to(self.sampler.as_mut(), self.samples);
        }
        self.sampler.finish()
    }
}

/// The ceiling of `cache`'s rows (warm: the memory scan; cold: the device read of `data`),
/// to be sampled between their runs (outside every timer). A sample of the device probe
/// reads the whole file: 3 by default, as many as a big data set's rounds.
pub(super) fn probe(
    cache: CacheState,
    data: &Path,
    bytes: u64,
    cores: usize,
    config: &Config,
) -> Probing {
    match cache {
        CacheState::Warm => Probing {
            sampler: Box::new(MemoryScan::new(
                bytes.clamp(64 << 20, 1 << 30) as usize,
                cores,
            )),
            samples: if config.quick {
                probes::MIN_SAMPLES
            } else {
                MEMORY_SAMPLES
            },
        },
        CacheState::Cold => {
            let (depths, blocks) = if config.sweep {
                (PROBE_QUEUE_DEPTHS, PROBE_BLOCK_SIZES)
            } else {
                (PROBE_DEFAULT_QUEUE_DEPTHS, PROBE_DEFAULT_BLOCK_SIZES)
            };
            Probing {
                sampler: Box::new(DeviceRead::new(data, depths, blocks)),
                samples: probes::MIN_SAMPLES,
            }
        }
    }
}

/// The memory-scan probe's samples by default: one per counted round of the default 5.
const MEMORY_SAMPLES: usize = 5;

/// The probe of a state this run does not measure.
pub(super) fn not_probed(cache: CacheState) -> Probe {
    Probe {
        unavailable: Some(format!(
            "not measured: this run has no {} rows",
            cache.name()
        )),
        ..Probe::default()
    }
}

/// Gives each measured row its share of the ceiling `limit` (and a note when above it).
pub(super) fn mark_ceiling(rows: &mut [Row], cache: CacheState, limit: f64) {
    for row in rows {
        if let Some(t) = row.throughput_bytes_per_s {
            row.extra.insert("ceiling_bytes_per_s".into(), json!(limit));
            row.extra
                .insert("ceiling_pct".into(), json!(100.0 * t / limit));
            if let Some(note) = above_ceiling(cache, 100.0 * t / limit) {
                row.notes.push(note);
            }
        }
    }
}

/// A row more than this percentage of its ceiling gets a note: 105%.
const ABOVE_CEILING_PCT: f64 = 105.0;

/// The note of a row at `pct` percent of its ceiling, when that is above
/// [`ABOVE_CEILING_PCT`]: what can make a measured row beat the probe.
fn above_ceiling(cache: CacheState, pct: f64) -> Option<String> {
    if pct <= ABOVE_CEILING_PCT {
        return None;
    }
    let why = match cache {
        CacheState::Cold => {
            "the device probe's median read was slower than this row: on a virtual disk the \
             host's cache serves some reads and not others, and a file read earlier may \
             still be in it"
        }
        CacheState::Warm => {
            "the probe's median scan was slower than this row: the machine was busier \
             while the probe ran, or the page cache's large folios beat the probe's buffer"
        }
    };
    Some(format!("{pct:.0}% of the {} ceiling: {why}", cache.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_rows_above_105_percent_of_the_ceiling_get_a_note() {
        assert_eq!(above_ceiling(CacheState::Cold, 105.0), None);
        let cold = above_ceiling(CacheState::Cold, 470.0).unwrap();
        assert!(cold.starts_with("470% of the cold ceiling"), "{cold}");
        assert!(cold.contains("host's cache"), "{cold}");
        let warm = above_ceiling(CacheState::Warm, 112.4).unwrap();
        assert!(warm.starts_with("112% of the warm ceiling"), "{warm}");
    }
}
