//! The suites and the one table that registers them ([`SUITES`]).
//!
//! A suite is a folder, `suites/<workload>/`, of the same files for the same jobs: its entry
//! in the table (`ENTRY`) and `run` in `mod.rs`, then `jobs.rs`, `measure.rs` (one run of a
//! job, on the round driver [`crate::rounds`]), `rows.rs`, `verdict.rs` and `chart.rs`
//! (`docs/architecture.md`, "The shape of a suite"). It measures the library's strategies (`iolab::<workload>`) and never
//! implements one. Everything else — `iolab bench`'s suite list and `--help`, `iolab
//! methods`, `--methods` names, the tables, `iolab compare` and the HTML report — reads the
//! suite's entry, handed to it as part of this table. No suite imports this module.

pub mod append;
pub mod count;
pub mod edit;
pub mod random;
pub mod write;

pub mod select;

use crate::context::Context;
use crate::error::Result;
use crate::results::{Results, Row};
use crate::suite::{Output, Suite};
use crate::verdict::Verdict;
use iolab::UnknownName;

/// Every suite, in the order a full run takes them. **Adding a suite** adds its folder and
/// one entry here; see `docs/architecture.md`.
pub const SUITES: &[Suite] = &[
    count::ENTRY,
    write::ENTRY,
    edit::ENTRY,
    append::ENTRY,
    random::ENTRY,
];

/// The suite called `name`, if there is one.
pub fn find(name: &str) -> Option<&'static Suite> {
    crate::suite::find_in(SUITES, name)
}

/// The suite called `name`, or the error naming the suites there are.
pub fn named(name: &str) -> std::result::Result<&'static Suite, UnknownName> {
    find(name).ok_or_else(|| UnknownName {
        kind: "suite",
        name: name.to_string(),
        expected: names(),
    })
}

/// Runs the suite called `name`.
/// Runs the suite called `name`; its rows that a library call with no options makes
/// (the suite's `is_default`) are marked `default`.
pub fn run(name: &str, ctx: &mut Context<'_>) -> Result<Output> {
    let suite = named(name).map_err(iolab::Error::UnknownName)?;
    let mut output = (suite.run)(ctx)?;
    for row in output.rows.iter_mut().filter(|r| (suite.is_default)(r)) {
        row.mark_default();
    }
    Ok(output)
}

/// Every suite's name, in order.
pub fn names() -> Vec<&'static str> {
    SUITES.iter().map(|s| s.name).collect()
}

/// The verdict rows of every suite present in `results`, from each suite's entry (results
/// of a suite this iolab does not know have none).
pub fn decide(results: &Results) -> Vec<Verdict> {
    let mut out = Vec::new();
    for suite in results.suites() {
        if let Some(entry) = find(&suite) {
            let rows: Vec<&Row> = results.suite_rows(&suite).collect();
            out.extend((entry.verdict)(results, &rows));
        }
    }
    out
}
