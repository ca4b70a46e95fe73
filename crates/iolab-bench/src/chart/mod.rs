//! Chart primitives shared by the suites' charts and the HTML report: the SVG pieces
//! ([`svg`]) and the labels, slugs and rates they are drawn with. It knows rows, not
//! suites.

pub mod svg;

use serde_json::Value;

use crate::results::Row;
use iolab_lab::units::format_rate;
use svg::BarChart;

/// `method` plus its variant label, as the tables show it.
pub fn label(row: &Row) -> String {
    let mut name = row.method.clone();
    if let Some(Value::String(v)) = row.extra.get("variant") {
        name = format!("{name} {v}");
    }
    if row.baseline {
        name.push_str(" (baseline)");
    }
    name
}

/// A rate as the charts print it.
pub fn rate_label(x: f64) -> String {
    format_rate(x)
}

/// Throughput bars, one per row: the chart of a suite without charts of its own.
pub fn throughput_chart(id: &str, suite: &str, rows: &[&Row]) -> String {
    BarChart {
        id: id.into(),
        title: format!("{suite}: throughput by method"),
        unit: "throughput".into(),
        series: vec!["throughput".into()],
        rows: rows
            .iter()
            .map(|r| (label(r), vec![r.throughput_bytes_per_s]))
            .collect(),
        markers: Vec::new(),
        log: false,
        format: rate_label,
    }
    .render()
}

/// A row's extra key as text (strings unquoted), if present and not null.
pub fn extra_str(row: &Row, key: &str) -> Option<String> {
    match row.extra.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// A string reduced to `[a-z0-9-]` for element ids.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::slug;

    #[test]
    fn slugs_are_id_safe() {
        assert_eq!(slug("/dev/null"), "dev-null");
        assert_eq!(slug("every-K"), "every-k");
        assert_eq!(slug("a  b"), "a-b");
    }
}
