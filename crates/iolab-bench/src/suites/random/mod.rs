//! The `random` suite: random block reads of one generated file, every iolab method
//! (`iolab_lab::random`) against `fio --rw=randread` with the same parameters, in three states.
//!
//! How it measures (data sets, rows, baselines, budget): docs/suites.md#random.

mod cgroup;
pub mod chart;
mod depths;
mod fio;
mod jobs;
mod measure;
mod rows;
pub(crate) mod verdict;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::cache_state::CacheState;
use crate::context::Context;
use crate::data;
use crate::error::Result;
use crate::interrupt;
use crate::peers::{version_line, which};
use crate::progress;
use crate::results::Row;
use crate::runner::Job;
use crate::suite::Sizes;
use crate::suite::{Column, MethodInfo, Output, Place, Suite};
use iolab_lab::random::{DEFAULT_BLOCK, Method, Pattern};

/// The data set's size by default: 1 GiB.
pub const DEFAULT_SIZE: u64 = 1 << 30;
/// With `--quick`: 64 MiB.
pub const QUICK_SIZE: u64 = 64 << 20;
/// The data set's sizes, for the suite table; `--size` replaces them.
pub const SIZES: Sizes = Sizes {
    full: DEFAULT_SIZE,
    quick: QUICK_SIZE,
    follows_size_option: true,
};
/// Seconds each run reads: short, since IOPS settle within thousands of reads.
pub const RUN_SECONDS: f64 = 0.2;
/// The deep queue the io_uring methods also run at.
pub const DEEP_QUEUE: usize = iolab_lab::random::DEFAULT_QUEUE_DEPTH;
/// `--sweep`: the queue depths of the io_uring methods, for the IOPS-against-depth chart.
pub const SWEEP_QUEUE_DEPTHS: [usize; 6] = [1, 4, 16, 32, 64, 128];
/// Memory the reader itself needs in the `beyond-memory` cgroup (its binary, heap,
/// buffers, ring), added to the quarter of the file the cache may hold: 32 MiB, so a small
/// `--quick` file does not get the reader killed by the OOM killer.
pub const PROCESS_HEADROOM: u64 = 32 << 20;
/// Rounds per state at most in a run of several suites (the runs setting, capped so the
/// suite stays near 40 s of the whole bench's budget). `iolab bench random` alone takes
/// every round `--runs` asks for: the run to quote the fio comparison from, since two
/// rounds of a fifth of a second on a shared virtual disk scatter a ratio by ±20%.
pub const MAX_ROUNDS: usize = 2;

/// The rounds per state: `--runs`, capped at [`MAX_ROUNDS`] unless the suite runs alone.
fn rounds(config: &crate::context::Config) -> usize {
    if config.suites.len() == 1 {
        config.runs.max(1)
    } else {
        config.runs.clamp(1, MAX_ROUNDS)
    }
}

const SUITE: &str = "random";

/// This suite's entry in the suite table (`crate::suites::SUITES`).
pub const ENTRY: Suite = Suite {
    name: SUITE,
    description: "Random block reads (`iolab random`, `iolab_lab::file::RandomAccessFile`)",
    sizes: SIZES,
    methods: || {
        iolab_lab::random::Method::ALL
            .into_iter()
            .map(|m| MethodInfo::new(m.name(), m.availability()))
            .collect()
    },
    baselines: &["fio"],
    section_keys: &["pattern"],
    identity_keys: &["pattern", "state", "block_bytes", "queue_depth", "threads"],
    columns: &[
        Column::significant("iops", "IOPS", Place::AfterMethod),
        Column::significant("p50_us", "p50 µs", Place::AfterThroughput),
        Column::significant("p99_us", "p99 µs", Place::AfterThroughput),
        Column::significant("p999_us", "p99.9 µs", Place::AfterThroughput),
        Column::significant("cpu_us_per_read", "CPU µs/read", Place::AfterThroughput),
    ],
    charts: chart::charts,
    run,
    takes_files: false,
    is_default,
    default_rows: None,
    verdict: verdict::verdicts,
};

