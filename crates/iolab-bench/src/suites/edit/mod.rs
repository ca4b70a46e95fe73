//! The `edit` suite: in-place edits of a generated CSV by every strategy of
//! [`iolab::lab::edit`] and by the shell's tools, every timed run on a fresh copy.
//!
//! **Data sets** (generated once, with manifests, by [`data::csv`]): `small`, 1000 rows ×
//! 10 columns (about 65 KB), and `large`, 100 columns and about [`DEFAULT_LARGE_SIZE`]
//! (1 GiB; `--size` sets it, `--quick` makes it [`QUICK_LARGE_SIZE`]), the write-up's two
//! shapes at a size this machine measures in seconds.
//!
//! **Operations and methods**: each row is one (operation, method, durability, data set,
//! cache state).
//!
//! | op | iolab rows | baselines (no sync) |
//! |---|---|---|
//! | `truncate-first-line` | `iolab edit truncate-first-line --strategy S [--no-sync] --timings-json COPY` | `head`: `sh -c 'n=$(head -n 1 "$1" \| wc -c) && exec truncate -s "$n" "$1"' sh COPY` |
//! | `replace` (`,` → `;`) | `iolab edit replace --from , --to ';' --strategy S [--no-sync] --timings-json COPY` | `tr`: `sh -c 'exec tr , ";" < "$1" > "$2"' sh COPY OUT` (a new file); `sed`: `sed -i 's/,/;/g' COPY` |
//! | `count` | `mmap`: `iolab count --method mmap-<best kernel> DATA`; `std-stream`: `iolab count --method bufread-chunks DATA` | `wc -l DATA` |
//!
//! Every strategy runs twice: `durable` (the default: `msync`/`fdatasync` before exit) and
//! `no-sync` (`--no-sync`); the row's `variant` says which. The baselines do not sync, so
//! the goal ratios compare them with the no-sync rows. `count` edits nothing, so it reads
//! the data set itself (a copy would only add time), and has no `std-whole` row: `iolab
//! count` has no read-everything method.
//!
//! **Copies**: before each run (outside the timer) the data set is copied into a working
//! folder of this process inside the data folder (`edit-work-PID`), with `FICLONE` (a
//! reflink: instant, and the edit then pays the copy-on-write) where the file system has
//! it, else `copy_file_range(2)` (a real copy on ext4), and `fdatasync`ed, so the edit
//! meets a file that is on the device, as edited files usually are: an unsynced copy
//! would make the durable runs also allocate and write the copy. The copy (and `tr`'s
//! output) is deleted after the run is checked; the folder is removed at the end, also on
//! Ctrl-C or an error. Nothing else in the data folder is written.
//!
//! **Cache states**: `cold` evicts the fresh copy (it was just synced, so eviction drops
//! every page); `warm` checks it is resident (a copy through the page cache is) and reads
//! it otherwise. The residency is measured before each run, as in the `count` suite.
//!
//! **Verification** (outside the timer): after each run the edited file (`tr`: its output)
//! is hashed, and must equal the digest of the reference result, computed once per data
//! set from the original with the portable kernel; `count` must print the manifest's line
//! count. So the rows of one operation are verified identical to each other, baselines
//! included.
//!
//! **Phases**: each iolab run prints its steps' durations (`--timings-json`); a row's
//! `phases` holds each step's median over the counted runs, in seconds (empty for
//! baselines and `count`, whose processes do not report any). The notes column repeats
//! them for the table. Each iolab run also reports its peak memory (`VmHWM`), and the row
//! keeps the highest as `peak_rss_bytes`: the bound `std-stream` promises.
//!
//! **Budget**: the small data set gets the configured runs and warm-up, every row in every
//! cache state. On the large one each run also costs about a second outside the timer (a
//! 1 GiB copy, its sync, the check, the deletion), so to keep the suite near a minute on a
//! 2-core machine it gets one counted run per [`LARGE_RUNS_DIVISOR`] configured (so one by
//! default; `--runs 15` gives three) and no warm-up, and:
//! - durable variants run warm only: their cold cost is the cold read, which the no-sync
//!   rows measure, plus the write-back, which the warm rows measure;
//! - `std-whole` runs without sync only: its durable step is `std-stream`'s, one
//!   `fdatasync` of the same dirty pages (the small data set has both);
//! - `sed -i`, at about 60 MB/s (18 s per GiB here, a third of the suite), runs only with
//!   `--sweep` ([`SED_LARGE_MAX_RUNS`] time, warm only): it cannot be the best baseline.
//!
//! **`--file PATH`**: the user's files replace both data sets; each is measured like the
//! large one, on fresh copies; the original is only read (to copy it, for the reference
//! results, and by the `count` rows, whose cold state evicts it without `fdatasync`).
//!
//! `--quick` data is small enough for every row.
//!
//! | file | job |
//! |---|---|
//! | `mod.rs` | the plan: data sets, operations, cache states, and the run |
//! | `jobs.rs` | which strategies, variants and baselines run, and how |
//! | `workdir.rs` | the working folder and fresh, synced copies of the data sets |
//! | `measure.rs` | the interleaved rounds and the phases of `--timings-json` |
//! | `verify.rs` | the reference results and the file digest |
//! | `rows.rs` | rows and the verdicts in the notes |
//! | `chart.rs` | the report's phase charts |

