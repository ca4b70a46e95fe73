//! The results of a benchmark run: rows, and the document written as `results.json`.
//!
//! The format is documented in `docs/results-format.md`; [`SCHEMA_VERSION`] changes when a
//! key changes meaning or disappears (new keys may appear without a bump).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::stats::Summary;
use iolab_lab::sysinfo::SysInfo;

/// The version of the `results.json` layout.
pub const SCHEMA_VERSION: u32 = 1;

/// One row: a (suite, method, cache state, …) combination and its measured runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The suite: `count`, later `write`, `edit`, `append`.
    pub suite: String,
    /// The method or baseline name (`mmap-avx512`, `wc -l`, …).
    pub method: String,
    /// `"cold"` or `"warm"`, when the suite has cache states.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<String>,
    /// Whether this is an external program rather than an iolab method.
    #[serde(default)]
    pub baseline: bool,
    /// The baseline's version line, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Bytes processed per run.
    pub bytes: u64,
    /// Wall-clock seconds of each counted run, in the order they ran.
    #[serde(default)]
    pub runs: Vec<f64>,
    /// Median of `runs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub median_s: Option<f64>,
    /// `bytes / median_s`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throughput_bytes_per_s: Option<f64>,
    /// Median user CPU seconds per run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_s: Option<f64>,
    /// Median system CPU seconds per run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sys_s: Option<f64>,
    /// Full statistics of `runs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<Summary>,
    /// What the runs computed (a line count, a hash), identical across runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// Whether every run's result equals the expected result.
    pub verified: bool,
    /// Page-cache residency of the input before the run: the worst over the runs (the
    /// highest for cold rows, the lowest for warm rows), 0.0 to 1.0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub residency_before: Option<f64>,
    /// Residency before each counted run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub residency_runs: Vec<f64>,
    /// Why the method could not run here; such rows have no timings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// A failure (wrong result, crash), shown loudly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Short remarks (outliers, cache state not reached).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Suite-specific keys (`sink`, `buffer_bytes`, `op`, `phases`, …).
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

impl Row {
    /// The table section of this row: the values of `keys` it has (a suite's
    /// `section_keys`), then its cache state.
    pub fn section(&self, keys: &[&str]) -> String {
        let mut parts = Vec::new();
        for &key in keys {
            if let Some(v) = self.extra.get(key) {
                parts.push(match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => format!("{key} {other}"),
                });
            }
        }
        if let Some(c) = &self.cache {
            parts.push(format!("{c} cache"));
        }
        parts.join(", ")
    }

    /// A row that could not run, with the reason.
    pub fn unavailable(suite: &str, method: &str, reason: impl Into<String>) -> Row {
        Row {
            suite: suite.into(),
            method: method.into(),
            unavailable: Some(reason.into()),
            ..Row::default()
        }
    }

    /// Fills the timing fields from per-run wall and CPU times.
    pub fn set_timings(&mut self, wall: &[f64], user: &[f64], sys: &[f64]) {
        self.runs = wall.to_vec();
        self.stats = Summary::of(wall);
        self.median_s = self.stats.as_ref().map(|s| s.median);
        self.throughput_bytes_per_s = self
            .median_s
            .filter(|&m| m > 0.0)
            .map(|m| self.bytes as f64 / m);
        self.user_s = Summary::of(user).map(|s| s.median);
        self.sys_s = Summary::of(sys).map(|s| s.median);
        if let Some(s) = &self.stats
            && s.outliers > 0
        {
            self.notes.push(format!(
                "{} outlier run{} (modified Z-score > 3.5)",
                s.outliers,
                if s.outliers == 1 { "" } else { "s" }
            ));
        }
    }

    /// Records the residency measured before each run, and the worst of them: the highest
    /// for a cold row, the lowest for a warm one.
    pub fn set_residency(&mut self, cache: crate::cache::CacheState, runs: Vec<f64>) {
        self.residency_before = match cache {
            crate::cache::CacheState::Cold => runs.iter().copied().reduce(f64::max),
            crate::cache::CacheState::Warm => runs.iter().copied().reduce(f64::min),
        };
        self.residency_runs = runs;
    }

    /// Whether the row has timings.
    pub fn measured(&self) -> bool {
        self.median_s.is_some()
    }

    fn extra_u64(&self, key: &str) -> Option<u64> {
        self.extra.get(key).and_then(serde_json::Value::as_u64)
    }

    fn extra_f64(&self, key: &str) -> Option<f64> {
        self.extra.get(key).and_then(serde_json::Value::as_f64)
    }

    fn extra_str(&self, key: &str) -> Option<&str> {
        self.extra.get(key).and_then(serde_json::Value::as_str)
    }

    /// `append`: bytes per record.
    pub fn payload_bytes(&self) -> Option<u64> {
        self.extra_u64(keys::PAYLOAD_BYTES)
    }

    /// `append`: when records were synced (`none`, `every-record`, `every-k`).
    pub fn sync_policy(&self) -> Option<&str> {
        self.extra_str(keys::SYNC_POLICY)
    }

    /// `append`: the median time per record, in nanoseconds.
    pub fn ns_per_record(&self) -> Option<f64> {
        self.extra_f64(keys::NS_PER_RECORD)
    }

    /// `write`: where the bytes went (`splice-reader`, `pv`, `file`, …).
    pub fn sink(&self) -> Option<&str> {
        self.extra_str(keys::SINK)
    }

    /// Whether this row is what a library call with no options does.
    pub fn is_default(&self) -> bool {
        self.extra.get(keys::DEFAULT) == Some(&serde_json::Value::Bool(true))
    }

    /// Marks this row as what a library call with no options does (`default: true`).
    pub fn mark_default(&mut self) {
        self.extra
            .insert(keys::DEFAULT.into(), serde_json::Value::Bool(true));
    }

    /// Why this row does a narrower job than its condition's default (`vmsplice` gives its
    /// pages away), if it does: the default is then judged against the best row of its own
    /// job.
    pub fn narrower(&self) -> Option<&str> {
        self.extra_str(keys::NARROWER)
    }

    /// `random`: `warm`, `cold` or `beyond-memory`.
    pub fn state(&self) -> Option<&str> {
        self.extra_str(keys::STATE)
    }

    /// Reads in flight per thread.
    pub fn queue_depth(&self) -> Option<u64> {
        self.extra_u64(keys::QUEUE_DEPTH)
    }

    /// Threads.
    pub fn threads(&self) -> Option<u64> {
        self.extra_u64(keys::THREADS)
    }

    /// `random`: how offsets were drawn (`uniform`, `zipf`).
    pub fn pattern(&self) -> Option<&str> {
        self.extra_str(keys::PATTERN)
    }

    /// `edit`: the operation (`replace`, `truncate`, `count`).
    pub fn op(&self) -> Option<&str> {
        self.extra_str(keys::OP)
    }
}

