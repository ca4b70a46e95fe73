//! `iolab report RESULTS --html FILE`: the self-contained HTML report of a run.

use std::path::PathBuf;

use anyhow::{Context, Result};
use iolab::report;

/// Arguments of `iolab report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A results folder or its results.json.
    #[arg(value_name = "RESULTS")]
    results: PathBuf,
    /// Where to write the report [default: report.html beside the results].
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Also write the count suite's chart alone as an SVG file (as in the README).
    #[arg(long, value_name = "FILE")]
    count_svg: Option<PathBuf>,
}

/// Writes the report and says where.
pub fn run(args: Args) -> Result<i32> {
    let results =
        report::load(&args.results).with_context(|| args.results.display().to_string())?;
    let out = args.html.unwrap_or_else(|| {
        let dir = if args.results.is_dir() {
            args.results.clone()
        } else {
            args.results.parent().map(PathBuf::from).unwrap_or_default()
        };
        dir.join("report.html")
    });
    std::fs::write(&out, report::html::render(&results))
        .with_context(|| format!("{}: cannot write the report", out.display()))?;
    super::report(&format!("report written to {}", out.display()));
    if let Some(svg) = args.count_svg {
        let chart = report::html::count_chart_svg(&results).with_context(|| {
            format!("{}: the results have no count rows", args.results.display())
        })?;
        std::fs::write(&svg, chart)
            .with_context(|| format!("{}: cannot write the chart", svg.display()))?;
        super::report(&format!("count chart written to {}", svg.display()));
    }
    Ok(0)
}
