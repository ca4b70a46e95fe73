//! The command line: argument parsing and one module per subcommand.
//!
//! Errors are reported as one line, `iolab: <context>: <cause>`, with a non-zero exit;
//! a closed pipe on stdout ends the program quietly.

mod count;
mod methods;

use std::io::{self, Write};

use clap::{Parser, Subcommand};

/// A Linux file-I/O laboratory: finds the fastest way to do an I/O task on this machine.
#[derive(Debug, Parser)]
#[command(name = "iolab", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Count lines (newline bytes) like `wc -l`.
    Count(count::Args),
    /// List the methods of a workload and whether each can run here.
    Methods(methods::Args),
}

/// Runs the CLI and returns the process exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Count(args) => count::run(args),
        Command::Methods(args) => methods::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => 0,
        Err(e) => {
            report(&format!("{e:#}"));
            1
        }
    }
}

/// Prints one error line on stderr.
pub(crate) fn report(message: &str) {
    let _ = writeln!(io::stderr().lock(), "iolab: {message}");
}

/// Whether `e` is (or wraps) a write to a closed pipe.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Parses a method name for clap, with the library's message on failure.
pub(crate) fn parse_method(s: &str) -> Result<iolab::Method, String> {
    s.parse().map_err(|e: iolab::Error| e.to_string())
}