/// The keys of [`Row::extra`] read outside the suite that writes them (by the tracer,
/// the verdict), with a typed accessor each on [`Row`].
pub mod keys {
    /// [`super::Row::payload_bytes`].
    pub const PAYLOAD_BYTES: &str = "payload_bytes";
    /// [`super::Row::sync_policy`].
    pub const SYNC_POLICY: &str = "sync_policy";
    /// [`super::Row::ns_per_record`].
    pub const NS_PER_RECORD: &str = "ns_per_record";
    /// [`super::Row::sink`].
    pub const SINK: &str = "sink";
    /// [`super::Row::is_default`].
    pub const DEFAULT: &str = "default";
    /// [`super::Row::narrower`].
    pub const NARROWER: &str = "narrower";
    /// [`super::Row::state`].
    pub const STATE: &str = "state";
    /// [`super::Row::queue_depth`].
    pub const QUEUE_DEPTH: &str = "queue_depth";
    /// [`super::Row::threads`].
    pub const THREADS: &str = "threads";
    /// [`super::Row::pattern`].
    pub const PATTERN: &str = "pattern";
    /// [`super::Row::op`].
    pub const OP: &str = "op";
}

/// Everything one `iolab bench` run produced.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Results {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The iolab version that measured.
    pub iolab_version: String,
    /// The command line.
    pub command: Vec<String>,
    /// Start time, RFC 3339 UTC.
    pub started_at: String,
    /// End time, RFC 3339 UTC.
    pub finished_at: String,
    /// `true` when only some rows were measured: the run was interrupted, or a suite
    /// failed (see `errors`).
    pub partial: bool,
    /// The settings of the run.
    pub config: BTreeMap<String, serde_json::Value>,
    /// The machine.
    pub sysinfo: SysInfo,
    /// The rows, suite by suite.
    pub rows: Vec<Row>,
    /// Warnings about the measurement (tmpfs, compressed extents, cache state not reached).
    pub warnings: Vec<String>,
    /// Remarks (missing baselines, verdicts).
    pub notes: Vec<String>,
    /// The limit probes: memory-scan and device-read ceilings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceilings: Option<crate::probe::Ceilings>,
    /// The answer: per suite and condition, the winner and how to use it.
    #[serde(default)]
    pub verdict: Vec<Verdict>,
    /// The suites that failed as a whole (a data set that could not be made, a probe that
    /// broke), with the error; their rows are missing, the other suites' are kept.
    #[serde(default)]
    pub errors: Vec<SuiteError>,
}

/// A suite that failed as a whole.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteError {
    /// The suite's name.
    pub suite: String,
    /// What went wrong, one line.
    pub error: String,
}

