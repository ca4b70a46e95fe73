//! The verdict: for each workload and condition, the method to use on this machine, with
//! its figure, its lead over the best baseline, its share of the physical ceiling, and how
//! to use it (the `iolab` command and the library call). It opens the terminal output,
//! `results.md`, `report.html`, and is `verdict` in `results.json`.
//!
//! Each suite names its conditions and says how to use a method through its entry in the
//! suite table ([`crate::suite::Suite::verdict`]); the decision is made here, once,
//! for all of them ([`decide`]): among the suite's verified rows of one condition, the
//! fastest row of each method stands for it; the fastest method wins only when it beats
//! every other method beyond the noise ([`crate::stats::beats`], the rule of `iolab
//! compare`); otherwise the methods within its noise are `tied`, and when the default
//! (the row marked `default`: what a library call with no options does) is among them, the
//! command and the library call given are the default's. The default is judged too, against
//! the winner itself: tied with it or not, and its speed as a fraction of the winner's;
//! where the winner does a job the default cannot (a narrower one: zeros from one buffer,
//! more threads), the verdict says why beside that ratio, and no other row stands in.

use crate::results::Row;
pub use crate::results::Verdict;
use crate::stats::beats;
use iolab_lab::units::format_rate;

/// The name of the method that is a suite's default where it has one (`count`'s `auto`).
pub const DEFAULT_METHOD: &str = "auto";

/// How to use a method: the command and the library call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Usage {
    /// The `iolab …` command.
    pub cli: String,
    /// The library call.
    pub library: String,
    /// The example program of the library crate that makes that call
    /// (`cargo run --release --example NAME -- FILE`).
    pub example: &'static str,
}

/// What a suite tells [`decide`] about one condition.
pub struct Condition<'a> {
    /// The suite's name.
    pub suite: &'a str,
    /// The row keys that split the suite's rows into table sections.
    pub section_keys: &'a [&'a str],
    /// The condition's name.
    pub name: String,
    /// Its rows (methods and baselines; unmeasured and failed rows are ignored).
    pub rows: Vec<&'a Row>,
    /// How to use a row's method.
    pub usage: &'a dyn Fn(&Row) -> Usage,
    /// The row's figure; throughput when `None`.
    pub figure: Option<&'a dyn Fn(&Row) -> String>,
}

/// The verdict for `condition`, or `None` when none of its methods has a verified timing.
pub fn decide(condition: &Condition<'_>) -> Option<Verdict> {
    let usable = |r: &&&Row| usable(r);
    // The fastest row of each method stands for it.
    let mut best: Vec<&Row> = Vec::new();
    for r in condition.rows.iter().filter(usable).filter(|r| !r.baseline) {
        match best.iter_mut().find(|b| b.method == r.method) {
            Some(b) if r.median_s < b.median_s => *b = r,
            Some(_) => {}
            None => best.push(r),
        }
    }
    best.sort_by(|a, b| {
        a.median_s
            .unwrap_or(f64::MAX)
            .total_cmp(&b.median_s.unwrap_or(f64::MAX))
    });
    let fastest = *best.first()?;
    let stats = |r: &Row| r.stats.clone().expect("usable rows have statistics");
    let tied: Vec<String> = best
        .iter()
        .filter(|r| !beats(&stats(fastest), &stats(r)))
        .map(|r| r.method.clone())
        .collect();
    let baseline = condition
        .rows
        .iter()
        .filter(usable)
        .filter(|r| r.baseline)
        .min_by(|a, b| {
            a.median_s
                .unwrap_or(f64::MAX)
                .total_cmp(&b.median_s.unwrap_or(f64::MAX))
        });
    let judged = judge_default(condition, fastest);
    // On a tie that includes the default, the command and call to give are the default's:
    // no other is faster beyond the noise.
    let used = match &judged {
        Some(j) if tied.len() > 1 && j.tied => j.row,
        _ => fastest,
    };
    let usage = (condition.usage)(used);
    Some(Verdict {
        suite: condition.suite.to_string(),
        condition: condition.name.clone(),
        winner: (tied.len() == 1).then(|| fastest.method.clone()),
        tied: if tied.len() > 1 { tied } else { Vec::new() },
        median_s: fastest.median_s,
        figure: match condition.figure {
            Some(figure) => figure(fastest),
            None => fastest
                .throughput_bytes_per_s
                .map(format_rate)
                .unwrap_or_default(),
        },
        ratio_to_best_baseline: baseline
            .and_then(|b| Some(b.median_s? / fastest.median_s.filter(|&m| m > 0.0)?)),
        best_baseline: baseline.map(|b| b.method.clone()),
        of_limit: fastest
            .extra
            .get("ceiling_pct")
            .and_then(serde_json::Value::as_f64)
            .map(|p| p / 100.0),
        cli: usage.cli,
        library: usage.library,
        example: usage.example.to_string(),
        runner_up: best.get(1).map(|r| r.method.clone()),
        lead: best
            .get(1)
            .and_then(|r| Some(r.median_s? / fastest.median_s.filter(|&m| m > 0.0)?)),
        default: judged.as_ref().map(|j| j.row.method.clone()),
        default_tied: judged.as_ref().map(|j| j.tied),
        default_vs_winner: judged.as_ref().and_then(|j| j.ratio),
        default_judged_against: None,
        winner_narrower: judged
            .filter(|j| !std::ptr::eq(j.row, fastest))
            .and_then(|_| fastest.narrower().map(str::to_string)),
        section: Some(fastest.section(condition.section_keys)),
    })
}

