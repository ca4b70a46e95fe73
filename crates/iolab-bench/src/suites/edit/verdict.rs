//! The `edit` suite's verdict: replace and truncate on the large data set (or the user's
//! file), without sync like the baselines, warm when measured; and how to edit that way.

use serde_json::json;

use super::Op;
use crate::results::{Results, Row};
use crate::verdict::{Usage, Verdict, decide_each, group, key};
use iolab_lab::edit::EditStrategy;
use iolab_lab::snippet::{self, Edit};

/// The suite's verdict rows, for the suite table.
pub(crate) fn verdicts(_results: &Results, rows: &[&Row]) -> Vec<Verdict> {
    of_rows(rows)
}

/// The verdict of `rows` alone (the suite's, as it ends: for the winners it saves).
pub(super) fn of_rows(rows: &[&Row]) -> Vec<Verdict> {
    // The baselines never sync: compare them with the no-sync rows, on the big file.
    let cache = if rows.iter().any(|r| r.cache.as_deref() == Some("warm")) {
        "warm"
    } else {
        "cold"
    };
    let candidates: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|r| r.cache.as_deref() == Some(cache))
        .filter(|r| r.extra.get("durable") == Some(&json!(false)))
        .filter(|r| key(r, "dataset") != Some("small"))
        .collect();
    decide_each(
        super::SUITE,
        super::ENTRY.section_keys,
        group(&candidates, |r| {
            let op = match key(r, "op")? {
                "replace" => "replace",
                "truncate-first-line" => "truncate",
                _ => return None,
            };
            Some(match key(r, "dataset") {
                Some(d) if d != "large" => format!("{op}: {d}"),
                _ => op.to_string(),
            })
        }),
        &usage,
        Some(&|r: &Row| {
            r.median_s
                .map(iolab_lab::units::format_duration)
                .unwrap_or_default()
        }),
    )
}

/// `iolab edit … [--strategy S] [--no-sync] FILE` and the library call ([`snippet::edit`]).
fn usage(row: &Row) -> Usage {
    let durable = row.extra.get("durable") != Some(&json!(false));
    let (cli, edit) = if key(row, "op") == Some(Op::Replace.name()) {
        (
            "iolab edit replace --from , --to ';'",
            Edit::Replace {
                from: b',',
                to: b';',
            },
        )
    } else {
        (
            "iolab edit truncate-first-line",
            Edit::TruncateAfterFirstLine,
        )
    };
    // `auto` is the call without a strategy.
    let strategy = row.method.parse::<EditStrategy>().ok();
    Usage {
        cli: format!(
            "{cli}{}{} FILE",
            strategy.map_or(String::new(), |s| format!(" --strategy {s}")),
            if durable { "" } else { " --no-sync" }
        ),
        library: snippet::edit(edit, strategy, durable),
        example: "edit_in_place",
    }
}