pub mod chart;
mod jobs;
mod measure;
mod rows;
pub(crate) mod verdict;
mod verify;
mod workdir;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use jobs::jobs_for;
use measure::{Accumulator, measure};
use rows::{base_row, to_row, verdicts};
use verify::{digest_file, expected_for, expected_results};
use workdir::WorkDir;

use crate::cache_state::{COLD_MAX_RESIDENCY, CacheState, WARM_MIN_RESIDENCY};
use crate::context::Context;
use crate::data::{self, Dataset};
use crate::error::{Error, Result};
use crate::interrupt;
use crate::peers::{version_line, which};
use crate::progress::Progress;
use crate::results::Row;
use crate::runner::{Job, Outcome, parse_count, schedule};
use crate::stats::Summary;
use crate::suite::Sizes;
use crate::suite::{MethodInfo, Suite};
use iolab::lab::edit::Strategy;
use iolab::lab::generate::rows_for_size;
use iolab::lab::kernel::Kernel;
use iolab::lab::units::{format_bytes, format_duration};

/// The large data set's size by default: 256 MiB, past the caches and big enough that a
/// warm edit takes tens of milliseconds even at memory speed, small enough that the suite
/// stays near 25 s (`--size` sets it, e.g. to the write-up's 18 GB).
pub const DEFAULT_LARGE_SIZE: u64 = 256 << 20;
/// The large data set's size for `--quick`.
pub const QUICK_LARGE_SIZE: u64 = 4 << 20;
/// The large data set's sizes, for the suite table; `--size` replaces them.
pub const SIZES: Sizes = Sizes {
    full: DEFAULT_LARGE_SIZE,
    quick: QUICK_LARGE_SIZE,
    follows_size_option: true,
};
/// The small data set: the write-up's 1000 rows × 10 columns.
pub const SMALL_ROWS: u64 = 1000;
/// See [`SMALL_ROWS`].
pub const SMALL_COLS: u32 = 10;
/// Columns of the large data set: the write-up's 100.
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
        iolab::lab::edit::Strategy::ALL
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
pub fn run(ctx: &mut Context<'_>) -> Result<Vec<Row>> {
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
    Ok(rows)
}

/// Whether `row` is what `iolab edit` does without options: `std-stream`, durable.
pub(crate) fn is_default(row: &Row) -> bool {
    row.method == Strategy::StdStream.name() && row.extra.get("durable") == Some(&json!(true))
}

/// Whether the warm state is measured at all (jobs limited to warm runs fall back to the
/// first configured state when it is not).
fn warm_wanted(ctx: &Context<'_>) -> bool {
    ctx.config.caches.contains(&CacheState::Warm)
}

/// Whether `std-whole` may read a file of `bytes` now (the limit it applies itself).
fn whole_fits(bytes: u64) -> bool {
    iolab::lab::sysinfo::mem_available_bytes().is_none_or(|a| bytes <= a / 5 * 4)
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
