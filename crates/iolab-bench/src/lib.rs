//! The benchmark harness behind `iolab bench`.
//!
//! It makes the seed write-ups' measurement flaws impossible:
//! - cache state is prepared and **verified outside the timer** before every run
//!   ([`iolab::cache`]), and the residency measured goes into the results;
//! - every method and baseline runs as a child process, timed the same way
//!   ([`runner`]), in **interleaved rounds** after a warm-up round;
//! - every run's result is **checked** against the data set's known answer, and a mismatch
//!   fails the run loudly ([`results::Row::verified`]);
//! - statistics come with their spread and outliers ([`stats`]);
//! - tables, JSON, Markdown and CSV are rendered from the same rows ([`export`]), so
//!   text and table cannot disagree.

pub mod data;
pub mod export;
pub mod interrupt;
pub mod probes;
pub mod progress;
pub mod report;
pub mod results;
pub mod runner;
pub mod stats;
pub mod suites;
pub mod verdict;

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;

use serde_json::json;

use iolab::error::Result;
use results::{Results, SCHEMA_VERSION};
use runner::Executor;

/// Runs per row by default.
pub const DEFAULT_RUNS: usize = 5;
/// Warm-up rounds (not counted) by default.
pub const DEFAULT_WARMUP: usize = 1;
/// Residency at or below which the cache counts as cold.
pub const COLD_MAX_RESIDENCY: f64 = 0.05;
/// Residency at or above which the cache counts as warm.
pub const WARM_MIN_RESIDENCY: f64 = 0.95;

/// A page-cache state for the input of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CacheState {
    /// The input is in the page cache.
    Warm,
    /// The input was evicted; the device must deliver it.
    Cold,
}

impl CacheState {
    /// `"warm"` or `"cold"`.
    pub fn name(self) -> &'static str {
        match self {
            CacheState::Warm => "warm",
            CacheState::Cold => "cold",
        }
    }
}

/// The settings of a benchmark run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Suites to run, in order.
    pub suites: Vec<String>,
    /// Where the data sets live (created if needed).
    pub data_dir: PathBuf,
    /// Size of the main data set; `None` for each suite's default.
    pub size: Option<u64>,
    /// Counted runs per row.
    pub runs: usize,
    /// Warm-up rounds per cache state.
    pub warmup: usize,
    /// Cache states to measure, in order.
    pub caches: Vec<CacheState>,
    /// Also write `/proc/sys/vm/drop_caches` for cold runs (root only).
    pub drop_caches: bool,
    /// Only these methods (all when `None`).
    pub methods: Option<Vec<String>>,
    /// Run external baselines (`wc -l`, …).
    pub baselines: bool,
    /// The `iolab` executable that runs the methods as child processes.
    pub iolab_exe: PathBuf,
    /// Show progress bars (when stderr is a terminal).
    pub progress: bool,
    /// A smoke run: small data, few runs.
    pub quick: bool,
    /// The whole grid: every buffer size and probe point, every row with all its runs
    /// (by default rows that cannot win stop early and the write sweep stays near the
    /// defaults; see [`suites::CANNOT_WIN`]).
    pub sweep: bool,
    /// The user's own files to measure instead of generated data (suites that read a
    /// file: `count`, `edit`); opened read-only, never written.
    pub files: Vec<PathBuf>,
}

impl Config {
    /// A configuration for unit tests: no suites, one run, nothing selected.
    #[cfg(test)]
    pub(crate) fn for_tests() -> Config {
        Config {
            suites: Vec::new(),
            data_dir: PathBuf::new(),
            size: None,
            runs: 1,
            warmup: 0,
            caches: Vec::new(),
            drop_caches: false,
            methods: None,
            baselines: false,
            iolab_exe: PathBuf::new(),
            progress: false,
            quick: false,
            sweep: false,
            files: Vec::new(),
        }
    }

    /// Whether `method` was selected.
    pub fn wants(&self, method: &str) -> bool {
        self.methods
            .as_ref()
            .is_none_or(|list| list.iter().any(|m| m == method))
    }
}

/// The suites that exist, in the order a full run takes them: the one table.
pub use suites::SUITES;

/// State shared by the suites of one run.
pub struct Context<'a> {
    /// The settings.
    pub config: &'a Config,
    /// Runs the jobs.
    pub executor: &'a mut dyn Executor,
    /// Warnings for the report.
    pub warnings: Vec<String>,
    /// Notes for the report.
    pub notes: Vec<String>,
    /// The limit probes' results, when a suite ran them.
    pub ceilings: Option<probes::Ceilings>,
}

/// Runs the configured suites and returns the results (also when interrupted: then
/// `partial` is set). The machine facts are collected for `config.data_dir`.
pub fn run(config: &Config, executor: &mut dyn Executor, command: Vec<String>) -> Result<Results> {
    interrupt::install();
    let started_at = iolab::sysinfo::now_rfc3339();
    std::fs::create_dir_all(&config.data_dir)
        .map_err(|e| iolab::Error::io("cannot create the data folder", e))?;
    let sysinfo = iolab::sysinfo::collect(&config.data_dir);
    let mut ctx = Context {
        config,
        executor,
        warnings: Vec::new(),
        notes: Vec::new(),
        ceilings: None,
    };
    if sysinfo.storage.is_tmpfs {
        ctx.warnings.push(format!(
            "the data folder {} is on tmpfs: its files live in memory, so a cold cache is impossible",
            config.data_dir.display()
        ));
    }
    let mut rows = Vec::new();
    for suite in &config.suites {
        if interrupt::interrupted() {
            break;
        }
        let started = std::time::Instant::now();
        let measured = suites::run(suite, &mut ctx)?;
        if config.progress && !std::io::stderr().is_terminal() {
            // The suite's whole time: its sections, plus data sets, probes and copies.
            let line = progress::section_line(
                &format!("{suite} (all)"),
                measured.len(),
                started.elapsed().as_secs_f64(),
            );
            eprintln!("{line}");
        }
        rows.extend(measured);
    }
    let mut config_map = BTreeMap::new();
    config_map.insert("suites".into(), json!(config.suites));
    config_map.insert("data_dir".into(), json!(config.data_dir));
    config_map.insert("size".into(), json!(config.size));
    config_map.insert("runs".into(), json!(config.runs));
    config_map.insert("warmup".into(), json!(config.warmup));
    config_map.insert(
        "caches".into(),
        json!(config.caches.iter().map(|c| c.name()).collect::<Vec<_>>()),
    );
    config_map.insert("drop_caches".into(), json!(config.drop_caches));
    config_map.insert("quick".into(), json!(config.quick));
    let mut results = Results {
        schema_version: SCHEMA_VERSION,
        iolab_version: env!("CARGO_PKG_VERSION").to_string(),
        command,
        started_at,
        finished_at: iolab::sysinfo::now_rfc3339(),
        partial: interrupt::interrupted(),
        config: config_map,
        sysinfo,
        rows,
        warnings: ctx.warnings,
        notes: ctx.notes,
        ceilings: ctx.ceilings,
        verdict: Vec::new(),
    };
    results.verdict = results.decide();
    Ok(results)
}