/// A state of the file for a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// In the page cache.
    Warm,
    /// Evicted.
    Cold,
    /// Evicted, and the reader's memory limited to a quarter of the file.
    BeyondMemory,
}

impl State {
    /// `warm`, `cold` or `beyond-memory`: the rows' `state` (and `cache`).
    pub fn name(self) -> &'static str {
        match self {
            State::Warm => "warm",
            State::Cold => "cold",
            State::BeyondMemory => "beyond-memory",
        }
    }
}

/// One run's figures, from `iolab random --json` or fio's JSON.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Sample {
    pub iops: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub cpu_us_per_read: f64,
    pub verified: bool,
    pub cdf_us: Vec<(f64, f64)>,
    /// `auto`'s serving backing and why, at the end of the run.
    pub why: Option<String>,
}

/// One job of a state: an iolab method or fio, with its parameters.
pub(crate) struct RandomJob {
    pub job: Job,
    pub version: Option<String>,
    pub method: String,
    pub pattern: Pattern,
    pub queue_depth: usize,
    pub threads: usize,
    pub parse: fn(&str) -> Option<Sample>,
}

/// Runs the suite.
pub fn run(ctx: &mut Context<'_>) -> Result<Output> {
    let config = ctx.config;
    let size = SIZES.pick(config);
    let dataset = data::blocks(&config.data_dir, size, config.progress)?;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let seconds = if config.quick {
        RUN_SECONDS / 4.0
    } else {
        RUN_SECONDS
    };
    let fio = if config.baselines {
        match which("fio") {
            Some(path) => Some((version_line(&path, &["--version"]), path)),
            None => {
                ctx.notes
                    .push("random: fio not installed: no baseline rows".into());
                None
            }
        }
    } else {
        None
    };
    let mut states = Vec::new();
    if config.caches.contains(&CacheState::Warm) {
        states.push(State::Warm);
    }
    if config.caches.contains(&CacheState::Cold) {
        // A plain cold file (evicted, all memory free) and beyond memory (the uncached
        // case a storage engine has, and the one `RandomAccessFile` follows); a smoke run
        // has only the latter.
        if !config.quick {
            states.push(State::Cold);
        }
        states.push(State::BeyondMemory);
    }
    let mut rows = Vec::new();
    for state in states {
        if interrupt::interrupted() {
            break;
        }
        let first_row = rows.len();
        // Seconds spent on each pattern's jobs, for the section lines.
        let mut spent: Vec<(Pattern, f64)> = Vec::new();
        let jobs = jobs::state_jobs(
            config,
            &dataset,
            state,
            (cores, seconds),
            fio.as_ref(),
            &mut rows,
        );
        let all_unavailable = |reason: &str| -> Vec<Row> {
            jobs.iter()
                .map(|j| {
                    let mut row = rows::unavailable(
                        &j.method,
                        state,
                        j.pattern,
                        (j.queue_depth, j.threads),
                        dataset.bytes,
                        reason.to_string(),
                    );
                    row.baseline = j.job.baseline;
                    row
                })
                .collect()
        };
        let cgroup = if state != State::Warm
            && iolab_lab::sysinfo::is_tmpfs(dataset.path.parent().unwrap_or(Path::new("/")))
        {
            Err("the data set is on tmpfs: it cannot be evicted".to_string())
        } else if state == State::BeyondMemory {
            cgroup::MemoryCgroup::create(dataset.bytes / 4 + PROCESS_HEADROOM).map(Some)
        } else {
            Ok(None)
        };
        match cgroup {
            Err(reason) => rows.extend(all_unavailable(&reason)),
            Ok(cgroup) => {
                let tallies = measure::measure(
                    ctx,
                    &dataset.path,
                    dataset.bytes,
                    &jobs,
                    state,
                    cgroup.as_ref(),
                )?;
                for (job, t) in jobs.iter().zip(&tallies) {
                    match spent.iter_mut().find(|(p, _)| *p == job.pattern) {
                        Some((_, total)) => *total += t.seconds,
                        None => spent.push((job.pattern, t.seconds)),
                    }
                }
                let measured = rows::rows(&jobs, tallies, state, dataset.bytes);
                rows::compare_with_fio(ctx, state, &measured);
                rows.extend(measured);
            }
        }
        // One line per table of results.md: a pattern in this state.
        for pattern in jobs::patterns(state, config.quick) {
            let n = rows[first_row..]
                .iter()
                .filter(|r| r.extra.get("pattern") == Some(&Value::from(pattern.name())))
                .count();
            let seconds = spent
                .iter()
                .find(|(p, _)| *p == pattern)
                .map_or(0.0, |(_, s)| *s);
            progress::print_section_line(
                config.progress,
                &format!("{SUITE} {pattern} {}", state.name()),
                n,
                seconds,
            );
        }
    }
    rows::remember_winners(ctx, &rows, dataset.bytes);
    depths::remember(ctx, &rows, dataset.bytes);
    Ok(rows.into())
}

