//! Counts the lines of a file the way `wc -l` does, with the method `iolab bench count`
//! hands over: `Method::Auto` picks one for the file and this machine (its size, whether it
//! is in the page cache, the measured winners), and the result says which it ran.
//!
//! ```text
//! cargo run --release --example count_lines -- FILE
//! ```
//!
//! When the verdict names another method (`mmap-avx2`, `pread-parallel`, …), pass that
//! instead of `Method::Auto`, as the second count below does.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use iolab::{Input, Method, ReadOptions, count_lines};

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [path] = args.as_slice() else {
        eprintln!("usage: count_lines FILE");
        return ExitCode::FAILURE;
    };
    // One line on stderr and status 1, as a command-line tool fails: the library's messages
    // do not name the file, so it is added here.
    if let Err(e) = run(path) {
        eprintln!("count_lines: {}: {e}", path.display());
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

fn run(path: &Path) -> Result<(), iolab::Error> {
    let input = Input::open(path)?;
    let count = count_lines(Method::Auto, &input, &ReadOptions::new())?;
    println!(
        "{}: {} lines, {} bytes",
        path.display(),
        count.lines,
        count.bytes
    );
    // `count.method` is what `auto` resolved to (never `auto` itself).
    println!(
        "auto chose: {} with the {} kernel",
        count.method, count.kernel
    );

    // A method by name: check first, since a CPU without AVX2 cannot run this one.
    let named = Method::MmapAvx2;
    match named.availability() {
        Ok(()) => {
            // An `Input` is for one run (streaming methods move its position): open another.
            let again = count_lines(named, &Input::open(path)?, &ReadOptions::new())?;
            println!(
                "{named}: {} lines with the {} kernel",
                again.lines, again.kernel
            );
        }
        Err(reason) => println!("{named}: unavailable here ({reason})"),
    }
    Ok(())
}