/// Whether a row can be judged: verified, without error, with timings.
fn usable(r: &Row) -> bool {
    r.verified && r.error.is_none() && r.stats.is_some()
}

/// How a condition's default row did.
struct Judged<'a> {
    /// The default row.
    row: &'a Row,
    /// Within the noise of the winner.
    tied: bool,
    /// Its speed as a fraction of the winner's (the winner's median over the default's).
    ratio: Option<f64>,
}

/// The condition's default row (marked `default`, or, in results from before the marks,
/// `auto`) judged against the fastest row, whatever that row's job: where the winner does
/// a narrower one, the verdict says so beside the ratio ([`Verdict::winner_narrower`]),
/// and no other row stands in for it.
fn judge_default<'a>(condition: &Condition<'a>, fastest: &'a Row) -> Option<Judged<'a>> {
    let marked: Vec<&Row> = condition
        .rows
        .iter()
        .copied()
        .filter(|r| usable(r))
        .collect();
    let row = marked
        .iter()
        .find(|r| r.is_default())
        .or_else(|| {
            marked
                .iter()
                .find(|r| !r.baseline && r.method == DEFAULT_METHOD)
        })
        .copied()?;
    let stats = |r: &Row| r.stats.clone().expect("usable rows have statistics");
    let tied = std::ptr::eq(row, fastest) || !beats(&stats(fastest), &stats(row));
    let ratio = match (fastest.median_s, row.median_s) {
        (Some(w), Some(d)) if d > 0.0 => Some((w / d).min(1.0)),
        _ => None,
    };
    Some(Judged { row, tied, ratio })
}

/// The verdict of each group of [`group`], with the same usage and figure.
pub fn decide_each(
    suite: &str,
    section_keys: &[&str],
    groups: Vec<(String, Vec<&Row>)>,
    usage: &dyn Fn(&Row) -> Usage,
    figure: Option<&dyn Fn(&Row) -> String>,
) -> Vec<Verdict> {
    groups
        .into_iter()
        .filter_map(|(name, rows)| {
            decide(&Condition {
                suite,
                section_keys,
                name,
                rows,
                usage,
                figure,
            })
        })
        .collect()
}

/// `rows` grouped by `key` (rows without one are left out), in order of first appearance.
pub fn group<'a>(
    rows: &[&'a Row],
    key: impl Fn(&Row) -> Option<String>,
) -> Vec<(String, Vec<&'a Row>)> {
    let mut groups: Vec<(String, Vec<&'a Row>)> = Vec::new();
    for &r in rows {
        let Some(k) = key(r) else { continue };
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, members)) => members.push(r),
            None => groups.push((k, vec![r])),
        }
    }
    groups
}

/// A row's string key, if it has one.
pub fn key<'a>(row: &'a Row, name: &str) -> Option<&'a str> {
    row.extra.get(name).and_then(serde_json::Value::as_str)
}

