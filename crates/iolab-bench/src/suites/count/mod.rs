//! The `count` suite: every line-counting method and the installed peers over one
//! generated text file, warm and cold.

use std::fs::File;
use std::path::{Path, PathBuf};

mod ceilings;
pub mod chart;
mod jobs;
mod many;
mod measure;
mod rows;
pub(crate) mod verdict;
mod winners;

use crate::cache_state::CacheState;
use crate::context::Context;
use crate::data;
use crate::error::Result;
use crate::interrupt;
use crate::probes::{Ceilings, Sampler};
use crate::results::Row;
use crate::suite::Sizes;
use crate::suite::{Column, Format, MethodInfo, Output, Place, Suite};
use ceilings::{mark_ceiling, not_probed, probe};
use iolab_lab::read::CountMethod;
use iolab_lab::sys::fiemap;
use jobs::{Grid, baseline_jobs, counted_runs, parse_lines, parse_total, variants};
use measure::{FileBench, Measured, measure};
use serde_json::json;

/// The data set's size by default: 1 GiB, big enough that a warm run takes tens of
/// milliseconds even at memory speed, small enough for the whole suite in about 2 minutes.
pub const DEFAULT_SIZE: u64 = 1 << 30;
/// The data set's size for `--quick`.
pub const QUICK_SIZE: u64 = 64 << 20;
/// The data set's sizes, for the suite table; `--size` replaces them.
pub const SIZES: Sizes = Sizes {
    full: DEFAULT_SIZE,
    quick: QUICK_SIZE,
    follows_size_option: true,
};

const SUITE: &str = "count";

