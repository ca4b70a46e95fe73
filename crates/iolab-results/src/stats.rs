//! Summary statistics of repeated runs, and outlier detection.
//!
//! Outliers are flagged with the modified Z-score of Iglewicz and Hoaglin (1993): a run is
//! an outlier when `|x - median| / (1.4826 · MAD) > 3.5`, where MAD is the median absolute
//! deviation. The scale 1.4826 makes the MAD estimate a normal distribution's standard
//! deviation; unlike the standard deviation it is not pulled by the outliers it is meant to
//! find. hyperfine uses the same rule.
//!
//! **The noise rule** ([`beats`]), shared by `iolab compare` and the verdict: one median
//! differs from another only beyond `max(MIN_THRESHOLD, NOISE_SIGMAS · sqrt(σA² + σB²))`,
//! where σ is a row's robust relative spread, `1.4826 · MAD / median`. So two quiet rows
//! differ at 5%, while a noisy virtual machine needs a bigger gap.

use serde::{Deserialize, Serialize};

/// The threshold of the modified Z-score above which a run is an outlier.
pub const OUTLIER_THRESHOLD: f64 = 3.5;
/// Converts a MAD into an estimate of a normal distribution's standard deviation.
const MAD_TO_SIGMA: f64 = 1.4826;

/// The smallest relative difference ever counted as one: 5%.
pub const MIN_THRESHOLD: f64 = 0.05;
/// How many combined standard deviations a difference must exceed.
pub const NOISE_SIGMAS: f64 = 3.0;

/// Statistics of one row's counted runs, in seconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// The fastest run.
    pub min: f64,
    /// The slowest run.
    pub max: f64,
    /// The median: the figure iolab quotes.
    pub median: f64,
    /// The arithmetic mean.
    pub mean: f64,
    /// The sample standard deviation (0 for a single run).
    pub stddev: f64,
    /// The median absolute deviation from the median.
    pub mad: f64,
    /// How many runs the modified Z-score flags as outliers.
    pub outliers: usize,
}

impl Summary {
    /// Summarises `samples`; `None` when there are none (or any is not finite).
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() || samples.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = median_of_sorted(&sorted);
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let stddev = if n > 1 {
            (sorted.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let mut deviations: Vec<f64> = sorted.iter().map(|x| (x - median).abs()).collect();
        deviations.sort_by(f64::total_cmp);
        let mad = median_of_sorted(&deviations);
        let outliers = sorted
            .iter()
            .filter(|&&x| modified_z_score(x, median, mad) > OUTLIER_THRESHOLD)
            .count();
        Some(Summary {
            n,
            min: sorted[0],
            max: sorted[n - 1],
            median,
            mean,
            stddev,
            mad,
            outliers,
        })
    }

    /// The relative spread, MAD / median (0 when the median is 0).
    pub fn relative_mad(&self) -> f64 {
        if self.median > 0.0 {
            self.mad / self.median
        } else {
            0.0
        }
    }
}

/// The noise threshold between two rows' runs, relative (0.05 = 5%):
/// `max(MIN_THRESHOLD, NOISE_SIGMAS · sqrt(σA² + σB²))`. A row without statistics counts
/// as noiseless.
pub fn noise_threshold(a: Option<&Summary>, b: Option<&Summary>) -> f64 {
    let sigma = |s: Option<&Summary>| s.map_or(0.0, |s| MAD_TO_SIGMA * s.relative_mad());
    MIN_THRESHOLD.max(NOISE_SIGMAS * sigma(a).hypot(sigma(b)))
}

/// Whether `fast` is faster than `slow` beyond the noise of the two: `slow`'s median is
/// more than `1 + threshold` times `fast`'s ([`noise_threshold`]).
pub fn beats(fast: &Summary, slow: &Summary) -> bool {
    slow.median > fast.median * (1.0 + noise_threshold(Some(fast), Some(slow)))
}

/// `|x - median| / (1.4826 · MAD)`; a zero MAD makes any deviation infinitely large.
pub fn modified_z_score(x: f64, median: f64, mad: f64) -> f64 {
    let deviation = (x - median).abs();
    if deviation == 0.0 {
        0.0
    } else if mad == 0.0 {
        f64::INFINITY
    } else {
        deviation / (MAD_TO_SIGMA * mad)
    }
}

fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_non_finite_have_no_summary() {
        assert_eq!(Summary::of(&[]), None);
        assert_eq!(Summary::of(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn odd_and_even_medians() {
        assert_eq!(Summary::of(&[3.0, 1.0, 2.0]).unwrap().median, 2.0);
        assert_eq!(Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap().median, 2.5);
    }

    #[test]
    fn known_values() {
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.n, 8);
        assert_eq!(s.min, 2.0);
        assert_eq!(s.max, 9.0);
        assert_eq!(s.mean, 5.0);
        assert_eq!(s.median, 4.5);
        // Sample standard deviation: sqrt(32 / 7).
        assert!((s.stddev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        // Deviations from 4.5: 2.5 .5 .5 .5 .5 .5 2.5 4.5 -> sorted median (0.5 + 0.5) / 2... = 0.5
        assert_eq!(s.mad, 0.5);
    }

    #[test]
    fn single_run_has_zero_spread() {
        let s = Summary::of(&[1.5]).unwrap();
        assert_eq!((s.stddev, s.mad, s.outliers), (0.0, 0.0, 0));
    }

    #[test]
    fn a_far_run_is_an_outlier_and_does_not_move_the_median_much() {
        let s = Summary::of(&[1.00, 1.01, 0.99, 1.02, 0.98, 5.0]).unwrap();
        assert_eq!(s.outliers, 1);
        assert!((s.median - 1.005).abs() < 1e-9);
    }

    #[test]
    fn close_runs_have_no_outliers() {
        let s = Summary::of(&[1.00, 1.01, 0.99, 1.02, 0.98]).unwrap();
        assert_eq!(s.outliers, 0);
    }

    #[test]
    fn beating_needs_five_percent_or_three_sigmas() {
        let quiet = |m: f64| Summary::of(&[m * 0.999, m, m * 1.001]).unwrap();
        assert!(beats(&quiet(1.0), &quiet(1.06)));
        assert!(!beats(&quiet(1.0), &quiet(1.04)));
        assert!(!beats(&quiet(1.06), &quiet(1.0)));
        let noisy = Summary::of(&[0.7, 1.0, 1.3, 0.8, 1.2]).unwrap();
        assert!(noise_threshold(Some(&noisy), Some(&quiet(1.0))) > 0.2);
        assert!(!beats(&noisy, &quiet(1.2)));
    }

    #[test]
    fn identical_runs_have_no_outliers() {
        assert_eq!(Summary::of(&[2.0; 5]).unwrap().outliers, 0);
    }
}
