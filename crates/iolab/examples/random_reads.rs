//! Random 4 KiB reads of one file, the access a storage engine makes most, with the calls
//! `iolab bench random` hands over: `iolab::RandomAccessFile` for point lookups (it maps
//! the file or uses `pread`, whichever its own first reads measure faster, a map's page
//! faults included), then
//! `iolab::lab::random::run` for a batch of reads with 32 in flight through io_uring.
//!
//! ```text
//! cargo run --release --example random_reads -- FILE
//! ```
//!
//! If FILE does not exist, 64 MiB of `iolab::lab::generate::blocks` data is written there first:
//! every byte is a function of its offset, so every read below is checked.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use iolab::RandomAccessFile;
use iolab::lab::generate::{AtomicOptions, blocks, write_file_atomically};
use iolab::lab::random::{self, Method, Options, Pattern, Sampler};

const BLOCK: usize = 4096;
const LOOKUPS: u64 = 10_000;
const NEW_FILE_SIZE: u64 = 64 << 20;

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [path] = args.as_slice() else {
        eprintln!("usage: random_reads FILE");
        return ExitCode::FAILURE;
    };
    if let Err(e) = run(path) {
        eprintln!("random_reads: {}: {e}", path.display());
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

fn run(path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    if !path.exists() {
        let options = AtomicOptions::new().expected_size(NEW_FILE_SIZE);
        write_file_atomically(path, &options, |out| {
            blocks::write_blocks(out, NEW_FILE_SIZE)
        })?;
        println!("created {} (64 MiB of blocks data)", path.display());
    }
    let file = RandomAccessFile::open(path)?;
    if file.is_empty() {
        return Err("is empty: there is nothing to read".into());
    }
    let mut sampler = Sampler::new(Pattern::Uniform, file.len().div_ceil(BLOCK as u64), 1);
    let mut scratch = vec![0u8; BLOCK];
    // A file of `blocks` data can be checked read by read; any other file's reads cannot.
    let generated = blocks::verify(0, file.read(0, &mut scratch)?);
    let start = Instant::now();
    for _ in 0..LOOKUPS {
        let offset = sampler.next_block() * BLOCK as u64;
        // A slice of `scratch` (or of the map): up to 4 KiB, fewer at the end of the file.
        let block = file.read(offset, &mut scratch)?;
        if generated && !blocks::verify(offset, block) {
            return Err(format!("wrong bytes read at offset {offset}").into());
        }
    }
    let rate = LOOKUPS as f64 / start.elapsed().as_secs_f64();
    let checked = if generated { ", each checked" } else { "" };
    let backing = file.backing();
    println!("{LOOKUPS} lookups, {backing:?} backing: {rate:.0} reads/s{checked}");

    // Deep queues: buffered io_uring with 32 reads in flight (`UringDirect` when the verdict
    // names it, for a file colder than memory); `pread` makes one read at a time.
    let method = Method::Uring
        .availability()
        .map_or(Method::Pread, |()| Method::Uring);
    let depth = if method.queues() { 32 } else { 1 };
    let report = random::run(method, path, &Options::new().queue_depth(depth))?;
    println!(
        "{} reads, {method} at queue depth {depth}: {:.0} IOPS, p99 {:.1} µs, {} of {} checked wrong",
        report.reads,
        report.iops(),
        report.latency_us(0.99),
        report.mismatches,
        report.checked,
    );
    Ok(())
}
