//! The machine profile's strategy winners ([`iolab_lab::profile`]): after a complete
//! run (every method, generated data, not interrupted), a verdict condition that a library
//! default follows is saved with its winner when it beats the runner-up beyond the noise,
//! and removed on a tie, so the default keeps its rule there. `count` and `random` save
//! their own (`suites/count/winners.rs`, `suites/random/rows.rs`).

use std::path::Path;

use crate::context::Context;
use crate::verdict::Verdict;
use iolab_lab::profile::Record as _;
use iolab_lab::profile::{self, Profile, Strategies, StrategyWinner};
use iolab_lab::units::format_bytes;

/// Saves `verdict`'s decision as the profile's `which` entry for its condition (measured on
/// the device of `data_dir`), and notes it.
pub fn remember(ctx: &mut Context<'_>, which: Strategies, verdict: &Verdict, data_dir: &Path) {
    let winner = verdict.winner.as_ref().map(|method| StrategyWinner {
        condition: verdict.condition.clone(),
        method: method.clone(),
        runner_up: verdict.runner_up.clone().unwrap_or_default(),
        lead: verdict.lead.unwrap_or(1.0),
        measured_at: iolab_lab::sysinfo::now_rfc3339(),
        device: profile::device_of(data_dir),
        bytes: None,
    });
    save(
        ctx,
        which,
        (verdict.suite.as_str(), &verdict.condition),
        winner,
    );
}

/// Saves `winner` (or, `None`, a tie: the rule applies) as the profile's `which` entry for
/// `suite`'s `condition` after a complete run, and notes it.
pub fn save(
    ctx: &mut Context<'_>,
    which: Strategies,
    (suite, condition): (&str, &str),
    winner: Option<StrategyWinner>,
) {
    if !ctx.config.files.is_empty() {
        return;
    }
    let said = match &winner {
        Some(w) => format!(
            "follows {}{} ({:.2}x {}, beyond the noise)",
            w.method,
            w.bytes
                .map_or(String::new(), |b| format!(" at {}", format_bytes(b))),
            w.lead,
            w.runner_up
        ),
        None => "no strategy beats the others beyond the noise: the rule applies".into(),
    };
    record(
        ctx,
        &format!("{suite} {condition}, by default on this machine: {said}"),
        &format!("the {suite} {condition} winner"),
        |p| p.record_strategy(which, condition, winner),
    );
}

/// Saves `change` to the machine profile after a complete run (not interrupted, every
/// method) and notes `said` with where it was saved, or why `what` could not be saved.
pub fn record(
    ctx: &mut Context<'_>,
    said: &str,
    what: &str,
    change: impl FnOnce(&mut Profile) -> bool,
) {
    if crate::interrupt::interrupted() || ctx.config.methods.is_some() {
        return;
    }
    match profile::save(change) {
        Ok(Some(path)) => ctx
            .notes
            .push(format!("{said} (saved in {})", path.display())),
        Ok(None) => {}
        Err(e) => ctx.notes.push(format!("could not save {what}: {e}")),
    }
}

/// Among the `usable` rows (one method and condition, each with `buffer_bytes`), the size
/// that beats the `is_default` row beyond the noise, as the profile's `condition` winner
/// measured on the device of `data_dir`; `None` when no size does (the rule holds).
pub fn size_winner(
    rows: &[crate::results::Row],
    usable: impl Fn(&crate::results::Row) -> bool,
    is_default: fn(&crate::results::Row) -> bool,
    condition: &str,
    data_dir: &Path,
) -> Option<StrategyWinner> {
    let default = rows.iter().filter(|r| usable(r)).find(|r| is_default(r))?;
    let best = rows
        .iter()
        .filter(|r| usable(r) && !is_default(r))
        .filter(|r| r.median_s.is_some() && r.stats.is_some())
        .min_by(|a, b| {
            a.median_s
                .partial_cmp(&b.median_s)
                .expect("medians are numbers")
        })?;
    let bytes = best.extra.get("buffer_bytes")?.as_u64()?;
    if !crate::stats::beats(best.stats.as_ref()?, default.stats.as_ref()?) {
        return None;
    }
    Some(StrategyWinner {
        condition: condition.into(),
        method: best.method.clone(),
        runner_up: "the rule's buffer".into(),
        lead: default.median_s? / best.median_s?,
        measured_at: iolab_lab::sysinfo::now_rfc3339(),
        device: profile::device_of(data_dir),
        bytes: Some(bytes),
    })
}
