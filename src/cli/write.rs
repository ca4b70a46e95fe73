//! `iolab write` (to be written: issue 5).

use anyhow::Result;

/// Arguments of `iolab write`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `iolab write`.
pub fn run(_args: Args) -> Result<i32> {
    anyhow::bail!("not yet written")
}
