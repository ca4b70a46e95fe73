//! The `write` suite's charts: throughput by buffer size, a line per method, one chart
//! per sink, with the L1d size and `st_blksize × 32` marked, and each method's default (as
//! `iolab write` runs it without `--buffer`) as a point of its own at the size it used
//! most, with a marker at `raw-fd`'s (`#write-sweep-<sink>`); and the best of each method
//! and baseline as bars (`#write-best`).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::chart::svg::{BarChart, LineChart};
use crate::chart::{extra_str, rate_label, slug};
use crate::results::{Results, Row};
use iolab_lab::units::format_bytes;

/// The suite's charts, for the suite table.
pub(crate) fn charts(results: &Results, rows: &[&Row]) -> Vec<String> {
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
        let mut sink_markers = markers.clone();
        for r in rows
            .iter()
            .filter(|r| extra_str(r, "sink").as_ref() == Some(sink))
        {
            if let (Some(b), Some(t)) = (
                r.extra.get("buffer_bytes").and_then(Value::as_f64),
                r.throughput_bytes_per_s,
            ) {
                let default = r.extra.get("auto_buffer") == Some(&Value::Bool(true));
                let name = if default {
                    format!("{} default", r.method)
                } else {
                    r.method.clone()
                };
                if default && r.method == "raw-fd" {
                    sink_markers.push((format!("raw-fd default {}", rate_label(t)), b));
                }
                series.entry(name).or_default().push((b, t));
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
                markers: sink_markers,
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
