//! Prints a file's lines numbered like `cat -n`, through `iolab::StdoutWriter`: the writer
//! `iolab bench write` hands over for programs that print. Unlike std's stdout it is not
//! line-buffered (std makes a `write` per line, wherever the output goes, and scans every
//! piece for newlines), and it sizes its writes for what standard output is: a pipe, a file.
//!
//! ```text
//! cargo run --release --example stdout_writer -- FILE > numbered.txt
//! cargo run --release --example stdout_writer -- FILE | head -1
//! ```
//!
//! A one-line summary goes to stderr, so it never mixes with the output.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use iolab::StdoutWriter;

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [path] = args.as_slice() else {
        eprintln!("usage: stdout_writer FILE");
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