/// Whether `row` is the library's default for its condition: the `auto` method (the
/// library's own code, measured backing included) on one thread — warm, one read per call
/// (`RandomAccessFile::read_at`); cold and beyond memory (Zipf too), the batch call
/// (`RandomAccessFile::read_batch`) at [`DEEP_QUEUE`], what a program with many lookups to
/// serve calls there.
fn is_default(row: &Row) -> bool {
    let depth = match row.extra.get("state").and_then(Value::as_str) {
        Some("warm") | None => 1,
        Some(_) => DEEP_QUEUE,
    };
    !row.baseline
        && row.method == Method::Auto.name()
        && row.queue_depth() == Some(depth as u64)
        && row.threads() == Some(1)
}

/// Suite-specific keys of a row.
pub(crate) fn keys(
    method_pattern: Pattern,
    state: State,
    (qd, threads): (usize, usize),
) -> BTreeMap<String, Value> {
    let mut extra = BTreeMap::new();
    extra.insert("pattern".into(), Value::from(method_pattern.name()));
    extra.insert("state".into(), Value::from(state.name()));
    extra.insert("block_bytes".into(), Value::from(DEFAULT_BLOCK));
    extra.insert("queue_depth".into(), Value::from(qd));
    extra.insert("threads".into(), Value::from(threads));
    extra
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_one_block_per_call_warm_and_the_batch_call_cold_and_beyond_memory() {
        let row = |state: State, method: Method, qd: usize| Row {
            method: method.name().into(),
            extra: keys(Pattern::Uniform, state, (qd, 1)),
            ..Row::default()
        };
        assert!(is_default(&row(State::Warm, Method::Auto, 1)));
        assert!(!is_default(&row(State::Warm, Method::Auto, DEEP_QUEUE)));
        for state in [State::Cold, State::BeyondMemory] {
            assert!(is_default(&row(state, Method::Auto, DEEP_QUEUE)));
            assert!(!is_default(&row(state, Method::Auto, 1)));
            assert!(!is_default(&row(state, Method::UringDirect, DEEP_QUEUE)));
        }
    }

    #[test]
    fn the_suite_alone_takes_every_round_and_among_others_at_most_max_rounds() {
        let mut config = crate::context::Config::for_tests();
        config.runs = 5;
        config.suites = vec![SUITE.to_string()];
        assert_eq!(rounds(&config), 5);
        config.suites = vec!["count".to_string(), SUITE.to_string()];
        assert_eq!(rounds(&config), MAX_ROUNDS);
        config.runs = 1;
        assert_eq!(rounds(&config), 1);
    }
}
