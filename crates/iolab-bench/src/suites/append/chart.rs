//! The `append` suite's charts: ns per record by strategy on a log scale, one chart per
//! sync policy (`#append-ns-<policy>`), and durable records per second by writers, one chart
//! per record size (`#append-durable-<bytes>`).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::chart::svg::BarChart;
use crate::chart::{extra_str, label, slug};
use crate::results::{Results, Row};

/// The suite's charts, for the suite table.
pub(crate) fn charts(_results: &Results, rows: &[&Row]) -> Vec<String> {
    let (durable, rows): (Vec<&Row>, Vec<&Row>) = rows
        .iter()
        .partition(|r| extra_str(r, "section").as_deref() == Some("durable"));
    let mut charts = tiny_charts(&rows);
    charts.extend(durable_charts(&durable));
    charts
}

/// Durable records per second against writers, a bar per policy (group commit, and
/// alone) and writer count, one chart per record size (`#append-durable-<bytes>`).
fn durable_charts(rows: &[&Row]) -> Vec<String> {
    let num = |r: &Row, key: &str| r.extra.get(key).and_then(Value::as_f64);
    let mut sizes: Vec<u64> = rows
        .iter()
        .filter_map(|r| r.extra.get("record_bytes").and_then(Value::as_u64))
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut writers: Vec<u64> = rows
        .iter()
        .filter_map(|r| r.extra.get("writers").and_then(Value::as_u64))
        .collect();
    writers.sort_unstable();
    writers.dedup();
    sizes
        .into_iter()
        .map(|size| {
            let mut by_method: BTreeMap<String, BTreeMap<u64, f64>> = BTreeMap::new();
            for r in rows
                .iter()
                .filter(|r| r.extra.get("record_bytes").and_then(Value::as_u64) == Some(size))
            {
                if let (Some(w), Some(rate)) = (num(r, "writers"), num(r, "records_per_s")) {
                    by_method
                        .entry(label(r))
                        .or_default()
                        .insert(w as u64, rate);
                }
            }
            BarChart {
                id: format!("append-durable-{size}"),
                title: format!("append durable: records/s by writers, {size}-byte records"),
                unit: "durable records per second".into(),
                series: writers.iter().map(|w| format!("{w} writers")).collect(),
                rows: by_method
                    .into_iter()
                    .map(|(m, v)| (m, writers.iter().map(|w| v.get(w).copied()).collect()))
                    .collect(),
                markers: Vec::new(),
                log: true,
                format: |r| format!("{r:.0}/s"),
            }
            .render()
        })
        .collect()
}

/// ns per record of the tiny-append sections, one chart per sync policy.
fn tiny_charts(rows: &[&Row]) -> Vec<String> {
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
