//! The durable section's rows: per record for a log job (records/s, p50 and p99 latency,
//! syncs per record), one per test for `pg_test_fsync`; and one progress line per table.

use serde_json::json;

use super::jobs::Job;
use super::measure::{LogSample, Sample};
use super::pg_test_fsync::PG_TEST_FSYNC;
use crate::progress;
use crate::results::Row;
use crate::rounds::{Tally, set_times};

/// The rows of every job (`make`), and one section line per table of results.md — a
/// record size — with the time its jobs took (a job's time goes to the table of its first
/// row: pg_test_fsync's rows share one).
pub(super) fn rows_with_sections(
    show: bool,
    jobs: &[Job],
    tallies: Vec<Tally<Sample>>,
    make: impl Fn(&Job, Tally<Sample>) -> Vec<Row>,
) -> Vec<Row> {
    let record_bytes = |r: &Row| {
        r.extra
            .get("record_bytes")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0) as usize
    };
    let mut tables: Vec<(usize, usize, f64)> = Vec::new();
    let mut rows_out = Vec::new();
    for (job, t) in jobs.iter().zip(tallies) {
        let seconds = t.seconds;
        let made = make(job, t);
        for r in &made {
            let bytes = record_bytes(r);
            match tables.iter_mut().find(|t| t.0 == bytes) {
                Some(t) => t.1 += 1,
                None => tables.push((bytes, 1, 0.0)),
            }
        }
        if let Some(t) = made
            .first()
            .and_then(|r| tables.iter_mut().find(|t| t.0 == record_bytes(r)))
        {
            t.2 += seconds;
        }
        rows_out.extend(made);
    }
    for (bytes, n, seconds) in tables {
        progress::print_section_line(show, &format!("append durable {bytes}B"), n, seconds);
    }
    rows_out
}

/// The median of `v`.
fn median(v: &[f64]) -> Option<f64> {
    crate::stats::Summary::of(v).map(|s| s.median)
}

/// A job's rows: one for a log job, one per test for `pg_test_fsync`.
pub(super) fn rows(
    suite: &str,
    job: &Job,
    t: Tally<Sample>,
    per_writer: impl Fn(usize) -> u64,
    version: Option<&str>,
) -> Vec<Row> {
    let base = |method: String| {
        let mut row = Row {
            suite: suite.to_string(),
            method,
            ..Row::default()
        };
        row.extra.insert("section".into(), json!("durable"));
        row
    };
    match *job {
        Job::Log {
            policy,
            record_bytes,
            writers,
            group,
        } => {
            let mut row = base(if group {
                policy.name().to_string()
            } else {
                format!("{policy} alone")
            });
            let records = writers as u64 * per_writer(writers);
            // Per record, so the rows compare with each other and with pg_test_fsync's
            // seconds per operation whatever the writer count.
            row.bytes = record_bytes as u64;
            for (k, v) in [
                ("policy", json!(policy.name())),
                ("record_bytes", json!(record_bytes)),
                ("writers", json!(writers)),
                ("group_commit", json!(group)),
                ("records", json!(records)),
            ] {
                row.extra.insert(k.into(), v);
            }
            let logs: Vec<&LogSample> = t.counted.iter().filter_map(Sample::log).collect();
            set_times(&mut row, logs.iter().map(|s| s.times.per(records as f64)));
            row.verified = t.error.is_none() && t.unavailable.is_none() && !logs.is_empty();
            if let Some(reason) = t.unavailable.clone() {
                row.unavailable = Some(reason);
            } else if let Some(e) = t.error.clone() {
                row.error = Some(e);
            } else if t.ended() > 0 {
                row.result = Some(format!("{records} records of {record_bytes} bytes"));
            }
            if let Some(m) = row.median_s {
                row.extra.insert("records_per_s".into(), json!(1.0 / m));
            }
            let mut lat: Vec<u64> = logs
                .iter()
                .flat_map(|s| s.latencies_ns.iter().copied())
                .collect();
            lat.sort_unstable();
            if !lat.is_empty() {
                let at = |q: f64| lat[((lat.len() - 1) as f64 * q).round() as usize] as f64 / 1e3;
                row.extra.insert("p50_us".into(), json!(at(0.50)));
                row.extra.insert("p99_us".into(), json!(at(0.99)));
            }
            let syncs: Vec<f64> = logs.iter().map(|s| s.syncs as f64).collect();
            if let Some(s) = median(&syncs) {
                row.extra
                    .insert("syncs_per_record".into(), json!(s / records as f64));
            }
            vec![row]
        }
        Job::PgTestFsync => {
            if let Some(e) = t.error {
                let mut row = base(PG_TEST_FSYNC.to_string());
                row.baseline = true;
                row.error = Some(e);
                return vec![row];
            }
            // Each test's ops/s over the runs, in the order the tool printed them.
            let mut pg: Vec<(String, Vec<f64>)> = Vec::new();
            for (test, ops) in t.counted.iter().filter_map(Sample::pg).flatten() {
                match pg.iter_mut().find(|(t, _)| t == test) {
                    Some((_, v)) => v.push(*ops),
                    None => pg.push((test.clone(), vec![*ops])),
                }
            }
            pg.into_iter()
                .map(|(test, ops)| {
                    let mut row = base(format!("{PG_TEST_FSYNC} {test}"));
                    row.baseline = true;
                    row.version = version.map(str::to_string);
                    // Seconds per operation, so the row's statistics read like the others'.
                    let secs: Vec<f64> = ops.iter().map(|o| 1.0 / o).collect();
                    row.bytes = 8 << 10;
                    row.set_timings(&secs, &[], &[]);
                    row.verified = true;
                    row.result = Some("one 8kB write + sync per op".into());
                    for (k, v) in [
                        ("policy", json!(test)),
                        ("record_bytes", json!(8 << 10)),
                        ("writers", json!(1)),
                        ("group_commit", json!(false)),
                    ] {
                        row.extra.insert(k.into(), v);
                    }
                    if let Some(m) = median(&ops) {
                        row.extra.insert("records_per_s".into(), json!(m));
                        row.extra.insert("p50_us".into(), json!(1e6 / m));
                    }
                    row
                })
                .collect()
        }
    }
}
