//! What the limit probes of `iolab bench` measured: the points of each probe and its
//! ceiling (the probes themselves are the harness's).

use serde::{Deserialize, Serialize};

use crate::cache::CacheState;

/// One point of a probe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbePoint {
    /// Threads (memory scan) or 1 (device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// Reads in flight (device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<usize>,
    /// Bytes per read (device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_bytes: Option<usize>,
    /// Buffered reads of the evicted file, not `O_DIRECT` (device).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub buffered: bool,
    /// The median throughput of its samples.
    pub bytes_per_s: f64,
    /// Every sample, bytes per second, in the order taken.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<f64>,
}

/// A probe's sweep and its best point.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// Every point measured.
    pub points: Vec<ProbePoint>,
    /// The highest throughput: the ceiling.
    pub ceiling_bytes_per_s: Option<f64>,
    /// Why the probe could not run, if it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

impl Probe {
    /// A probe of `points`, its ceiling the best of them.
    pub fn from_points(points: Vec<ProbePoint>) -> Probe {
        let ceiling = points.iter().map(|p| p.bytes_per_s).reduce(f64::max);
        Probe {
            points,
            ceiling_bytes_per_s: ceiling,
            unavailable: None,
        }
    }
}

/// Both ceilings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Ceilings {
    /// The memory-scan ceiling (for warm rows).
    pub memory_scan: Probe,
    /// The device's sequential-read ceiling (for cold rows).
    pub device_read: Probe,
}

impl Ceilings {
    /// The ceiling of `cache`'s rows: the memory scan for warm, the device read for cold.
    pub fn get(&self, cache: CacheState) -> &Probe {
        match cache {
            CacheState::Warm => &self.memory_scan,
            CacheState::Cold => &self.device_read,
        }
    }

    /// The ceiling of `cache`'s rows, to replace it.
    pub fn get_mut(&mut self, cache: CacheState) -> &mut Probe {
        match cache {
            CacheState::Warm => &mut self.memory_scan,
            CacheState::Cold => &mut self.device_read,
        }
    }
}
