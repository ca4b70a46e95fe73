//! The `edit` suite: in-place edits of a generated CSV by every strategy of
//! [`crate::edit`] and by the shell's tools, every timed run on a fresh copy.
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
//! - `sed -i`, at about 60 MB/s (18 s per GiB here, a third of the suite), runs
//!   [`SED_LARGE_MAX_RUNS`] time, warm only.
//!
//! `--quick` data is small enough for every row.

pub mod chart;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::Sizes;
use super::count::{version_line, which};
use crate::bench::data::{self, Dataset};
use crate::bench::progress::Progress;
use crate::bench::results::Row;
use crate::bench::runner::{Job, Outcome, parse_count, schedule};
use crate::bench::stats::Summary;
use crate::bench::{COLD_MAX_RESIDENCY, CacheState, Context, WARM_MIN_RESIDENCY, interrupt};
use crate::edit::Strategy;
use crate::error::{Error, Result};
use crate::generate::rows_for_size;
use crate::kernel::Kernel;
use crate::units::{format_bytes, format_duration};

/// The large data set's size by default: 1 GiB, big enough that a warm edit takes a tenth
/// of a second even at memory speed, small enough that the suite stays near a minute.
pub const DEFAULT_LARGE_SIZE: u64 = 1 << 30;
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
    name: &'static str,
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

