//! `iolab methods WORKLOAD`: each method's name and whether it can run on this machine.
//! The workloads are the suites of the suite table (`iolab_bench::SUITES`).

use std::io::Write;

use anyhow::{Context, Result};
use clap::builder::{PossibleValue, TypedValueParser};
use iolab_bench::SUITES;

/// Arguments of `iolab methods`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Which workload's methods to list
    #[arg(value_name = "WORKLOAD", default_value = "count", value_parser = workloads())]
    workload: String,
}

/// The workloads, from the suite table, each with its description (for `--help`); an
/// unknown name's one-line error lists them (clap's own list is on a second line, which
/// the CLI's one-line errors leave out).
fn workloads() -> Workloads {
    Workloads
}

#[derive(Clone)]
struct Workloads;

impl TypedValueParser for Workloads {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        fn known(s: &str) -> Result<String, String> {
            iolab_bench::suites::named(s)
                .map(|suite| suite.name.to_string())
                .map_err(|e| e.to_string())
        }
        known.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            SUITES
                .iter()
                .map(|s| PossibleValue::new(s.name).help(s.description)),
        ))
    }
}

/// Prints one line per method: its name, then `available` or `unavailable: <reason>`.
pub fn run(args: Args) -> Result<i32> {
    let suite = iolab_bench::suites::find(&args.workload)
        .expect("clap accepts only the suite table's names");
    let rows = (suite.methods)();
    let width = rows.iter().map(|m| m.name.len()).max().unwrap_or(0);
    let mut out = super::stdout()?;
    for m in rows {
        let name = m.name;
        match (m.availability, m.requirement) {
            // A condition that only the run can check (vmsplice needs a pipe on stdout).
            (Ok(()), Some(req)) => writeln!(out, "{name:<width$}  available ({req})"),
            (Ok(()), None) => writeln!(out, "{name:<width$}  available"),
            (Err(reason), _) => writeln!(out, "{name:<width$}  unavailable: {reason}"),
        }
        .context("cannot write to stdout")?;
    }
    Ok(0)
}
