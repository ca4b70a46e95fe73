//! The `edit` suite: in-place edits of a generated CSV by every strategy of
//! [`iolab_lab::edit`] and by the shell's tools, every timed run on a fresh copy.
//!
//! How it measures (data sets, rows, baselines, budget): docs/suites.md#edit.

pub mod chart;
mod jobs;
mod measure;
mod rows;
pub(crate) mod verdict;
mod verify;
mod workdir;

use std::ffi::OsString;
use std::fs::{self, File};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use jobs::jobs_for;
use measure::measure;
use rows::{base_row, to_row, verdicts};
use verify::{digest_file, expected_for, expected_results};
use workdir::WorkDir;

use crate::cache_state::CacheState;
use crate::context::Context;
use crate::data::{self, Dataset};
use crate::error::{Error, Result};
use crate::interrupt;
use crate::results::Row;
use crate::runner::Job;
use crate::suite::Sizes;
use crate::suite::{MethodInfo, Output, Suite};
use crate::verdict::DEFAULT_METHOD;
use iolab_lab::edit::EditKind;
use iolab_lab::generate::rows_for_size;
use iolab_lab::profile::Strategies;
use iolab_lab::units::format_bytes;

/// The large data set's size by default: 256 MiB, past the caches and big enough that a
/// warm edit takes tens of milliseconds even at memory speed, small enough that the suite
/// stays near 25 s (`--size` sets it, e.g. to the edit write-up's 18 GB).
pub const DEFAULT_LARGE_SIZE: u64 = 256 << 20;
/// The large data set's size for `--quick`.
pub const QUICK_LARGE_SIZE: u64 = 4 << 20;
/// The large data set's sizes, for the suite table; `--size` replaces them.
pub const SIZES: Sizes = Sizes {
    full: DEFAULT_LARGE_SIZE,
    quick: QUICK_LARGE_SIZE,
    follows_size_option: true,
};
/// The small data set: the edit write-up's 1000 rows × 10 columns.
pub const SMALL_ROWS: u64 = 1000;
/// See [`SMALL_ROWS`].
pub const SMALL_COLS: u32 = 10;
/// Columns of the large data set: the edit write-up's 100.
pub const LARGE_COLS: u32 = 100;
/// On the large data set (outside `--quick`), one counted run per this many configured
/// runs, at least one: one by default (`--runs 5`), three with `--runs 15`.
pub const LARGE_RUNS_DIVISOR: usize = 5;
/// Counted runs of `sed -i` on the large data set (outside `--quick`).
pub const SED_LARGE_MAX_RUNS: usize = 1;

const SUITE: &str = "edit";

/// This suite's entry in the suite table (`crate::suites::SUITES`).
pub const ENTRY: Suite = Suite {
    name: SUITE,
    description: "In-place edits (`iolab edit`)",
    sizes: SIZES,
    takes_files: true,
    methods: || {
        iolab_lab::edit::EditStrategy::ALL
            .into_iter()
            .map(|s| MethodInfo::new(s.name(), s.availability()))
            .collect()
    },
    baselines: &["tr", "sed", "head"],
    section_keys: &["op", "dataset"],
    identity_keys: &["variant", "op", "dataset", "durable"],
    columns: &[],
    charts: chart::charts,
    verdict: verdict::verdicts,
    is_default,
    default_rows: Some(DEFAULT_METHOD),
    run,
};

/// Room left free besides the working copies, so the suite never fills the disk.
const FREE_SPACE_MARGIN: u64 = 256 << 20;

/// Bytes per read when copying, hashing or computing the reference.
const IO_CHUNK: usize = 1 << 20;

/// `FICLONE` from `<linux/fs.h>`: `_IOW(0x94, 9, int)`; not in the libc crate.
const FICLONE: u64 = 0x4004_9409;

/// An operation of the suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Truncate,
    Count,
    Replace,
}

