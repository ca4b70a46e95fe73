//! The `random` suite's charts: IOPS against queue depth per method and state
//! (`#random-iops-qd-STATE`), and the latency CDF at queue depth 1 per state
//! (`#random-latency-cdf-STATE`).

use crate::chart::label;
use crate::chart::svg::LineChart;
use crate::results::{Results, Row};

use super::rows::figure;

fn states(rows: &[&Row]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for r in rows {
        if let Some(c) = &r.cache
            && !seen.contains(c)
        {
            seen.push(c.clone());
        }
    }
    seen
}

/// Uniform offsets from one thread: the rows the charts plot (`--sweep`'s rows with a
/// thread per core are in the tables).
fn uniform(r: &Row) -> bool {
    r.extra.get("pattern").and_then(|v| v.as_str()) == Some("uniform")
        && r.extra.get("threads").and_then(serde_json::Value::as_u64) == Some(1)
}

/// The suite's charts, for the suite table.
pub(crate) fn charts(_results: &Results, rows: &[&Row]) -> Vec<String> {
    let mut out = Vec::new();
    for state in states(rows) {
        let in_state: Vec<&Row> = rows
            .iter()
            .copied()
            .filter(|r| r.cache.as_deref() == Some(state.as_str()) && uniform(r))
            .collect();
        let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        let mut cdfs: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        for r in &in_state {
            let (Some(qd), Some(iops)) = (figure(r, "queue_depth"), figure(r, "iops")) else {
                continue;
            };
            let name = if r.baseline {
                format!("{} (baseline)", r.method)
            } else {
                r.method.clone()
            };
            match series.iter_mut().find(|(n, _)| *n == name) {
                Some((_, points)) => points.push((qd, iops)),
                None => series.push((name, vec![(qd, iops)])),
            }
            if qd == 1.0
                && let Some(cdf) = r
                    .extra
                    .get("cdf_us")
                    .and_then(|v| serde_json::from_value::<Vec<(f64, f64)>>(v.clone()).ok())
            {
                // Fraction of reads on y (as %), latency on a log x axis.
                cdfs.push((
                    label(r),
                    cdf.into_iter()
                        .filter(|p| p.0 > 0.0)
                        .map(|(x, q)| (x, q * 100.0))
                        .collect(),
                ));
            }
        }
        for (_, points) in &mut series {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        out.push(
            LineChart {
                id: format!("random-iops-qd-{}", crate::chart::slug(&state)),
                title: format!("random {state}: IOPS against queue depth (4 KiB, uniform)"),
                x_unit: "queue depth".into(),
                y_unit: "reads per second".into(),
                series,
                markers: Vec::new(),
                format_x: |x| format!("{x:.0}"),
                format_y: |y| iolab_lab::units::three_significant(y),
            }
            .render(),
        );
        if !cdfs.is_empty() {
            out.push(
                LineChart {
                    id: format!("random-latency-cdf-{}", crate::chart::slug(&state)),
                    title: format!("random {state}: latency CDF at queue depth 1 (iolab methods)"),
                    x_unit: "latency (µs)".into(),
                    y_unit: "% of reads at or below".into(),
                    series: cdfs,
                    markers: Vec::new(),
                    format_x: |x| iolab_lab::units::three_significant(x),
                    format_y: |y| format!("{y:.0}%"),
                }
                .render(),
            );
        }
    }
    out
}
