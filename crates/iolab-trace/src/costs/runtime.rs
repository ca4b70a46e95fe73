//! What an interpreter does around each call beyond the call itself, calibrated with the
//! traced program's own interpreter ([`Need::Runtime`]): the work a fix that makes fewer
//! calls takes away with each of them, which no system call shows.
//!
//! Python flushing a record (`f.write(r); f.flush()`, `print` under `-u`, a
//! `logging.FileHandler`, which flushes each record) goes through its I/O stack, a Python
//! call or two and a lock (logging), and releases and takes back its global lock around the
//! `write(2)`: about 0.3 µs for a plain flush and 2 µs for logging's, against 0.2–0.5 µs for
//! the `write(2)` itself on the machines of docs/trace.md. The calibration runs the traced
//! interpreter (`-I -S`: no environment, no site packages) on a script that times, in
//! alternating rounds, the idiom with a flush per record and the same without it (its records
//! then go out in 8 KiB blocks), into `/dev/null`; the median difference per record, less a
//! native `write(2)` of the record to `/dev/null` measured here (the traced call's own time
//! is counted from the trace), is the interpreter's own work per flush.

use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Command, Stdio};

use super::sampling::{BUDGET, MIN_SAMPLES, sample};
use super::{Figure, Idiom, seconds};

/// Rounds of the interpreter's script (each times both forms).
const ROUNDS: usize = 21;

/// The script: `ARGV: records per round, rounds, idiom, record size`; prints the
/// nanoseconds per record of each round's slow form less its fast form.
const PYTHON: &str = r#"
import os, sys, time
n, rounds, idiom, size = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
rec = 'x' * max(size - 1, 0) + '\n'
def plain(flush):
    f = open(os.devnull, 'a')
    def run():
        for _ in range(n):
            f.write(rec)
            if flush:
                f.flush()
    return run
def logged(flush):
    import logging
    class Buffered(logging.FileHandler):
        def flush(self):
            pass
    h = (logging.FileHandler if flush else Buffered)(os.devnull)
    h.setFormatter(logging.Formatter('%(message)s'))
    log = logging.getLogger('iolab-calibration-%d' % flush)
    log.propagate = False
    log.addHandler(h)
    log.setLevel(logging.INFO)
    def run():
        for _ in range(n):
            log.info(rec)
    return run
make = logged if idiom == 'logging' else plain
slow, fast = make(True), make(False)
fast()
out = []
for r in range(rounds):
    t0 = time.perf_counter_ns()
    slow()
    t1 = time.perf_counter_ns()
    fast()
    t2 = time.perf_counter_ns()
    out.append(str(((t1 - t0) - (t2 - t1)) / n))
print(' '.join(out))
"#;

/// The interpreter `exe`'s own work per call for `idiom`, records of `size` bytes.
pub(super) fn figure(exe: &Path, idiom: Idiom, size: u64) -> io::Result<Figure> {
    let size = size.clamp(1, 1 << 16);
    let native = devnull_write(size as usize)?;
    let (records, what) = match idiom {
        Idiom::PythonFlush => (4000, "`f.write(record); f.flush()`"),
        Idiom::PythonLogging => (500, "a `logging.FileHandler` (it flushes each record)"),
    };
    let out = Command::new(exe)
        .args(["-I", "-S", "-c", PYTHON])
        .args([records.to_string(), ROUNDS.to_string()])
        .arg(match idiom {
            Idiom::PythonFlush => "flush",
            Idiom::PythonLogging => "logging",
        })
        .arg(size.to_string())
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "{} did not run the calibration's script ({})",
            exe.display(),
            out.status
        )));
    }
    let mut per: Vec<f64> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|w| w.parse::<f64>().ok())
        .collect();
    if per.is_empty() {
        return Err(io::Error::other(format!(
            "{} printed no timing",
            exe.display()
        )));
    }
    per.sort_by(f64::total_cmp);
    let flush = per[per.len() / 2] * 1e-9;
    let own = (flush - native).max(0.0);
    Ok(Figure::new(
        own,
        0.0,
        format!(
            "calibrated here: {}, {ROUNDS} rounds of {records} records of {} through {what}, with and without a flush per record, into /dev/null: {} more per record, less a write(2) of it ({}): {} of the interpreter's own work per flush",
            exe.display(),
            iolab_lab::units::format_bytes(size),
            seconds(flush),
            seconds(native),
            seconds(own)
        ),
    ))
}

/// Median seconds of a native `write(2)` of `size` bytes to `/dev/null`.
fn devnull_write(size: usize) -> io::Result<f64> {
    let null = std::fs::OpenOptions::new().write(true).open("/dev/null")?;
    let buf = vec![b'x'; size];
    let fd = null.as_raw_fd();
    let mut samples = sample(BUDGET / 5, MIN_SAMPLES, BUDGET, 256.0, || {
        for _ in 0..256 {
            // SAFETY: writes from a live buffer to our own descriptor.
            if unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) } < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    })?;
    Ok(samples.median())
}
