//! The HTML report: one self-contained file (inline CSS and SVG, no fetches) that reads
//! like an answer: the verdict, one chart per workload, the tables (with the suites' other
//! charts), then the machine and the notes folded in `<details>`.
//!
//! Each suite's charts are drawn by the function its entry in the suite table names
//! (`charts`, in the suite table handed to [`render`]), from the SVG pieces of
//! [`crate::chart`]; a suite
//! the table does not know (results of another iolab version) gets throughput bars
//! (`#<suite>-throughput`, [`throughput_chart`]).

use std::fmt::Write;

use super::Exporter;
use crate::chart::svg::escape;
use crate::chart::throughput_chart;
use crate::export::table;
use crate::results::{Results, Row};
use crate::suite::{Suite, find_in};

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
table.verdict { font-size: 13px; width: 100%; } table.verdict th, table.verdict td { white-space: normal; text-align: left; vertical-align: top; }
table.verdict td.how { font-size: 11px; } table.verdict code { overflow-wrap: anywhere; }
details { margin: 1em 0; } summary { cursor: pointer; font-weight: bold; }
svg.chart { display: block; margin: 1em 0; max-width: 100%; height: auto; }
svg .chart-title { font-weight: bold; font-size: 14px; }
svg .label, svg .value, svg .legend, svg .tick, svg .marker-label, svg .axis-label { font-size: 11px; fill: #333; }
svg .missing { fill: #999; } svg .axis { stroke: #888; } svg .grid { stroke: #eee; }
"#;

/// The HTML exporter.
pub struct Html;

impl Exporter for Html {
    fn file_name(&self) -> &'static str {
        "report.html"
    }

    fn render(&self, results: &Results, suites: &[Suite]) -> String {
        render(results, suites)
    }
}

/// The report for `results`: the verdict, then one chart per workload, then every table
/// (with the suite's other charts), then the machine and the notes, folded.
pub fn render(results: &Results, suites: &[Suite]) -> String {
    let mut body = String::new();
    let _ = write!(
        body,
        "<h1>iolab results</h1><p>iolab {} · started {} · finished {} · <code>{}</code></p>",
        escape(&results.iolab_version),
        escape(&results.started_at),
        escape(&results.finished_at),
        escape(&results.command.join(" "))
    );
    for failed in &results.errors {
        let _ = write!(
            body,
            "<p class=\"partial\">Partial run: the {} suite failed: {}</p>",
            escape(&failed.suite),
            escape(&failed.error)
        );
    }
    if results.partial && results.errors.is_empty() {
        body.push_str(
            "<p class=\"partial\">Partial run: it was interrupted before every row was measured.</p>",
        );
    }
    for w in &results.warnings {
        let _ = write!(body, "<p class=\"warning\">Warning: {}</p>", escape(w));
    }
    body.push_str(&verdict_html(results));
    let charts: Vec<(String, Vec<String>)> = results
        .suites()
        .iter()
        .map(|suite| {
            let rows: Vec<&Row> = results.suite_rows(suite).collect();
            let charts = match find_in(suites, suite) {
                Some(entry) => (entry.charts)(results, &rows),
                None => vec![throughput_chart(
                    &format!("{suite}-throughput"),
                    suite,
                    &rows,
                )],
            };
            (suite.clone(), charts)
        })
        .collect();
    body.push_str("<h2 id=\"charts\">One chart per workload</h2>");
    for (_, charts) in &charts {
        if let Some(first) = charts.first() {
            body.push_str(first);
        }
    }
    let tables = table::tables(results, suites);
    for (suite, charts) in &charts {
        let _ = write!(
            body,
            "<h2 id=\"suite-{0}\">{0}: every row</h2>",
            escape(suite)
        );
        for chart in charts.iter().skip(1) {
            body.push_str(chart);
        }
        for t in tables
            .iter()
            .filter(|t| t.title.starts_with(&format!("{suite}:")))
        {
            body.push_str(&html_table(t));
        }
    }
    body.push_str("<details id=\"machine\"><summary>Machine</summary><ul class=\"machine\">");
    for line in results.sysinfo.summary_lines() {
        let _ = write!(body, "<li>{}</li>", escape(&line));
    }
    body.push_str("</ul></details>");
    if !results.notes.is_empty() {
        let _ = write!(
            body,
            "<details id=\"notes\"><summary>Notes ({})</summary><ul class=\"notes\">",
            results.notes.len()
        );
        for n in &results.notes {
            let _ = write!(body, "<li>{}</li>", escape(n));
        }
        body.push_str("</ul></details>");
    }
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>iolab results</title><style>{STYLE}</style></head><body>{body}</body></html>\n"
    )
}

/// The verdict table; each row carries its suite, condition and winner as `data-`
/// attributes (the browser test reads them).
fn verdict_html(results: &Results) -> String {
    let t = table::verdict_table(results, true);
    let mut out = format!(
        "<h2 id=\"verdict\">Verdict</h2><p>{}</p><table class=\"verdict\" id=\"verdict-table\"><thead><tr>",
        escape(&t.title)
    );
    // The command and the library call share one cell, one above the other.
    for h in &t.headers[..6] {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("<th>how to use it: command, library call</th></tr></thead><tbody>");
    for (v, row) in results.verdict.iter().zip(&t.rows) {
        let _ = write!(
            out,
            "<tr data-suite=\"{}\" data-condition=\"{}\" data-winner=\"{}\">",
            escape(&v.suite),
            escape(&v.condition),
            escape(v.winner.as_deref().unwrap_or(""))
        );
        for cell in &row[..6] {
            let _ = write!(out, "<td>{}</td>", escape(cell));
        }
        let _ = write!(
            out,
            "<td class=\"how\"><code>{}</code><pre><code>{}</code></pre></td></tr>",
            escape(&v.cli),
            escape(&v.library)
        );
    }
    out.push_str("</tbody></table>");
    out
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
