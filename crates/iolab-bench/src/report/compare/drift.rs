//! The decision of [`super::compare`]: the drift of each group between the two runs, the
//! spread with which its rows drifted, and for each row the drift-corrected ratio and the
//! threshold it is judged against (see the module docs of [`super`]).

use std::collections::BTreeMap;

use super::{Change, Comparison};
use crate::results::Row;
use crate::stats::NOISE_SIGMAS;

/// The smallest change a comparison of two runs judges: 12%. Between two runs on a shared
/// host, rows do not all drift with their group (`read`-bound and memory-bound rows, rows on
/// one core and on all of them), so a 5% floor cried wolf on runs of one binary; 12% did
/// not, and still flags a 1.5× slowdown of any row whose noise is under ±15%
/// (docs/methodology.md#comparing-runs, `tools/compare_trust.py`).
pub const FLOOR: f64 = 0.12;

/// Converts a MAD into an estimate of a normal distribution's standard deviation.
const MAD_TO_SIGMA: f64 = 1.4826;

/// The fewest other rows in a group for their median to give the drift.
const MIN_ROWS_FOR_DRIFT: usize = 2;

/// The fewest other rows in a group for the spread of their drifts to be estimated from
/// them; with fewer, the size of the drift stands for it.
const MIN_ROWS_FOR_SPREAD: usize = 3;

/// A row's robust relative spread, `1.4826 · MAD / median`, against the median the tables
/// print (`median_s`).
fn spread(row: &Row) -> f64 {
    match (&row.stats, row.median_s) {
        (Some(s), Some(m)) if m > 0.0 => MAD_TO_SIGMA * s.mad / m,
        _ => 0.0,
    }
}

fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    })
}

/// Fills in the ratio, drift, corrected ratio, threshold and change of each judged pair
/// (`out[index]`), grouped by their group key.
pub(super) fn decide(judged: &[(usize, String, &Row, &Row)], out: &mut [Comparison]) {
    let mut groups: BTreeMap<&str, Vec<(usize, f64, &Row, &Row)>> = BTreeMap::new();
    for (index, group, a, b) in judged {
        let (Some(ma), Some(mb)) = (a.median_s, b.median_s) else {
            continue;
        };
        if ma <= 0.0 || mb <= 0.0 {
            continue;
        }
        groups
            .entry(group.as_str())
            .or_default()
            .push((*index, (mb / ma).ln(), a, b));
    }
    for rows in groups.values() {
        for (i, &(index, log_ratio, a, b)) in rows.iter().enumerate() {
            // Each row is judged against the others of its group: their median is the
            // drift, their spread around it how unevenly rows drift. A row that changed
            // moves neither.
            let others: Vec<(f64, bool)> = rows
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, r)| (r.1, r.2.baseline))
                .collect();
            let (drift, tau) = drift_of(&others);
            let (sa, sb) = (spread(a), spread(b));
            let threshold =
                FLOOR.max((NOISE_SIGMAS * (sa * sa + sb * sb + tau * tau).sqrt()).exp() - 1.0);
            let adjusted = (log_ratio - drift).exp();
            let c = &mut out[index];
            c.ratio = Some(log_ratio.exp());
            c.drift = Some(drift.exp());
            c.adjusted = Some(adjusted);
            c.threshold = Some(threshold);
            // A baseline is the control, the same external program in both runs: its
            // corrected ratio is shown, never judged (it is no change of iolab's). The
            // drift can explain a change away, never make one: a row whose own median did
            // not move beyond the threshold is the same, however its group drifted (rows
            // that sync drift with the host's flushes, rows that do not, apart).
            let raw = log_ratio.exp();
            c.change = if b.baseline {
                Change::Same
            } else if adjusted > 1.0 + threshold && raw > 1.0 + threshold {
                Change::Regressed
            } else if adjusted < 1.0 / (1.0 + threshold) && raw < 1.0 / (1.0 + threshold) {
                Change::Improved
            } else {
                Change::Same
            };
        }
    }
}

/// The drift (a log ratio) and the spread of drifts, from the other rows of a group, each
/// `(log ratio B/A, is a baseline)`: their median row's, or with fewer than
/// [`MIN_ROWS_FOR_DRIFT`] of them, their baselines' (none: no drift); their robust spread
/// around it, or with fewer than [`MIN_ROWS_FOR_SPREAD`], the size of the drift itself.
fn drift_of(others: &[(f64, bool)]) -> (f64, f64) {
    let mut all: Vec<f64> = others.iter().map(|o| o.0).collect();
    let mut baselines: Vec<f64> = others.iter().filter(|o| o.1).map(|o| o.0).collect();
    let drift = if others.len() >= MIN_ROWS_FOR_DRIFT {
        median(&mut all)
    } else {
        median(&mut baselines)
    }
    .unwrap_or(0.0);
    let tau = if others.len() >= MIN_ROWS_FOR_SPREAD {
        let mut deviations: Vec<f64> = others.iter().map(|o| (o.0 - drift).abs()).collect();
        MAD_TO_SIGMA * median(&mut deviations).unwrap_or(0.0)
    } else {
        drift.abs()
    };
    (drift, tau)
}
