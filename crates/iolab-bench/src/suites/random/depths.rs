//! The queue depths `iolab random` takes for the io_uring methods on this machine: after a
//! `--sweep` run, per method and size class (`warm`, `beyond-memory`), the depth with the
//! most uniform-pattern IOPS on one thread, when it beats the rule's [`DEEP_QUEUE`] beyond
//! the noise; a tie removes the entry, so the rule applies.

use serde_json::json;

use super::{DEEP_QUEUE, State, rows::figure};
use crate::context::Context;
use crate::results::Row;
use iolab_lab::profile::RandomDepth;
use iolab_lab::profile::Record as _;
use iolab_lab::random::Method;

/// Decides and saves the depths of `rows` (a complete run on a `bytes`-byte data set).
pub(super) fn remember(ctx: &mut Context<'_>, rows: &[Row], bytes: u64) {
    if crate::interrupt::interrupted() || ctx.config.methods.is_some() || !ctx.config.sweep {
        return;
    }
    let mut depths = Vec::new();
    let mut tied = Vec::new();
    for state in [State::Warm, State::BeyondMemory] {
        for method in [Method::Uring, Method::UringDirect] {
            match decide(rows, method, state) {
                Some(Some(depth)) => depths.push(depth),
                Some(None) => tied.push((method.name().to_string(), state.name().to_string())),
                None => {}
            }
        }
    }
    let said = if depths.is_empty() {
        format!("the rule's {DEEP_QUEUE} (no depth beat it beyond the noise)")
    } else {
        depths
            .iter()
            .map(|d| format!("{} {} depth {}", d.size_class, d.method, d.queue_depth))
            .collect::<Vec<_>>()
            .join(", ")
    };
    crate::profile::record(
        ctx,
        &format!("iolab random without --queue-depth will take on this machine: {said}"),
        "the random queue depths",
        |p| p.record_random_depths(bytes, depths, &tied),
    );
}

/// For `method` in `state`: `None` when fewer than two depths were measured, `Some(None)`
/// when none beats [`DEEP_QUEUE`] beyond the noise, else the fastest depth.
fn decide(rows: &[Row], method: Method, state: State) -> Option<Option<RandomDepth>> {
    let at: Vec<(&Row, usize, f64)> = rows
        .iter()
        .filter(|r| !r.baseline && r.verified && r.method == method.name())
        .filter(|r| r.cache.as_deref() == Some(state.name()))
        .filter(|r| {
            r.extra.get("pattern") == Some(&json!("uniform"))
                && r.extra.get("threads") == Some(&json!(1))
        })
        .filter_map(|r| {
            Some((
                r,
                usize::try_from(r.queue_depth()?).ok()?,
                figure(r, "iops")?,
            ))
        })
        .collect();
    if at.len() < 2 {
        return None;
    }
    let rule = at.iter().find(|(_, qd, _)| *qd == DEEP_QUEUE)?;
    let best = at.iter().max_by(|a, b| a.2.total_cmp(&b.2))?;
    let beats = match (best.0.stats.as_ref(), rule.0.stats.as_ref()) {
        (Some(fast), Some(slow)) => best.1 != DEEP_QUEUE && crate::stats::beats(fast, slow),
        _ => false,
    };
    Some(beats.then(|| RandomDepth {
        size_class: state.name().to_string(),
        method: method.name().to_string(),
        queue_depth: best.1,
        iops: best.2,
        measured_at: iolab_lab::sysinfo::now_rfc3339(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Summary;

    fn row(qd: usize, per_read_s: &[f64]) -> Row {
        let mut r = Row {
            suite: "random".into(),
            method: "uring".into(),
            cache: Some("warm".into()),
            verified: true,
            ..Row::default()
        };
        r.extra.insert("pattern".into(), json!("uniform"));
        r.extra.insert("threads".into(), json!(1));
        r.extra.insert("queue_depth".into(), json!(qd));
        let s = Summary::of(per_read_s).unwrap();
        r.extra.insert("iops".into(), json!(1.0 / s.median));
        r.median_s = Some(s.median);
        r.stats = Some(s);
        r
    }

    #[test]
    fn a_depth_that_beats_the_rules_beyond_the_noise_is_kept_a_tie_is_not() {
        let fast = [1e-6, 1.01e-6, 0.99e-6];
        let slow = [2e-6, 2.02e-6, 1.98e-6];
        let rows = vec![row(DEEP_QUEUE, &slow), row(128, &fast), row(1, &[9e-6; 3])];
        let d = decide(&rows, Method::Uring, State::Warm).unwrap().unwrap();
        assert_eq!((d.queue_depth, d.method.as_str()), (128, "uring"));
        let rows = vec![row(DEEP_QUEUE, &fast), row(128, &fast)];
        assert_eq!(decide(&rows, Method::Uring, State::Warm), Some(None));
        // One depth only (no sweep): nothing to decide.
        assert_eq!(decide(&rows[..1], Method::Uring, State::Warm), None);
        assert_eq!(decide(&rows, Method::UringDirect, State::Warm), None);
    }
}
