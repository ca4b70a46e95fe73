//! The settings of a run ([`Config`]), the state its suites share ([`Context`]) and the
//! cache states a run measures ([`CacheState`]).

use std::path::PathBuf;

use crate::cache_state::CacheState;
use crate::runner::Executor;

/// Runs per row by default.
pub const DEFAULT_RUNS: usize = 5;
/// Warm-up rounds (not counted) by default.
pub const DEFAULT_WARMUP: usize = 1;
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
    /// defaults; see [`crate::rounds::CANNOT_WIN`]).
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
}
