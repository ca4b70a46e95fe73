//! What I/O costs on this machine, for the findings' estimates: each figure is a cost per
//! call and per byte, with its basis (which measurement it comes from).
//!
//! Figures come from the newest `iolab bench` results where the bench measured that very
//! thing ([`bench`](mod@bench)): small writes to a file (the append suite's
//! `write-per-record`), the buffered fix (`append-file`, `StdoutWriter` into a pipe), a sync
//! per record and one per 1000, the count suite's winner, random reads and their winner,
//! the in-place edit. What the results lack — or everything, without results — is measured
//! by a short calibration ([`calibrate`]), only for the figures the findings need, with the
//! same calls as the traced program made, and the summary says it ran.

pub mod bench;
pub mod calibrate;
mod device;
mod runtime;
mod sampling;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::model::Kind;

/// The call that makes a file durable, as the traced program made it (the calibration
/// makes the same one: what a sync costs depends on which).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SyncCall {
    /// `fsync(2)` (data and metadata), or `msync(2)` of a map.
    Fsync,
    /// `fdatasync(2)` (and `sync_file_range`).
    Fdatasync,
    /// Writes through a descriptor opened with `O_DSYNC` or `O_SYNC`: each write is a sync.
    Dsync,
}

impl SyncCall {
    /// The call's name in a sentence.
    pub fn name(self) -> &'static str {
        match self {
            SyncCall::Fsync => "fsync",
            SyncCall::Fdatasync => "fdatasync",
            SyncCall::Dsync => "O_DSYNC write",
        }
    }
}

/// How an interpreter made the calls whose own work around them [`Need::Runtime`]
/// measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Idiom {
    /// Python writing a record and flushing it: `f.write(r); f.flush()`, `print(…,
    /// flush=True)`, `print` under `-u`.
    PythonFlush,
    /// Python's `logging.FileHandler`, which flushes after each record.
    PythonLogging,
}

/// A figure a finding needs.
#[derive(Clone, Debug, PartialEq)]
pub enum Need {
    /// A system call that does nothing (`getppid`): the round trip into the kernel and back
    /// that a call's own time, from its entry to its exit, leaves out.
    Syscall,
    /// One write of about `size` bytes to a target of `kind` (pipe, terminal, file).
    SmallWrite {
        /// The target's kind.
        kind: Kind,
        /// Bytes per write.
        size: u64,
    },
    /// One read of a pipe another thread writes pieces of `size` bytes into, read as they
    /// come (a reader that keeps up, as `cat` does): the reader's CPU time per read, its
    /// sleep and wake-up included, its waits for the writer left out, times the share of
    /// it the writer waited for a CPU meanwhile (what fell on the writer's wall clock);
    /// per byte, the same over the bytes a read took when the writer wrote as fast as its
    /// calls allowed.
    PipeRead {
        /// Bytes per piece written.
        size: u64,
        /// Whether the reader writes each read on (`cat > /dev/null`): the calibration's
        /// reader writes it to `/dev/null`.
        onward: bool,
    },
    /// Records of `size` bytes written through a 64 KiB buffer (a buffered writer's
    /// writes to a target of `kind`): per record and per byte.
    BufferedWrite {
        /// The target's kind.
        kind: Kind,
        /// Bytes per record.
        size: u64,
    },
    /// One `O_DIRECT` write of `size` bytes, appending to a file in `dir` (the device's
    /// speed, not the page cache's).
    DirectWrite {
        /// The traced file's folder.
        dir: PathBuf,
        /// Bytes per write.
        size: u64,
    },
    /// One sequential read of about `size` bytes of a cached file.
    SmallRead {
        /// Bytes per read.
        size: u64,
    },
    /// Reads of 1 MiB of a cached file: per byte.
    BigRead,
    /// One read at a scattered offset, one at a time (`pread` of 4 KiB).
    RandomRead {
        /// Whether the reads miss the page cache (then measured with `O_DIRECT` in `dir`).
        cold: bool,
        /// The traced file's folder.
        dir: PathBuf,
    },
    /// The same reads the fastest way measured (per read).
    BestRandomRead {
        /// Whether the reads miss the page cache.
        cold: bool,
        /// The traced file's folder.
        dir: PathBuf,
    },
    /// Records of `record` bytes appended to a growing file in `dir`, made durable with
    /// `call` after every `every` records: per record.
    Sync {
        /// The traced file's folder (its file system decides what a sync costs).
        dir: PathBuf,
        /// The call.
        call: SyncCall,
        /// Bytes written per record.
        record: u64,
        /// Records per sync.
        every: u64,
    },
    /// A file made in folder `dir`, then `dir` synced: per sync (the same after one new
    /// file or many).
    DirSync {
        /// The folder.
        dir: PathBuf,
    },
    /// Opening a file in folder `dir` for appending, duplicating the descriptor onto
    /// another, asking its flags, and closing both: what a shell does around each
    /// `echo >> FILE`; per call.
    Churn {
        /// The file's folder.
        dir: PathBuf,
    },
    /// Editing a file in place (per byte of the file).
    InPlaceEdit,
    /// A file of `size` bytes made in `dir` and removed (`unlink`, not followed by the
    /// tracer): per removal.
    Unlink {
        /// The folder.
        dir: PathBuf,
        /// Its bytes.
        size: u64,
    },
    /// The interpreter `exe`'s own work around one call made as `idiom` says (records of
    /// `size` bytes), beyond the call itself: per call.
    Runtime {
        /// The traced program's interpreter.
        exe: PathBuf,
        /// How it made the calls.
        idiom: Idiom,
        /// Bytes per record.
        size: u64,
    },
}

