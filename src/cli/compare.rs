//! `iolab compare A B`: two runs side by side, with regressions flagged beyond the noise.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use iolab::report::{self, compare};

/// Arguments of `iolab compare`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The earlier run: a results folder or its results.json.
    #[arg(value_name = "A")]
    a: PathBuf,
    /// The later run.
    #[arg(value_name = "B")]
    b: PathBuf,
    /// Print a Markdown table.
    #[arg(long)]
    markdown: bool,
}

/// Prints the comparison; exit code 1 when a row regressed beyond its noise threshold.
pub fn run(args: Args) -> Result<i32> {
    let a = report::load(&args.a).with_context(|| args.a.display().to_string())?;
    let b = report::load(&args.b).with_context(|| args.b.display().to_string())?;
    let comparisons = compare::compare(&a, &b);
    let mut out = io::stdout().lock();
    write!(out, "{}", compare::render(&comparisons, args.markdown))
        .context("cannot write to stdout")?;
    out.flush().context("cannot write to stdout")?;
    if compare::has_regression(&comparisons) {
        super::report("B is slower than A beyond the noise threshold on at least one row");
        return Ok(1);
    }
    Ok(0)
}
