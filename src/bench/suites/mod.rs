//! The suites, the one table that registers them ([`SUITES`]), and the measurement loop
//! the file-reading suites share.
//!
//! A suite is a folder, `suites/<workload>/`: its plan (sections, cache states, sizes) in
//! `mod.rs`, then its data preparation, verification, rows and charts. It measures the
//! library's strategies (`crate::<workload>`) and never implements one. Everything else —
//! `iolab bench`'s suite list and `--help`, `iolab methods`, `--methods` names, the
//! tables, `iolab compare` and the HTML report — reads the suite's entry in [`SUITES`].

pub mod append;
pub mod count;
pub mod edit;
pub mod random;
pub mod write;

use std::path::{Path, PathBuf};

use super::progress::Progress;
use super::results::{Results, Row};
use super::runner::{Job, Outcome, schedule};
use super::verdict::Verdict;
use super::{COLD_MAX_RESIDENCY, CacheState, Config, Context, WARM_MIN_RESIDENCY, interrupt};
use crate::cache;
use crate::error::{Error, Result};
use crate::units::{format_bytes, three_significant};

/// One benchmark suite, as the harness, the CLI, the exporters and the report know it.
pub struct Suite {
    /// The name: `iolab bench NAME`, `iolab methods NAME`, the rows' `suite`.
    pub name: &'static str,
    /// What it measures, in a few words (`iolab methods --help`).
    pub description: &'static str,
    /// The bytes it works on by default.
    pub sizes: Sizes,
    /// Whether it can work on the user's own files (`iolab bench SUITE --file PATH`).
    pub takes_files: bool,
    /// The library's methods it measures and whether each can run here, in order.
    pub methods: fn() -> Vec<MethodInfo>,
    /// The external programs it may run as baselines (names for `--methods`).
    pub baselines: &'static [&'static str],
    /// Row keys that split its rows into tables (beside the cache state), in order.
    pub section_keys: &'static [&'static str],
    /// Row keys that tell its rows apart beyond suite, method, cache state and baseline
    /// (`iolab compare`), in order.
    pub identity_keys: &'static [&'static str],
    /// Its own columns in the tables, shown where a section's rows have the key.
    pub columns: &'static [Column],
    /// Its charts in the HTML report; the first is the one shown with the verdict.
    pub charts: fn(&Results, &[&Row]) -> Vec<String>,
    /// Whether a row is what a user gets without choosing (`auto`, the `StdoutWriter`
    /// default, …): the compact terminal tables always show these.
    pub is_default: fn(&Row) -> bool,
    /// Its verdict rows: per condition, the winner and how to use it (see
    /// [`crate::bench::verdict::decide`], which makes the decision for every suite).
    pub verdict: fn(&Results, &[&Row]) -> Vec<Verdict>,
    /// Runs it.
    pub run: fn(&mut Context<'_>) -> Result<Vec<Row>>,
}

