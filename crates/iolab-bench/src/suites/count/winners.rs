//! The winners `auto` follows: after a complete run over every method, each cache state's
//! fastest method is remembered for the data set's size class only when it beats the
//! fastest *other* method beyond the noise (`bench::stats::beats`); a tie removes the
//! class's previous winner, so `auto` keeps its rule (see [`iolab_lab::profile`]).

use crate::context::Context;
use crate::results::Row;
use crate::stats;
use iolab_lab::profile::Record as _;
use iolab_lab::profile::{self, CountWinner, Decision, SizeClass};
use iolab_lab::read::CountMethod;
use iolab_lab::units::format_rate;

/// Records the decisions of `rows` (the main data set's, `bytes` long) and notes them.
pub(super) fn remember(ctx: &mut Context<'_>, rows: &[Row], bytes: u64) {
    if crate::interrupt::interrupted() || ctx.config.methods.is_some() {
        return;
    }
    let Some(class) = SizeClass::of(bytes) else {
        return;
    };
    let decisions: Vec<Decision> = ["warm", "cold"]
        .into_iter()
        .filter_map(|cache| decide(rows, cache))
        .collect();
    if decisions.is_empty() {
        return;
    }
    let said: Vec<String> = decisions.iter().map(describe).collect();
    crate::profile::record(
        ctx,
        &format!(
            "auto, for files of {class} on this machine: {}",
            said.join("; ")
        ),
        "the winners for auto",
        |p| p.record_count(bytes, &decisions),
    );
}

fn describe(decision: &Decision) -> String {
    match decision {
        Decision::Winner(w) => format!(
            "{} follows {} ({}, beyond the noise over {} at {})",
            w.cache,
            w.winner.method,
            format_rate(w.winner.bytes_per_s),
            w.runner_up,
            format_rate(w.runner_up_bytes_per_s)
        ),
        Decision::Tie { cache } => {
            format!("{cache}: no method beats the others beyond the noise, the rule applies")
        }
    }
}

/// The decision for one cache state: the fastest verified method row, if it beats the
/// fastest row of any other method beyond the noise; a tie otherwise. `None` when fewer
/// than two methods were measured (nothing to decide).
pub(super) fn decide(rows: &[Row], cache: &str) -> Option<Decision> {
    let mut ranked: Vec<(&Row, &stats::Summary)> = rows
        .iter()
        .filter(|r| r.cache.as_deref() == Some(cache) && !r.baseline && r.verified)
        .filter(|r| r.method != CountMethod::Auto.name())
        .filter_map(|r| r.stats.as_ref().map(|s| (r, s)))
        .collect();
    ranked.sort_by(|a, b| a.1.median.total_cmp(&b.1.median));
    let (best, best_stats) = *ranked.first()?;
    let (runner_up, runner_stats) = *ranked.iter().find(|(r, _)| r.method != best.method)?;
    if !stats::beats(best_stats, runner_stats) {
        return Some(Decision::Tie {
            cache: cache.to_string(),
        });
    }
    let get = |k: &str| {
        best.extra
            .get(k)
            .and_then(serde_json::Value::as_u64)
            .map(|v| v as usize)
    };
    let rate = |r: &Row| r.throughput_bytes_per_s.unwrap_or(0.0);
    Some(Decision::Winner(CountWinner {
        cache: cache.to_string(),
        size_class: SizeClass::of(best.bytes).unwrap_or(SizeClass {
            from_bytes: best.bytes,
            to_bytes: best.bytes,
        }),
        file_bytes: best.bytes,
        winner: profile::Winner {
            method: best.method.clone(),
            threads: get("threads"),
            queue_depth: get("queue_depth"),
            block_bytes: get("block_bytes"),
            bytes_per_s: rate(best),
        },
        runner_up: runner_up.method.clone(),
        runner_up_bytes_per_s: rate(runner_up),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(method: &str, cache: &str, runs: &[f64]) -> Row {
        let mut r = Row {
            suite: "count".into(),
            method: method.into(),
            cache: Some(cache.into()),
            bytes: 1 << 30,
            verified: true,
            ..Row::default()
        };
        r.set_timings(runs, runs, runs);
        r
    }

    #[test]
    fn a_winner_must_beat_the_fastest_other_method_beyond_the_noise() {
        let quiet = [1.0, 1.01, 0.99, 1.0, 1.0];
        let rows = vec![
            row("mmap-parallel", "cold", &quiet.map(|x| x * 0.5)),
            row("stream", "cold", &quiet),
            row("auto", "cold", &quiet.map(|x| x * 0.4)), // never a winner itself
            row("mmap-parallel", "warm", &quiet),
            row("stream", "warm", &quiet.map(|x| x * 1.02)), // within 5%: a tie
        ];
        match decide(&rows, "cold") {
            Some(Decision::Winner(w)) => {
                assert_eq!(w.winner.method, "mmap-parallel");
                assert_eq!(w.runner_up, "stream");
                assert_eq!(w.size_class, SizeClass::of(1 << 30).unwrap());
            }
            other => panic!("expected a winner, got {other:?}"),
        }
        assert_eq!(
            decide(&rows, "warm"),
            Some(Decision::Tie {
                cache: "warm".into()
            })
        );
        // Noisy rows need a bigger gap: 1.5× apart, but each spread by ±40%.
        let noisy = vec![
            row("mmap-parallel", "cold", &[0.4, 1.0, 1.4, 0.6, 1.0]),
            row("stream", "cold", &[0.9, 1.5, 2.1, 1.5, 1.0]),
        ];
        assert!(matches!(decide(&noisy, "cold"), Some(Decision::Tie { .. })));
        // One method alone decides nothing; variants of one method are not runners-up.
        let alone = vec![
            row("mmap-parallel", "cold", &quiet),
            row("mmap-parallel", "cold", &quiet.map(|x| x * 2.0)),
        ];
        assert_eq!(decide(&alone, "cold"), None);
    }
}
