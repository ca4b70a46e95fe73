//! The suites, and the measurement loop they share.

pub mod append;
pub mod count;
pub mod edit;
pub mod write;

use std::path::Path;

use super::progress::Progress;
use super::results::Row;
use super::runner::{Job, Outcome, schedule};
use super::{COLD_MAX_RESIDENCY, CacheState, Context, WARM_MIN_RESIDENCY, interrupt};
use crate::cache;
use crate::error::{Error, Result};

/// Names of the external baselines the suites may run, for `--methods`.
pub const BASELINE_NAMES: &[&str] = &[
    "wc -l", "fwc -l", "yes", "pv", "dd", "tr", "sed", "head", "fstream",
];

/// Runs the suite called `name`.
pub fn run(name: &str, ctx: &mut Context<'_>) -> Result<Vec<Row>> {
    match name {
        "count" => count::run(ctx),
        "write" => write::run(ctx),
        "edit" => edit::run(ctx),
        "append" => append::run(ctx),
        other => Err(Error::UnknownMethod {
            name: other.to_string(),
            expected: super::SUITES.join(", "),
        }),
    }
}

/// A job to measure, and what its rows carry besides timings.
pub struct Measured {
    /// The command.
    pub job: Job,
    /// The baseline's version line, if any.
    pub version: Option<String>,
    /// Suite-specific keys for its row (`variant`, `threads`, …).
    pub extra: std::collections::BTreeMap<String, serde_json::Value>,
}

impl Measured {
    /// A job with no version and no extra keys.
    pub fn new(job: Job) -> Measured {
        Measured {
            job,
            version: None,
            extra: Default::default(),
        }
    }
}

/// What a file-reading suite measures: jobs over one input in several cache states.
pub struct FileBench<'a> {
    /// The suite's name, for the rows.
    pub suite: &'a str,
    /// The input every job reads.
    pub input: &'a Path,
    /// Its size.
    pub bytes: u64,
    /// The result every run must print.
    pub expected: String,
    /// Reads a run's result from its output.
    pub parse: fn(&Outcome) -> Option<String>,
}

/// Per-job accumulation over the rounds of one cache state.
#[derive(Default)]
struct Accumulator {
    wall: Vec<f64>,
    user: Vec<f64>,
    sys: Vec<f64>,
    residency: Vec<f64>,
    results: Vec<String>,
    unavailable: Option<String>,
    error: Option<String>,
}

/// Measures `jobs` over `bench.input` in `cache` state: warm-up rounds, then counted
/// rounds, interleaved; the cache is prepared and its residency measured before every run,
/// outside the timer.
pub fn measure(
    ctx: &mut Context<'_>,
    bench: &FileBench<'_>,
    jobs: &[Measured],
    cache_state: CacheState,
) -> Result<Vec<Row>> {
    let config = ctx.config;
    let rounds = config.warmup + config.runs;
    let order = schedule(jobs.len(), rounds);
    let mut acc: Vec<Accumulator> = jobs.iter().map(|_| Accumulator::default()).collect();
    let progress = Progress::new(
        &format!("{} {}", bench.suite, cache_state.name()),
        order.len() as u64,
        config.progress,
    );
    let mut missed_state = 0usize;
    for (round, j) in order {
        if interrupt::interrupted() {
            break;
        }
        progress.inc();
        let a = &mut acc[j];
        if a.unavailable.is_some() || a.error.is_some() {
            continue;
        }
        let job = &jobs[j].job;
        progress.set_message(format!("round {}/{rounds}: {}", round + 1, job.name));
        let residency = prepare(bench.input, cache_state, config.drop_caches)?;
        let reached = match cache_state {
            CacheState::Cold => residency <= COLD_MAX_RESIDENCY,
            CacheState::Warm => residency >= WARM_MIN_RESIDENCY,
        };
        let outcome = ctx
            .executor
            .execute(job)
            .map_err(|e| Error::io("cannot run a benchmark job", e))?;
        if interrupt::interrupted() {
            // The run was cut short by Ctrl-C: it is not a measurement.
            break;
        }
        if !outcome.success() {
            let line = outcome.first_error_line();
            match line.split_once("is unavailable: ") {
                Some((_, reason)) => a.unavailable = Some(reason.to_string()),
                None => {
                    a.error = Some(if line.is_empty() {
                        format!("exit {:?}, signal {:?}", outcome.code, outcome.signal)
                    } else {
                        line
                    })
                }
            }
            continue;
        }
        let result = (bench.parse)(&outcome).unwrap_or_else(|| "unreadable output".into());
        if round < config.warmup {
            // Warm-up runs still must be right.
            if result != bench.expected {
                a.results.push(result);
            }
            continue;
        }
        if !reached {
            missed_state += 1;
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
            "{}: {missed_state} {} run(s) started with the cache not {} (see residency_before)",
            bench.suite,
            cache_state.name(),
            cache_state.name()
        ));
    }
    Ok(jobs
        .iter()
        .zip(acc)
        .map(|(m, a)| to_row(bench, m, a, cache_state))
        .collect())
}

fn to_row(bench: &FileBench<'_>, m: &Measured, a: Accumulator, cache_state: CacheState) -> Row {
    let mut row = Row {
        suite: bench.suite.to_string(),
        method: m.job.name.clone(),
        cache: Some(cache_state.name().to_string()),
        baseline: m.job.baseline,
        version: m.version.clone(),
        bytes: bench.bytes,
        extra: m.extra.clone(),
        ..Row::default()
    };
    if let Some(reason) = a.unavailable {
        row.unavailable = Some(reason);
        return row;
    }
    row.error = a.error;
    row.set_timings(&a.wall, &a.user, &a.sys);
    let wrong: Vec<&String> = a.results.iter().filter(|r| **r != bench.expected).collect();
    row.verified = !a.wall.is_empty() && wrong.is_empty();
    row.result = a.results.last().cloned();
    if let Some(bad) = wrong.first() {
        row.error.get_or_insert(format!(
            "wrong result: printed {bad}, expected {}",
            bench.expected
        ));
    }
    row.set_residency(cache_state, a.residency);
    row
}

/// Puts `input` in `cache_state` and returns the residency measured afterwards.
pub(crate) fn prepare(input: &Path, cache_state: CacheState, drop_caches: bool) -> Result<f64> {
    match cache_state {
        CacheState::Cold => {
            let first = cache::evict(input, drop_caches)?;
            if first.residency <= COLD_MAX_RESIDENCY {
                return Ok(first.residency);
            }
            // Read-ahead of a concurrent reader or a slow writeback: one more try.
            Ok(cache::evict(input, drop_caches)?.residency)
        }
        CacheState::Warm => {
            let now = cache::residency_of(input)?;
            if now >= WARM_MIN_RESIDENCY {
                Ok(now)
            } else {
                cache::warm(input)
            }
        }
    }
}