impl Op {
    const ALL: [Op; 3] = [Op::Truncate, Op::Count, Op::Replace];

    fn name(self) -> &'static str {
        match self {
            Op::Truncate => "truncate-first-line",
            Op::Count => "count",
            Op::Replace => "replace",
        }
    }
}

/// One argument of a job: literal, or the run's input or output path.
#[derive(Clone, Debug)]
enum Arg {
    Text(OsString),
    Input,
    Output,
}

/// Where a job's result is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Check {
    /// The input file, edited in place.
    InPlace,
    /// The output file (`tr`).
    Output,
    /// The line count printed on stdout.
    Count,
}

/// A job of the suite and the keys of its row.
struct EditJob {
    method: String,
    baseline: bool,
    durable: bool,
    variant: Option<&'static str>,
    version: Option<String>,
    /// The baseline's command as a shell spells it.
    command: Option<String>,
    /// For `count` rows: the `iolab count` method.
    count_method: Option<String>,
    program: PathBuf,
    args: Vec<Arg>,
    check: Check,
    /// Prints `--timings-json`.
    reports_phases: bool,
    /// Runs on a cold cache too (else warm only).
    cold: bool,
    /// Counted runs at most (`usize::MAX`: as many as configured).
    max_runs: usize,
}

impl EditJob {
    fn job(&self, input: &Path, output: &Path) -> Job {
        let args: Vec<OsString> = self
            .args
            .iter()
            .map(|a| match a {
                Arg::Text(t) => t.clone(),
                Arg::Input => input.as_os_str().to_owned(),
                Arg::Output => output.as_os_str().to_owned(),
            })
            .collect();
        Job::new(self.method.clone(), &self.program, args, self.baseline)
    }
}

/// A data set and how it is measured.
struct Plan<'a> {
    /// `small`, `large`, or a `--file`'s name.
    name: String,
    /// The data set is the user's file (`--file`): only ever read (copies are edited).
    users: bool,
    dataset: &'a Dataset,
    runs: usize,
    warmup: usize,
    large: bool,
    expected: Expected,
}

/// The reference results of a data set.
struct Expected {
    truncate: String,
    replace: String,
    lines: String,
}