/// A cost: per call and per byte, where it comes from, and the method it measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// Seconds per call (or per record, or per read).
    pub per_call_s: f64,
    /// Seconds per byte.
    pub per_byte_s: f64,
    /// Where the figure comes from, for the reader: `bench 2026-11-25T16-12-41Z: append
    /// write-per-record, 64 B records` or `calibrated here: 20 000 writes of 16 B into a
    /// pipe`.
    pub basis: String,
    /// The command that does it, when the figure is a fix measured by the bench.
    pub cli: Option<String>,
    /// The library call that does it, likewise.
    pub library: Option<String>,
}

impl Figure {
    /// A figure from a cost per call and per byte.
    pub fn new(per_call_s: f64, per_byte_s: f64, basis: impl Into<String>) -> Figure {
        Figure {
            per_call_s,
            per_byte_s,
            basis: basis.into(),
            cli: None,
            library: None,
        }
    }

    /// What `calls` calls moving `bytes` bytes cost.
    pub fn cost(&self, calls: u64, bytes: u64) -> f64 {
        calls as f64 * self.per_call_s + bytes as f64 * self.per_byte_s
    }
}

/// Where the figures came from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sources {
    /// The results file read, if any.
    pub results: Option<PathBuf>,
    /// Why no results were used, if none.
    pub no_results: Option<String>,
    /// How long the calibration took, if it ran.
    pub calibration: Option<Duration>,
    /// Figures neither could give, with the reason.
    pub missing: Vec<String>,
    /// A signal (Ctrl-C) that stopped the calibration before it was done.
    pub interrupted: Option<i32>,
}

/// The figures the findings asked for.
#[derive(Clone, Debug, Default)]
pub struct Costs {
    figures: Vec<(Need, Figure)>,
    /// Where they came from.
    pub sources: Sources,
}

impl Costs {
    /// Costs made of given figures (for tests, and callers with figures of their own).
    pub fn with_figures(figures: Vec<(Need, Figure)>) -> Costs {
        Costs {
            figures,
            sources: Sources::default(),
        }
    }

    /// The figure for `need`, if it could be had.
    pub fn get(&self, need: &Need) -> Option<&Figure> {
        self.figures.iter().find(|(n, _)| n == need).map(|(_, f)| f)
    }

