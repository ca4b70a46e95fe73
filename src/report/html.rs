//! The HTML report: one self-contained file (inline CSS and SVG, no fetches) with the
//! machine summary, a chart per suite and the tables.
//!
//! Charts per suite:
//! - `count`: throughput by method, warm and cold side by side, the ceilings from the
//!   limit probes as dashed lines (`#count-throughput`);
//! - `write`: throughput by buffer size, a line per method, one chart per sink, with the
//!   L1d size and `st_blksize × 32` marked (`#write-sweep-<sink>`), and the best of each
//!   method and baseline as bars (`#write-best`);
//! - `edit`: per-operation stacked bars of each strategy's phases (`#edit-phases-<op>-<dataset>`);
//! - `append`: ns per record by strategy on a log scale, one chart per sync policy
//!   (`#append-ns-<policy>`);
//! - any other suite: throughput bars (`#<suite>-throughput`).

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::Value;

use super::svg::{BarChart, LineChart, Marker, StackedChart, escape};
use crate::bench::export::table;
use crate::bench::results::{Results, Row};
use crate::units::{format_bytes, format_duration, format_rate};

const STYLE: &str = r#"
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1000px; color: #222; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; } h3 { font-size: 1.05em; }
.machine li { font-family: ui-monospace, monospace; font-size: 12px; list-style: none; }
.warning { background: #fff4e5; border-left: 4px solid #E69F00; padding: .4em .8em; }
.partial { background: #fdecea; border-left: 4px solid #D55E00; padding: .4em .8em; font-weight: bold; }
table { border-collapse: collapse; font-size: 12px; margin: 1em 0; }
th, td { border-bottom: 1px solid #eee; padding: 2px 8px; text-align: right; white-space: nowrap; }
th:first-child, td:first-child, td:last-child { text-align: left; }
td:last-child { white-space: normal; }
svg.chart { display: block; margin: 1em 0; max-width: 100%; height: auto; }
svg .chart-title { font-weight: bold; font-size: 14px; }
svg .label, svg .value, svg .legend, svg .tick, svg .marker-label, svg .axis-label { font-size: 11px; fill: #333; }
svg .missing { fill: #999; } svg .axis { stroke: #888; } svg .grid { stroke: #eee; }
"#;

/// The report for `results`.
pub fn render(results: &Results) -> String {
    let mut body = String::new();
    let _ = write!(
        body,
        "<h1>iolab results</h1><p>iolab {} · started {} · finished {} · <code>{}</code></p>",
        escape(&results.iolab_version),
        escape(&results.started_at),
        escape(&results.finished_at),
        escape(&results.command.join(" "))
    );
    if results.partial {
        body.push_str(
            "<p class=\"partial\">Partial run: it was interrupted before every row was measured.</p>",
        );
    }
    body.push_str("<h2>Machine</h2><ul class=\"machine\">");
    for line in results.sysinfo.summary_lines() {
        let _ = write!(body, "<li>{}</li>", escape(&line));
    }
    body.push_str("</ul>");
    for w in &results.warnings {
        let _ = write!(body, "<p class=\"warning\">Warning: {}</p>", escape(w));
    }
    if !results.notes.is_empty() {
        body.push_str("<ul class=\"notes\">");
        for n in &results.notes {
            let _ = write!(body, "<li>{}</li>", escape(n));
        }
        body.push_str("</ul>");
    }
    let tables = table::tables(results);
    for suite in results.suites() {
        let rows: Vec<&Row> = results.suite_rows(&suite).collect();
        let _ = write!(body, "<h2 id=\"suite-{0}\">{0}</h2>", escape(&suite));
        let charts = match suite.as_str() {
            "count" => vec![count_chart(results, &rows)],
            "write" => write_charts(results, &rows),
            "edit" => edit_charts(&rows),
            "append" => append_charts(&rows),
            other => vec![throughput_chart(
                &format!("{other}-throughput"),
                other,
                &rows,
            )],
        };
        for chart in charts {
            body.push_str(&chart);
        }
        for t in tables
            .iter()
            .filter(|t| t.title.starts_with(&format!("{suite}:")))
        {
            body.push_str(&html_table(t));
        }
    }
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>iolab results</title><style>{STYLE}</style></head><body>{body}</body></html>\n"
    )
}

fn html_table(t: &table::Table) -> String {
    let mut out = format!("<h3>{}</h3><table><thead><tr>", escape(&t.title));
    for h in &t.headers {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr></thead><tbody>");
    for row in &t.rows {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{}</td>", escape(cell));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    out
}

/// `method` plus its variant label, as the tables show it.
fn label(row: &Row) -> String {
    let mut name = row.method.clone();
    if let Some(Value::String(v)) = row.extra.get("variant") {
        name = format!("{name} {v}");
    }
    if row.baseline {
        name.push_str(" (baseline)");
    }
    name
}

fn rate_label(x: f64) -> String {
    format_rate(x)
}

/// The `count` suite's chart alone, as a standalone SVG document (for the README), or
/// `None` when the results have no count rows.
pub fn count_chart_svg(results: &Results) -> Option<String> {
    let rows: Vec<&Row> = results.suite_rows("count").collect();
    if rows.is_empty() {
        return None;
    }
    let chart = count_chart(results, &rows);
    // Standalone: the page's CSS is not there, so carry the text style inline.
    Some(chart.replacen(
        "role=\"img\">",
        "role=\"img\"><style>text { font: 11px sans-serif; fill: #333 } .chart-title { font-weight: bold; font-size: 14px } .axis { stroke: #888 }</style><rect width=\"100%\" height=\"100%\" fill=\"white\"/>",
        1,
    ))
}

fn count_chart(results: &Results, rows: &[&Row]) -> String {
    let mut categories: Vec<String> = Vec::new();
    let mut values: BTreeMap<(String, String), f64> = BTreeMap::new();
    for r in rows {
        let name = label(r);
        if !categories.contains(&name) {
            categories.push(name.clone());
        }
        if let (Some(c), Some(t)) = (&r.cache, r.throughput_bytes_per_s) {
            values.insert((name, c.clone()), t);
        }
    }
    // Fastest warm first, as in the tables.
    categories.sort_by(|a, b| {
        let va = values
            .get(&(a.clone(), "warm".into()))
            .copied()
            .unwrap_or(0.0);
        let vb = values
            .get(&(b.clone(), "warm".into()))
            .copied()
            .unwrap_or(0.0);
        vb.total_cmp(&va)
    });
    let series = ["warm", "cold"];
    let mut markers = Vec::new();
    if let Some(c) = &results.ceilings {
        if let Some(v) = c.memory_scan.ceiling_bytes_per_s {
            markers.push(Marker {
                label: "memory-scan ceiling".into(),
                value: v,
                series: 0,
            });
        }
        if let Some(v) = c.device_read.ceiling_bytes_per_s {
            markers.push(Marker {
                label: "device ceiling".into(),
                value: v,
                series: 1,
            });
        }
    }
    BarChart {
        id: "count-throughput".into(),
        title: "count: throughput by method, warm and cold".into(),
        unit: "throughput (decimal units)".into(),
        series: series.map(String::from).to_vec(),
        rows: categories
            .iter()
            .map(|c| {
                (
                    c.clone(),
                    series
                        .iter()
                        .map(|s| values.get(&(c.clone(), (*s).to_string())).copied())
                        .collect(),
                )
            })
            .collect(),
        markers,
        log: false,
        format: rate_label,
    }
    .render()
}

fn throughput_chart(id: &str, suite: &str, rows: &[&Row]) -> String {
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

fn extra_str(row: &Row, key: &str) -> Option<String> {
    match row.extra.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

fn write_charts(results: &Results, rows: &[&Row]) -> Vec<String> {
    let mut sinks: Vec<String> = Vec::new();
    for r in rows {
        if let Some(s) = extra_str(r, "sink")
            && !sinks.contains(&s)
        {
            sinks.push(s);
        }
    }
    let mut markers = Vec::new();
    if let Some(l1d) = results.sysinfo.cpu.l1d_bytes {
        markers.push((format!("L1d {}", format_bytes(l1d)), l1d as f64));
    }
    if let Some(block) = results.sysinfo.storage.block_size {
        markers.push((
            format!("st_blksize×32 {}", format_bytes(block * 32)),
            (block * 32) as f64,
        ));
    }
    let mut charts = Vec::new();
    for sink in &sinks {
        let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
        for r in rows
            .iter()
            .filter(|r| extra_str(r, "sink").as_ref() == Some(sink))
        {
            if let (Some(b), Some(t)) = (
                r.extra.get("buffer_bytes").and_then(Value::as_f64),
                r.throughput_bytes_per_s,
            ) {
                series.entry(r.method.clone()).or_default().push((b, t));
            }
        }
        for points in series.values_mut() {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        charts.push(
            LineChart {
                id: format!("write-sweep-{}", slug(sink)),
                title: format!("write: throughput by buffer size into {sink}"),
                x_unit: "buffer size".into(),
                y_unit: "throughput".into(),
                series: series.into_iter().collect(),
                markers: markers.clone(),
                format_x: |x| format_bytes(x as u64),
                format_y: rate_label,
            }
            .render(),
        );
    }
    // The best run of every method and baseline, per sink.
    let mut best: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    for r in rows {
        if let (Some(sink), Some(t)) = (extra_str(r, "sink"), r.throughput_bytes_per_s) {
            let name = if r.baseline {
                format!("{} (baseline)", r.method)
            } else {
                r.method.clone()
            };
            let slot = best.entry(name).or_default().entry(sink).or_insert(0.0);
            *slot = slot.max(t);
        }
    }
    charts.push(
        BarChart {
            id: "write-best".into(),
            title: "write: best throughput of each method, per sink".into(),
            unit: "throughput".into(),
            series: sinks.clone(),
            rows: best
                .into_iter()
                .map(|(name, by_sink)| {
                    (
                        name,
                        sinks.iter().map(|s| by_sink.get(s).copied()).collect(),
                    )
                })
                .collect(),
            markers: Vec::new(),
            log: false,
            format: rate_label,
        }
        .render(),
    );
    charts
}

fn edit_charts(rows: &[&Row]) -> Vec<String> {
    let mut groups: Vec<(String, String)> = Vec::new();
    for r in rows {
        let key = (
            extra_str(r, "op").unwrap_or_default(),
            extra_str(r, "dataset").unwrap_or_default(),
        );
        if !groups.contains(&key) {
            groups.push(key);
        }
    }
    let mut charts = Vec::new();
    for (op, dataset) in groups {
        let members: Vec<&&Row> = rows
            .iter()
            .filter(|r| {
                extra_str(r, "op").unwrap_or_default() == op
                    && extra_str(r, "dataset").unwrap_or_default() == dataset
                    && r.measured()
            })
            .collect();
        let mut parts: Vec<String> = Vec::new();
        for r in &members {
            if let Some(Value::Object(phases)) = r.extra.get("phases") {
                for k in phases.keys() {
                    if !parts.contains(k) {
                        parts.push(k.clone());
                    }
                }
            }
        }
        let other = "other (process, unmeasured)".to_string();
        parts.push(other);
        let chart_rows = members
            .iter()
            .map(|r| {
                let mut name = label(r);
                if let Some(Value::Bool(d)) = r.extra.get("durable") {
                    name.push_str(if *d { ", durable" } else { ", no sync" });
                }
                if let Some(c) = &r.cache {
                    name.push_str(&format!(", {c}"));
                }
                let phases = match r.extra.get("phases") {
                    Some(Value::Object(p)) => p.clone(),
                    _ => serde_json::Map::new(),
                };
                let mut values: Vec<f64> = parts[..parts.len() - 1]
                    .iter()
                    .map(|k| phases.get(k).and_then(Value::as_f64).unwrap_or(0.0))
                    .collect();
                let measured: f64 = values.iter().sum();
                values.push((r.median_s.unwrap_or(0.0) - measured).max(0.0));
                (name, values)
            })
            .collect();
        charts.push(
            StackedChart {
                id: format!("edit-phases-{}-{}", slug(&op), slug(&dataset)),
                title: format!("edit {op} ({dataset}): time per phase"),
                unit: "seconds (median run)".into(),
                parts,
                rows: chart_rows,
                format: format_duration,
            }
            .render(),
        );
    }
    charts
}

fn append_charts(rows: &[&Row]) -> Vec<String> {
    let mut policies: Vec<String> = Vec::new();
    let mut payloads: Vec<u64> = Vec::new();
    for r in rows {
        if let Some(p) = extra_str(r, "sync_policy")
            && !policies.contains(&p)
        {
            policies.push(p);
        }
        if let Some(p) = r.extra.get("payload_bytes").and_then(Value::as_u64)
            && !payloads.contains(&p)
        {
            payloads.push(p);
        }
    }
    payloads.sort_unstable();
    let mut charts = Vec::new();
    for policy in policies {
        let mut by_method: BTreeMap<String, BTreeMap<u64, f64>> = BTreeMap::new();
        for r in rows
            .iter()
            .filter(|r| extra_str(r, "sync_policy").as_deref() == Some(policy.as_str()))
        {
            if let (Some(p), Some(ns)) = (
                r.extra.get("payload_bytes").and_then(Value::as_u64),
                r.extra.get("ns_per_record").and_then(Value::as_f64),
            ) {
                by_method.entry(label(r)).or_default().insert(p, ns);
            }
        }
        charts.push(
            BarChart {
                id: format!("append-ns-{}", slug(&policy)),
                title: format!("append: ns per record, sync policy {policy}"),
                unit: "ns per record".into(),
                series: payloads
                    .iter()
                    .map(|p| format!("{p}-byte records"))
                    .collect(),
                rows: by_method
                    .into_iter()
                    .map(|(m, v)| (m, payloads.iter().map(|p| v.get(p).copied()).collect()))
                    .collect(),
                markers: Vec::new(),
                log: true,
                format: |ns| format!("{ns:.1} ns"),
            }
            .render(),
        );
    }
    charts
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
