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
mod file_bench;
pub mod random;
pub mod write;

pub(crate) use file_bench::prepare;
pub use file_bench::{CANNOT_WIN, CannotWin, FileBench, Measured, cannot_win_note, measure};

use super::results::{Results, Row};
use super::verdict::Verdict;
use super::{Config, Context};
use iolab::error::{Error, Result};
use iolab::units::{format_bytes, three_significant};

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
    /// [`crate::verdict::decide`], which makes the decision for every suite).
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
            iolab::read::Method::ALL
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
        is_default: |r| r.method == iolab::read::Method::Auto.name(),
        run: count::run,
    },
    Suite {
        name: "write",
        description: "Writing to stdout (`iolab write`)",
        sizes: write::SIZES,
        takes_files: false,
        methods: || {
            iolab::write::Method::ALL
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
            iolab::edit::Strategy::ALL
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
            let strategies = iolab::append::Strategy::ALL
                .into_iter()
                .map(|s| MethodInfo::new(s.name(), s.availability()));
            let policies = iolab::durable::Policy::ALL
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
            Column::significant("ns_per_record", "ns/record", Place::AfterThroughput),
            Column::significant(
                "syscalls_per_record",
                "syscalls/record",
                Place::AfterThroughput,
            ),
            Column::significant("writers", "writers", Place::AfterMethod),
            Column::significant("records_per_s", "records/s", Place::AfterThroughput),
            Column::significant("p50_us", "p50 µs", Place::AfterThroughput),
            Column::significant("p99_us", "p99 µs", Place::AfterThroughput),
        ],
        charts: append::chart::charts,
        verdict: append::verdict::verdicts,
        is_default: |r| r.method == iolab::append::Strategy::AppendFile.name(),
        run: append::run,
    },
    Suite {
        name: "random",
        description: "Random block reads (`iolab random`, `iolab::file::RandomAccessFile`)",
        sizes: random::SIZES,
        methods: || {
            iolab::random::Method::ALL
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

impl Column {
    /// A column of a number written to three significant digits.
    pub const fn significant(key: &'static str, header: &'static str, place: Place) -> Column {
        Column {
            key,
            header,
            place,
            format: Format::Significant,
        }
    }
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