    /// Gathers `needs`: from the results `given` (loaded by the caller from the file it was
    /// told of; `None`: the newest run under `./iolab-results`, loaded here when some
    /// figure is needed), then, when `calibrate`, by measuring what is still missing.
    pub fn gather(needs: &[Need], given: Option<bench::Bench>, calibrate: bool) -> Costs {
        let mut costs = Costs::default();
        let mut left: Vec<Need> = Vec::new();
        for need in needs {
            if !left.contains(need) {
                left.push(need.clone());
            }
        }
        if left.is_empty() {
            return costs;
        }
        match given.map_or_else(|| bench::Bench::load(None), Ok) {
            Ok(b) => {
                costs.sources.results = Some(b.path.clone());
                left.retain(|need| match b.figure(need) {
                    Some(f) => {
                        costs.figures.push((need.clone(), f));
                        false
                    }
                    None => true,
                });
            }
            Err(why) => costs.sources.no_results = Some(why),
        }
        if left.is_empty() {
            return costs;
        }
        if !calibrate {
            costs
                .sources
                .missing
                .extend(left.iter().map(|n| format!("{n:?}: calibration off")));
            return costs;
        }
        let started = Instant::now();
        let mut cal = calibrate::Calibration::new();
        for need in left {
            if let Some(signal) = crate::signals::interrupted() {
                costs.sources.interrupted = Some(signal);
                costs
                    .sources
                    .missing
                    .push(format!("{need:?}: the calibration was interrupted"));
                continue;
            }
            match cal.figure(&need) {
                Ok(f) => costs.figures.push((need, f)),
                Err(e) => costs.sources.missing.push(format!("{need:?}: {e}")),
            }
        }
        // A signal during the last figure stops it early, with the samples it took, and no
        // figure is left to notice: the calibration was interrupted all the same.
        if costs.sources.interrupted.is_none() {
            costs.sources.interrupted = crate::signals::interrupted();
        }
        costs.sources.calibration = Some(started.elapsed());
        costs
    }
}

/// `x` seconds with two significant digits and a unit a reader takes in at once: `2.1 s`,
/// `0.35 s`, `12 ms`, `850 µs`, `40 ns`.
pub fn seconds(x: f64) -> String {
    if x == 0.0 {
        return "0".to_string();
    }
    let (value, unit) = if x >= 0.1 {
        (x, "s")
    } else if x >= 1e-3 {
        (x * 1e3, "ms")
    } else if x >= 1e-6 {
        (x * 1e6, "µs")
    } else {
        (x * 1e9, "ns")
    };
    format!("{} {unit}", two_significant(value))
}

/// A rate in bytes per second with two significant digits: `2.6 GB/s`, `850 MB/s`.
pub fn rate(bytes_per_s: f64) -> String {
    let (value, unit) = if bytes_per_s >= 1e9 {
        (bytes_per_s / 1e9, "GB/s")
    } else if bytes_per_s >= 1e6 {
        (bytes_per_s / 1e6, "MB/s")
    } else {
        (bytes_per_s / 1e3, "kB/s")
    };
    format!("{} {unit}", two_significant(value))
}

/// `x` with two significant digits, no exponent: `2.1`, `0.35`, `12`, `1200`.
pub fn two_significant(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return "0".to_string();
    }
    let digits = x.abs().log10().floor() as i32;
    let decimals = (1 - digits).max(0) as usize;
    let scale = 10f64.powi(digits - 1);
    let rounded = (x / scale).round() * scale;
    format!("{rounded:.decimals$}")
}

/// `x` rounded to two significant digits, as a number (for the JSON).
pub fn round2(x: f64) -> f64 {
    two_significant(x).parse().unwrap_or(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_digits_and_a_unit() {
        assert_eq!(seconds(2.149), "2.1 s");
        assert_eq!(seconds(0.351), "0.35 s");
        assert_eq!(seconds(0.0123), "12 ms");
        assert_eq!(seconds(0.000_85), "850 µs");
        assert_eq!(seconds(40e-9), "40 ns");
        assert_eq!(seconds(0.0), "0");
        assert_eq!(two_significant(1234.0), "1200");
        assert_eq!(round2(0.012_345), 0.012);
        assert_eq!(rate(2.62e9), "2.6 GB/s");
        assert_eq!(rate(851e6), "850 MB/s");
    }

    #[test]
    fn a_figure_costs_calls_and_bytes() {
        let f = Figure::new(1e-6, 1e-9, "test");
        assert!((f.cost(1000, 1_000_000) - 0.002).abs() < 1e-12);
    }
}