/// Runs the suite: on the generated data sets, or on copies of each `--file` (the
/// original is only read: to copy it, to compute the reference results, and by `count`).
pub fn run(ctx: &mut Context<'_>) -> Result<Output> {
    let config = ctx.config;
    // (name, data set, large, the user's)
    let mut datasets: Vec<(String, Dataset, bool, bool)> = Vec::new();
    if config.files.is_empty() {
        let small = data::csv(&config.data_dir, SMALL_ROWS, SMALL_COLS, config.progress)?;
        let large_size = SIZES.pick(config);
        let large = data::csv(
            &config.data_dir,
            rows_for_size(LARGE_COLS, large_size).max(1),
            LARGE_COLS,
            config.progress,
        )?;
        datasets.push(("small".into(), small, false, false));
        datasets.push(("large".into(), large, true, false));
    } else {
        for path in &config.files {
            let bytes = fs::metadata(path)
                .map_err(|e| Error::io("cannot read the metadata of --file", e))?
                .len();
            let name = path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            // The line count is computed with the reference results (expected_results).
            let dataset = Dataset {
                path: path.clone(),
                bytes,
                lines: 0,
            };
            datasets.push((name, dataset, true, true));
        }
    }
    let work = WorkDir::create(&config.data_dir)?;
    let mut rows = Vec::new();
    for (name, dataset, is_large, users) in &datasets {
        let (dataset, is_large) = (dataset, *is_large);
        if interrupt::interrupted() {
            break;
        }
        let capped = is_large && !config.quick;
        let plan = Plan {
            name: name.clone(),
            users: *users,
            dataset,
            runs: if capped {
                config.runs.div_ceil(LARGE_RUNS_DIVISOR)
            } else {
                config.runs
            },
            warmup: if capped { 0 } else { config.warmup },
            large: capped,
            expected: expected_results(dataset)?,
        };
        let space = free_space_problem(&config.data_dir, dataset.bytes);
        for op in Op::ALL {
            let jobs = jobs_for(ctx, &plan, op);
            for &cache in &config.caches {
                let reason = space
                    .clone()
                    .filter(|_| op != Op::Count)
                    // The data set, its copy and `tr`'s output are cached at once.
                    .or_else(|| {
                        crate::cache_state::impossible(cache, &dataset.path, dataset.bytes, 3)
                    });
                let selected: Vec<&EditJob> = jobs
                    .iter()
                    .filter(|j| cache == CacheState::Warm || j.cold || !warm_wanted(ctx))
                    .collect();
                if let Some(reason) = reason {
                    rows.extend(selected.iter().map(|j| {
                        let mut row = base_row(&plan, op, j, cache);
                        row.unavailable = Some(reason.clone());
                        row
                    }));
                    continue;
                }
                if interrupt::interrupted() {
                    break;
                }
                rows.extend(measure(ctx, &plan, op, &selected, cache, &work)?);
            }
        }
    }
    drop(work);
    verdicts(ctx, &rows);
    // The winners `EditOptions` follows (among the strategies: `auto` is one of them), then
    // the rows it makes without a strategy marked.
    let strategies: Vec<&Row> = rows.iter().filter(|r| r.method != DEFAULT_METHOD).collect();
    for v in verdict::of_rows(&strategies) {
        if v.condition == EditKind::Replace.condition()
            || v.condition == EditKind::Truncate.condition()
        {
            crate::profile::remember(ctx, Strategies::Edit, &v, &config.data_dir);
        }
    }
    for row in &mut rows {
        if !row.baseline && row.method == DEFAULT_METHOD {
            row.mark_default();
        }
    }
    Ok(rows.into())
}

/// Whether `row` is what a library call with no strategy makes: the `auto` rows (`iolab
/// edit` without `--strategy`), marked by `run`.
pub(crate) fn is_default(row: &Row) -> bool {
    row.is_default()
}

/// Whether the warm state is measured at all (jobs limited to warm runs fall back to the
/// first configured state when it is not).
fn warm_wanted(ctx: &Context<'_>) -> bool {
    ctx.config.caches.contains(&CacheState::Warm)
}

/// Whether `std-whole` may read a file of `bytes` now (the limit it applies itself).
fn whole_fits(bytes: u64) -> bool {
    iolab_lab::sysinfo::mem_available_bytes().is_none_or(|a| bytes <= a / 5 * 4)
}

/// Why the working copies cannot be made in `dir`, if they cannot: a copy and `tr`'s
/// output (or `sed`'s temporary file) exist at once.
fn free_space_problem(dir: &Path, bytes: u64) -> Option<String> {
    let need = bytes.saturating_mul(2).saturating_add(FREE_SPACE_MARGIN);
    let have = available_space(dir)?;
    (have < need).then(|| {
        format!(
            "not enough free space in the data folder for the working copies: need {}, have {}",
            format_bytes(need),
            format_bytes(have)
        )
    })
}

/// The bytes an unprivileged user may still write on the file system of `dir`.
fn available_space(dir: &Path) -> Option<u64> {
    let file = File::open(dir).ok()?;
    // SAFETY: `statvfs` is a plain C struct of integers, for which all zeros is valid.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is open for the duration of the call (`file` is borrowed), and
    // `stat` is a valid, writable `statvfs`.
    let rc = unsafe { libc::fstatvfs(file.as_raw_fd(), &mut stat) };
    // The fields are `c_ulong`/`fsblkcnt_t`: already u64 on 64-bit Linux, u32 on some 32-bit.
    #[allow(clippy::unnecessary_cast)]
    (rc == 0).then(|| (stat.f_bavail as u64).saturating_mul(stat.f_frsize as u64))
}
