//! The `edit` suite's measurement: interleaved rounds, a fresh copy and the cache
//! prepared before every run, the result read after it, the phases of `--timings-json`.

use super::{Check, EditJob, Op, Plan, WorkDir, digest_file, expected_for, to_row};
use crate::cache_state::{COLD_MAX_RESIDENCY, CacheState, WARM_MIN_RESIDENCY};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::interrupt;
use crate::progress::Progress;
use crate::results::Row;
use crate::runner::{Outcome, parse_count, schedule};
use std::path::Path;

/// What one job accumulated over the runs of one cache state.
#[derive(Default)]
pub(super) struct Accumulator {
    pub(super) wall: Vec<f64>,
    pub(super) user: Vec<f64>,
    pub(super) sys: Vec<f64>,
    pub(super) residency: Vec<f64>,
    pub(super) results: Vec<String>,
    /// Results of warm-up runs that were wrong.
    pub(super) wrong_warmup: Vec<String>,
    pub(super) phases: Vec<(String, Vec<f64>)>,
    pub(super) kernel: Option<String>,
    /// The highest peak RSS a run reported.
    pub(super) peak_rss: Option<u64>,
    pub(super) error: Option<String>,
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
    let rounds = plan.warmup + plan.runs;
    let order = schedule(jobs.len(), rounds);
    let mut acc: Vec<Accumulator> = jobs.iter().map(|_| Accumulator::default()).collect();
    let progress = Progress::section(
        &format!("edit {} {} {}", op.name(), plan.name, cache_state.name()),
        order.len() as u64,
        jobs.len(),
        config.progress,
    );
    let mut missed_state = 0usize;
    for (round, j) in order {
        if interrupt::interrupted() {
            break;
        }
        progress.inc();
        let (job, a) = (jobs[j], &mut acc[j]);
        let counted = round >= plan.warmup;
        let capped = job.max_runs < plan.runs;
        if a.error.is_some() || (capped && (!counted || a.wall.len() >= job.max_runs)) {
            continue;
        }
        progress.set_message(format!("round {}/{rounds}: {}", round + 1, job.method));
        let input = match op {
            Op::Count => plan.dataset.path.clone(),
            _ => work.fresh_copy(&plan.dataset.path, ctx)?,
        };
        let output = work.output();
        // The data set itself is read only by `count`; with --file it is the user's.
        let ours = op != Op::Count || !plan.users;
        let residency = crate::file_bench::prepare(&input, cache_state, config.drop_caches, ours)?;
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
        if interrupt::interrupted() {
            // The run was cut short by Ctrl-C: it is not a measurement.
            break;
        }
        let Some(result) = result else {
            a.error = Some(outcome.failure_reason());
            continue;
        };
        let expected = expected_for(&plan.expected, op);
        if !counted {
            if result != expected {
                a.wrong_warmup.push(result);
            }
            continue;
        }
        let reached = match cache_state {
            CacheState::Cold => residency <= COLD_MAX_RESIDENCY,
            CacheState::Warm => residency >= WARM_MIN_RESIDENCY,
        };
        if !reached {
            missed_state += 1;
        }
        if job.reports_phases {
            record_phases(a, &outcome.stdout);
        }
        a.wall.push(outcome.wall_s);
        a.user.push(outcome.user_s);
        a.sys.push(outcome.sys_s);
        a.residency.push(residency);
        a.results.push(result);
    }
    progress.finish();
    if missed_state > 0 {
        ctx.warnings.push(format!(
            "edit: {missed_state} {} run(s) of {} on the {} data set started with the cache \
             not {} (see residency_before)",
            cache_state.name(),
            op.name(),
            plan.name,
            cache_state.name()
        ));
    }
    let expected = expected_for(&plan.expected, op);
    Ok(jobs
        .iter()
        .zip(acc)
        .map(|(job, a)| to_row(plan, op, job, a, cache_state, expected))
        .collect())
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

/// Adds the phases and kernel of one run's `--timings-json` output.
pub(super) fn record_phases(a: &mut Accumulator, stdout: &str) {
    let Ok(report) = serde_json::from_str::<TimingsJson>(stdout.trim()) else {
        return;
    };
    if let Some(kernel) = report.kernel {
        a.kernel = Some(kernel);
    }
    a.peak_rss = a.peak_rss.max(report.peak_rss_bytes);
    for (name, s) in report.phases.0 {
        match a.phases.iter_mut().find(|(n, _)| *n == name) {
            Some((_, all)) => all.push(s),
            None => a.phases.push((name, vec![s])),
        }
    }
}

/// What the suite reads of `iolab edit --timings-json`.
#[derive(serde::Deserialize)]
pub(super) struct TimingsJson {
    kernel: Option<String>,
    phases: PhasesInOrder,
    peak_rss_bytes: Option<u64>,
}

/// A JSON object of seconds, keeping its keys in the order they were written (the order
/// the steps ran), which `serde_json::Map` would sort.
pub(super) struct PhasesInOrder(Vec<(String, f64)>);

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