/// A byte count as `iolab`'s size arguments take it: `64K`, `1M`, `1000`.
pub fn size_arg(bytes: u64) -> String {
    match bytes {
        0 => "0".into(),
        b if b % (1 << 30) == 0 => format!("{}G", b >> 30),
        b if b % (1 << 20) == 0 => format!("{}M", b >> 20),
        b if b % (1 << 10) == 0 => format!("{}K", b >> 10),
        b => b.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(method: &str, baseline: bool, runs: &[f64]) -> Row {
        let mut r = Row {
            suite: "count".into(),
            method: method.into(),
            cache: Some("warm".into()),
            baseline,
            bytes: 1000,
            verified: true,
            ..Row::default()
        };
        r.set_timings(runs, runs, runs);
        r
    }

    fn usage(r: &Row) -> Usage {
        Usage {
            cli: format!("iolab count --method {} FILE", r.method),
            library: "lib".into(),
            example: "count_lines",
        }
    }

    fn verdict(rows: &[Row]) -> Verdict {
        decide(&Condition {
            suite: "count",
            section_keys: &[],
            name: "warm".into(),
            rows: rows.iter().collect(),
            usage: &usage,
            figure: None,
        })
        .unwrap()
    }

    #[test]
    fn a_clear_winner_is_named_with_its_lead_over_the_best_baseline() {
        let v = verdict(&[
            row("slow", false, &[2.0, 2.0, 2.0]),
            row("fast", false, &[1.0, 1.0, 1.0]),
            row("wc -l", true, &[4.0, 4.0, 4.0]),
            row("fwc -l", true, &[3.0, 3.0, 3.0]),
        ]);
        assert_eq!(v.winner.as_deref(), Some("fast"));
        assert!(v.tied.is_empty());
        assert_eq!(v.best_baseline.as_deref(), Some("fwc -l"));
        assert!((v.ratio_to_best_baseline.unwrap() - 3.0).abs() < 1e-9);
        assert_eq!(v.cli, "iolab count --method fast FILE");
    }

    #[test]
    fn within_the_noise_is_a_tie_naming_both() {
        let v = verdict(&[
            row("a", false, &[1.00, 1.01, 0.99]),
            row("b", false, &[1.02, 1.03, 1.01]),
            row("c", false, &[3.0, 3.0, 3.0]),
        ]);
        assert_eq!(v.winner, None);
        assert_eq!(v.tied, ["a", "b"]);
        assert_eq!(v.winner_cell(), "tie: a ≈ b");
        assert_eq!(v.cli, "iolab count --method a FILE");
    }

    fn default_row(method: &str, runs: &[f64]) -> Row {
        let mut r = row(method, false, runs);
        r.mark_default();
        r
    }

    #[test]
    fn the_default_is_judged_against_the_winner() {
        let v = verdict(&[
            row("fast", false, &[1.0, 1.0, 1.0]),
            default_row("plain", &[2.0, 2.0, 2.0]),
        ]);
        assert_eq!(v.default.as_deref(), Some("plain"));
        assert_eq!(v.default_tied, Some(false));
        assert!((v.default_vs_winner.unwrap() - 0.5).abs() < 1e-9);
        assert_eq!(v.default_cell(), "0.50× (plain)");
        let v = verdict(&[
            default_row("plain", &[1.0, 1.0, 1.0]),
            row("slow", false, &[2.0, 2.0, 2.0]),
        ]);
        assert_eq!(
            (v.default_tied, v.default_vs_winner),
            (Some(true), Some(1.0))
        );
        assert_eq!(v.default_cell(), "= winner");
        let v = verdict(&[
            row("a", false, &[1.00, 1.01, 0.99]),
            default_row("plain", &[1.02, 1.03, 1.01]),
        ]);
        assert_eq!(v.default_tied, Some(true));
        assert_eq!(
            v.cli, "iolab count --method plain FILE",
            "a tie gives the default's use"
        );
        let v = verdict(&[row("a", false, &[1.0, 1.0, 1.0])]);
        assert_eq!(v.default, None, "no default row, no judgement");
    }

    #[test]
    fn a_default_beaten_by_a_narrower_job_is_judged_against_the_winner_and_says_why() {
        let mut gift = row("gift", false, &[0.5, 0.5, 0.5]);
        gift.extra.insert(
            crate::results::keys::NARROWER.into(),
            "gives its pages away".into(),
        );
        let v = verdict(&[
            gift,
            row("copy", false, &[1.0, 1.0, 1.0]),
            default_row("plain", &[1.25, 1.25, 1.25]),
        ]);
        assert_eq!(v.winner.as_deref(), Some("gift"));
        assert_eq!(v.default_tied, Some(false));
        assert!((v.default_vs_winner.unwrap() - 0.4).abs() < 1e-9);
        assert_eq!(v.default_cell(), "0.40× (plain)");
        assert_eq!(v.winner_narrower.as_deref(), Some("gives its pages away"));
        assert_eq!(
            v.default_note().as_deref(),
            Some(
                "count warm: the default (plain) is 0.40× the winner, and cannot do the winner's \
                 job: gives its pages away"
            )
        );
        // A default that is the winner, or ties it, needs no note.
        let v = verdict(&[default_row("plain", &[1.0, 1.0, 1.0])]);
        assert_eq!((v.default_note(), v.winner_narrower), (None, None));
    }

    #[test]
    fn a_tie_that_includes_the_default_gives_the_defaults_command() {
        let v = verdict(&[
            row("a", false, &[1.00, 1.01, 0.99]),
            row("auto", false, &[1.02, 1.03, 1.01]),
            row("c", false, &[3.0, 3.0, 3.0]),
        ]);
        assert_eq!(v.tied, ["a", "auto"]);
        assert_eq!(v.cli, "iolab count --method auto FILE");
        // The figure is still the fastest row's.
        assert_eq!(v.median_s, Some(1.00));
        // A clear winner is given as itself, even over the default.
        let v = verdict(&[
            row("a", false, &[1.0, 1.0, 1.0]),
            row("auto", false, &[2.0, 2.0, 2.0]),
        ]);
        assert_eq!(v.cli, "iolab count --method a FILE");
    }

    #[test]
    fn unverified_rows_and_variants_of_the_same_method_do_not_compete() {
        let mut wrong = row("wrong", false, &[0.1, 0.1, 0.1]);
        wrong.verified = false;
        let v = verdict(&[
            wrong,
            row("m", false, &[1.0, 1.0, 1.0]),
            row("m", false, &[1.01, 1.01, 1.01]),
            row("n", false, &[2.0, 2.0, 2.0]),
        ]);
        assert_eq!(v.winner.as_deref(), Some("m"));
    }
}
