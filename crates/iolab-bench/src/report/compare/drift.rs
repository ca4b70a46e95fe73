//! The decision of [`super::compare`]: the drift of each group between the two runs, the
//! spread with which its rows drifted, and for each row the drift-corrected ratio and the
//! threshold it is judged against (see the module docs of [`super`]).

use std::collections::BTreeMap;

use super::{Change, Comparison};
use crate::results::Row;
use crate::stats::{MIN_THRESHOLD, NOISE_SIGMAS};

/// Converts a MAD into an estimate of a normal distribution's standard deviation.
const MAD_TO_SIGMA: f64 = 1.4826;

/// The fewest judged rows in a group for the spread of their drift to be estimated from
/// them; a smaller group takes the size of its drift as that spread.
const MIN_ROWS_FOR_SPREAD: usize = 4;

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
        // The drift: the baselines' (the same external programs in both runs), else the
        // group's median row's.
        let mut baselines: Vec<f64> = rows.iter().filter(|r| r.2.baseline).map(|r| r.1).collect();
        let mut all: Vec<f64> = rows.iter().map(|r| r.1).collect();
        let drift = median(&mut baselines)
            .or_else(|| (rows.len() >= 3).then(|| median(&mut all)).flatten())
            .unwrap_or(0.0);
        // How unevenly the rows drifted: the robust spread of their corrected log ratios.
        let tau = if rows.len() >= MIN_ROWS_FOR_SPREAD {
            let mut corrected: Vec<f64> = rows.iter().map(|r| r.1 - drift).collect();
            let center = median(&mut corrected).unwrap_or(0.0);
            let mut deviations: Vec<f64> = corrected.iter().map(|c| (c - center).abs()).collect();
            MAD_TO_SIGMA * median(&mut deviations).unwrap_or(0.0)
        } else {
            drift.abs()
        };
        for &(index, log_ratio, a, b) in rows {
            let (sa, sb) = (spread(a), spread(b));
            let threshold = MIN_THRESHOLD
                .max((NOISE_SIGMAS * (sa * sa + sb * sb + tau * tau).sqrt()).exp() - 1.0);
            let adjusted = (log_ratio - drift).exp();
            let c = &mut out[index];
            c.ratio = Some(log_ratio.exp());
            c.drift = Some(drift.exp());
            c.adjusted = Some(adjusted);
            c.threshold = Some(threshold);
            c.change = if adjusted > 1.0 + threshold {
                Change::Regressed
            } else if adjusted < 1.0 / (1.0 + threshold) {
                Change::Improved
            } else {
                Change::Same
            };
        }
    }
}
