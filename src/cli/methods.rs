//! `iolab methods WORKLOAD`: each method's name and whether it can run on this machine.

use std::io::{self, Write};

use anyhow::{Context, Result};
use iolab::Method;

/// The workloads whose methods can be listed.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Workload {
    /// Line counting (`iolab count`).
    Count,
    /// Writing to stdout (`iolab write`).
    Write,
    /// In-place edits (`iolab edit`).
    Edit,
    /// Small appends (the `append` benchmark suite and `iolab::file::AppendFile`).
    Append,
}

/// Arguments of `iolab methods`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Which workload's methods to list.
    #[arg(value_enum, default_value = "count")]
    workload: Workload,
}

/// Prints one line per method: its name, then `available` or `unavailable: <reason>`.
pub fn run(args: Args) -> Result<i32> {
    let rows: Vec<(&str, Result<(), String>)> = match args.workload {
        Workload::Count => Method::ALL
            .into_iter()
            .map(|m| (m.name(), m.availability()))
            .collect(),
        Workload::Write => iolab::write::methods(),
        Workload::Edit => iolab::edit::strategies(),
        Workload::Append => iolab::append::strategies(),
    };
    // A condition that only the run can check (vmsplice needs a pipe on stdout).
    let requirement = |name: &str| match args.workload {
        Workload::Write => iolab::write::Method::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .and_then(|m| m.requirement()),
        _ => None,
    };
    let width = rows.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    let mut out = io::stdout().lock();
    for (name, availability) in rows {
        match availability {
            Ok(()) => match requirement(name) {
                Some(req) => writeln!(out, "{name:<width$}  available ({req})"),
                None => writeln!(out, "{name:<width$}  available"),
            },
            Err(reason) => writeln!(out, "{name:<width$}  unavailable: {reason}"),
        }
        .context("cannot write to stdout")?;
    }
    Ok(0)
}
