//! The `edit` suite's charts: per operation and data set, stacked bars of each
//! strategy's phases (`#edit-phases-<op>-<dataset>`).

use serde_json::Value;

use crate::chart::svg::StackedChart;
use crate::chart::{extra_str, label, slug};
use crate::results::{Results, Row};
use iolab_lab::units::format_duration;

/// The suite's charts, for the suite table.
pub(crate) fn charts(_results: &Results, rows: &[&Row]) -> Vec<String> {
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
