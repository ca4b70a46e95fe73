//! Comparing two benchmark runs row by row, as critcmp and benchstat do, without crying
//! wolf when the host's speed drifts between them.
//!
//! Rows match when their identity matches: suite, method, cache state, baseline flag and
//! the suite's own setting keys ([`IDENTITY_KEYS`]). A matched pair is judged only when
//! both rows measured the same amount of data ([`SIZE_KEYS`]; else
//! [`Change::NotComparable`]) with at least [`MIN_RUNS`] counted runs each (else
//! [`Change::TooFewRuns`]: one run says nothing about its noise). A method that ran and
//! was verified in A but failed, printed a wrong result or could not run in B is
//! [`Change::FailedInB`], a regression.
//!
//! **The decision** ([`drift`]) is made on one number per row, shown in the table: the
//! ratio of medians B/A divided by the drift of its group (the rows of one suite, cache
//! state and section). Two runs made at different times differ by more than the noise of
//! either: a shared virtual machine's speed moves between them, for the external baselines
//! (`wc -l`, `yes`, …) as much as for iolab's methods. So each row is judged against the
//! other rows of its group: the drift is their median ratio (with fewer than two, their
//! baselines'), and the threshold adds to the row's own spread in A and B the spread with
//! which the others drifted:
//!
//! `threshold = max(FLOOR, exp(NOISE_SIGMAS · sqrt(σA² + σB² + τ²)) − 1)`, [`drift::FLOOR`] 12%,
//!
//! where σ is a row's robust relative spread (`1.4826 · MAD / median`) and τ the robust
//! spread of the other rows' log ratios around the drift (with fewer than three, the size
//! of the drift itself). A row is REGRESSED when its corrected ratio exceeds `1 + threshold`
//! and so does its own ratio of medians (the drift explains a change away, never makes
//! one), improved when both are below `1 / (1 + threshold)`. Baselines are the control: their corrected ratio
//! is shown, never judged.

mod drift;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::results::{Results, Row};
use iolab_lab::units::{format_bytes, format_duration};

pub use crate::stats::{MIN_THRESHOLD, NOISE_SIGMAS};

/// The fewest counted runs a row needs on each side to be judged: with fewer, its spread
/// is unknown (the harness stops rows that cannot win after one run).
pub const MIN_RUNS: usize = 3;

/// Row keys, besides suite, method, cache and baseline, that tell rows apart, for a suite
/// this iolab does not know; a known suite's come from its entry in the suite table
/// ([`crate::suite::Suite::identity_keys`]).
pub const IDENTITY_KEYS: &[&str] = &[
    "section",
    "variant",
    "sink",
    "buffer_bytes",
    "pipe_capacity_bytes",
    "cpus",
    "record_bytes",
    "op",
    "dataset",
    "durable",
    "payload_bytes",
    "sync_policy",
    "threads",
    "queue_depth",
    "block_bytes",
];

/// Row keys, besides `bytes`, that give the size of the data a row measured (the file read by
/// the `random` suite); a pair of rows that differ in one is not comparable.
pub const SIZE_KEYS: &[&str] = &["file_bytes"];

/// How a row changed from A to B.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// B is faster beyond the noise.
    Improved,
    /// B is slower beyond the noise.
    Regressed,
    /// Within the noise.
    Same,
    /// Ran and was verified in A; in B it failed, printed a wrong result or could not run
    /// ([`Comparison::detail`] says which). A regression.
    FailedInB,
    /// One side has fewer than [`MIN_RUNS`] counted runs: its noise is unknown.
    TooFewRuns,
    /// Only A has it.
    OnlyInA,
    /// Only B has it (or A has it failed).
    OnlyInB,
    /// Both have it, but measured on different amounts of data: the times are not
    /// comparable ([`Comparison::detail`] says how the sizes differ).
    NotComparable,
}

impl Change {
    /// A short word for tables.
    pub fn word(self) -> &'static str {
        match self {
            Change::Improved => "improved",
            Change::Regressed => "REGRESSED",
            Change::Same => "~",
            Change::FailedInB => "FAILED in B",
            Change::TooFewRuns => "too few runs",
            Change::OnlyInA => "only in A",
            Change::OnlyInB => "only in B",
            Change::NotComparable => "not comparable",
        }
    }

    /// Whether A and B were compared: the row measured the same thing in both, often
    /// enough to know its noise.
    pub fn is_compared(self) -> bool {
        matches!(self, Change::Improved | Change::Regressed | Change::Same)
    }

    /// Whether the change fails a comparison (`iolab compare` exits 1).
    pub fn is_regression(self) -> bool {
        matches!(self, Change::Regressed | Change::FailedInB)
    }
}

