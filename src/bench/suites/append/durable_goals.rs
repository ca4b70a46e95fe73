//! The durable section's goals, checked on each run's rows and written as notes: the
//! single-writer `fdatasync` policy against `pg_test_fsync`'s `fdatasync`, the best policy
//! against the peer's best, and group commit against writers that sync alone.

use serde_json::json;

use super::durable::{ALONE_WRITERS, PEER_FRAME_BYTES};
use crate::bench::results::Row;
use crate::durable::{HEADER_LEN, Policy};

/// The records per second of a row.
fn rate(r: &Row) -> Option<f64> {
    r.extra
        .get("records_per_s")
        .and_then(serde_json::Value::as_f64)
}

/// Whether row `r` has `value` at `key`.
fn has(r: &Row, key: &str, value: serde_json::Value) -> bool {
    r.extra.get(key) == Some(&value)
}

fn met(ok: bool) -> &'static str {
    if ok { "met" } else { "missed" }
}

/// The goals, checked on this run's rows: the single-writer `fdatasync` policy
/// against `pg_test_fsync`'s `fdatasync`, the best single-writer policy against its best
/// (with 8 KiB payloads, and with 8 KiB frames: one 8 KiB write as the peer's), and group
/// commit at 8 writers against 8 writers that sync alone.
pub(super) fn goals(rows: &[Row]) -> Vec<String> {
    let single = |bytes: usize| {
        move |r: &&Row| has(r, "record_bytes", json!(bytes)) && has(r, "writers", json!(1))
    };
    let peer: Vec<&Row> = rows
        .iter()
        .filter(|r| r.baseline)
        .filter(single(8 << 10))
        .collect();
    let mut notes = Vec::new();
    for (bytes, what) in [
        (8 << 10, "8 KiB records"),
        (
            PEER_FRAME_BYTES - HEADER_LEN,
            "8 KiB frames (one 8 KiB write, as the peer's)",
        ),
    ] {
        let ours: Vec<&Row> = rows
            .iter()
            .filter(|r| !r.baseline)
            .filter(single(bytes))
            .collect();
        notes.extend(peer_goals(&ours, &peer, what));
    }
    notes.extend(group_goals(rows));
    notes
}

/// The goals against the peer for one record size: `fdatasync` ≥ 0.9× its `fdatasync`,
/// the best policy ≥ 1.0× its best.
///
/// The peer's `fdatasync` test overwrites a pre-zeroed file, so its sync commits no size:
/// the policy that makes the same calls is `prealloc` (`pwrite` into a pre-zeroed region,
/// then `fdatasync`), and the goal is checked on it. The growing-file `fdatasync` policy,
/// whose every sync also commits the new size, is shown beside it, not hidden.
fn peer_goals(ours: &[&Row], peer: &[&Row], what: &str) -> Vec<String> {
    let best = |set: &[&Row]| {
        set.iter()
            .filter_map(|r| Some((rate(r)?, r.method.clone())))
            .max_by(|a, b| a.0.total_cmp(&b.0))
    };
    let mut notes = Vec::new();
    let ours_rate = |policy: Policy| {
        ours.iter()
            .find(|r| r.method == policy.name())
            .and_then(|r| rate(r))
    };
    let peer_fdatasync = peer
        .iter()
        .find(|r| has(r, "policy", json!("fdatasync")))
        .and_then(|r| rate(r));
    if let (Some(a), Some(b)) = (ours_rate(Policy::Prealloc), peer_fdatasync) {
        let growing = ours_rate(Policy::Fdatasync)
            .map(|g| {
                format!(
                    "; on a growing file, which commits its size with every sync, \
                     fdatasync {g:.0} = {:.2}×",
                    g / b
                )
            })
            .unwrap_or_default();
        notes.push(format!(
            "append durable goal: 1 writer, {what}: fdatasync on a pre-zeroed file \
             (prealloc, the peer's calls) {a:.0} records/s = {:.2}× pg_test_fsync \
             fdatasync {b:.0} ops/s (goal ≥ 0.9×: {}){growing}",
            a / b,
            met(a / b >= 0.9)
        ));
    }
    if let (Some((a, am)), Some((b, bm))) = (best(ours), best(peer)) {
        notes.push(format!(
            "append durable goal: 1 writer, {what}: best policy {am} {a:.0} records/s = \
             {:.2}× the best of pg_test_fsync, {bm} {b:.0} ops/s (goal ≥ 1.0×: {})",
            a / b,
            met(a >= b)
        ));
    }
    notes
}

/// Group commit at [`ALONE_WRITERS`] writers and 512-byte records against as many
/// writers that each sync alone, per policy (goal ≥ 4×).
fn group_goals(rows: &[Row]) -> Vec<String> {
    let mut notes = Vec::new();
    for policy in Policy::ALL {
        let at8 = |alone: bool| {
            rows.iter()
                .find(|r| {
                    !r.baseline
                        && has(r, "policy", json!(policy.name()))
                        && has(r, "writers", json!(ALONE_WRITERS))
                        && has(r, "record_bytes", json!(512))
                        && has(r, "group_commit", json!(!alone))
                })
                .and_then(rate)
        };
        if let (Some(g), Some(a)) = (at8(false), at8(true)) {
            notes.push(format!(
                "append durable goal: {policy}, {ALONE_WRITERS} writers, 512 B: group commit \
                 {g:.0} records/s = {:.1}× syncing alone {a:.0} (goal ≥ 4×: {})",
                g / a,
                met(g / a >= 4.0)
            ));
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(method: &str, baseline: bool, extra: serde_json::Value) -> Row {
        let mut r = Row::unavailable("append", method, "");
        r.baseline = baseline;
        r.extra = extra
            .as_object()
            .expect("an object")
            .clone()
            .into_iter()
            .collect();
        r
    }

    #[test]
    fn the_fdatasync_goal_is_checked_on_the_policy_that_makes_the_peers_calls() {
        let at = |rate: f64| json!({"record_bytes": 8192, "writers": 1, "records_per_s": rate});
        let mut peer = at(5000.0);
        peer["policy"] = json!("fdatasync");
        let rows = vec![
            row("pg_test_fsync fdatasync", true, peer),
            row("fdatasync", false, at(3000.0)),
            row("prealloc", false, at(4600.0)),
        ];
        let notes = goals(&rows);
        let first = &notes[0];
        assert!(first.contains("prealloc"), "{first}");
        assert!(first.contains("0.92×") && first.contains("met"), "{first}");
        assert!(
            first.contains("growing file") && first.contains("0.60×"),
            "{first}"
        );
        assert!(notes[1].contains("best policy prealloc") && notes[1].contains("missed"));
    }
}
