//! Limit probes: how fast this machine *could* go, so every row can say how close it came.
//!
//! - **Memory-scan ceiling**: the fastest count kernel over an anonymous, pre-faulted buffer
//!   in RAM (advised to use huge pages), split over 1..N threads. No file, no page cache,
//!   no page faults: the limit of a warm scan.
//! - **Device read ceiling**: `O_DIRECT` reads of the data file through io_uring with
//!   registered buffers (the `uring-direct` engine), swept over queue depth × block size
//!   as fio does, and one buffered configuration: the file evicted from the page cache
//!   (`POSIX_FADV_DONTNEED`), then read whole with 1 MiB `read(2)` calls and the kernel's
//!   read-ahead. The best point is the limit of a cold read. Both are needed: on this
//!   project's virtual disk `O_DIRECT` reads got 0.7 GB/s and buffered cold reads 3 GB/s
//!   (the host caches what the guest's read-ahead asks for), so an `O_DIRECT`-only
//!   ceiling put every cold row near 400% of it.
//!
//! Each point is the **median of at least [`MIN_SAMPLES`] samples**, taken in rounds (every
//! point once, then again), so one lucky sample — on a virtual disk, a read the host's
//! cache served (one run's single-sample probe made a cold row read "470%" of it) — does
//! not become the ceiling, and a drift during the probe does not favour one point.

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
    /// Buffered reads of the evicted file, not `O_DIRECT` (device).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub buffered: bool,
    /// The median throughput of its samples.
    pub bytes_per_s: f64,
    /// Every sample, bytes per second, in the order taken.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<f64>,
}

/// The fewest samples a probe point takes: 3.
pub const MIN_SAMPLES: usize = 3;

/// The median of `samples` (0 for none), as the rows' medians are taken.
fn median(samples: &[f64]) -> f64 {
    super::stats::Summary::of(samples).map_or(0.0, |s| s.median)
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
/// threads, each the median of `repetitions` (at least [`MIN_SAMPLES`]) samples.
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
    let counts: Vec<usize> = (1..=max_threads.max(1)).collect();
    let mut samples = vec![Vec::new(); counts.len()];
    for _ in 0..repetitions.max(MIN_SAMPLES) {
        for (i, &threads) in counts.iter().enumerate() {
            let mut task = CountLines::new(counter);
            let start = Instant::now();
            mmap_parallel::feed_parallel(buffer, threads, &mut task);
            let secs = start.elapsed().as_secs_f64();
            debug_assert_eq!(task.lines() as usize, expected);
            samples[i].push(if secs > 0.0 { len as f64 / secs } else { 0.0 });
        }
    }
    let points = counts
        .into_iter()
        .zip(samples)
        .map(|(threads, samples)| ProbePoint {
            threads: Some(threads),
            queue_depth: None,
            block_bytes: None,
            buffered: false,
            bytes_per_s: median(&samples),
            samples,
        })
        .collect();
    Probe::from_points(points)
}

/// A task that only counts bytes: the device probe measures reading, not scanning.
struct Discard;

impl Task for Discard {
    fn feed(&mut self, _chunk: &[u8]) {}
}

/// One configuration of the device probe.
#[derive(Clone, Copy, Debug, PartialEq)]
enum DeviceRead {
    /// `O_DIRECT` io_uring reads, `depth` of `block` bytes in flight.
    Direct { depth: usize, block: usize },
    /// Buffered reads of the evicted file, [`BUFFERED_BLOCK`] at a time.
    Buffered,
}

/// The buffered configuration's read size: 1 MiB.
pub const BUFFERED_BLOCK: usize = 1 << 20;

