//! `iolab drain` (hidden): the write benchmark's splice reader as a process of its own.
//!
//! It moves standard input's pipe pages to `/dev/null` with `splice(2)` (never copying a
//! byte, so it is rarely what limits a writer) until end of file or `--limit` bytes, then
//! prints the byte count on stderr: `iolab bench write` runs it as `WRITER | iolab drain`,
//! the way a user's pipeline starts a consumer.

use anyhow::{Context, Result, bail};
use iolab_lab::units::parse_size;

/// Arguments of `iolab drain`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Stop after this many bytes and close the pipe (the writer then gets EPIPE).
    #[arg(long, value_name = "N", value_parser = parse_limit, allow_hyphen_values = true)]
    limit: Option<u64>,
}

fn parse_limit(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

/// Refuses a standard input that is not a pipe: `splice(2)` needs one, and anything else
/// would fail with a bare "Invalid argument".
fn check_stdin(stdin: &std::io::Stdin) -> Result<()> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let file = std::fs::File::from(
        stdin
            .as_fd()
            .try_clone_to_owned()
            .context("standard input is closed: drain splices a pipe (`WRITER | iolab drain`)")?,
    );
    let meta = file.metadata().context("cannot inspect standard input")?;
    let kind = meta.file_type();
    if kind.is_fifo() {
        return Ok(());
    }
    let what = if kind.is_char_device() && meta.rdev() == libc::makedev(1, 3) {
        // Also what a closed standard input becomes: Rust's runtime opens /dev/null there.
        "/dev/null (or closed)"
    } else {
        super::what_it_is(&kind)
    };
    anyhow::bail!(
        "standard input is {what}, not a pipe: drain splices a pipe's pages (`WRITER | iolab drain`)"
    )
}

/// Runs `iolab drain`.
pub fn run(args: Args) -> Result<i32> {
    if super::closed_at_start(0) {
        bail!("standard input is closed (file descriptor 0)");
    }
    let stdin = std::io::stdin();
    check_stdin(&stdin)?;
    let drained = iolab_bench::runner::drain_fd(&stdin, args.limit)
        .context("cannot splice standard input to /dev/null (is it a pipe?)")?;
    eprintln!("{drained}");
    Ok(0)
}