/// One compared row.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// A readable name: `count mmap-avx2 (warm)`.
    pub name: String,
    /// A's median, seconds (`median_s`, the figure the tables print).
    pub a_median: Option<f64>,
    /// B's median, seconds.
    pub b_median: Option<f64>,
    /// B / A, as measured.
    pub ratio: Option<f64>,
    /// The drift of the row's group from A to B (1: none seen), which `adjusted` removes.
    pub drift: Option<f64>,
    /// B / A divided by the drift: the number the decision is made on.
    pub adjusted: Option<f64>,
    /// The noise threshold used, relative (0.05 = 5%).
    pub threshold: Option<f64>,
    /// The verdict.
    pub change: Change,
    /// Why the row is not compared, or failed: `bytes 1.00 MiB in A, 64.0 MiB in B`.
    pub detail: Option<String>,
}

impl Comparison {
    fn unjudged(row: &Row, a: Option<&Row>, b: Option<&Row>, change: Change) -> Comparison {
        Comparison {
            name: label(row),
            a_median: a.and_then(|r| r.median_s),
            b_median: b.and_then(|r| r.median_s),
            ratio: None,
            drift: None,
            adjusted: None,
            threshold: None,
            change,
            detail: None,
        }
    }

    fn detail(mut self, detail: String) -> Comparison {
        self.detail = Some(detail);
        self
    }
}

/// The identity keys of `row`'s suite.
fn identity_keys(row: &Row) -> &'static [&'static str] {
    crate::suites::find(&row.suite).map_or(IDENTITY_KEYS, |s| s.identity_keys)
}

fn identity(row: &Row) -> String {
    let mut parts = vec![
        row.suite.clone(),
        row.method.clone(),
        row.cache.clone().unwrap_or_default(),
        row.baseline.to_string(),
    ];
    for key in identity_keys(row) {
        if let Some(v) = row.extra.get(*key) {
            parts.push(format!("{key}={v}"));
        }
    }
    parts.join("\u{1f}")
}

/// The group a row's drift is estimated in: its suite, cache state and table section.
fn group(row: &Row) -> String {
    let keys = crate::suites::find(&row.suite).map_or(&[][..], |s| s.section_keys);
    format!("{}\u{1f}{}", row.suite, row.section(keys))
}

/// How the sizes of `a` and `b` differ, when they do: `bytes 1.00 MiB in A, 64.0 MiB in B`.
fn size_difference(a: &Row, b: &Row) -> Option<String> {
    if a.bytes != b.bytes {
        return Some(format!(
            "bytes {} in A, {} in B",
            format_size(a.bytes),
            format_size(b.bytes)
        ));
    }
    SIZE_KEYS.iter().find_map(|key| {
        let (va, vb) = (a.extra.get(*key), b.extra.get(*key));
        (va != vb).then(|| {
            let show = |v: Option<&Value>| match v.and_then(Value::as_u64) {
                Some(n) => format_size(n),
                None => v.map_or_else(|| "none".to_string(), Value::to_string),
            };
            format!("{key} {} in A, {} in B", show(va), show(vb))
        })
    })
}

/// A size for messages: rounded, with the exact bytes below 1 KiB.
fn format_size(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else {
        format_bytes(bytes)
    }
}

fn label(row: &Row) -> String {
    let mut name = format!("{} {}", row.suite, row.method);
    for key in identity_keys(row) {
        match row.extra.get(*key) {
            Some(Value::String(s)) if !name.contains(s.as_str()) => name.push_str(&format!(" {s}")),
            Some(Value::String(_)) => {}
            Some(v) if !v.is_null() && *key != "variant" => {
                let setting = format!("{key}={v}");
                if !name.contains(&setting) {
                    name.push_str(&format!(" {setting}"));
                }
            }
            _ => {}
        }
    }
    if let Some(c) = &row.cache {
        name.push_str(&format!(" ({c})"));
    }
    name
}

/// Whether a row ran and printed the right result.
fn good(row: &Row) -> bool {
    row.measured() && row.verified && row.error.is_none()
}