/// This suite's entry in the suite table (`crate::suites::SUITES`).
pub const ENTRY: Suite = Suite {
    name: SUITE,
    description: "Line counting (`iolab count`)",
    sizes: SIZES,
    takes_files: true,
    methods: || {
        iolab_lab::read::CountMethod::ALL
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
    charts: chart::charts,
    verdict: verdict::verdicts,
    is_default: |r| r.method == iolab_lab::read::CountMethod::Auto.name(),
    default_rows: None,
    run,
};

/// From this size on (8 GiB, a third of this project's machine's memory) a data set is
/// "big": every run of a method reads it all from the device, seconds each, so unless
/// `--methods` says otherwise the suite measures only the cold candidates [`BIG_METHODS`]
/// and the baselines, without the parameter sweeps, [`BIG_RUNS`] counted runs each, with
/// the device probe's samples between them (how long the line-count write-up's 22 GiB
/// takes: docs/findings/machine.md).
pub const BIG_SET: u64 = 8 << 30;
/// Counted runs per row on a big data set, unless `--sweep`: 3 (each is a read of the whole
/// file from the device, and the device probe's samples fall between them).
pub const BIG_RUNS: usize = 3;
/// The methods measured on a big data set: the default and the cold candidates it
/// chooses between (io_uring `O_DIRECT` reads, one map scanned by every core, parallel
/// `pread` streams, one stream with read-ahead kept ahead).
pub const BIG_METHODS: [CountMethod; 5] = [
    CountMethod::Auto,
    CountMethod::UringDirect,
    CountMethod::MmapParallel,
    CountMethod::PreadParallel,
    CountMethod::Stream,
];

/// What the suite counts: the generated data set, the many small files, or a user's file
/// (`--file`).
struct Counted {
    paths: Vec<PathBuf>,
    /// All of them together.
    bytes: u64,
    /// The known line count (the data set's manifest), all files together; `None` for a
    /// user's file, whose rows verify each other.
    lines: Option<u64>,
    /// The row key telling these rows apart from the data set's: `file` (a user's file)
    /// or `input` (the many files).
    key: Option<(&'static str, String)>,
    caches: Vec<CacheState>,
    /// Its rows get a share of the ceiling (not so for many small files, where the
    /// processes' and the files' fixed costs are the point).
    ceiling: bool,
}

/// Runs the suite: over the generated data set and the many small files, or over each
/// `--file` (read-only: opened for reading, evicted with `posix_fadvise` alone, never
/// written, renamed or deleted).
pub fn run(ctx: &mut Context<'_>) -> Result<Output> {
    let config = ctx.config;
    let mut inputs: Vec<Counted> = Vec::new();
    if config.files.is_empty() {
        let dataset = data::lines(&config.data_dir, SIZES.pick(config), config.progress)?;
        inputs.push(Counted {
            paths: vec![dataset.path],
            bytes: dataset.bytes,
            lines: Some(dataset.lines),
            key: None,
            caches: config.caches.clone(),
            ceiling: true,
        });
        if config.caches.contains(&CacheState::Warm) {
            inputs.push(many::input(config)?);
        }
    } else {
        for path in &config.files {
            let bytes = std::fs::metadata(path)
                .map_err(|e| crate::error::Error::io("cannot read the metadata of --file", e))?
                .len();
            inputs.push(Counted {
                paths: vec![path.clone()],
                bytes,
                lines: None,
                key: Some(("file", path.display().to_string())),
                caches: config.caches.clone(),
                ceiling: true,
            });
        }
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // The ceilings are sampled between the first input's runs (see `probe`).
    let mut ceilings = Ceilings {
        memory_scan: not_probed(CacheState::Warm),
        device_read: not_probed(CacheState::Cold),
    };
    let mut rows = Vec::new();
    let mut main_rows = 0;
    for (i, input) in inputs.iter().enumerate() {
        rows.extend(run_input(ctx, input, &mut ceilings, i == 0, cores)?);
        if i == 0 {
            main_rows = rows.len();
        }
    }
    if config.files.is_empty() {
        winners::remember(ctx, &rows[..main_rows], inputs[0].bytes);
    }
    Ok(Output {
        rows,
        ceilings: Some(ceilings),
    })
}

/// Every method and baseline over one input, in each of its cache states. With `probe`
/// (the first input), each state's ceiling is sampled between its runs and stored in
/// `ceilings`; later inputs use the stored ones.
fn run_input(
    ctx: &mut Context<'_>,
    input: &Counted,
    ceilings: &mut Ceilings,
    probe_here: bool,
    cores: usize,
) -> Result<Vec<Row>> {
    let config = ctx.config;
    if let [one] = input.paths.as_slice() {
        check_layout(ctx, one);
    }
    let dataset = input;
    let big = dataset.bytes >= BIG_SET && config.methods.is_none();
    let mut rows = Vec::new();
    let baselines = if config.baselines {
        baseline_jobs(ctx, &dataset.paths)
    } else {
        Vec::new()
    };
    let label = input.key.as_ref().map(|(_, v)| v.clone());
    let bench = FileBench {
        suite: SUITE,
        section: label.as_deref().unwrap_or(""),
        inputs: &dataset.paths,
        bytes: dataset.bytes,
        expected: input.lines.map(|n| n.to_string()),
        users: input.lines.is_none(),
        parse: if input.paths.len() > 1 {
            parse_total
        } else {
            parse_lines
        },
        default_method: Some(CountMethod::Auto.name()),
        runs: counted_runs(big, config),
    };
    let with_key = |mut row: Row| {
        if let Some((k, v)) = &input.key {
            row.extra.insert((*k).into(), json!(v));
        }
        row
    };
    for &cache in &input.caches {
        let mut jobs = Vec::new();
        for method in CountMethod::ALL {
            if !config.wants(method.name()) || (big && !BIG_METHODS.contains(&method)) {
                continue;
            }
            if let Err(reason) = method.availability() {
                let mut row = Row::unavailable(SUITE, method.name(), reason);
                row.cache = Some(cache.name().to_string());
                row.bytes = dataset.bytes;
                rows.push(with_key(row));
                continue;
            }
            let sweep = input.ceiling && !config.quick && !big;
            let grid = match (sweep, config.sweep) {
                (false, _) => Grid::One,
                (true, false) => Grid::Threads,
                (true, true) => Grid::Full,
            };
            for variant in variants(method, cache, cores, grid) {
                jobs.push(variant.job(&config.iolab_exe, method, &dataset.paths));
            }
        }
        jobs.extend(baselines.iter().map(|b| Measured {
            job: b.job.clone(),
            version: b.version.clone(),
            extra: b.extra.clone(),
        }));
        let total = dataset.bytes;
        let mut sampler = probe_here.then(|| probe(cache, &dataset.paths[0], total, cores, config));
        if let Some(reason) = crate::cache_state::impossible(cache, &dataset.paths[0], total, 1) {
            for m in &jobs {
                let mut row = Row::unavailable(SUITE, &m.job.name, reason.clone());
                row.cache = Some(cache.name().to_string());
                row.baseline = m.job.baseline;
                row.bytes = dataset.bytes;
                row.extra = m.extra.clone();
                rows.push(with_key(row));
            }
            if let Some(sampler) = sampler {
                // No runs to sample between: the probe alone, for the report.
                *ceilings.get_mut(cache) = sampler.finish(interrupt::interrupted());
            }
            continue;
        }
        let between: Option<(&mut dyn Sampler, usize)> = match sampler.as_mut() {
            Some(s) => Some((s.sampler.as_mut(), s.samples)),
            None => None,
        };
        let tallies = measure(ctx, &bench, &jobs, cache, between)?;
        let mut measured: Vec<Row> = rows::rows(&bench, &jobs, tallies, cache)
            .into_iter()
            .map(with_key)
            .collect();
        if let Some(sampler) = sampler {
            *ceilings.get_mut(cache) = sampler.finish(interrupt::interrupted());
        }
        // No share of a ceiling for an empty input: nothing was read.
        let limit = ceilings
            .get(cache)
            .ceiling_bytes_per_s
            .filter(|l| input.ceiling && l.is_finite() && *l > 0.0 && dataset.bytes > 0);
        if let Some(limit) = limit {
            mark_ceiling(&mut measured, cache, limit);
        }
        if let Some(line) = verdict::note(cache, &measured, limit) {
            ctx.notes.push(match &label {
                Some(l) => format!("{l}: {line}"),
                None => line,
            });
        }
        rows.extend(measured);
    }
    Ok(rows)
}

/// Warns when the file's extents are compressed or encrypted: then a cold read can be
/// "faster than the disk", as in the line-count write-up's btrfs surprise.
fn check_layout(ctx: &mut Context<'_>, path: &Path) {
    let Ok(file) = File::open(path) else { return };
    match fiemap::summarize(&file) {
        Ok(s) if s.encoded_bytes > 0 => ctx.warnings.push(format!(
            "{}: {} of its extents' bytes are compressed or encrypted on disk (FIEMAP \
             ENCODED): cold reads may beat the device's bandwidth",
            path.display(),
            iolab_lab::units::format_bytes(s.encoded_bytes)
        )),
        Ok(_) => {}
        Err(e) => ctx.notes.push(format!(
            "could not check {} for compressed extents (FIEMAP: {e})",
            path.display()
        )),
    }
}
