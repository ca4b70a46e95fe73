//! Prints a file's lines numbered like `cat -n`, through `iolab::StdoutWriter`: the writer
//! `iolab bench write` hands over for programs that print. Unlike std's stdout it is not
//! line-buffered (std makes a `write` per line, wherever the output goes, and scans every
//! piece for newlines), and it sizes its writes for what standard output is: a pipe, a file.
//!
//! ```text
//! cargo run --release --example stdout_writer -- FILE > numbered.txt
//! cargo run --release --example stdout_writer -- FILE | head -1
//! cargo run --release --example stdout_writer -- --records 4G | pv -q > /dev/null
//! ```
//!
//! With `--records BYTES` it prints that many bytes of its own numbered 128-byte records
//! instead (the last one cut short): into a pipe, `StdoutWriter` lends its buffers' pages to
//! the pipe rather than copying them (docs/findings/write.md, "Lending pages").
//!
//! A one-line summary goes to stderr, so it never mixes with the output.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use iolab::StdoutWriter;

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    if let [flag, bytes] = args.as_slice()
        && flag.as_os_str() == "--records"
    {
        return match records(&bytes.to_string_lossy()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("stdout_writer: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let [path] = args.as_slice() else {
        eprintln!("usage: stdout_writer FILE | stdout_writer --records BYTES");
        return ExitCode::FAILURE;
    };
    if let Err(e) = run(path) {
        eprintln!("stdout_writer: {}: {e}", path.display());
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

fn run(path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let mut input = BufReader::new(File::open(path)?);
    // A reader that goes away (`| head -1`) ends the process with status 0 and no message,
    // as SIGPIPE ends `cat`, instead of an error on the next write.
    let mut out = StdoutWriter::new()?.exit_quietly_on_broken_pipe();
    let mut line = Vec::new();
    let mut number = 0u64;
    // Bytes, not `String`s: a line that is not UTF-8 is printed as it is, as `cat` does.
    while input.read_until(b'\n', &mut line)? > 0 {
        number += 1;
        // `cat -n`'s format: the number right-aligned in 6 columns, then a tab.
        write!(out, "{number:6}\t")?;
        out.write_all(&line)?;
        line.clear();
    }
    let capacity = out.capacity();
    // Flushed first so that `written()` counts every byte; `finish` then reports what a
    // drop would hide (a full disk, a closed pipe without the quiet exit).
    out.flush()?;
    let written = out.written();
    out.finish()?;
    eprintln!("{number} lines, {written} bytes written through a {capacity}-byte buffer");
    Ok(())
}

/// Prints `bytes` (`4G`, `512M`, `1000`) of numbered 128-byte records: `record ` and the
/// number in 20 digits, spaces, a newline.
fn records(bytes: &str) -> Result<(), Box<dyn std::error::Error>> {
    let (digits, unit) = bytes.split_at(bytes.trim_end_matches(['K', 'M', 'G']).len());
    let shift = match unit {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return Err(format!("not a size: {bytes}").into()),
    };
    let total = digits.parse::<u64>()? << shift;
    let mut record = [b' '; 128];
    record[..7].copy_from_slice(b"record ");
    record[7..27].fill(b'0');
    record[127] = b'\n';
    let mut out = StdoutWriter::new()?.exit_quietly_on_broken_pipe();
    let mut left = total;
    while left > 0 {
        let n = left.min(record.len() as u64) as usize;
        out.write_all(&record[..n])?;
        left -= n as u64;
        // The next number, counted up in place in its digits.
        for d in record[7..27].iter_mut().rev() {
            *d = if *d == b'9' { b'0' } else { *d + 1 };
            if *d != b'0' {
                break;
            }
        }
    }
    out.flush()?;
    eprintln!(
        "{total} bytes of records, {} by lent pages: {}",
        out.lent(),
        out.why()
    );
    out.finish()?;
    Ok(())
}
