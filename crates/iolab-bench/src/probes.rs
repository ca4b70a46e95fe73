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
//!
//! A probe is a [`Sampler`]: the `count` suite takes its samples **between the method
//! runs** (before the first run of a counted round, spread evenly over the rounds), so the
//! ceiling describes the same minutes as the rows it bounds; [`memory_scan`] and
//! [`device_read`] take them in a row.

use std::path::{Path, PathBuf};
use std::time::Instant;

pub use iolab_results::probe::{Ceilings, Probe, ProbePoint};

use iolab::Input;
use iolab_lab::kernel::ByteCounter;
use iolab_lab::read::{CountMethod, ReadOptions, mmap_parallel};
use iolab_lab::task::{CountLines, Task};

/// The fewest samples a probe point takes: 3.
pub const MIN_SAMPLES: usize = 3;

/// The median of `samples` (0 for none), as the rows' medians are taken.
fn median(samples: &[f64]) -> f64 {
    super::stats::Summary::of(samples).map_or(0.0, |s| s.median)
}

/// A probe taken one sample at a time, so that its samples can fall between the method
/// runs they bound: the machine's state drifts (a shared host, a virtual disk's cache), and
/// a ceiling sampled before the rows describes another minute than theirs.
pub trait Sampler {
    /// Takes one more sample of every point (outside every row's timer).
    fn sample(&mut self);
    /// How many samples each point has.
    fn samples(&self) -> usize;
    /// The points, each the median of its samples, and the best of them.
    fn finish(self: Box<Self>) -> Probe;
}

/// The probe's points from their samples; a reason instead when the probe could not run
/// or took no sample.
fn finish_points(points: Vec<ProbePoint>, unavailable: Option<String>) -> Probe {
    let unavailable = unavailable.or_else(|| {
        points
            .iter()
            .any(|p| p.samples.is_empty())
            .then(|| "no sample was taken (the run was interrupted)".to_string())
    });
    match unavailable {
        Some(reason) => Probe {
            unavailable: Some(reason),
            ..Probe::default()
        },
        None => Probe::from_points(points),
    }
}

/// The memory-scan ceiling's sampler: an anonymous buffer of text-like content, scanned by
/// the fastest kernel with 1..=N threads.
pub struct MemoryScan {
    /// An anonymous map advised to use huge pages, as the page cache can (large folios):
    /// with 4 KiB pages the probe would measure TLB misses, not memory.
    map: Option<memmap2::MmapMut>,
    /// The buffer's size.
    len: usize,
    /// Mapping it failed.
    unmappable: bool,
    counter: ByteCounter,
    points: Vec<ProbePoint>,
}

impl MemoryScan {
    /// A `len`-byte buffer for 1..=`max_threads` threads, mapped and filled at the first
    /// sample (outside any timer): not before, so that it does not hold 1 GiB of huge
    /// pages while the runs' data is read into the page cache.
    pub fn new(len: usize, max_threads: usize) -> MemoryScan {
        let points = (1..=max_threads.max(1))
            .map(|threads| ProbePoint {
                threads: Some(threads),
                queue_depth: None,
                block_bytes: None,
                buffered: false,
                bytes_per_s: 0.0,
                samples: Vec::new(),
            })
            .collect();
        MemoryScan {
            len,
            map: None,
            unmappable: false,
            counter: ByteCounter::best(),
            points,
        }
    }

    /// The buffer, mapped and filled on first use.
    fn buffer(&mut self) -> Option<&memmap2::MmapMut> {
        if self.map.is_none() && !self.unmappable {
            let len = self.len;
            match memmap2::MmapMut::map_anon(len.max(1)) {
                Ok(mut map) => {
                    let _ = map.advise(memmap2::Advice::HugePage);
                    // A newline every 110 bytes, so the kernel does real work.
                    map.fill(b'x');
                    for i in (109..len).step_by(110) {
                        map[i] = b'\n';
                    }
                    self.map = Some(map);
                }
                Err(_) => self.unmappable = true,
            }
        }
        self.map.as_ref()
    }
}