/// Every suite, in the order a full run takes them. **Adding a suite** adds its folder and
/// one entry here; see `docs/architecture.md`.
pub const SUITES: &[Suite] = &[
    Suite {
        name: "count",
        description: "Line counting (`iolab count`)",
        sizes: count::SIZES,
        takes_files: true,
        methods: || {
            crate::read::Method::ALL
                .into_iter()
                .map(|m| MethodInfo::new(m.name(), m.availability()))
                .collect()
        },
        baselines: &["wc -l", "fwc -l"],
        section_keys: &["input", "file"],
        identity_keys: &[
            "input",
            "file",
            "variant",
            "threads",
            "queue_depth",
            "block_bytes",
        ],
        columns: &[Column {
            key: "ceiling_pct",
            header: "of limit",
            place: Place::AfterThroughput,
            format: Format::Percent,
        }],
        charts: count::chart::charts,
        verdict: count::verdict::verdicts,
        is_default: |r| r.method == crate::read::Method::Auto.name(),
        run: count::run,
    },
    Suite {
        name: "write",
        description: "Writing to stdout (`iolab write`)",
        sizes: write::SIZES,
        takes_files: false,
        methods: || {
            crate::write::Method::ALL
                .into_iter()
                .map(|m| MethodInfo {
                    requirement: m.requirement(),
                    ..MethodInfo::new(m.name(), m.availability())
                })
                .collect()
        },
        baselines: &["yes", "fyes", "pv", "dd"],
        section_keys: &["sink", "role"],
        identity_keys: &[
            "sink",
            "default",
            "buffer_bytes",
            "pipe_capacity_bytes",
            "cpus",
            "record_bytes",
        ],
        columns: &[Column {
            key: "buffer_bytes",
            header: "buffer",
            place: Place::AfterMethod,
            format: Format::Bytes,
        }],
        charts: write::chart::charts,
        verdict: write::verdict::verdicts,
        is_default: write::is_default,
        run: write::run,
    },
    Suite {
        name: "edit",
        description: "In-place edits (`iolab edit`)",
        sizes: edit::SIZES,
        takes_files: true,
        methods: || {
            crate::edit::Strategy::ALL
                .into_iter()
                .map(|s| MethodInfo::new(s.name(), s.availability()))
                .collect()
        },
        baselines: &["tr", "sed", "head"],
        section_keys: &["op", "dataset"],
        identity_keys: &["variant", "op", "dataset", "durable"],
        columns: &[],
        charts: edit::chart::charts,
        verdict: edit::verdict::verdicts,
        is_default: edit::is_default,
        run: edit::run,
    },
    Suite {
        name: "append",
        description: "Small appends and durable appends (`iolab::file::AppendFile`, `iolab::durable::Log`)",
        sizes: append::SIZES,
        takes_files: false,
        methods: || {
            let strategies = crate::append::Strategy::ALL
                .into_iter()
                .map(|s| MethodInfo::new(s.name(), s.availability()));
            let policies = crate::durable::Policy::ALL
                .into_iter()
                .map(|p| MethodInfo::new(p.name(), p.availability()));
            strategies.chain(policies).collect()
        },
        baselines: &["fstream", "pg_test_fsync"],
        section_keys: &["payload_bytes", "sync_policy", "section", "record_bytes"],
        identity_keys: &[
            "payload_bytes",
            "sync_policy",
            "section",
            "policy",
            "record_bytes",
            "writers",
            "group_commit",
        ],
        columns: &[
            Column {
                key: "ns_per_record",
                header: "ns/record",
                place: Place::AfterThroughput,
                format: Format::Significant,
            },
            Column {
                key: "syscalls_per_record",
                header: "syscalls/record",
                place: Place::AfterThroughput,
                format: Format::Significant,
            },
            Column {
                key: "writers",
                header: "writers",
                place: Place::AfterMethod,
                format: Format::Significant,
            },
            Column {
                key: "records_per_s",
                header: "records/s",
                place: Place::AfterThroughput,
                format: Format::Significant,
            },
            Column {
                key: "p50_us",
                header: "p50 µs",
                place: Place::AfterThroughput,
                format: Format::Significant,
            },
            Column {
                key: "p99_us",
                header: "p99 µs",
                place: Place::AfterThroughput,
                format: Format::Significant,
            },
        ],
        charts: append::chart::charts,
        verdict: append::verdict::verdicts,
        is_default: |r| r.method == crate::append::Strategy::AppendFile.name(),
        run: append::run,
    },
    Suite {
        name: "random",
        description: "Random block reads (`iolab random`, `iolab::file::RandomAccessFile`)",
        sizes: random::SIZES,
        methods: || {
            crate::random::Method::ALL
                .into_iter()
                .map(|m| MethodInfo::new(m.name(), m.availability()))
                .collect()
        },
        baselines: &["fio"],
        section_keys: &["pattern"],
        identity_keys: &["pattern", "state", "block_bytes", "queue_depth", "threads"],
        columns: &[
            Column {
                key: "iops",
                header: "IOPS",
                place: Place::AfterMethod,
                format: Format::Significant,
            },
            Column {
                key: "p50_us",
                header: "p50 µs",
                place: Place::AfterThroughput,
                format: Format::Significant,
            },
            Column {
                key: "p99_us",
                header: "p99 µs",
                place: Place::AfterThroughput,
                format: Format::Significant,
            },
            Column {
                key: "p999_us",
                header: "p99.9 µs",
                place: Place::AfterThroughput,
                format: Format::Significant,
            },
            Column {
                key: "cpu_us_per_read",
                header: "CPU µs/read",
                place: Place::AfterThroughput,
                format: Format::Significant,
            },
        ],
        charts: random::chart::charts,
        run: random::run,
        takes_files: false,
        is_default: |_| false,
        verdict: random::verdict::verdicts,
    },
];

/// The suite called `name`, if there is one.
pub fn find(name: &str) -> Option<&'static Suite> {
    SUITES.iter().find(|s| s.name == name)
}

/// Runs the suite called `name`.
pub fn run(name: &str, ctx: &mut Context<'_>) -> Result<Vec<Row>> {
    match find(name) {
        Some(suite) => (suite.run)(ctx),
        None => Err(Error::UnknownMethod {
            name: name.to_string(),
            expected: names().join(", "),
        }),
    }
}

/// Every suite's name, in order.
pub fn names() -> Vec<&'static str> {
    SUITES.iter().map(|s| s.name).collect()
}

/// A method of a suite's workload, for `iolab methods` and `--methods`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodInfo {
    /// Its kebab-case name.
    pub name: &'static str,
    /// `Ok` when it can run on this machine, else why not.
    pub availability: std::result::Result<(), String>,
    /// A condition only the run can check (`vmsplice` needs a pipe on stdout).
    pub requirement: Option<&'static str>,
}

