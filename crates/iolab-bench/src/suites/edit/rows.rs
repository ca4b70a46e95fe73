//! The `edit` suite's rows and its verdicts (the goal ratios) for the notes.

use super::measure::{EditSample, TimingsJson};
use super::{EditJob, Op, Plan, SUITE};
use crate::cache_state::CacheState;
use crate::context::Context;
use crate::results::Row;
use crate::rounds::{Tally, set_times};
use crate::stats::Summary;
use iolab_lab::units::format_duration;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The row's keys that do not depend on the runs.
pub(super) fn base_row(plan: &Plan<'_>, op: Op, job: &EditJob, cache_state: CacheState) -> Row {
    let mut extra = BTreeMap::new();
    extra.insert("op".into(), json!(op.name()));
    extra.insert("dataset".into(), json!(plan.name));
    extra.insert("durable".into(), json!(job.durable));
    extra.insert("phases".into(), json!({}));
    if let Some(variant) = job.variant {
        extra.insert("variant".into(), json!(variant));
    }
    if let Some(command) = &job.command {
        extra.insert("command".into(), json!(command));
    }
    if let Some(method) = &job.count_method {
        extra.insert("count_method".into(), json!(method));
    }
    Row {
        suite: SUITE.into(),
        method: job.method.clone(),
        cache: Some(cache_state.name().into()),
        baseline: job.baseline,
        version: job.version.clone(),
        bytes: plan.dataset.bytes,
        extra,
        ..Row::default()
    }
}

pub(super) fn to_row(
    plan: &Plan<'_>,
    op: Op,
    job: &EditJob,
    t: Tally<EditSample>,
    cache_state: CacheState,
    expected: &str,
) -> Row {
    let mut row = base_row(plan, op, job, cache_state);
    row.error = t.error;
    set_times(&mut row, t.counted.iter().map(|s| s.times));
    // Every wrong result, warm-up runs' included: they still must be right.
    let wrong: Vec<&String> = t
        .warmup
        .iter()
        .chain(&t.counted)
        .map(|s| &s.result)
        .filter(|r| *r != expected)
        .collect();
    row.verified = !t.counted.is_empty() && wrong.is_empty() && row.error.is_none();
    row.result = t.counted.last().map(|s| s.result.clone());
    if let Some(bad) = wrong.first() {
        row.error.get_or_insert(format!(
            "wrong result: the edited file's digest is {bad}, expected {expected}"
        ));
    }
    let reports: Vec<&TimingsJson> = t.counted.iter().filter_map(|s| s.report.as_ref()).collect();
    // Each phase's seconds over the runs, in the order the steps ran.
    let mut phases: Vec<(&str, Vec<f64>)> = Vec::new();
    for (name, s) in reports.iter().flat_map(|r| &r.phases.0) {
        match phases.iter_mut().find(|(n, _)| n == name) {
            Some((_, all)) => all.push(*s),
            None => phases.push((name, vec![*s])),
        }
    }
    let medians: Vec<(String, f64)> = phases
        .iter()
        .filter_map(|(name, all)| Some((name.to_string(), Summary::of(all)?.median)))
        .collect();
    if !medians.is_empty() {
        let text: Vec<String> = medians
            .iter()
            .map(|(n, s)| format!("{n} {}", format_duration(*s)))
            .collect();
        row.notes.push(format!("phases: {}", text.join(", ")));
    }
    row.extra.insert(
        "phases".into(),
        Value::Object(medians.into_iter().map(|(n, s)| (n, json!(s))).collect()),
    );
    if let Some(kernel) = reports.iter().rev().find_map(|r| r.kernel.as_ref()) {
        row.extra.insert("kernel".into(), json!(kernel));
    }
    if let Some(bytes) = reports.iter().filter_map(|r| r.peak_rss_bytes).max() {
        row.extra.insert("peak_rss_bytes".into(), json!(bytes));
    }
    row.set_residency(cache_state, t.counted.iter().map(|s| s.residency).collect());
    row
}

/// Notes the goal ratios of the issue: on the large data set, per cache state, the best
/// no-sync replace against `tr` and `sed -i`, and `std-stream` against `mmap`.
pub(super) fn verdicts(ctx: &mut Context<'_>, rows: &[Row]) {
    let key = |r: &Row, k: &str| r.extra.get(k).and_then(Value::as_str).map(str::to_owned);
    for cache in ["warm", "cold"] {
        let replace: Vec<&Row> = rows
            .iter()
            .filter(|r| {
                r.measured()
                    && r.cache.as_deref() == Some(cache)
                    && key(r, "dataset").as_deref() == Some("large")
                    && key(r, "op").as_deref() == Some("replace")
                    && r.extra.get("durable") == Some(&json!(false))
            })
            .collect();
        let median = |name: &str| {
            replace
                .iter()
                .find(|r| r.method == name)
                .and_then(|r| r.median_s)
        };
        let Some(best) = replace.iter().filter(|r| !r.baseline).min_by(|a, b| {
            a.median_s
                .unwrap_or(f64::MAX)
                .total_cmp(&b.median_s.unwrap_or(f64::MAX))
        }) else {
            continue;
        };
        let best_s = best.median_s.unwrap_or(f64::NAN);
        let mut parts = vec![format!(
            "edit, replace on the large data set, {cache}, no sync: best {} {}",
            best.method,
            format_duration(best_s)
        )];
        for baseline in ["tr", "sed"] {
            if let Some(b) = median(baseline) {
                parts.push(format!("{:.1}× {baseline}", b / best_s));
            }
        }
        if let (Some(stream), Some(map)) = (median("std-stream"), median("mmap")) {
            parts.push(format!("std-stream takes {:.2}× mmap's time", stream / map));
        }
        ctx.notes.push(parts.join("; "));
    }
}