impl Sampler for MemoryScan {
    fn sample(&mut self) {
        let counter = self.counter;
        if self.buffer().is_none() {
            return;
        }
        let Some(map) = &self.map else { return };
        let buffer: &[u8] = map;
        for point in &mut self.points {
            let mut task = CountLines::new(counter);
            let start = Instant::now();
            mmap_parallel::feed_parallel(buffer, point.threads.unwrap_or(1), &mut task);
            let secs = start.elapsed().as_secs_f64();
            debug_assert_eq!(task.lines() as usize, buffer.len() / 110);
            let rate = if secs > 0.0 {
                buffer.len() as f64 / secs
            } else {
                0.0
            };
            point.samples.push(rate);
        }
    }

    fn samples(&self) -> usize {
        self.points.first().map_or(0, |p| p.samples.len())
    }

    fn finish(self: Box<Self>) -> Probe {
        let unavailable = self
            .unmappable
            .then(|| "cannot map an anonymous buffer".to_string());
        finish_points(with_medians(self.points), unavailable)
    }
}

/// Each point's throughput: the median of its samples.
fn with_medians(mut points: Vec<ProbePoint>) -> Vec<ProbePoint> {
    for p in &mut points {
        p.bytes_per_s = median(&p.samples);
    }
    points
}

/// Measures the memory-scan ceiling over a `len`-byte buffer, for 1..=`max_threads`
/// threads, each the median of `repetitions` (at least [`MIN_SAMPLES`]) samples taken in
/// rounds.
pub fn memory_scan(len: usize, max_threads: usize, repetitions: usize) -> Probe {
    sampled(Box::new(MemoryScan::new(len, max_threads)), repetitions)
}

/// Takes `repetitions` (at least [`MIN_SAMPLES`]) samples in a row, and finishes.
fn sampled(mut sampler: Box<dyn Sampler>, repetitions: usize) -> Probe {
    sample_up_to(sampler.as_mut(), repetitions.max(MIN_SAMPLES));
    sampler.finish()
}

/// Takes samples until `sampler` has `wanted` of them, or until a sample adds none (a
/// probe that cannot run keeps its reason and takes no sample).
pub fn sample_up_to(sampler: &mut dyn Sampler, wanted: usize) {
    while sampler.samples() < wanted {
        let before = sampler.samples();
        sampler.sample();
        if sampler.samples() == before {
            break;
        }
    }
}

/// A task that only counts bytes: the device probe measures reading, not scanning.
struct Discard;

impl Task for Discard {
    fn feed(&mut self, _chunk: &[u8]) {}
}

/// One configuration of the device probe.
#[derive(Clone, Copy, Debug, PartialEq)]
enum DeviceConfig {
    /// `O_DIRECT` io_uring reads, `depth` of `block` bytes in flight.
    Direct { depth: usize, block: usize },
    /// Buffered reads of the evicted file, [`BUFFERED_BLOCK`] at a time.
    Buffered,
}

/// The buffered configuration's read size: 1 MiB.
pub const BUFFERED_BLOCK: usize = 1 << 20;

/// The device-read ceiling's sampler: `O_DIRECT` io_uring reads of the whole file for
/// every queue depth × block size (when io_uring and `O_DIRECT` work here), and buffered
/// reads of the evicted file. A sample leaves the file evicted or, after the buffered
/// read, cached: the runs after it prepare their own cache state.
pub struct DeviceRead {
    path: PathBuf,
    configs: Vec<DeviceConfig>,
    points: Vec<ProbePoint>,
    unavailable: Option<String>,
}

impl DeviceRead {
    /// The probe of `path` over `queue_depths` × `block_sizes`, and the buffered point.
    pub fn new(path: &Path, queue_depths: &[usize], block_sizes: &[usize]) -> DeviceRead {
        let mut configs: Vec<DeviceConfig> = Vec::new();
        if CountMethod::UringDirect.availability().is_ok() {
            configs.extend(block_sizes.iter().flat_map(|&block| {
                queue_depths
                    .iter()
                    .map(move |&depth| DeviceConfig::Direct { depth, block })
            }));
        }
        configs.push(DeviceConfig::Buffered);
        let points = configs
            .iter()
            .map(|&config| {
                let (queue_depth, block) = match config {
                    DeviceConfig::Direct { depth, block } => (Some(depth), block),
                    DeviceConfig::Buffered => (None, BUFFERED_BLOCK),
                };
                ProbePoint {
                    threads: None,
                    queue_depth,
                    block_bytes: Some(block),
                    buffered: config == DeviceConfig::Buffered,
                    bytes_per_s: 0.0,
                    samples: Vec::new(),
                }
            })
            .collect();
        DeviceRead {
            path: path.to_path_buf(),
            configs,
            points,
            unavailable: None,
        }
    }
}

