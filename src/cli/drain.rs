//! `iolab drain` (hidden): the write benchmark's splice reader as a process of its own.
//!
//! It moves standard input's pipe pages to `/dev/null` with `splice(2)` (never copying a
//! byte, so it is rarely what limits a writer) until end of file or `--limit` bytes, then
//! prints the byte count on stderr: `iolab bench write` runs it as `WRITER | iolab drain`,
//! the way a user's pipeline starts a consumer.

use anyhow::{Context, Result};
use iolab::units::parse_size;

/// Arguments of `iolab drain`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Stop after this many bytes and close the pipe (the writer then gets EPIPE).
    #[arg(long, value_name = "N", value_parser = parse_limit)]
    limit: Option<u64>,
}

fn parse_limit(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

/// Runs `iolab drain`.
pub fn run(args: Args) -> Result<i32> {
    let stdin = std::io::stdin();
    let drained = iolab::bench::runner::drain_fd(&stdin, args.limit)
        .context("cannot splice standard input to /dev/null (is it a pipe?)")?;
    eprintln!("{drained}");
    Ok(0)
}
