//! The `edit` suite's verdict: replace and truncate on the large data set (or the user's
//! file), without sync like the baselines, warm when measured; and how to edit that way.

use serde_json::json;

use super::Op;
use crate::results::{Results, Row};
use crate::verdict::{Usage, Verdict, decide_each, group, key};
use iolab::edit::Strategy;

/// The suite's verdict rows, for the suite table.
pub(crate) fn verdicts(_results: &Results, rows: &[&Row]) -> Vec<Verdict> {
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
                .map(iolab::units::format_duration)
                .unwrap_or_default()
        }),
    )
}

/// `iolab edit … --strategy S --no-sync FILE` and `Editor::new(Strategy::S).durable(false)…`.
fn usage(row: &Row) -> Usage {
    let strategy = row
        .method
        .parse::<Strategy>()
        .map_or_else(|_| row.method.clone(), |s| format!("{s:?}"));
    let (cli, call) = if key(row, "op") == Some(Op::Replace.name()) {
        (
            "iolab edit replace --from , --to ';'",
            "replace_byte(path, b',', b';')",
        )
    } else {
        (
            "iolab edit truncate-first-line",
            "truncate_after_first_line(path)",
        )
    };
    Usage {
        cli: format!("{cli} --strategy {} --no-sync FILE", row.method),
        library: format!("iolab::edit::Editor::new(Strategy::{strategy}).durable(false).{call}"),
        example: "edit_in_place",
    }
}
