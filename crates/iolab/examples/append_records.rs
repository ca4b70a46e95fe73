//! Appends 100 000 small records to a file the LevelDB way, with `iolab::AppendFile`, the
//! call `iolab bench append` hands over: records are copied into a 64 KiB buffer and
//! written one full buffer per `write`, instead of a system call per record.
//!
//! ```text
//! cargo run --release --example append_records -- FILE
//! ```
//!
//! FILE is created, or appended to when it exists. One `sync` at the end puts the records
//! on the device; a program that must not lose acknowledged records syncs more often (or
//! uses `iolab::Log`, see the `durable_log` example).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use iolab::{AppendFile, ErrorKind};

const RECORDS: u64 = 100_000;

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [path] = args.as_slice() else {
        eprintln!("usage: append_records FILE");
        return ExitCode::FAILURE;
    };
    if let Err(e) = run(path) {
        eprintln!("append_records: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

fn run(path: &Path) -> iolab::Result<()> {
    let start = Instant::now();
    // `create` makes a new file and syncs its directory (the name is durable too); it
    // fails with `AlreadyExists` on a file that is there, which `open` appends to.
    let mut file = match AppendFile::create(path) {
        Err(e) if e.kind() == ErrorKind::AlreadyExists => AppendFile::open(path)?,
        created => created?,
    };
    let mut record = Vec::with_capacity(64);
    for i in 0..RECORDS {
        record.clear();
        writeln!(record, "record {i:06}")?;
        // Copied into the buffer: no system call until 64 KiB have gathered.
        file.append(&record)?;
    }
    // Writes what is buffered and `fdatasync`s: the records are on the device now.
    file.sync()?;
    let elapsed = start.elapsed().as_secs_f64();
    let bytes = file.written_len();
    println!("appended {RECORDS} records ({bytes} bytes)");
    println!(
        "took {elapsed:.3} s with the sync ({:.0} records/s), file now {} bytes",
        RECORDS as f64 / elapsed,
        file.file().metadata()?.len(),
    );
    Ok(())
}
