//! The `append` suite's verdict: tiny records (5 bytes, no sync) and durable ones (5
//! bytes, an `fdatasync` every K records), and how to append that way.

use super::{PAYLOADS, SUITE, SYNC_EVERY_K, Strategy, SyncPolicy};
use crate::results::{Results, Row};
use crate::verdict::{Usage, Verdict, decide_each, group, key};
use iolab::LogOptions;
use iolab_lab::durable::LogPolicy;
use iolab_lab::snippet;

/// The suite's verdict rows, for the suite table.
pub(crate) fn verdicts(_results: &Results, rows: &[&Row]) -> Vec<Verdict> {
    let mut verdicts = decide_each(
        SUITE,
        super::ENTRY.section_keys,
        group(rows, |r| {
            let payload = r.extra.get("payload_bytes")?.as_u64()?;
            if payload != PAYLOADS[0] as u64 {
                return None;
            }
            match key(r, "sync_policy")? {
                p if p == SyncPolicy::None.name() => Some("tiny".into()),
                p if p == SyncPolicy::EveryK.name() => Some(format!("synced every {SYNC_EVERY_K}")),
                _ => None,
            }
        }),
        &usage,
        Some(&|r: &Row| {
            r.extra
                .get("ns_per_record")
                .and_then(serde_json::Value::as_f64)
                .map_or(String::new(), |ns| {
                    format!("{} ns/record", iolab_lab::units::three_significant(ns))
                })
        }),
    );
    verdicts.extend(durable_verdicts(rows));
    verdicts
}

/// The durable section's conditions: one writer with 8 KiB records (beside
/// `pg_test_fsync`, which writes 8 KiB), and each writer count with 512-byte records, all
/// with group commit (the ` alone` rows are its baseline in the notes, not a way to win).
pub(super) fn durable_verdicts(rows: &[&Row]) -> Vec<Verdict> {
    let num = |r: &Row, k: &str| r.extra.get(k).and_then(serde_json::Value::as_u64);
    decide_each(
        SUITE,
        super::ENTRY.section_keys,
        group(rows, |r| {
            if key(r, "section") != Some("durable")
                || r.extra.get("group_commit") == Some(&serde_json::json!(false)) && !r.baseline
            {
                return None;
            }
            match (num(r, "writers")?, num(r, "record_bytes")?) {
                (1, 8192) => Some("durable, 1 writer, 8 KiB".into()),
                (w, 512) if w > 1 => Some(format!("durable, {w} writers, 512 B")),
                _ => None,
            }
        }),
        &durable_usage,
        Some(&|r: &Row| {
            r.extra
                .get("records_per_s")
                .and_then(serde_json::Value::as_f64)
                .map_or(String::new(), |v| format!("{v:.0} records/s"))
        }),
    )
}

/// `iolab::Log` with the row's policy ([`snippet::durable`]): the one-line call when
/// it is the default's.
fn durable_usage(row: &Row) -> Usage {
    let policy = key(row, "policy").unwrap_or("prealloc");
    let library = policy.parse::<LogPolicy>().map_or_else(
        |_| "—".into(),
        |p| snippet::durable((p != LogOptions::DEFAULT_POLICY).then_some(p)),
    );
    Usage {
        cli: format!("— (library only; measured by iolab bench append --methods {policy})"),
        library,
        example: "durable_log",
    }
}

/// The library's way to append like the row's strategy (there is no `iolab append`
/// command: the suite runs the strategies in-process).
fn usage(row: &Row) -> Usage {
    let durable = key(row, "sync_policy") == Some(SyncPolicy::EveryK.name());
    // A row of the buffer sweep hands over its size; the default's row, its own call.
    let sized = row
        .extra
        .contains_key("variant")
        .then(|| {
            row.extra
                .get("buffer_bytes")
                .and_then(serde_json::Value::as_u64)
        })
        .flatten();
    let library = row.method.parse::<Strategy>().map_or_else(
        |_| "—".into(),
        |s| snippet::append_sized(s, sized, durable.then_some(SYNC_EVERY_K)),
    );
    Usage {
        cli: format!(
            "— (library only; measured by iolab bench append --methods {})",
            row.method
        ),
        library,
        example: "append_records",
    }
}

/// The `AppendFile` buffer for tiny records on this machine: the size of the buffer sweep
/// ([`super::BUFFER_SWEEP`]; 5-byte records, no sync) that beats the default's row beyond
/// the noise, else `None` (the rule, 64 KiB, holds). Measured on the device of `data_dir`.
pub(super) fn buffer_winner(
    rows: &[Row],
    data_dir: &std::path::Path,
) -> Option<iolab_lab::profile::StrategyWinner> {
    let tiny = |r: &Row| {
        r.method == Strategy::AppendFile.name()
            && !r.baseline
            && r.verified
            && r.error.is_none()
            && r.extra
                .get("payload_bytes")
                .and_then(serde_json::Value::as_u64)
                == Some(PAYLOADS[0] as u64)
            && key(r, "sync_policy") == Some(SyncPolicy::None.name())
    };
    crate::profile::size_winner(rows, tiny, super::is_default, "buffer", data_dir)
}
