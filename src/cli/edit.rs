//! `iolab edit` (to be written: issue 6).

use anyhow::Result;

/// The edits `iolab edit` can make.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Keep only the first line.
    TruncateFirstLine,
}

/// Runs `iolab edit`.
pub fn run(_command: Command) -> Result<i32> {
    anyhow::bail!("not yet written")
}