impl Sampler for DeviceRead {
    fn sample(&mut self) {
        if self.unavailable.is_some() {
            return;
        }
        for (config, point) in self.configs.iter().zip(&mut self.points) {
            let sample = match *config {
                DeviceConfig::Direct { depth, block } => read_once(&self.path, depth, block),
                DeviceConfig::Buffered => read_buffered_once(&self.path),
            };
            match sample {
                Ok(rate) => point.samples.push(rate),
                Err(reason) => {
                    self.unavailable = Some(reason);
                    return;
                }
            }
        }
    }

    fn samples(&self) -> usize {
        self.points
            .iter()
            .map(|p| p.samples.len())
            .min()
            .unwrap_or(0)
    }

    fn finish(self: Box<Self>) -> Probe {
        finish_points(with_medians(self.points), self.unavailable)
    }
}

/// Measures the device's sequential-read ceiling on `path` (see [`DeviceRead`]), each
/// point the median of [`MIN_SAMPLES`] samples taken in rounds.
pub fn device_read(path: &Path, queue_depths: &[usize], block_sizes: &[usize]) -> Probe {
    sampled(
        Box::new(DeviceRead::new(path, queue_depths, block_sizes)),
        MIN_SAMPLES,
    )
}

/// The file evicted from the page cache (outside the timer), then one buffered read of
/// all of it in [`BUFFERED_BLOCK`] pieces: bytes per second.
fn read_buffered_once(path: &Path) -> Result<f64, String> {
    iolab_lab::cache::evict_with(path, false, false).map_err(|e| e.to_string())?;
    let options = ReadOptions::new().buffer_size(BUFFERED_BLOCK);
    timed_read(path, CountMethod::BufreadChunks, &options)
}

/// One `O_DIRECT` read of the whole file at `depth` × `block`: bytes per second.
fn read_once(path: &Path, depth: usize, block: usize) -> Result<f64, String> {
    let options = ReadOptions::new().queue_depth(depth).buffer_size(block);
    timed_read(path, CountMethod::UringDirect, &options)
}

/// Reads all of `path` with `method`, timing only the read: bytes per second.
fn timed_read(path: &Path, method: CountMethod, options: &ReadOptions) -> Result<f64, String> {
    let input = Input::open(path).map_err(|e| e.to_string())?;
    let start = Instant::now();
    let (_, bytes) =
        iolab_lab::read::run(method, &input, options, &mut Discard).map_err(|e| e.to_string())?;
    let secs = start.elapsed().as_secs_f64();
    Ok(if secs > 0.0 { bytes as f64 / secs } else { 0.0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sampler that can take `limit` samples and no more, and counts its calls.
    struct Limited {
        limit: usize,
        taken: usize,
        calls: usize,
    }

    impl Sampler for Limited {
        fn sample(&mut self) {
            self.calls += 1;
            self.taken = (self.taken + 1).min(self.limit);
        }
        fn samples(&self) -> usize {
            self.taken
        }
        fn finish(self: Box<Self>) -> Probe {
            Probe::default()
        }
    }

    #[test]
    fn sample_up_to_stops_at_the_count_or_when_a_sample_adds_none() {
        let mut s = Limited {
            limit: 10,
            taken: 0,
            calls: 0,
        };
        sample_up_to(&mut s, 4);
        assert_eq!((s.taken, s.calls), (4, 4));
        sample_up_to(&mut s, 4);
        assert_eq!(s.calls, 4, "no sample owed, none taken");
        let mut stuck = Limited {
            limit: 2,
            taken: 0,
            calls: 0,
        };
        sample_up_to(&mut stuck, 5);
        assert_eq!(
            (stuck.taken, stuck.calls),
            (2, 3),
            "stops after a sample adds none"
        );
    }

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
        let dir = iolab_testkit::scratch();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![b'a'; 3 << 20]).unwrap();
        let p = device_read(&path, &[1, 4], &[64 << 10, 1 << 20]);
        assert_eq!(p.unavailable, None);
        let buffered = p.points.last().unwrap();
        assert!(
            buffered.buffered && buffered.queue_depth.is_none(),
            "{buffered:?}"
        );
        if let Err(reason) = CountMethod::UringDirect.availability() {
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
