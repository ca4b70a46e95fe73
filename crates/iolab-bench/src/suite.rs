//! What the harness, the CLI, the exporters and the report know of a suite: the types of
//! the suite table ([`Suite`], its [`Column`]s, where they go, its [`Sizes`]). The table
//! itself is `crate::suites::SUITES`; these types sit below both the suites and the code
//! that reads the table, so neither imports the other.

use crate::context::{Config, Context};
use crate::error::Result;
use crate::results::{Results, Row};
use crate::verdict::Verdict;
use iolab_lab::units::{format_bytes, three_significant};

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
    /// Whether a row is what a library call with no options makes (`auto`,
    /// `StdoutWriter::new()`, …): marked `default` in the results when the suite has run,
    /// judged in the verdict, always shown by the compact terminal tables. Read at run time
    /// (`random`'s follows the winners the run just saved).
    pub is_default: fn(&Row) -> bool,
    /// The name of the rows that measure the library's default as a row of its own, when
    /// that is not one of [`Suite::methods`] (`edit`'s `auto`: `iolab edit` without
    /// `--strategy`); `--methods` takes it too.
    pub default_rows: Option<&'static str>,
    /// Its verdict rows: per condition, the winner and how to use it (see
    /// [`crate::verdict::decide`], which makes the decision for every suite).
    pub verdict: fn(&Results, &[&Row]) -> Vec<Verdict>,
    /// Runs it.
    pub run: fn(&mut Context<'_>) -> Result<Output>,
}

/// What a suite's run hands the results file: its rows and, from the `count` suite, the
/// limit probes' ceilings (kept at the top of `results.json`).
#[derive(Debug, Default)]
pub struct Output {
    /// Its rows.
    pub rows: Vec<Row>,
    /// The ceilings its probes measured, when it ran them.
    pub ceilings: Option<crate::probes::Ceilings>,
}

impl From<Vec<Row>> for Output {
    fn from(rows: Vec<Row>) -> Output {
        Output {
            rows,
            ceilings: None,
        }
    }
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
    /// A method with no condition beyond `availability`.
    pub fn new(name: &'static str, availability: std::result::Result<(), String>) -> MethodInfo {
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

/// The suite called `name` in `table`, if there is one.
pub fn find_in<'a>(table: &'a [Suite], name: &str) -> Option<&'a Suite> {
    table.iter().find(|s| s.name == name)
}
