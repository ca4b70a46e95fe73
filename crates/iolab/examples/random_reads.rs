//! Random 4 KiB point lookups of one file, the access a storage engine makes most, with the
//! call `iolab bench random` hands over for one read at a time: `iolab::RandomAccessFile`
//! (it maps the file or uses `pread`, whichever its own first reads measure faster, a map's
//! page faults included). For many lookups at once, see the `random_batch` example.
//!
//! ```text
//! cargo run --release --example random_reads -- FILE
//! ```
//!
//! If FILE does not exist, 64 MiB are written there first in which every 8-byte word holds
//! its own offset (little-endian), so every read below is checked; any other file is read
//! all the same, unchecked.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use iolab::RandomAccessFile;

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

/// Whether `block`, read at `offset`, holds its offsets (`offset` is a multiple of 8).
fn holds_offsets(offset: u64, block: &[u8]) -> bool {
    block
        .chunks(8)
        .zip((offset..).step_by(8))
        .all(|(word, at)| word == &at.to_le_bytes()[..word.len()])
}

/// Writes a new file of offsets; refuses to replace one that exists.
fn create(path: &Path) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create_new(path)?);
    for at in (0..NEW_FILE_SIZE).step_by(8) {
        out.write_all(&at.to_le_bytes())?;
    }
    out.into_inner()?.sync_all()
}

fn run(path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    if !path.exists() {
        create(path)?;
        println!("created {} (64 MiB of offsets)", path.display());
    }
    let file = RandomAccessFile::open(path)?;
    if file.is_empty() {
        return Err("is empty: there is nothing to read".into());
    }
    let blocks = file.len().div_ceil(BLOCK as u64);
    let mut scratch = vec![0u8; BLOCK];
    let checked = holds_offsets(0, file.read(0, &mut scratch)?);
    // A small xorshift: the lookups' block numbers, the same on every run.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let start = Instant::now();
    for _ in 0..LOOKUPS {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let offset = state % blocks * BLOCK as u64;
        // A slice of `scratch` (or of the map): up to 4 KiB, fewer at the end of the file.
        let block = file.read(offset, &mut scratch)?;
        if checked && !holds_offsets(offset, block) {
            return Err(format!("wrong bytes read at offset {offset}").into());
        }
    }
    let rate = LOOKUPS as f64 / start.elapsed().as_secs_f64();
    let each = if checked { ", each checked" } else { "" };
    println!(
        "{LOOKUPS} lookups, {:?} backing: {rate:.0} reads/s{each}",
        file.backing()
    );
    Ok(())
}
