//! The durable section's goals, checked on each run's rows and written as notes: the
//! single-writer `fdatasync` policy against `pg_test_fsync`'s `fdatasync`, the best policy
//! against the peer's best, and group commit against writers that sync alone.

use serde_json::json;

use super::{ALONE_WRITERS, PEER_FRAME_BYTES};
use crate::results::Row;
use iolab_lab::durable::{FRAME_HEADER_LEN, LogPolicy};

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

/// Ours against the peer's, `ours_rate / peer_rate`, as the median of the ratios of runs
/// made in the same round (the k-th run of each row; the peer runs in the first rounds
/// only, a few seconds each), so a slow minute of the shared disk falls on both sides;
/// with the number of pairs. `None` without a pair: then the ratio of the rows' medians.
///
/// Both rows' runs are seconds per operation, in the order of their rounds.
fn paired(ours: &Row, peer: &Row) -> Option<(f64, usize)> {
    let ratios: Vec<f64> = ours
        .runs
        .iter()
        .zip(&peer.runs)
        .filter(|(a, _)| **a > 0.0)
        .map(|(a, b)| b / a)
        .collect();
    let n = ratios.len();
    crate::stats::Summary::of(&ratios).map(|s| (s.median, n))
}

/// `ours / peer` paired by round where both rows have runs, else of the medians; and the
/// words that say which.
fn ratio(ours: &Row, peer: &Row) -> Option<(f64, String)> {
    match paired(ours, peer) {
        Some((r, n)) => Some((r, format!("median of {n} rounds paired with the peer's"))),
        None => Some((rate(ours)? / rate(peer)?, "ratio of medians".to_string())),
    }
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
            PEER_FRAME_BYTES - FRAME_HEADER_LEN,
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
    fn best<'a>(set: &[&'a Row]) -> Option<(f64, &'a Row)> {
        set.iter()
            .filter_map(|&r| Some((rate(r)?, r)))
            .max_by(|a, b| a.0.total_cmp(&b.0))
    }
    let mut notes = Vec::new();
    let ours_row = |policy: LogPolicy| ours.iter().find(|r| r.method == policy.name());
    let peer_fdatasync = peer.iter().find(|r| has(r, "policy", json!("fdatasync")));
    if let (Some(a), Some(b)) = (ours_row(LogPolicy::Prealloc), peer_fdatasync)
        && let (Some(ar), Some(br), Some((x, how))) = (rate(a), rate(b), ratio(a, b))
    {
        let growing = ours_row(LogPolicy::Fdatasync)
            .and_then(|g| Some((rate(g)?, ratio(g, b)?.0)))
            .map(|(g, gx)| {
                format!(
                    "; on a growing file, which commits its size with every sync, \
                     fdatasync {g:.0} = {gx:.2}×"
                )
            })
            .unwrap_or_default();
        notes.push(format!(
            "append durable goal: 1 writer, {what}: fdatasync on a pre-zeroed file \
             (prealloc, the peer's calls) {ar:.0} records/s against pg_test_fsync \
             fdatasync {br:.0} ops/s: {x:.2}× ({how}; goal ≥ 0.9×: {}){growing}",
            met(x >= 0.9)
        ));
    }
    if let (Some((a, am)), Some((b, bm))) = (best(ours), best(peer))
        && let Some((x, how)) = ratio(am, bm)
    {
        notes.push(format!(
            "append durable goal: 1 writer, {what}: best policy {} {a:.0} records/s against \
             the best of pg_test_fsync, {} {b:.0} ops/s: {x:.2}× ({how}; goal ≥ 1.0×: {})",
            am.method,
            bm.method,
            met(x >= 1.0)
        ));
    }
    notes
}

/// Group commit at [`ALONE_WRITERS`] writers and 512-byte records against as many
/// writers that each sync alone, per policy (goal ≥ 4×).
fn group_goals(rows: &[Row]) -> Vec<String> {
    let mut notes = Vec::new();
    for policy in LogPolicy::ALL {
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
        assert!(first.contains("ratio of medians"), "{first}");
        assert!(
            first.contains("growing file") && first.contains("0.60×"),
            "{first}"
        );
        assert!(notes[1].contains("best policy prealloc") && notes[1].contains("missed"));
    }

    #[test]
    fn the_peer_goals_pair_runs_of_the_same_round() {
        let at = |rate: f64| json!({"record_bytes": 8192, "writers": 1, "records_per_s": rate});
        let mut peer = at(5000.0);
        peer["policy"] = json!("fdatasync");
        let mut rows = vec![
            row("pg_test_fsync fdatasync", true, peer),
            row("prealloc", false, at(4000.0)),
        ];
        // The peer ran two rounds, at 5000 and 4000 ops/s; ours ran three, the first two
        // at 4600 and 4000 records/s (0.92× and 1.0× of the peer in the same round), the
        // third in a slow minute the peer never saw.
        rows[0].runs = vec![1.0 / 5000.0, 1.0 / 4000.0];
        rows[1].runs = vec![1.0 / 4600.0, 1.0 / 4000.0, 1.0 / 1000.0];
        let notes = goals(&rows);
        let first = &notes[0];
        assert!(first.contains("0.96×"), "{first}");
        assert!(first.contains("median of 2 rounds paired"), "{first}");
        assert!(first.contains("met"), "{first}");
    }
}
