//! The `edit` suite's measurement: interleaved rounds, a fresh copy and the cache
//! prepared before every run, the result read after it, the phases of `--timings-json`.

use super::{Check, EditJob, Op, Plan, WorkDir, digest_file, expected_for, to_row};
use crate::cache_state::{CacheState, missed_warning, prepare, reached};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::results::Row;
use crate::rounds::{Entry, Role, Rounds, Run, Times, Turn, drive};
use crate::runner::{Outcome, parse_count};
use crate::verdict::DEFAULT_METHOD;
use std::path::Path;

/// One counted or warm-up run of an edit job.
pub(super) struct EditSample {
    pub(super) times: Times,
    /// The edited file's digest, or the printed count.
    pub(super) result: String,
    pub(super) residency: f64,
    pub(super) reached: bool,
    /// Its `--timings-json` report, for a job that prints one.
    pub(super) report: Option<TimingsJson>,
}

/// Measures `jobs` for `op` on `plan`'s data set in `cache_state`: interleaved rounds, a
/// fresh copy and the cache prepared before every run, the result checked after it.
pub(super) fn measure(
    ctx: &mut Context<'_>,
    plan: &Plan<'_>,
    op: Op,
    jobs: &[&EditJob],
    cache_state: CacheState,
    work: &WorkDir,
) -> Result<Vec<Row>> {
    let config = ctx.config;
    let title = format!("edit {} {} {}", op.name(), plan.name, cache_state.name());
    let rounds = Rounds::section(title, config)
        .rounds(plan.warmup, plan.runs)
        .every_run();
    let entries: Vec<Entry> = jobs
        .iter()
        .map(|job| {
            let role = if job.baseline {
                Role::Baseline
            } else if job.method == DEFAULT_METHOD {
                Role::Default
            } else {
                Role::Method
            };
            let entry = Entry::new(&job.method, role);
            if job.max_runs < plan.runs {
                entry.capped(job.max_runs)
            } else {
                entry
            }
        })
        .collect();
    let expected = expected_for(&plan.expected, op);
    let tallies = drive(
        ctx,
        &rounds,
        &entries,
        &mut |ctx: &mut Context<'_>, turn: Turn| {
            run_once(ctx, plan, op, jobs[turn.job], cache_state, work, expected)
        },
    )?;
    let missed = tallies
        .iter()
        .flat_map(|t| &t.counted)
        .filter(|s| !s.reached);
    let what = format!("edit {} on the {} data set", op.name(), plan.name);
    ctx.warnings
        .extend(missed_warning(&what, missed.count(), cache_state));
    Ok(jobs
        .iter()
        .zip(tallies)
        .map(|(job, t)| to_row(plan, op, job, t, cache_state, expected))
        .collect())
}

/// Runs `job` once on a fresh copy (or the data set itself, for `count`) in
/// `cache_state`, and reads its result; the copy and output are removed afterwards.
fn run_once(
    ctx: &mut Context<'_>,
    plan: &Plan<'_>,
    op: Op,
    job: &EditJob,
    cache_state: CacheState,
    work: &WorkDir,
    expected: &str,
) -> Result<Run<EditSample>> {
    let input = match op {
        Op::Count => plan.dataset.path.clone(),
        _ => work.fresh_copy(&plan.dataset.path, ctx)?,
    };
    let output = work.output();
    // The data set itself is read only by `count`; with --file it is the user's.
    let ours = op != Op::Count || !plan.users;
    let residency = prepare(&input, cache_state, ctx.config.drop_caches, ours)?;
    let outcome = ctx
        .executor
        .execute(&job.job(&input, &output))
        .map_err(|e| Error::io("cannot run a benchmark job", e));
    let checked = outcome.and_then(|outcome| {
        let result = if outcome.success() {
            Some(result_of(job.check, &outcome, &input, &output)?)
        } else {
            None
        };
        Ok((outcome, result))
    });
    work.clean();
    let (outcome, result) = checked?;
    let Some(result) = result else {
        return Ok(Run::Failed(outcome.failure_reason()));
    };
    let reached = reached(cache_state, residency);
    let report = job
        .reports_phases
        .then(|| serde_json::from_str::<TimingsJson>(outcome.stdout.trim()).ok())
        .flatten();
    Ok(Run::Done {
        wall_s: outcome.wall_s,
        right: result == expected,
        sample: EditSample {
            times: Times::of(&outcome),
            result,
            residency,
            reached,
            report,
        },
    })
}

/// A run's result: the digest of the edited file, or the printed count.
pub(super) fn result_of(
    check: Check,
    outcome: &Outcome,
    input: &Path,
    output: &Path,
) -> Result<String> {
    match check {
        Check::InPlace => digest_file(input),
        Check::Output => digest_file(output),
        Check::Count => Ok(parse_count(&outcome.stdout)
            .map_or_else(|| "unreadable output".into(), |n| n.to_string())),
    }
}

/// What the suite reads of `iolab edit --timings-json`.
#[derive(serde::Deserialize)]
pub(super) struct TimingsJson {
    pub(super) kernel: Option<String>,
    pub(super) phases: PhasesInOrder,
    pub(super) peak_rss_bytes: Option<u64>,
}

/// A JSON object of seconds, keeping its keys in the order they were written (the order
/// the steps ran), which `serde_json::Map` would sort.
pub(super) struct PhasesInOrder(pub(super) Vec<(String, f64)>);

impl<'de> serde::Deserialize<'de> for PhasesInOrder {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = PhasesInOrder;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of seconds")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> std::result::Result<PhasesInOrder, M::Error> {
                let mut phases = Vec::new();
                while let Some(entry) = map.next_entry::<String, f64>()? {
                    phases.push(entry);
                }
                Ok(PhasesInOrder(phases))
            }
        }
        d.deserialize_map(Visitor)
    }
}
