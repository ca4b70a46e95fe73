//! Limit probes: how fast this machine *could* go, so every row can say how close it came.
//!
//! - **Memory-scan ceiling**: the fastest count kernel over an anonymous, pre-faulted buffer
//!   in RAM (advised to use huge pages), split over 1..N threads; the best of several
//!   repetitions. No file, no page cache, no page faults: the limit of a warm scan.
//! - **Device read ceiling**: `O_DIRECT` reads of the data file through io_uring with
//!   registered buffers (the `uring-direct` engine), swept over queue depth × block size
//!   as fio does; the best point is the limit of a cold read. `O_DIRECT` bypasses the page
//!   cache, so the file's cache state does not matter.

use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::input::Input;
use crate::kernel::ByteCounter;
use crate::read::{Method, ReadOptions, mmap_parallel};
use crate::task::{CountLines, Task};

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
    /// The best throughput measured.
    pub bytes_per_s: f64,
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
    fn from_points(points: Vec<ProbePoint>) -> Probe {
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

/// Measures the memory-scan ceiling over a `len`-byte buffer, for 1..=`max_threads`
/// threads, the best of `repetitions`.
pub fn memory_scan(len: usize, max_threads: usize, repetitions: usize) -> Probe {
    // An anonymous map advised to use huge pages, as the page cache can (large folios):
    // with 4 KiB pages the probe would measure TLB misses, not memory. Text-like content,
    // a newline every 110 bytes, so the kernel does real work.
    let Ok(mut map) = memmap2::MmapMut::map_anon(len.max(1)) else {
        return Probe {
            unavailable: Some("cannot map an anonymous buffer".into()),
            ..Probe::default()
        };
    };
    let _ = map.advise(memmap2::Advice::HugePage);
    map.fill(b'x');
    for i in (109..len).step_by(110) {
        map[i] = b'\n';
    }
    let buffer: &[u8] = &map;
    let counter = ByteCounter::best();
    let expected = buffer.len() / 110;
    let mut points = Vec::new();
    for threads in 1..=max_threads.max(1) {
        let mut best = 0.0f64;
        for _ in 0..repetitions.max(1) {
            let mut task = CountLines::new(counter);
            let start = Instant::now();
            mmap_parallel::feed_parallel(buffer, threads, &mut task);
            let secs = start.elapsed().as_secs_f64();
            debug_assert_eq!(task.lines() as usize, expected);
            if secs > 0.0 {
                best = best.max(len as f64 / secs);
            }
        }
        points.push(ProbePoint {
            threads: Some(threads),
            queue_depth: None,
            block_bytes: None,
            bytes_per_s: best,
        });
    }
    Probe::from_points(points)
}

/// A task that only counts bytes: the device probe measures reading, not scanning.
struct Discard;

impl Task for Discard {
    fn feed(&mut self, _chunk: &[u8]) {}
}

/// Measures the device's sequential-read ceiling on `path` with `O_DIRECT` io_uring reads
/// of the whole file, for every queue depth × block size.
pub fn device_read(path: &Path, queue_depths: &[usize], block_sizes: &[usize]) -> Probe {
    if let Err(reason) = Method::UringDirect.availability() {
        return Probe {
            unavailable: Some(reason),
            ..Probe::default()
        };
    }
    let mut points = Vec::new();
    for &block in block_sizes {
        for &depth in queue_depths {
            let input = match Input::open(path) {
                Ok(i) => i,
                Err(e) => {
                    return Probe {
                        unavailable: Some(e.to_string()),
                        ..Probe::default()
                    };
                }
            };
            let options = ReadOptions::new().queue_depth(depth).buffer_size(block);
            let start = Instant::now();
            match crate::read::run(Method::UringDirect, &input, &options, &mut Discard) {
                Ok((_, bytes)) => {
                    let secs = start.elapsed().as_secs_f64();
                    points.push(ProbePoint {
                        threads: None,
                        queue_depth: Some(depth),
                        block_bytes: Some(block),
                        bytes_per_s: if secs > 0.0 { bytes as f64 / secs } else { 0.0 },
                    });
                }
                Err(e) => {
                    return Probe {
                        unavailable: Some(e.to_string()),
                        ..Probe::default()
                    };
                }
            }
        }
    }
    Probe::from_points(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_probe_has_a_point_per_thread_count_and_a_ceiling() {
        let p = memory_scan(4 << 20, 2, 2);
        assert_eq!(p.points.len(), 2);
        assert_eq!(p.points[1].threads, Some(2));
        let best = p.points.iter().map(|x| x.bytes_per_s).fold(0.0, f64::max);
        assert_eq!(p.ceiling_bytes_per_s, Some(best));
        assert!(best > 0.0);
    }

    #[test]
    fn device_probe_sweeps_depth_by_block() {
        let dir = crate::test_support::scratch();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![b'a'; 3 << 20]).unwrap();
        let p = device_read(&path, &[1, 4], &[64 << 10, 1 << 20]);
        if let Some(reason) = &p.unavailable {
            eprintln!("skipped: device_probe_sweeps_depth_by_block: {reason}");
            return;
        }
        assert_eq!(p.points.len(), 4);
        assert!(p.ceiling_bytes_per_s.unwrap() > 0.0);
    }
}
