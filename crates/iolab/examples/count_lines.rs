//! Counts the lines of a file the way `wc -l` does, with the call `iolab bench count`
//! hands over: `iolab::count_lines(path)` follows this machine's measured winner for the
//! file (its size, whether it is in the page cache) and says which method it ran.
//!
//! ```text
//! cargo run --release --example count_lines -- FILE
//! ```
//!
//! When the verdict names a method (`mmap-avx2`, `pread-parallel`, …), `CountOptions`
//! takes it, as the second count below does.

use std::path::PathBuf;
use std::process::ExitCode;

use iolab::prelude::*;

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [path] = args.as_slice() else {
        eprintln!("usage: count_lines FILE");
        return ExitCode::FAILURE;
    };
    // One line on stderr and status 1, as a command-line tool fails; the error names the
    // file itself.
    if let Err(e) = run(path) {
        eprintln!("count_lines: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

fn run(path: &PathBuf) -> iolab::Result<()> {
    let count = count_lines(path)?;
    println!(
        "{}: {} lines, {} bytes",
        path.display(),
        count.lines,
        count.bytes
    );
    // `count.method` is what the default resolved to (never `auto` itself).
    println!(
        "auto chose: {} with the {} kernel",
        count.method, count.kernel
    );

    // A method by name: a CPU without AVX2 cannot run this one, and says so.
    let named = CountMethod::MmapAvx2;
    match CountOptions::new().method(named).count_lines(path) {
        Ok(again) => println!(
            "{named}: {} lines with the {} kernel",
            again.lines, again.kernel
        ),
        Err(e) if e.is_unavailable() => println!("{named}: unavailable here ({})", e.cause()),
        Err(e) => return Err(e),
    }
    Ok(())
}
