//! The `count` suite's chart: throughput by method, warm and cold side by side, the
//! ceilings from the limit probes as dashed lines (`#count-throughput`).

use std::collections::BTreeMap;

use crate::chart::label;
use crate::chart::rate_label;
use crate::chart::svg::{BarChart, Marker};
use crate::results::{Results, Row};

/// The chart; also drawn alone for docs/findings/count.md (`iolab report --count-svg`).
pub fn throughput(results: &Results, rows: &[&Row]) -> String {
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

/// The suite's charts, for the suite table.
pub(crate) fn charts(results: &Results, rows: &[&Row]) -> Vec<String> {
    vec![throughput(results, rows)]
}

/// The `count` suite's chart alone, as a standalone SVG document (for docs/findings/count.md), or
/// `None` when the results have no count rows.
pub fn standalone_svg(results: &Results) -> Option<String> {
    let rows: Vec<&Row> = results.suite_rows("count").collect();
    if rows.is_empty() {
        return None;
    }
    let chart = throughput(results, &rows);
    // Standalone: the page's CSS is not there, so carry the text style inline.
    Some(chart.replacen(
        "role=\"img\">",
        "role=\"img\"><style>text { font: 11px sans-serif; fill: #333 } .chart-title { font-weight: bold; font-size: 14px } .axis { stroke: #888 }</style><rect width=\"100%\" height=\"100%\" fill=\"white\"/>",
        1,
    ))
}
