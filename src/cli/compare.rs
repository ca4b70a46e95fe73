//! `iolab compare A B`: two runs side by side, with regressions flagged beyond the noise.
//!
//! Only rows that measured the same thing on the same amount of data are compared; the
//! others are listed as `not comparable`, and two runs with no such row in common are
//! refused (one line saying why) rather than printed as a table with nothing in it.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use iolab_bench::report::compare::{self, Change, Comparison};

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

/// Prints the comparison. Exit codes, for a CI: 0 no regression, 1 a row regressed beyond
/// its noise threshold or failed in B, 2 the runs could not be compared (a file missing or
/// unreadable, nothing in common).
pub fn run(args: Args) -> Result<i32> {
    match compare(args) {
        Err(e) if !super::is_broken_pipe(&e) => {
            super::report(&super::one_line(&e));
            Ok(2)
        }
        other => other,
    }
}

fn compare(args: Args) -> Result<i32> {
    let a = super::report::load(&args.a)?;
    let b = super::report::load(&args.b)?;
    let comparisons = compare::compare(&a, &b);
    let not_comparable: Vec<&Comparison> = comparisons
        .iter()
        .filter(|c| c.change == Change::NotComparable)
        .collect();
    if !comparisons.iter().any(|c| c.change.is_compared()) {
        let (a_name, b_name) = (args.a.display(), args.b.display());
        match not_comparable.first() {
            Some(first) => bail!(
                "{a_name} and {b_name} are not comparable: no row measured the same data size in both ({}: {}{}); compare runs made with the same --size and options",
                first.name,
                first.detail.as_deref().unwrap_or("different sizes"),
                more(not_comparable.len() - 1),
            ),
            None if comparisons.iter().any(|c| c.change == Change::TooFewRuns) => bail!(
                "{a_name} and {b_name} have no row with {} counted runs on both sides: nothing can be judged (--quick makes 2; run without it, or with --runs 3 or more)",
                compare::MIN_RUNS
            ),
            None => {
                bail!("{a_name} and {b_name} have no measured row in common: nothing to compare")
            }
        }
    }
    let mut out = super::stdout()?;
    write!(out, "{}", compare::render(&comparisons, args.markdown))
        .context("cannot write to stdout")?;
    out.flush().context("cannot write to stdout")?;
    if let Some(first) = not_comparable.first() {
        super::report(&format!(
            "{} row{} not compared: measured on different data sizes ({}: {}{})",
            not_comparable.len(),
            if not_comparable.len() == 1 { "" } else { "s" },
            first.name,
            first.detail.as_deref().unwrap_or("different sizes"),
            more(not_comparable.len() - 1),
        ));
    }
    if compare::has_regression(&comparisons) {
        super::report(
            "B is slower than A beyond the noise threshold, or failed, on at least one row",
        );
        return Ok(1);
    }
    Ok(0)
}

/// `, and N more` for a list shortened to its first item.
fn more(n: usize) -> String {
    match n {
        0 => String::new(),
        n => format!(", and {n} more"),
    }
}
