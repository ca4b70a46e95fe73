//! The `append` suite's charts: ns per record by strategy on a log scale, one chart per
//! sync policy (`#append-ns-<policy>`).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::bench::export::html::svg::BarChart;
use crate::bench::export::html::{extra_str, label, slug};
use crate::bench::results::{Results, Row};

/// The suite's charts, for the suite table.
pub(crate) fn charts(_results: &Results, rows: &[&Row]) -> Vec<String> {
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
