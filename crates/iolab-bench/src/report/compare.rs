//! Comparing two benchmark runs row by row, as critcmp and benchstat do.
//!
//! Rows match when their identity matches: suite, method, cache state, baseline flag and
//! the suite's own setting keys ([`IDENTITY_KEYS`]). A matched pair is compared only when
//! both rows measured the same amount of data ([`SIZE_KEYS`]): a run on 64 MiB and a run on
//! 1 GiB time different work, so such a pair is [`Change::NotComparable`], never improved
//! or regressed. For each comparable pair the ratio of medians B/A is reported (above 1: B
//! is slower). A change counts only when it is larger than the
//! noise of the two runs: the threshold is
//!
//! `max(MIN_THRESHOLD, NOISE_SIGMAS · sqrt(σA² + σB²))`
//!
//! where σ is a run's robust relative spread, `1.4826 · MAD / median` (the MAD scaled to a
//! normal distribution's standard deviation). So two quiet runs flag a 5% change, while a
//! noisy virtual machine needs a bigger one before iolab calls it a regression. The rule
//! is [`crate::stats::beats`], which the verdict of `iolab bench` uses too.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::results::{Results, Row};
use crate::stats::{beats, noise_threshold};
use iolab::units::{format_bytes, format_duration};

pub use crate::stats::{MIN_THRESHOLD, NOISE_SIGMAS};
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
    /// Only A has timings for it.
    OnlyInA,
    /// Only B has timings for it.
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
            Change::OnlyInA => "only in A",
            Change::OnlyInB => "only in B",
            Change::NotComparable => "not comparable",
        }
    }

    /// Whether A and B were compared: the row measured the same thing in both.
    pub fn is_compared(self) -> bool {
        matches!(self, Change::Improved | Change::Regressed | Change::Same)
    }
}

/// One compared row.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// A readable name: `count mmap-avx2 (warm)`.
    pub name: String,
    /// A's median, seconds.
    pub a_median: Option<f64>,
    /// B's median, seconds.
    pub b_median: Option<f64>,
    /// B / A.
    pub ratio: Option<f64>,
    /// The noise threshold used, relative (0.05 = 5%).
    pub threshold: Option<f64>,
    /// The verdict.
    pub change: Change,
    /// Why the row is [`Change::NotComparable`]: `bytes 1.00 MiB in A, 64.0 MiB in B`.
    pub detail: Option<String>,
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
            Some(Value::String(s)) => name.push_str(&format!(" {s}")),
            Some(v) if !v.is_null() && *key != "variant" => name.push_str(&format!(" {key}={v}")),
            _ => {}
        }
    }
    if let Some(c) = &row.cache {
        name.push_str(&format!(" ({c})"));
    }
    name
}

/// Compares every row of `b` with its match in `a`.
pub fn compare(a: &Results, b: &Results) -> Vec<Comparison> {
    let a_rows: BTreeMap<String, &Row> = a
        .rows
        .iter()
        .filter(|r| r.measured())
        .map(|r| (identity(r), r))
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for row_b in b.rows.iter().filter(|r| r.measured()) {
        let key = identity(row_b);
        seen.insert(key.clone());
        let Some(row_a) = a_rows.get(&key) else {
            out.push(Comparison {
                name: label(row_b),
                a_median: None,
                b_median: row_b.median_s,
                ratio: None,
                threshold: None,
                change: Change::OnlyInB,
                detail: None,
            });
            continue;
        };
        if let Some(detail) = size_difference(row_a, row_b) {
            out.push(Comparison {
                name: label(row_b),
                a_median: row_a.median_s,
                b_median: row_b.median_s,
                ratio: None,
                threshold: None,
                change: Change::NotComparable,
                detail: Some(detail),
            });
            continue;
        }
        let (ma, mb) = (row_a.median_s.unwrap_or(0.0), row_b.median_s.unwrap_or(0.0));
        let threshold = noise_threshold(row_a.stats.as_ref(), row_b.stats.as_ref());
        let ratio = if ma > 0.0 { Some(mb / ma) } else { None };
        let change = match (&row_a.stats, &row_b.stats) {
            (Some(sa), Some(sb)) if ratio.is_some() && beats(sa, sb) => Change::Regressed,
            (Some(sa), Some(sb)) if ratio.is_some() && beats(sb, sa) => Change::Improved,
            _ => Change::Same,
        };
        out.push(Comparison {
            name: label(row_b),
            a_median: Some(ma),
            b_median: Some(mb),
            ratio,
            threshold: Some(threshold),
            change,
            detail: None,
        });
    }
    for (key, row_a) in &a_rows {
        if !seen.contains(key) {
            out.push(Comparison {
                name: label(row_a),
                a_median: row_a.median_s,
                b_median: None,
                ratio: None,
                threshold: None,
                change: Change::OnlyInA,
                detail: None,
            });
        }
    }
    out
}

/// Whether any row regressed beyond its noise threshold.
pub fn has_regression(comparisons: &[Comparison]) -> bool {
    comparisons.iter().any(|c| c.change == Change::Regressed)
}

