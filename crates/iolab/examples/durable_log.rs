//! A durable log with group commit, as `iolab bench append` hands over: 8 threads append
//! to one `iolab::Log`, and each `append_durable` returns only once its record is
//! on the device. Writers that arrive while a sync runs share the next one, so there are
//! far fewer syncs than records.
//!
//! ```text
//! cargo run --release --example durable_log -- FILE
//! ```
//!
//! FILE is created, or reopened when it is a log (its records are kept and appended to); a
//! file that is not an iolab log is refused and left as it is.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use iolab::{LogOptions, LogPolicy};

/// The policy the verdict names; `prealloc`, the default, writes into a pre-zeroed file and
/// tied with `direct-dsync` for first on the development machine.
const POLICY: LogPolicy = LogPolicy::Prealloc;
const WRITERS: usize = 8;
const RECORDS_PER_WRITER: usize = 500;

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [path] = args.as_slice() else {
        eprintln!("usage: durable_log FILE");
        return ExitCode::FAILURE;
    };
    if let Err(e) = run(path) {
        eprintln!("durable_log: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

fn run(path: &Path) -> iolab::Result<()> {
    // `direct-dsync` needs a file system that takes O_DIRECT: probe the log's folder (an
    // empty parent is the current folder, which the probe then uses).
    let dir = path.parent().unwrap_or(Path::new("."));
    let policy = match POLICY.availability_for(dir) {
        Ok(()) => POLICY,
        Err(_) => LogPolicy::Fdatasync,
    };
    // Group commit is on by default (`LogOptions::group_commit`).
    let log = LogOptions::new().policy(policy).open(path)?;
    let start = Instant::now();
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let log = &log;
                s.spawn(move || {
                    for i in 0..RECORDS_PER_WRITER {
                        // Returns once the record (and every one before it) is durable.
                        log.append_durable(format!("writer {w} record {i}").as_bytes())?;
                    }
                    Ok::<_, iolab::Error>(())
                })
            })
            .collect();
        writers
            .into_iter()
            .try_for_each(|w| w.join().expect("a writer panicked"))
    })?;
    let elapsed = start.elapsed().as_secs_f64();
    let records = WRITERS * RECORDS_PER_WRITER;
    println!(
        "{records} durable records from {WRITERS} threads, policy {}",
        log.policy()
    );
    println!(
        "took {elapsed:.3} s ({:.0} records/s) with {} syncs: group commit shared each among {:.1} records",
        records as f64 / elapsed,
        log.syncs(),
        records as f64 / log.syncs().max(1) as f64,
    );
    Ok(())
}