/// Measures the device's sequential-read ceiling on `path`: `O_DIRECT` io_uring reads of
/// the whole file for every queue depth × block size (when io_uring and `O_DIRECT` work
/// here), and buffered reads of the evicted file; each point the median of
/// [`MIN_SAMPLES`] samples taken in rounds.
pub fn device_read(path: &Path, queue_depths: &[usize], block_sizes: &[usize]) -> Probe {
    let mut configs: Vec<DeviceRead> = Vec::new();
    if Method::UringDirect.availability().is_ok() {
        configs.extend(block_sizes.iter().flat_map(|&block| {
            queue_depths
                .iter()
                .map(move |&depth| DeviceRead::Direct { depth, block })
        }));
    }
    configs.push(DeviceRead::Buffered);
    let mut samples = vec![Vec::new(); configs.len()];
    for _ in 0..MIN_SAMPLES {
        for (i, &config) in configs.iter().enumerate() {
            let sample = match config {
                DeviceRead::Direct { depth, block } => read_once(path, depth, block),
                DeviceRead::Buffered => read_buffered_once(path),
            };
            match sample {
                Ok(rate) => samples[i].push(rate),
                Err(reason) => {
                    return Probe {
                        unavailable: Some(reason),
                        ..Probe::default()
                    };
                }
            }
        }
    }
    let points = configs
        .into_iter()
        .zip(samples)
        .map(|(config, samples)| {
            let (queue_depth, block) = match config {
                DeviceRead::Direct { depth, block } => (Some(depth), block),
                DeviceRead::Buffered => (None, BUFFERED_BLOCK),
            };
            ProbePoint {
                threads: None,
                queue_depth,
                block_bytes: Some(block),
                buffered: config == DeviceRead::Buffered,
                bytes_per_s: median(&samples),
                samples,
            }
        })
        .collect();
    Probe::from_points(points)
}

/// The file evicted from the page cache (outside the timer), then one buffered read of
/// all of it in [`BUFFERED_BLOCK`] pieces: bytes per second.
fn read_buffered_once(path: &Path) -> Result<f64, String> {
    crate::cache::evict_with(path, false, false).map_err(|e| e.to_string())?;
    let options = ReadOptions::new().buffer_size(BUFFERED_BLOCK);
    timed_read(path, Method::BufreadChunks, &options)
}

/// One `O_DIRECT` read of the whole file at `depth` × `block`: bytes per second.
fn read_once(path: &Path, depth: usize, block: usize) -> Result<f64, String> {
    let options = ReadOptions::new().queue_depth(depth).buffer_size(block);
    timed_read(path, Method::UringDirect, &options)
}

/// Reads all of `path` with `method`, timing only the read: bytes per second.
fn timed_read(path: &Path, method: Method, options: &ReadOptions) -> Result<f64, String> {
    let input = Input::open(path).map_err(|e| e.to_string())?;
    let start = Instant::now();
    let (_, bytes) =
        crate::read::run(method, &input, options, &mut Discard).map_err(|e| e.to_string())?;
    let secs = start.elapsed().as_secs_f64();
    Ok(if secs > 0.0 { bytes as f64 / secs } else { 0.0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_probe_has_a_point_per_thread_count_and_a_ceiling() {
        let p = memory_scan(4 << 20, 2, 2);
        assert_eq!(p.points.len(), 2);
        assert_eq!(p.points[1].threads, Some(2));
        for point in &p.points {
            assert_eq!(
                point.samples.len(),
                MIN_SAMPLES,
                "at least 3, even when asked for 2"
            );
            assert_eq!(point.bytes_per_s, median(&point.samples));
        }
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
        assert_eq!(p.unavailable, None);
        let buffered = p.points.last().unwrap();
        assert!(
            buffered.buffered && buffered.queue_depth.is_none(),
            "{buffered:?}"
        );
        if let Err(reason) = Method::UringDirect.availability() {
            eprintln!("skipped: device_probe_sweeps_depth_by_block (O_DIRECT part): {reason}");
            assert_eq!(p.points.len(), 1);
            return;
        }
        assert_eq!(p.points.len(), 5);
        assert!(p.points[..4].iter().all(|x| !x.buffered));
        assert!(p.points.iter().all(|x| x.samples.len() == MIN_SAMPLES));
        assert!(p.ceiling_bytes_per_s.unwrap() > 0.0);
    }

    #[test]
    fn a_point_is_the_median_not_the_best_sample() {
        assert_eq!(median(&[1.0, 9.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }
}