/// Runs the suite.
pub fn run(ctx: &mut Context<'_>) -> Result<Vec<Row>> {
    let config = ctx.config;
    let small = data::csv(&config.data_dir, SMALL_ROWS, SMALL_COLS, config.progress)?;
    let large_size = SIZES.pick(config);
    let large = data::csv(
        &config.data_dir,
        rows_for_size(LARGE_COLS, large_size).max(1),
        LARGE_COLS,
        config.progress,
    )?;
    let work = WorkDir::create(&config.data_dir)?;
    let mut rows = Vec::new();
    for (name, dataset, is_large) in [("small", &small, false), ("large", &large, true)] {
        if interrupt::interrupted() {
            break;
        }
        let capped = is_large && !config.quick;
        let plan = Plan {
            name,
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
                    .or_else(|| impossible(cache, &dataset.path, dataset.bytes));
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

/// Whether the warm state is measured at all (jobs limited to warm runs fall back to the
/// first configured state when it is not).
fn warm_wanted(ctx: &Context<'_>) -> bool {
    ctx.config.caches.contains(&CacheState::Warm)
}

/// The jobs of `op` on `plan`'s data set, in row order.
fn jobs_for(ctx: &mut Context<'_>, plan: &Plan<'_>, op: Op) -> Vec<EditJob> {
    let config = ctx.config;
    let iolab = config.iolab_exe.clone();
    let text = |s: &str| Arg::Text(OsString::from(s));
    let mut jobs = Vec::new();
    let whole_fits = whole_fits(plan.dataset.bytes);
    if op == Op::Count {
        let best = match Kernel::best() {
            Kernel::Scalar => "mmap",
            Kernel::Avx2 => "mmap-avx2",
            Kernel::Avx512 => "mmap-avx512",
        };
        for (strategy, method) in [("mmap", best), ("std-stream", "bufread-chunks")] {
            if !config.wants(strategy) {
                continue;
            }
            jobs.push(EditJob {
                method: strategy.into(),
                baseline: false,
                durable: false,
                variant: None,
                version: None,
                command: None,
                count_method: Some(method.into()),
                program: iolab.clone(),
                args: vec![text("count"), text("--method"), text(method), Arg::Input],
                check: Check::Count,
                reports_phases: false,
                cold: true,
                max_runs: usize::MAX,
            });
        }
    } else {
        for strategy in Strategy::ALL {
            if !config.wants(strategy.name()) {
                continue;
            }
            if strategy == Strategy::StdWhole && !whole_fits {
                continue;
            }
            for durable in [false, true] {
                if durable && strategy == Strategy::StdWhole && plan.large {
                    // Its durable step is std-stream's: one fdatasync of the same dirty pages.
                    continue;
                }
                let mut args = vec![text("edit")];
                match op {
                    Op::Replace => args.extend([
                        text("replace"),
                        text("--from"),
                        text(","),
                        text("--to"),
                        text(";"),
                    ]),
                    _ => args.push(text("truncate-first-line")),
                }
                args.extend([text("--strategy"), text(strategy.name())]);
                if !durable {
                    args.push(text("--no-sync"));
                }
                args.extend([text("--timings-json"), Arg::Input]);
                jobs.push(EditJob {
                    method: strategy.name().into(),
                    baseline: false,
                    durable,
                    variant: Some(if durable { "durable" } else { "no-sync" }),
                    version: None,
                    command: None,
                    count_method: None,
                    program: iolab.clone(),
                    args,
                    check: Check::InPlace,
                    reports_phases: true,
                    cold: !(durable && plan.large),
                    max_runs: usize::MAX,
                });
            }
        }
    }
    if !config.baselines {
        return jobs;
    }
    let mut baseline = |name: &str,
                        needs: &[&str],
                        program: &str,
                        args: Vec<Arg>,
                        command: &str,
                        check: Check,
                        limited: bool| {
        if let Some(missing) = needs.iter().find(|p| which(p).is_none()) {
            let note = format!("edit: baseline `{name}` skipped: `{missing}` is not installed");
            if !ctx.notes.contains(&note) {
                ctx.notes.push(note);
            }
            return None;
        }
        let path = which(program)?;
        let version_of = needs.last().copied().unwrap_or(program);
        Some(EditJob {
            method: name.into(),
            baseline: true,
            durable: false,
            variant: None,
            version: which(version_of).and_then(|p| version_line(&p, &["--version"])),
            command: Some(command.into()),
            count_method: None,
            program: path,
            args,
            check,
            reports_phases: false,
            cold: !limited,
            max_runs: if limited {
                SED_LARGE_MAX_RUNS
            } else {
                usize::MAX
            },
        })
    };
    let found = match op {
        Op::Truncate => vec![baseline(
            "head",
            &["sh", "wc", "truncate", "head"],
            "sh",
            vec![
                text("-c"),
                text(r#"n=$(head -n 1 "$1" | wc -c) && exec truncate -s "$n" "$1""#),
                text("sh"),
                Arg::Input,
            ],
            r#"truncate -s "$(head -n 1 COPY | wc -c)" COPY"#,
            Check::InPlace,
            false,
        )],
        Op::Replace => vec![
            baseline(
                "tr",
                &["sh", "tr"],
                "sh",
                vec![
                    text("-c"),
                    text(r#"exec tr , ";" < "$1" > "$2""#),
                    text("sh"),
                    Arg::Input,
                    Arg::Output,
                ],
                "tr , ';' < COPY > OUT",
                Check::Output,
                false,
            ),
            baseline(
                "sed",
                &["sed"],
                "sed",
                vec![text("-i"), text("s/,/;/g"), Arg::Input],
                "sed -i 's/,/;/g' COPY",
                Check::InPlace,
                plan.large,
            ),
        ],
        Op::Count => vec![baseline(
            "wc -l",
            &["wc"],
            "wc",
            vec![text("-l"), Arg::Input],
            "wc -l DATA",
            Check::Count,
            false,
        )],
    };
    jobs.extend(found.into_iter().flatten());
    jobs
}

/// Whether `std-whole` may read a file of `bytes` now (the limit it applies itself).
fn whole_fits(bytes: u64) -> bool {
    crate::sysinfo::mem_available_bytes().is_none_or(|a| bytes <= a / 5 * 4)
}

/// What one job accumulated over the runs of one cache state.
#[derive(Default)]
struct Accumulator {
    wall: Vec<f64>,
    user: Vec<f64>,
    sys: Vec<f64>,
    residency: Vec<f64>,
    results: Vec<String>,
    /// Results of warm-up runs that were wrong.
    wrong_warmup: Vec<String>,
    phases: Vec<(String, Vec<f64>)>,
    kernel: Option<String>,
    /// The highest peak RSS a run reported.
    peak_rss: Option<u64>,
    error: Option<String>,
}

/// Measures `jobs` for `op` on `plan`'s data set in `cache_state`: interleaved rounds, a
/// fresh copy and the cache prepared before every run, the result checked after it.
fn measure(
    ctx: &mut Context<'_>,
    plan: &Plan<'_>,
    op: Op,
    jobs: &[&EditJob],
    cache_state: CacheState,
    work: &WorkDir,
) -> Result<Vec<Row>> {
    let config = ctx.config;
    let rounds = plan.warmup + plan.runs;
    let order = schedule(jobs.len(), rounds);
    let mut acc: Vec<Accumulator> = jobs.iter().map(|_| Accumulator::default()).collect();
    let progress = Progress::new(
        &format!("edit {} {} {}", op.name(), plan.name, cache_state.name()),
        order.len() as u64,
        config.progress,
    );
    let mut missed_state = 0usize;
    for (round, j) in order {
        if interrupt::interrupted() {
            break;
        }
        progress.inc();
        let (job, a) = (jobs[j], &mut acc[j]);
        let counted = round >= plan.warmup;
        let capped = job.max_runs < plan.runs;
        if a.error.is_some() || (capped && (!counted || a.wall.len() >= job.max_runs)) {
            continue;
        }
        progress.set_message(format!("round {}/{rounds}: {}", round + 1, job.method));
        let input = match op {
            Op::Count => plan.dataset.path.clone(),
            _ => work.fresh_copy(&plan.dataset.path, ctx)?,
        };
        let output = work.output();
        let residency = super::prepare(&input, cache_state, config.drop_caches)?;
        let outcome = ctx
            .executor
            .execute(&job.job(&input, &output))
            .map_err(|e| Error::io("cannot run a benchmark job", e));
        let checked = outcome.and_then(|outcome| {
            let result = if outcome.success() {
                Some(result_of(job.check, &outcome, &input, &output)?)
            } else {
                None
            };
            Ok((outcome, result))
        });
        work.clean();
        let (outcome, result) = checked?;
        if interrupt::interrupted() {
            // The run was cut short by Ctrl-C: it is not a measurement.
            break;
        }
        let Some(result) = result else {
            let line = outcome.first_error_line();
            a.error = Some(if line.is_empty() {
                format!("exit {:?}, signal {:?}", outcome.code, outcome.signal)
            } else {
                line
            });
            continue;
        };
        let expected = expected_for(&plan.expected, op);
        if !counted {
            if result != expected {
                a.wrong_warmup.push(result);
            }
            continue;
        }
        let reached = match cache_state {
            CacheState::Cold => residency <= COLD_MAX_RESIDENCY,
            CacheState::Warm => residency >= WARM_MIN_RESIDENCY,
        };
        if !reached {
            missed_state += 1;
        }
        if job.reports_phases {
            record_phases(a, &outcome.stdout);
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
            "edit: {missed_state} {} run(s) of {} on the {} data set started with the cache \
             not {} (see residency_before)",
            cache_state.name(),
            op.name(),
            plan.name,
            cache_state.name()
        ));
    }
    let expected = expected_for(&plan.expected, op);
    Ok(jobs
        .iter()
        .zip(acc)
        .map(|(job, a)| to_row(plan, op, job, a, cache_state, expected))
        .collect())
}

fn expected_for(expected: &Expected, op: Op) -> &str {
    match op {
        Op::Truncate => &expected.truncate,
        Op::Count => &expected.lines,
        Op::Replace => &expected.replace,
    }
}

/// A run's result: the digest of the edited file, or the printed count.
fn result_of(check: Check, outcome: &Outcome, input: &Path, output: &Path) -> Result<String> {
    match check {
        Check::InPlace => digest_file(input),
        Check::Output => digest_file(output),
        Check::Count => Ok(parse_count(&outcome.stdout)
            .map_or_else(|| "unreadable output".into(), |n| n.to_string())),
    }
}

/// Adds the phases and kernel of one run's `--timings-json` output.
fn record_phases(a: &mut Accumulator, stdout: &str) {
    let Ok(report) = serde_json::from_str::<TimingsJson>(stdout.trim()) else {
        return;
    };
    if let Some(kernel) = report.kernel {
        a.kernel = Some(kernel);
    }
    a.peak_rss = a.peak_rss.max(report.peak_rss_bytes);
    for (name, s) in report.phases.0 {
        match a.phases.iter_mut().find(|(n, _)| *n == name) {
            Some((_, all)) => all.push(s),
            None => a.phases.push((name, vec![s])),
        }
    }
}

/// What the suite reads of `iolab edit --timings-json`.
#[derive(serde::Deserialize)]
struct TimingsJson {
    kernel: Option<String>,
    phases: PhasesInOrder,
    peak_rss_bytes: Option<u64>,
}

/// A JSON object of seconds, keeping its keys in the order they were written (the order
/// the steps ran), which `serde_json::Map` would sort.
struct PhasesInOrder(Vec<(String, f64)>);

impl<'de> serde::Deserialize<'de> for PhasesInOrder {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = PhasesInOrder;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of seconds")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> std::result::Result<PhasesInOrder, M::Error> {
                let mut phases = Vec::new();
                while let Some(entry) = map.next_entry::<String, f64>()? {
                    phases.push(entry);
                }
                Ok(PhasesInOrder(phases))
            }
        }
        d.deserialize_map(Visitor)
    }
}

/// The row's keys that do not depend on the runs.
fn base_row(plan: &Plan<'_>, op: Op, job: &EditJob, cache_state: CacheState) -> Row {
    let mut extra = BTreeMap::new();
    extra.insert("op".into(), json!(op.name()));
    extra.insert("dataset".into(), json!(plan.name));
    extra.insert("durable".into(), json!(job.durable));
    extra.insert("phases".into(), json!({}));
    if let Some(variant) = job.variant {
        extra.insert("variant".into(), json!(variant));
    }
    if let Some(command) = &job.command {
        extra.insert("command".into(), json!(command));
    }
    if let Some(method) = &job.count_method {
        extra.insert("count_method".into(), json!(method));
    }
    Row {
        suite: SUITE.into(),
        method: job.method.clone(),
        cache: Some(cache_state.name().into()),
        baseline: job.baseline,
        version: job.version.clone(),
        bytes: plan.dataset.bytes,
        extra,
        ..Row::default()
    }
}

fn to_row(
    plan: &Plan<'_>,
    op: Op,
    job: &EditJob,
    a: Accumulator,
    cache_state: CacheState,
    expected: &str,
) -> Row {
    let mut row = base_row(plan, op, job, cache_state);
    row.error = a.error;
    row.set_timings(&a.wall, &a.user, &a.sys);
    let wrong: Vec<&String> = a
        .wrong_warmup
        .iter()
        .chain(a.results.iter().filter(|r| *r != expected))
        .collect();
    row.verified = !a.wall.is_empty() && wrong.is_empty() && row.error.is_none();
    row.result = a.results.last().cloned();
    if let Some(bad) = wrong.first() {
        row.error.get_or_insert(format!(
            "wrong result: the edited file's digest is {bad}, expected {expected}"
        ));
    }
    let medians: Vec<(String, f64)> = a
        .phases
        .iter()
        .filter_map(|(name, all)| Some((name.clone(), Summary::of(all)?.median)))
        .collect();
    if !medians.is_empty() {
        let text: Vec<String> = medians
            .iter()
            .map(|(n, s)| format!("{n} {}", format_duration(*s)))
            .collect();
        row.notes.push(format!("phases: {}", text.join(", ")));
    }
    row.extra.insert(
        "phases".into(),
        Value::Object(medians.into_iter().map(|(n, s)| (n, json!(s))).collect()),
    );
    if let Some(kernel) = a.kernel {
        row.extra.insert("kernel".into(), json!(kernel));
    }
    if let Some(bytes) = a.peak_rss {
        row.extra.insert("peak_rss_bytes".into(), json!(bytes));
    }
    row.set_residency(cache_state, a.residency);
    row
}

/// Why `cache` cannot be reached for the data set, if it cannot.
fn impossible(cache: CacheState, path: &Path, bytes: u64) -> Option<String> {
    match cache {
        CacheState::Cold if crate::sysinfo::is_tmpfs(path.parent()?) => {
            Some("the data set is on tmpfs: it cannot be evicted".into())
        }
        CacheState::Warm => {
            let available = crate::sysinfo::mem_available_bytes()?;
            // The data set, its copy and `tr`'s output are all cached at once.
            (bytes.saturating_mul(3) > available / 10 * 8).then(|| {
                format!(
                    "three copies of the data set ({} each) do not fit in 80% of available \
                     memory ({})",
                    format_bytes(bytes),
                    format_bytes(available)
                )
            })
        }
        _ => None,
    }
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

/// The reference results of `dataset`, computed from the original file: the digest of
/// its first line, of the file with every `,` replaced by `;` (with the portable kernel,
/// which the tests hold equal to the naive loop), and its line count.
fn expected_results(dataset: &Dataset) -> Result<Expected> {
    let mut file =
        File::open(&dataset.path).map_err(|e| Error::io("cannot open the data set", e))?;
    let mut buf = vec![0u8; IO_CHUNK];
    let (mut first_line, mut replaced) = (Digest::default(), Digest::default());
    let mut first_line_done = false;
    loop {
        let n = read_retrying(&mut file, &mut buf)?;
        if n == 0 {
            break;
        }
        let chunk = &mut buf[..n];
        if !first_line_done {
            match memchr::memchr(b'\n', chunk) {
                Some(at) => {
                    first_line.feed(&chunk[..=at]);
                    first_line_done = true;
                }
                None => first_line.feed(chunk),
            }
        }
        crate::kernel::replace::scalar::replace(chunk, b',', b';');
        replaced.feed(chunk);
    }
    Ok(Expected {
        truncate: first_line.finish(),
        replace: replaced.finish(),
        lines: dataset.lines.to_string(),
    })
}

/// The digest of the file at `path`, as [`Digest::finish`] prints it.
fn digest_file(path: &Path) -> Result<String> {
    let mut file = File::open(path).map_err(|e| Error::io("cannot open an edited copy", e))?;
    let mut buf = vec![0u8; IO_CHUNK];
    let mut digest = Digest::default();
    loop {
        let n = read_retrying(&mut file, &mut buf)?;
        if n == 0 {
            return Ok(digest.finish());
        }
        digest.feed(&buf[..n]);
    }
}

fn read_retrying(file: &mut File, buf: &mut [u8]) -> Result<usize> {
    loop {
        match file.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other.map_err(|e| Error::io("read failed", e)),
        }
    }
}

/// A fast 64-bit digest to compare files, not to resist an adversary: four lanes, each
/// `(lane ^ word) × odd constant`, rotated, per 8 bytes (a bijection of the lane for a
/// given word, so no input collapses the state), then the lanes and the length folded
/// with a final avalanche. About 15 GB/s, where `Fnv1a`'s byte loop does 1. The result
/// does not depend on how the input is split into `feed` calls.
#[derive(Clone, Debug)]
struct Digest {
    lanes: [u64; 4],
    pending: [u8; 32],
    pending_len: usize,
    len: u64,
}

impl Default for Digest {
    fn default() -> Digest {
        Digest {
            // Arbitrary distinct odd starting values (digits of pi).
            lanes: [
                0x243f_6a88_85a3_08d3,
                0x1319_8a2e_0370_7345,
                0xa409_3822_299f_31d1,
                0x082e_fa98_ec4e_6c89,
            ],
            pending: [0; 32],
            pending_len: 0,
            len: 0,
        }
    }
}

/// An odd 64-bit multiplier with well-spread bits (from wyhash).
const MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;

impl Digest {
    fn feed(&mut self, mut data: &[u8]) {
        self.len += data.len() as u64;
        if self.pending_len > 0 {
            let take = (32 - self.pending_len).min(data.len());
            self.pending[self.pending_len..self.pending_len + take].copy_from_slice(&data[..take]);
            self.pending_len += take;
            data = &data[take..];
            if self.pending_len < 32 {
                return;
            }
            let block = self.pending;
            self.block(&block);
            self.pending_len = 0;
        }
        let mut blocks = data.chunks_exact(32);
        for block in &mut blocks {
            self.block(block);
        }
        let rest = blocks.remainder();
        self.pending[..rest.len()].copy_from_slice(rest);
        self.pending_len = rest.len();
    }

    #[inline(always)]
    fn block(&mut self, block: &[u8]) {
        for (lane, word) in self.lanes.iter_mut().zip(block.chunks_exact(8)) {
            let w = u64::from_le_bytes(word.try_into().expect("8-byte words"));
            *lane = ((*lane ^ w).wrapping_mul(MULTIPLIER)).rotate_left(29);
        }
    }

    /// 16 hexadecimal digits.
    fn finish(mut self) -> String {
        if self.pending_len > 0 {
            // Zero padding is unambiguous because the length is folded in below.
            let mut block = [0u8; 32];
            block[..self.pending_len].copy_from_slice(&self.pending[..self.pending_len]);
            self.block(&block);
        }
        let mut h = self.len;
        for lane in self.lanes {
            h = ((h ^ lane).wrapping_mul(MULTIPLIER)).rotate_left(31);
        }
        // A final avalanche (splitmix64's).
        h ^= h >> 30;
        h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^= h >> 27;
        h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^= h >> 31;
        format!("{h:016x}")
    }
}

/// This process's working folder in the data folder: the copies live here, and the whole
/// folder is removed when it is dropped (also on an error or Ctrl-C).
struct WorkDir {
    path: PathBuf,
}

/// How many names to try for the working folder when `edit-work-PID` is taken.
const WORK_DIR_ATTEMPTS: u32 = 100;

impl WorkDir {
    fn create(data_dir: &Path) -> Result<WorkDir> {
        fs::create_dir_all(data_dir).map_err(|e| Error::io("cannot create the data folder", e))?;
        let pid = std::process::id();
        for attempt in 0..WORK_DIR_ATTEMPTS {
            let mut name = format!("edit-work-{pid}");
            if attempt > 0 {
                name.push_str(&format!("-{attempt}"));
            }
            let path = data_dir.join(name);
            match fs::create_dir(&path) {
                Ok(()) => return Ok(WorkDir { path }),
                // Someone else's (a run that died with the same pid): not ours to touch.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(Error::io("cannot create a working folder", e)),
            }
        }
        Err(Error::io(
            "cannot create a working folder",
            io::Error::from(io::ErrorKind::AlreadyExists),
        ))
    }

    fn copy(&self) -> PathBuf {
        self.path.join("copy.csv")
    }

    fn output(&self) -> PathBuf {
        self.path.join("out.csv")
    }

    /// Removes the copy and the output of the last run.
    fn clean(&self) {
        let _ = fs::remove_file(self.copy());
        let _ = fs::remove_file(self.output());
    }

    /// A fresh, synced copy of `source`; the first copy notes how copies are made.
    fn fresh_copy(&self, source: &Path, ctx: &mut Context<'_>) -> Result<PathBuf> {
        self.clean();
        let target = self.copy();
        let how =
            copy_synced(source, &target).map_err(|e| Error::io("cannot copy the data set", e))?;
        let note = format!("edit: working copies are made with {how}, then fdatasync'd");
        if !ctx.notes.contains(&note) {
            ctx.notes.push(note);
        }
        Ok(target)
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// Copies `source` to the new file `target` by reflink, else `copy_file_range`, else
/// read/write; syncs it; says which way was taken.
fn copy_synced(source: &Path, target: &Path) -> io::Result<&'static str> {
    let mut from = File::open(source)?;
    let mut to = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(target)?;
    // SAFETY: FICLONE takes the source descriptor as its argument; both descriptors are open
    // for the call, and the ioctl has no memory effects in this process.
    let cloned = unsafe { libc::ioctl(to.as_raw_fd(), FICLONE as _, from.as_raw_fd()) } == 0;
    let how = if cloned {
        "FICLONE (reflink: edits pay the copy-on-write)"
    } else {
        let len = from.metadata()?.len();
        let mut copied = 0u64;
        let mut how = "copy_file_range";
        while copied < len {
            // SAFETY: both descriptors are open; null offsets mean "use and advance the
            // file positions", and no memory of this process is passed.
            let n = unsafe {
                libc::copy_file_range(
                    from.as_raw_fd(),
                    std::ptr::null_mut(),
                    to.as_raw_fd(),
                    std::ptr::null_mut(),
                    usize::try_from(len - copied).unwrap_or(usize::MAX),
                    0,
                )
            };
            if n > 0 {
                copied += n as u64;
                continue;
            }
            if n == 0 {
                break;
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EXDEV | libc::ENOSYS | libc::EOPNOTSUPP | libc::EINVAL)
                    if copied == 0 =>
                {
                    io::copy(&mut from, &mut to)?;
                    how = "read and write (copy_file_range is unsupported here)";
                    break;
                }
                _ => return Err(e),
            }
        }
        how
    };
    to.sync_data()?;
    Ok(how)
}

/// Notes the goal ratios of the issue: on the large data set, per cache state, the best
/// no-sync replace against `tr` and `sed -i`, and `std-stream` against `mmap`.
fn verdicts(ctx: &mut Context<'_>, rows: &[Row]) {
    let key = |r: &Row, k: &str| r.extra.get(k).and_then(Value::as_str).map(str::to_owned);
    for cache in ["warm", "cold"] {
        let replace: Vec<&Row> = rows
            .iter()
            .filter(|r| {
                r.measured()
                    && r.cache.as_deref() == Some(cache)
                    && key(r, "dataset").as_deref() == Some("large")
                    && key(r, "op").as_deref() == Some("replace")
                    && r.extra.get("durable") == Some(&json!(false))
            })
            .collect();
        let median = |name: &str| {
            replace
                .iter()
                .find(|r| r.method == name)
                .and_then(|r| r.median_s)
        };
        let Some(best) = replace.iter().filter(|r| !r.baseline).min_by(|a, b| {
            a.median_s
                .unwrap_or(f64::MAX)
                .total_cmp(&b.median_s.unwrap_or(f64::MAX))
        }) else {
            continue;
        };
        let best_s = best.median_s.unwrap_or(f64::NAN);
        let mut parts = vec![format!(
            "edit, replace on the large data set, {cache}, no sync: best {} {}",
            best.method,
            format_duration(best_s)
        )];
        for baseline in ["tr", "sed"] {
            if let Some(b) = median(baseline) {
                parts.push(format!("{:.1}× {baseline}", b / best_s));
            }
        }
        if let (Some(stream), Some(map)) = (median("std-stream"), median("mmap")) {
            parts.push(format!("std-stream takes {:.2}× mmap's time", stream / map));
        }
        ctx.notes.push(parts.join("; "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_does_not_depend_on_how_the_input_is_split() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut whole = Digest::default();
        whole.feed(&data);
        let whole = whole.finish();
        for split in [1, 5, 31, 32, 33, 100, 999] {
            let mut parts = Digest::default();
            for chunk in data.chunks(split) {
                parts.feed(chunk);
            }
            assert_eq!(parts.finish(), whole, "split {split}");
        }
    }

    #[test]
    fn digest_sees_every_byte_and_the_length() {
        let data = vec![b'a'; 100];
        let base = {
            let mut d = Digest::default();
            d.feed(&data);
            d.finish()
        };
        for at in [0, 31, 32, 63, 99] {
            let mut changed = data.clone();
            changed[at] = b'b';
            let mut d = Digest::default();
            d.feed(&changed);
            assert_ne!(d.finish(), base, "a change at {at}");
        }
        let mut longer = Digest::default();
        longer.feed(&[b'a'; 101]);
        assert_ne!(longer.finish(), base);
        let mut padded = Digest::default();
        padded.feed(&[0u8; 3]);
        let mut shorter = Digest::default();
        shorter.feed(&[0u8; 2]);
        assert_ne!(
            padded.finish(),
            shorter.finish(),
            "zero padding is not ambiguous"
        );
    }
}