/// Why a row that ran in A did not run well in B, if it did not.
fn failure(b: &Row) -> Option<String> {
    if let Some(e) = &b.error {
        return Some(format!("in B: {e}"));
    }
    if let Some(u) = &b.unavailable {
        return Some(format!("unavailable in B: {u}"));
    }
    (b.measured() && !b.verified).then(|| "unverified in B".to_string())
}

/// Compares every row of `b` with its match in `a`.
pub fn compare(a: &Results, b: &Results) -> Vec<Comparison> {
    let a_rows: BTreeMap<String, &Row> = a.rows.iter().map(|r| (identity(r), r)).collect();
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    // The pairs judged on their timings, by group, for the drift.
    let mut judged: Vec<(usize, String, &Row, &Row)> = Vec::new();
    for row_b in &b.rows {
        let key = identity(row_b);
        seen.insert(key.clone());
        let Some(&row_a) = a_rows.get(&key).filter(|r| good(r)) else {
            if row_b.measured() || row_b.error.is_some() {
                let only = Comparison::unjudged(
                    row_b,
                    a_rows.get(&key).copied(),
                    Some(row_b),
                    Change::OnlyInB,
                );
                out.push(match a_rows.get(&key) {
                    Some(_) => only.detail("did not run well in A".into()),
                    None => only,
                });
            }
            continue;
        };
        if let Some(why) = failure(row_b) {
            out.push(
                Comparison::unjudged(row_b, Some(row_a), Some(row_b), Change::FailedInB)
                    .detail(why),
            );
            continue;
        }
        if !row_b.measured() {
            continue;
        }
        if let Some(detail) = size_difference(row_a, row_b) {
            out.push(
                Comparison::unjudged(row_b, Some(row_a), Some(row_b), Change::NotComparable)
                    .detail(detail),
            );
            continue;
        }
        let runs = |r: &Row| r.stats.as_ref().map_or(0, |s| s.n);
        if runs(row_a) < MIN_RUNS || runs(row_b) < MIN_RUNS {
            out.push(
                Comparison::unjudged(row_b, Some(row_a), Some(row_b), Change::TooFewRuns).detail(
                    format!(
                        "{} and {} counted runs; {MIN_RUNS} needed",
                        runs(row_a),
                        runs(row_b)
                    ),
                ),
            );
            continue;
        }
        judged.push((out.len(), group(row_b), row_a, row_b));
        out.push(Comparison::unjudged(
            row_b,
            Some(row_a),
            Some(row_b),
            Change::Same,
        ));
    }
    drift::decide(&judged, &mut out);
    for (key, row_a) in &a_rows {
        if !seen.contains(key) && row_a.measured() {
            out.push(Comparison::unjudged(
                row_a,
                Some(row_a),
                None,
                Change::OnlyInA,
            ));
        }
    }
    out
}

/// Whether any row regressed beyond its noise threshold, or failed in B.
pub fn has_regression(comparisons: &[Comparison]) -> bool {
    comparisons.iter().any(|c| c.change.is_regression())
}

/// The comparison as a table: aligned text, or Markdown.
pub fn render(comparisons: &[Comparison], markdown: bool) -> String {
    let dash = || "—".to_string();
    let ratio = |r: Option<f64>| r.map(|r| format!("{r:.3}")).unwrap_or_else(dash);
    let header = [
        "row",
        "A median",
        "B median",
        "B/A",
        "drift",
        "B/A ÷ drift",
        "noise",
        "change",
    ]
    .map(String::from);
    let rows: Vec<Vec<String>> = comparisons
        .iter()
        .map(|c| {
            vec![
                c.name.clone(),
                c.a_median.map(format_duration).unwrap_or_else(dash),
                c.b_median.map(format_duration).unwrap_or_else(dash),
                ratio(c.ratio),
                ratio(c.drift),
                ratio(c.adjusted),
                c.threshold
                    .map(|t| format!("±{:.0}%", t * 100.0))
                    .unwrap_or_else(dash),
                match &c.detail {
                    Some(detail) => format!("{} ({detail})", c.change.word()),
                    None => c.change.word().to_string(),
                },
            ]
        })
        .collect();
    let table = crate::export::table::Table {
        title: "iolab compare: B relative to A, corrected for the drift of the same programs between the runs (above 1: B is slower)".into(),
        headers: header.to_vec(),
        rows,
    };
    table.render(if markdown {
        crate::export::table::Markup::Markdown
    } else {
        crate::export::table::Markup::Plain
    })
}

#[cfg(test)]
mod tests;
