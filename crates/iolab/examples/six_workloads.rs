//! The six workloads, each with its default call, in one `fn main() -> iolab::Result<()>`:
//! the shape a program takes when it adopts iolab. Every call's default is the way `iolab
//! bench` measured fastest on this machine, or the rule documented with the call.
//!
//! ```text
//! cargo run --release --example six_workloads -- FOLDER
//! ```
//!
//! FOLDER must exist and be empty: the example makes its files there (a few MiB).

use std::path::PathBuf;

use iolab::prelude::*;

fn main() -> iolab::Result<()> {
    let dir = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .ok_or_else(|| std::io::Error::other("usage: six_workloads FOLDER"))?;
    if std::fs::read_dir(&dir)
        .map_err(|e| Error::from(e).at(&dir))?
        .next()
        .is_some()
    {
        let not_empty = std::io::Error::other("is not empty; give an empty folder");
        return Err(Error::from(not_empty).at(&dir));
    }
    let text = dir.join("big.txt");
    let lines: String = (0..100_000)
        .map(|i| format!("{i},{},row\n", i * 3))
        .collect();
    std::fs::write(&text, lines).map_err(|e| Error::from(e).at(&text))?;

    // 1. Count lines: this machine's winner for a file of this size and cache state.
    let count = count_lines(&text)?;
    // 2. Write to standard output: not line-buffered, sized for what stdout is.
    let mut out = StdoutWriter::new()?;
    writeln!(out, "count: {} lines via {}", count.lines, count.method)?;

    // 3. Edit in place: every `,` becomes `;`, durably.
    let report = replace_byte(&text, b',', b';')?;
    writeln!(out, "edit: {:?} with {}", report.outcome, report.strategy)?;

    // 4. Small appends: one write per 64 KiB, not one per record.
    let records = dir.join("records.log");
    let mut file = AppendFile::create(&records)?;
    for i in 0..10_000 {
        file.append(format!("record {i}\n").as_bytes())?;
    }
    file.close()?;
    writeln!(out, "append: 10000 records")?;

    // 5. Durable appends: each returns once its record is on the device.
    let log = Log::open(dir.join("wal.log"))?;
    let end = log.append_durable(b"acknowledged")?;
    writeln!(
        out,
        "durable: {end} bytes on the device, policy {}",
        log.policy()
    )?;

    // 6. Random reads: a map or pread, whichever this machine measured faster.
    let table = RandomAccessFile::open(&records)?;
    let mut block = [0u8; 4096];
    let n = table.read_at(4096, &mut block)?;
    writeln!(
        out,
        "random: {n} bytes at offset 4096, {:?} backing",
        table.backing()
    )?;
    out.finish()
}