impl MethodInfo {
    fn new(name: &'static str, availability: std::result::Result<(), String>) -> MethodInfo {
        MethodInfo {
            name,
            availability,
            requirement: None,
        }
    }
}

/// The bytes a suite works on: per data set, or per run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// By default.
    pub full: u64,
    /// With `--quick`.
    pub quick: u64,
    /// Whether `--size` replaces them.
    pub follows_size_option: bool,
}

impl Sizes {
    /// The size for this run's settings.
    pub fn pick(&self, config: &Config) -> u64 {
        match config.size {
            Some(size) if self.follows_size_option => size,
            _ if config.quick => self.quick,
            _ => self.full,
        }
    }
}

/// A suite's own column in the tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    /// The row key it shows.
    pub key: &'static str,
    /// Its heading.
    pub header: &'static str,
    /// Where it goes.
    pub place: Place,
    /// How the value is written.
    pub format: Format,
}

/// Where a suite's column goes in a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Right after the method's name.
    AfterMethod,
    /// After the median and throughput.
    AfterThroughput,
}

/// How a suite's column writes its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A byte count: `64.0 KiB`.
    Bytes,
    /// A percentage without decimals: `96%`.
    Percent,
    /// Three significant digits: `0.000620`.
    Significant,
}

impl Column {
    /// The cell for `value`, if it has the expected type.
    pub fn cell(&self, value: &serde_json::Value) -> Option<String> {
        match self.format {
            Format::Bytes => value.as_u64().map(format_bytes),
            Format::Percent => value.as_f64().map(|p| format!("{p:.0}%")),
            Format::Significant => value.as_f64().map(three_significant),
        }
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
    /// What tells this input's section apart in the progress line (a `--file`'s path),
    /// or empty.
    pub section: &'a str,
    /// The input every job reads.
    pub inputs: &'a [PathBuf],
    /// Its size.
    pub bytes: u64,
    /// The result every run must print; `None` when unknown (a user's file): then the
    /// rows must agree with each other.
    pub expected: Option<String>,
    /// The input is the user's (`--file`): read only, never synced.
    pub users: bool,
    /// Reads a run's result from its output.
    pub parse: fn(&Outcome) -> Option<String>,
    /// The row a user gets without choosing (`auto`): like the baselines it keeps every
    /// run, never stopped by [`CANNOT_WIN`], so its median is never one unlucky sample.
    pub default_method: Option<&'a str>,
}

/// A method whose fastest run so far is more than this many times the fastest method's
/// cannot win: after one counted run it stops (unless `--sweep`), with a note. Rows within
/// 2× keep every run, so the verdict's noise test still sees all the contenders' spread;
/// baselines always keep every run (they are the references).
pub const CANNOT_WIN: f64 = 2.0;

/// The note of a row stopped by [`CANNOT_WIN`].
pub fn cannot_win_note(runs: usize) -> String {
    format!(
        "{runs} counted run{}: more than {CANNOT_WIN}× the fastest method's time, it cannot win \
         (--sweep gives it every run)",
        if runs == 1 { "" } else { "s" }
    )
}

/// Per-job accumulation over the rounds of one cache state.
#[derive(Default)]
struct Accumulator {
    /// Its fastest run so far, warm-up included.
    fastest: Option<f64>,
    /// Stopped early: it cannot win.
    stopped: bool,
    wall: Vec<f64>,
    user: Vec<f64>,
    sys: Vec<f64>,
    residency: Vec<f64>,
    results: Vec<String>,
    unavailable: Option<String>,
    error: Option<String>,
}

/// Measures `jobs` over `bench.inputs` in `cache` state: warm-up rounds, then counted
/// rounds, interleaved; the cache is prepared and its residency measured before every run,
/// outside the timer.
pub fn measure(
    ctx: &mut Context<'_>,
    bench: &FileBench<'_>,
    jobs: &[Measured],
    cache_state: CacheState,
) -> Result<Vec<Row>> {
    let config = ctx.config;
    let warmup = warmup_for(ctx, cache_state);
    let rounds = warmup + config.runs;
    let order = schedule(jobs.len(), rounds);
    let mut acc: Vec<Accumulator> = jobs.iter().map(|_| Accumulator::default()).collect();
    let mut fastest_method = f64::INFINITY;
    let mut title = format!("{} {}", bench.suite, cache_state.name());
    if !bench.section.is_empty() {
        title = format!("{title} {}", bench.section);
    }
    let progress = Progress::section(&title, order.len() as u64, jobs.len(), config.progress);
    let mut missed_state = 0usize;
    for (round, j) in order {
        if interrupt::interrupted() {
            break;
        }
        progress.inc();
        let a = &mut acc[j];
        if a.unavailable.is_some() || a.error.is_some() || a.stopped {
            continue;
        }
        let job = &jobs[j].job;
        if !config.sweep
            && !job.baseline
            && bench.default_method != Some(job.name.as_str())
            && !a.wall.is_empty()
            && a.fastest.is_some_and(|f| f > CANNOT_WIN * fastest_method)
        {
            a.stopped = true;
            continue;
        }
        progress.set_message(format!("round {}/{rounds}: {}", round + 1, job.name));
        // Every input in the state; the residency is the worst of them.
        let mut residency = None::<f64>;
        for input in bench.inputs {
            let r = prepare(input, cache_state, config.drop_caches, !bench.users)?;
            residency = Some(match (residency, cache_state) {
                (None, _) => r,
                (Some(w), CacheState::Warm) => w.min(r),
                (Some(w), CacheState::Cold) => w.max(r),
            });
        }
        let residency = residency.unwrap_or(0.0);
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
            match outcome.unavailable_reason() {
                Some(reason) => a.unavailable = Some(reason),
                None => a.error = Some(outcome.failure_reason()),
            }
            continue;
        }
        let result = (bench.parse)(&outcome).unwrap_or_else(|| "unreadable output".into());
        a.fastest = Some(a.fastest.map_or(outcome.wall_s, |f| f.min(outcome.wall_s)));
        let right = bench.expected.as_ref().is_none_or(|e| *e == result);
        if !job.baseline && right {
            fastest_method = fastest_method.min(outcome.wall_s);
        }
        if round < warmup {
            // Warm-up runs still must be right.
            if !right {
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
    let mut rows: Vec<Row> = jobs
        .iter()
        .zip(acc)
        .map(|(m, a)| to_row(bench, m, a, cache_state))
        .collect();
    if bench.expected.is_none() {
        check_agreement(&mut rows);
    }
    Ok(rows)
}

/// Without a known answer, the methods verify each other: the result most rows printed
/// (every run of a row printed the same, or it already failed) is taken as right, and a
/// row that printed another is wrong.
fn check_agreement(rows: &mut [Row]) {
    let mut votes: Vec<(String, usize)> = Vec::new();
    for r in rows.iter().filter(|r| r.verified) {
        let result = r.result.clone().unwrap_or_default();
        match votes.iter_mut().find(|(v, _)| *v == result) {
            Some((_, n)) => *n += 1,
            None => votes.push((result, 1)),
        }
    }
    let Some((agreed, _)) = votes.into_iter().max_by_key(|(_, n)| *n) else {
        return;
    };
    for r in rows.iter_mut().filter(|r| r.verified) {
        if r.result.as_deref() != Some(agreed.as_str()) {
            r.verified = false;
            r.error = Some(format!(
                "disagrees with the other methods: printed {}, most printed {agreed}",
                r.result.as_deref().unwrap_or("nothing")
            ));
        }
    }
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
    if a.stopped {
        row.notes.push(cannot_win_note(a.wall.len()));
    }
    // Against the known answer, or, without one, against the row's own first result (the
    // rows are then checked against each other, see check_agreement).
    let expected = bench.expected.as_ref().or(a.results.first());
    let wrong: Vec<&String> = a.results.iter().filter(|r| Some(*r) != expected).collect();
    row.verified = !a.wall.is_empty() && wrong.is_empty();
    row.result = a.results.last().cloned();
    if let (Some(bad), Some(expected)) = (wrong.first(), expected) {
        row.error
            .get_or_insert(format!("wrong result: printed {bad}, expected {expected}"));
    }
    row.set_residency(cache_state, a.residency);
    row
}

/// The warm-up rounds for `cache_state`: none for a cold state measured after the warm
/// one (the programs are in memory already; a cold warm-up run would only read the file
/// once more from the device), else the configured ones.
pub(crate) fn warmup_for(ctx: &Context<'_>, cache_state: CacheState) -> usize {
    let config = ctx.config;
    let warm_first = config.caches.first() == Some(&CacheState::Warm);
    if cache_state == CacheState::Cold && warm_first && !config.sweep {
        0
    } else {
        config.warmup
    }
}

/// Puts `input` in `cache_state` and returns the residency measured afterwards. A file
/// that is not ours (`ours` false: a user's `--file`) is evicted without `fdatasync`.
pub(crate) fn prepare(
    input: &Path,
    cache_state: CacheState,
    drop_caches: bool,
    ours: bool,
) -> Result<f64> {
    match cache_state {
        CacheState::Cold => {
            let first = cache::evict_with(input, drop_caches, ours)?;
            if first.residency <= COLD_MAX_RESIDENCY {
                return Ok(first.residency);
            }
            // Read-ahead of a concurrent reader or a slow writeback: one more try.
            Ok(cache::evict_with(input, drop_caches, ours)?.residency)
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
