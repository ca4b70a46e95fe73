//! Serving many random 4 KiB lookups of one file through the batch call,
//! `iolab::RandomAccessFile::read_batch`: the requests go in 1024 at a time, and each block
//! comes back to the callback as it lands, with its request's index. The library picks how
//! (io_uring with `O_DIRECT` for a file not in the page cache, a map for one that is) and
//! says why.
//!
//! ```text
//! cargo run --release --example random_batch -- FILE [LOOKUPS]
//! ```
//!
//! LOOKUPS defaults to 200 000. Prints the lookups per second.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use iolab::RandomAccessFile;

const BLOCK: usize = 4096;
/// Requests handed over per call.
const PER_CALL: usize = 1024;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, lookups) = match args.as_slice() {
        [path] => (PathBuf::from(path), 200_000),
        [path, n] => match n.parse::<usize>() {
            Ok(n) if n > 0 => (PathBuf::from(path), n),
            _ => return usage(),
        },
        _ => return usage(),
    };
    match run(&path, lookups) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("random_batch: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: random_batch FILE [LOOKUPS]");
    ExitCode::FAILURE
}

fn run(path: &std::path::Path, lookups: usize) -> Result<(), Box<dyn std::error::Error>> {
    let file = RandomAccessFile::open(path)?;
    let blocks = file.len() / BLOCK as u64;
    if blocks == 0 {
        return Err(format!("{}: smaller than one block", path.display()).into());
    }
    // A small xorshift: the lookups' block numbers, the same on every run.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next_block = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % blocks
    };
    let mut requests = Vec::with_capacity(PER_CALL);
    let (mut served, mut bytes, mut failed) = (0usize, 0u64, 0usize);
    let start = Instant::now();
    while served < lookups {
        let n = PER_CALL.min(lookups - served);
        requests.clear();
        requests.extend((0..n).map(|_| (next_block() * BLOCK as u64, BLOCK)));
        file.read_batch(&requests, |_index, block| match block {
            Ok(block) => bytes += block.len() as u64,
            Err(e) => {
                failed += 1;
                eprintln!("random_batch: {e}");
            }
        })?;
        served += n;
    }
    let seconds = start.elapsed().as_secs_f64();
    // A reader that went away (`| head -1`) is no error of the lookups'.
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "{served} lookups of {BLOCK} bytes in {seconds:.3} s: {:.0} lookups/s, {bytes} bytes, \
         {failed} failed\nhow: {}",
        served as f64 / seconds,
        file.batch_why()
    );
    Ok(())
}