/// The comparison as a table: aligned text, or Markdown.
pub fn render(comparisons: &[Comparison], markdown: bool) -> String {
    let dash = || "—".to_string();
    let header = ["row", "A median", "B median", "B/A", "noise", "change"].map(String::from);
    let rows: Vec<[String; 6]> = comparisons
        .iter()
        .map(|c| {
            [
                c.name.clone(),
                c.a_median.map(format_duration).unwrap_or_else(dash),
                c.b_median.map(format_duration).unwrap_or_else(dash),
                c.ratio.map(|r| format!("{r:.3}")).unwrap_or_else(dash),
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
        title: "iolab compare: B relative to A (B/A > 1 means B is slower)".into(),
        headers: header.to_vec(),
        rows: rows.into_iter().map(|r| r.to_vec()).collect(),
    };
    table.render(if markdown {
        crate::export::table::Markup::Markdown
    } else {
        crate::export::table::Markup::Plain
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Row;

    fn row(method: &str, runs: &[f64]) -> Row {
        let mut r = Row {
            suite: "count".into(),
            method: method.into(),
            cache: Some("warm".into()),
            bytes: 100,
            verified: true,
            ..Row::default()
        };
        r.set_timings(runs, runs, runs);
        r
    }

    fn results(rows: Vec<Row>) -> Results {
        serde_json::from_value(serde_json::json!({
            "schema_version": 1, "iolab_version": "0", "command": [], "started_at": "",
            "finished_at": "", "partial": false, "config": {},
            "sysinfo": serde_json::to_value(iolab::sysinfo::collect(std::path::Path::new("."))).unwrap(),
            "rows": serde_json::to_value(rows).unwrap(), "warnings": [], "notes": []
        }))
        .unwrap()
    }

    #[test]
    fn changes_beyond_the_noise_are_flagged_both_ways() {
        let a = results(vec![
            row("fast", &[1.00, 1.01, 0.99, 1.00, 1.00]),
            row("slow", &[1.00, 1.01, 0.99, 1.00, 1.00]),
            row("same", &[1.00, 1.01, 0.99, 1.00, 1.00]),
            row("gone", &[1.0]),
        ]);
        let b = results(vec![
            row("fast", &[0.50, 0.51, 0.49, 0.50, 0.50]),
            row("slow", &[2.00, 2.02, 1.98, 2.00, 2.00]),
            row("same", &[1.01, 1.02, 1.00, 1.01, 1.01]),
            row("new", &[1.0]),
        ]);
        let c = compare(&a, &b);
        let change = |n: &str| c.iter().find(|x| x.name.contains(n)).unwrap().change;
        assert_eq!(change("fast"), Change::Improved);
        assert_eq!(change("slow"), Change::Regressed);
        assert_eq!(change("same"), Change::Same);
        assert_eq!(change("gone"), Change::OnlyInA);
        assert_eq!(change("new"), Change::OnlyInB);
        assert!(has_regression(&c));
        let ratio = c
            .iter()
            .find(|x| x.name.contains("slow"))
            .unwrap()
            .ratio
            .unwrap();
        assert!((ratio - 2.0).abs() < 1e-9);
    }

    #[test]
    fn noisy_runs_need_a_bigger_change() {
        let a = results(vec![row("m", &[1.0, 1.3, 0.7, 1.2, 0.8])]);
        let b = results(vec![row("m", &[1.2, 1.5, 0.9, 1.4, 1.0])]);
        let c = compare(&a, &b);
        assert_eq!(c[0].change, Change::Same, "{c:?}");
        assert!(c[0].threshold.unwrap() > 0.2);
    }

    #[test]
    fn rows_with_different_settings_do_not_match() {
        let mut one = row("mmap-parallel", &[1.0]);
        one.extra.insert("threads".into(), serde_json::json!(1));
        let mut two = row("mmap-parallel", &[2.0]);
        two.extra.insert("threads".into(), serde_json::json!(2));
        let c = compare(&results(vec![one.clone()]), &results(vec![two]));
        assert_eq!(c.len(), 2);
        let same = compare(&results(vec![one.clone()]), &results(vec![one]));
        assert_eq!(same[0].change, Change::Same);
    }

    #[test]
    fn rows_of_different_sizes_are_not_comparable() {
        let a = row("mmap", &[1.00, 1.01, 0.99, 1.00, 1.00]);
        let mut b = row("mmap", &[0.01, 0.01, 0.01, 0.01, 0.01]);
        b.bytes = 0;
        let c = compare(&results(vec![a.clone()]), &results(vec![b]));
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].change, Change::NotComparable);
        assert!(!c[0].change.is_compared());
        assert_eq!(c[0].ratio, None);
        assert_eq!(c[0].detail.as_deref(), Some("bytes 100 B in A, 0 B in B"));
        assert!(!has_regression(&c));
        let table = render(&c, false);
        assert!(
            table.contains("not comparable (bytes 100 B in A, 0 B in B)"),
            "{table}"
        );
        assert!(!table.contains("improved"), "{table}");

        let mut file = a.clone();
        file.extra
            .insert("file_bytes".into(), serde_json::json!(1u64 << 30));
        let c = compare(&results(vec![a]), &results(vec![file]));
        assert_eq!(c[0].change, Change::NotComparable, "{c:?}");
    }
}