impl Results {
    /// The rows of one suite.
    pub fn suite_rows<'a>(&'a self, suite: &'a str) -> impl Iterator<Item = &'a Row> + 'a {
        self.rows.iter().filter(move |r| r.suite == suite)
    }

    /// The suites present, in order of first appearance.
    pub fn suites(&self) -> Vec<String> {
        let mut seen: Vec<String> = Vec::new();
        for r in &self.rows {
            if !seen.contains(&r.suite) {
                seen.push(r.suite.clone());
            }
        }
        seen
    }

    /// Whether any row failed verification or errored.
    pub fn has_failures(&self) -> bool {
        self.rows
            .iter()
            .any(|r| r.error.is_some() || (r.measured() && !r.verified))
    }
}

/// The answer for one (suite, condition).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The suite: `count`, `write`, …
    pub suite: String,
    /// The condition within the suite: `warm`, `pipe`, `replace`, …
    pub condition: String,
    /// The winning method, or `None` on a tie.
    pub winner: Option<String>,
    /// On a tie: the methods within the noise of the fastest, fastest first.
    #[serde(default)]
    pub tied: Vec<String>,
    /// The fastest row's median, seconds.
    pub median_s: Option<f64>,
    /// The fastest row's figure as the tables write it (`26.8 GB/s`, `5.10 ns/record`).
    #[serde(default)]
    pub figure: String,
    /// The best baseline's median divided by the fastest row's (above 1: iolab is faster).
    pub ratio_to_best_baseline: Option<f64>,
    /// The baseline that ratio is taken against.
    #[serde(default)]
    pub best_baseline: Option<String>,
    /// The fastest row's share of the physical ceiling (0..1), where one is measured.
    pub of_limit: Option<f64>,
    /// The `iolab` command that does it.
    pub cli: String,
    /// The library call that does it.
    pub library: String,
    /// The example program that makes that call: `cargo run --release --example
    /// EXAMPLE -- FILE` (empty in results from before examples).
    #[serde(default)]
    pub example: String,
    /// The second fastest method (its fastest row), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_up: Option<String>,
    /// The runner-up's median over the fastest row's (at least 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead: Option<f64>,
    /// The method of the condition's default row: what a library call with no options
    /// does here (`None` where the condition has no measured default row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Whether the default is the winner or within the noise of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_tied: Option<bool>,
    /// The default's speed as a fraction of the winner's: 1.0 when it is the winner, 0.8
    /// when it takes 1.25× the winner's time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_vs_winner: Option<f64>,
    /// In results from before 28 Nov 2026: the method the default was judged against
    /// instead of a winner that did a narrower job. The default is judged against the
    /// winner itself now, and [`Verdict::winner_narrower`] says why it may trail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_judged_against: Option<String>,
    /// Why the winner's speed is out of the default's reach, when the default trails a
    /// winner that does a narrower job ([`Row::narrower`]: zeros written from one
    /// unchanging buffer, reads on more threads than the default's one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winner_narrower: Option<String>,
    /// The table section of the condition's rows (for the compact terminal output).
    #[serde(skip)]
    pub section: Option<String>,
}

impl Verdict {
    /// The winner cell: the method, or `tie: A ≈ B`.
    pub fn winner_cell(&self) -> String {
        match &self.winner {
            Some(w) => w.clone(),
            None => format!("tie: {}", self.tied.join(" ≈ ")),
        }
    }

    /// The ratio cell: `3.15× wc -l`.
    pub fn ratio_cell(&self) -> String {
        match (self.ratio_to_best_baseline, &self.best_baseline) {
            (Some(x), Some(b)) => format!("{x:.2}× {b}"),
            _ => "—".into(),
        }
    }

    /// The limit cell: `96%`.
    pub fn limit_cell(&self) -> String {
        self.of_limit
            .map_or("—".into(), |f| format!("{:.0}%", f * 100.0))
    }

    /// Why the default trails the winner, when the winner does a job it cannot:
    /// `random cold: auto is 0.32× the winner, which reads on 4 threads (…)`.
    pub fn default_note(&self) -> Option<String> {
        let (default, why) = (self.default.as_ref()?, self.winner_narrower.as_ref()?);
        if self.default_tied == Some(true) || self.winner.as_ref() == Some(default) {
            return None;
        }
        let ratio = self
            .default_vs_winner
            .map_or(String::new(), |x| format!(" is {x:.2}× the winner, and"));
        Some(format!(
            "{} {}: the default ({default}){ratio} cannot do the winner's job: {why}",
            self.suite, self.condition
        ))
    }

    /// The default cell: `= winner`, `tied (auto)`, `0.87× (prealloc)`, `—`.
    pub fn default_cell(&self) -> String {
        let Some(default) = &self.default else {
            return "—".into();
        };
        if self.winner.as_ref() == Some(default) {
            return "= winner".into();
        }
        let against = self
            .default_judged_against
            .as_ref()
            .filter(|m| *m != default)
            .map_or(String::new(), |m| format!(" vs {m}"));
        match (self.default_tied, self.default_vs_winner) {
            (Some(true), _) => format!("tied ({default}{against})"),
            (_, Some(x)) => format!("{x:.2}× ({default}{against})"),
            _ => format!("({default})"),
        }
    }
}
