//! `iolab sysinfo [--json] [--data DIR]`: the facts about this machine that explain its
//! I/O figures, as an aligned `key: value` report or as JSON.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};

/// Arguments of `iolab sysinfo`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print pretty JSON instead of the report.
    #[arg(long)]
    json: bool,
    /// The benchmark's data directory, whose file system and device are described.
    #[arg(long, value_name = "DIR", default_value = ".")]
    data: PathBuf,
}

/// Prints the report (or JSON) for the data directory.
///
/// A data directory that does not exist is an error: a report about some other storage
/// would explain the wrong figures.
pub fn run(args: Args) -> Result<i32> {
    let metadata = std::fs::metadata(&args.data).map_err(|e| {
        // The library error's text drops Rust's "(os error N)"; one line, no cause chain.
        let e = iolab::Error::io("cannot use as the data directory", e);
        anyhow::anyhow!("{}: {e}", args.data.display())
    })?;
    if !metadata.is_dir() {
        anyhow::bail!("{}: not a directory", args.data.display());
    }
    let info = iolab_lab::sysinfo::collect(&args.data);
    let mut out = super::stdout()?;
    if args.json {
        // Serialized first, so that a closed stdout surfaces as the io::Error the CLI
        // recognizes (serde_json's writer error hides it).
        let json = serde_json::to_string_pretty(&info).context("cannot serialize")?;
        writeln!(out, "{json}").context("cannot write to stdout")?;
    } else {
        let rows = info.details();
        let width = rows.iter().map(|(key, _)| key.len()).max().unwrap_or(0) + 1;
        for (key, value) in rows {
            writeln!(out, "{:<width$} {value}", format!("{key}:"))
                .context("cannot write to stdout")?;
        }
    }
    out.flush().context("cannot write to stdout")?;
    Ok(0)
}
