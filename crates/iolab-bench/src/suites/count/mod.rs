//! The `count` suite: every line-counting method and the installed peers over one
//! generated text file, warm and cold.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};

pub mod chart;
mod many;
pub(crate) mod verdict;
mod winners;

use crate::cache_state::CacheState;
use crate::context::{Config, Context};
use crate::data;
use crate::error::Result;
use crate::file_bench::{FileBench, Measured, measure};
use crate::interrupt;
use crate::peers::{version_line, which};
use crate::probes::{self, Ceilings, DeviceRead, MemoryScan, Probe, Sampler};
use crate::results::Row;
use crate::runner::{Job, Outcome, parse_count};
use crate::suite::Sizes;
use crate::suite::{Column, Format, MethodInfo, Place, Suite};
use iolab::lab::read::{Method, uring_direct};
use iolab::lab::sys::fiemap;
use iolab::lab::units::{format_bytes, format_rate};
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
        iolab::lab::read::Method::ALL
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
    is_default: |r| r.method == iolab::lab::read::Method::Auto.name(),
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
/// chooses between (one map scanned by every core, parallel `pread` streams, one stream
/// with read-ahead kept ahead).
pub const BIG_METHODS: [Method; 4] = [
    Method::Auto,
    Method::MmapParallel,
    Method::PreadParallel,
    Method::Stream,
];

/// External line counters, timed like iolab's methods when installed: (row name,
/// program, arguments before the file, how to ask its version).
const BASELINES: &[(&str, &str, &[&str], &[&str])] = &[
    ("wc -l", "wc", &["-l"], &["--version"]),
    ("fwc -l", "fwc", &["-l"], &["--version"]),
];

/// Queue depths swept for `uring-direct` cold (at the default block size).
const SWEEP_QUEUE_DEPTHS: &[usize] = &[1, 8, 32];
/// Block sizes swept for `uring-direct` cold (at the default queue depth).
const SWEEP_BLOCK_SIZES: &[usize] = &[4 << 20];
/// The device probe's sweep with `--sweep`, as fio would run it (each point reads the whole
/// file once per sample).
const PROBE_QUEUE_DEPTHS: &[usize] = &[2, 8, 32];
const PROBE_BLOCK_SIZES: &[usize] = &[256 << 10, 1 << 20, 4 << 20];
/// The device probe's `O_DIRECT` point by default: 8 × 1 MiB, where the sweep's best points
/// have been (3 samples, besides the buffered point's 3).
const PROBE_DEFAULT_QUEUE_DEPTHS: &[usize] = &[8];
const PROBE_DEFAULT_BLOCK_SIZES: &[usize] = &[1 << 20];

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
pub fn run(ctx: &mut Context<'_>) -> Result<Vec<Row>> {
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
    ctx.ceilings = Some(ceilings);
    if config.files.is_empty() {
        winners::remember(ctx, &rows[..main_rows], inputs[0].bytes);
    }
    Ok(rows)
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
        default_method: Some(Method::Auto.name()),
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
        for method in Method::ALL {
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
        let mut measured: Vec<Row> = measure(ctx, &bench, &jobs, cache, between)?
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
        if let Some(line) = verdict(cache, &measured, limit) {
            ctx.notes.push(match &label {
                Some(l) => format!("{l}: {line}"),
                None => line,
            });
        }
        rows.extend(measured);
    }
    Ok(rows)
}

/// Gives each measured row its share of the ceiling `limit` (and a note when above it).
fn mark_ceiling(rows: &mut [Row], cache: CacheState, limit: f64) {
    for row in rows {
        if let Some(t) = row.throughput_bytes_per_s {
            row.extra.insert("ceiling_bytes_per_s".into(), json!(limit));
            row.extra
                .insert("ceiling_pct".into(), json!(100.0 * t / limit));
            if let Some(note) = above_ceiling(cache, 100.0 * t / limit) {
                row.notes.push(note);
            }
        }
    }
}

/// Counted runs per row: `--runs`, at most [`BIG_RUNS`] on a big data set unless `--sweep`.
fn counted_runs(big: bool, config: &Config) -> usize {
    if big && !config.sweep {
        config.runs.min(BIG_RUNS)
    } else {
        config.runs
    }
}

/// A parameter setting of a method, and its row label.
struct Variant {
    label: Option<String>,
    threads: Option<usize>,
    queue_depth: Option<usize>,
    block: Option<usize>,
}

impl Variant {
    fn plain() -> Variant {
        Variant {
            label: None,
            threads: None,
            queue_depth: None,
            block: None,
        }
    }

    fn job(&self, exe: &Path, method: Method, data: &[PathBuf]) -> Measured {
        let mut args: Vec<OsString> = vec!["count".into(), "--method".into(), method.name().into()];
        let mut extra = BTreeMap::new();
        if let Some(t) = self.threads {
            args.extend(["--threads".into(), t.to_string().into()]);
            extra.insert("threads".to_string(), json!(t));
        }
        if let Some(q) = self.queue_depth {
            args.extend(["--queue-depth".into(), q.to_string().into()]);
            extra.insert("queue_depth".to_string(), json!(q));
        }
        if let Some(b) = self.block {
            args.extend(["--buffer".into(), b.to_string().into()]);
            extra.insert("block_bytes".to_string(), json!(b));
        }
        if let Some(label) = &self.label {
            extra.insert("variant".to_string(), json!(label));
        }
        args.extend(data.iter().map(OsString::from));
        Measured {
            job: Job::new(method.name(), exe, args, false),
            version: None,
            extra,
        }
    }
}

/// Which of a method's settings are measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Grid {
    /// Its defaults alone (`--quick`, a big data set, many files).
    One,
    /// Also the thread counts of the parallel methods: the rule `auto` follows picks among
    /// them, so a default run measures them.
    Threads,
    /// Also `uring-direct`'s queue depths and block sizes cold (`--sweep`): at about
    /// 0.6 GB/s through `O_DIRECT` on this project's virtual disk, each is a 2-second
    /// row that cannot win, where the whole default cold section takes 30 s.
    Full,
}

/// The settings each method is measured with: one for most; for the parallel and
/// deep-queue methods, the sweep that shows where their optimum lies (threads warm and
/// cold; queue depth and block size cold, where the device is the limit).
fn variants(method: Method, cache: CacheState, cores: usize, grid: Grid) -> Vec<Variant> {
    let threads = |t: usize| Variant {
        label: Some(format!("threads={t}")),
        threads: Some(t),
        ..Variant::plain()
    };
    match (method, cache) {
        (Method::MmapParallel, CacheState::Warm) | (Method::PreadParallel, CacheState::Cold)
            if grid != Grid::One =>
        {
            (1..=cores).map(threads).collect()
        }
        (Method::UringDirect, CacheState::Cold) if grid == Grid::Full => {
            let qd = uring_direct::DEFAULT_QUEUE_DEPTH;
            let bs = uring_direct::DEFAULT_BLOCK_SIZE;
            let mut v: Vec<Variant> = SWEEP_QUEUE_DEPTHS
                .iter()
                .map(|&q| Variant {
                    label: Some(format!("qd={q} bs={}", format_bytes(bs as u64))),
                    queue_depth: Some(q),
                    block: Some(bs),
                    ..Variant::plain()
                })
                .collect();
            v.extend(SWEEP_BLOCK_SIZES.iter().map(|&b| Variant {
                label: Some(format!("qd={qd} bs={}", format_bytes(b as u64))),
                queue_depth: Some(qd),
                block: Some(b),
                ..Variant::plain()
            }));
            v
        }
        _ => vec![Variant::plain()],
    }
}

/// A row more than this percentage of its ceiling gets a note: 105%.
const ABOVE_CEILING_PCT: f64 = 105.0;

/// The note of a row at `pct` percent of its ceiling, when that is above
/// [`ABOVE_CEILING_PCT`]: what can make a measured row beat the probe.
fn above_ceiling(cache: CacheState, pct: f64) -> Option<String> {
    if pct <= ABOVE_CEILING_PCT {
        return None;
    }
    let why = match cache {
        CacheState::Cold => {
            "the device probe's median read was slower than this row: on a virtual disk the \
             host's cache serves some reads and not others, and a file read earlier may \
             still be in it"
        }
        CacheState::Warm => {
            "the probe's median scan was slower than this row: the machine was busier \
             while the probe ran, or the page cache's large folios beat the probe's buffer"
        }
    };
    Some(format!("{pct:.0}% of the {} ceiling: {why}", cache.name()))
}

/// A ceiling's sampler for one cache state, and how many samples it takes.
struct Probing {
    sampler: Box<dyn Sampler>,
    samples: usize,
}

impl Probing {
    /// The probe: the samples still owed taken now (unless `interrupted`), then the
    /// medians.
    fn finish(mut self, interrupted: bool) -> Probe {
        if !interrupted {
            probes::sample_up_to(self.sampler.as_mut(), self.samples);
        }
        self.sampler.finish()
    }
}

/// The ceiling of `cache`'s rows (warm: the memory scan; cold: the device read of `data`),
/// to be sampled between their runs (outside every timer). A sample of the device probe
/// reads the whole file: 3 by default, as many as a big data set's rounds.
fn probe(cache: CacheState, data: &Path, bytes: u64, cores: usize, config: &Config) -> Probing {
    match cache {
        CacheState::Warm => Probing {
            sampler: Box::new(MemoryScan::new(
                bytes.clamp(64 << 20, 1 << 30) as usize,
                cores,
            )),
            samples: if config.quick {
                probes::MIN_SAMPLES
            } else {
                MEMORY_SAMPLES
            },
        },
        CacheState::Cold => {
            let (depths, blocks) = if config.sweep {
                (PROBE_QUEUE_DEPTHS, PROBE_BLOCK_SIZES)
            } else {
                (PROBE_DEFAULT_QUEUE_DEPTHS, PROBE_DEFAULT_BLOCK_SIZES)
            };
            Probing {
                sampler: Box::new(DeviceRead::new(data, depths, blocks)),
                samples: probes::MIN_SAMPLES,
            }
        }
    }
}

/// The memory-scan probe's samples by default: one per counted round of the default 5.
const MEMORY_SAMPLES: usize = 5;

/// The probe of a state this run does not measure.
fn not_probed(cache: CacheState) -> Probe {
    Probe {
        unavailable: Some(format!(
            "not measured: this run has no {} rows",
            cache.name()
        )),
        ..Probe::default()
    }
}

/// The one-line verdict for a cache state: the fastest method, its lead over `wc -l` and
/// the best installed peer, and how close it comes to the ceiling.
fn verdict(cache: CacheState, rows: &[Row], ceiling: Option<f64>) -> Option<String> {
    let fastest = |baseline: bool| {
        rows.iter()
            .filter(|r| r.baseline == baseline && r.verified)
            .filter_map(|r| r.median_s.map(|m| (r, m)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    };
    let (best, best_s) = fastest(false)?;
    let label = |r: &Row| match r.extra.get("variant") {
        Some(serde_json::Value::String(v)) => format!("{} {v}", r.method),
        _ => r.method.clone(),
    };
    let mut line = format!(
        "{}: fastest is {} at {}",
        cache.name(),
        label(best),
        format_rate(best.throughput_bytes_per_s.unwrap_or(0.0))
    );
    let ratio_to = |name: &str| {
        rows.iter()
            .find(|r| r.baseline && r.method == name)
            .and_then(|r| r.median_s)
            .map(|m| m / best_s)
    };
    if let Some(x) = ratio_to("wc -l") {
        line.push_str(&format!(", {x:.2}× wc -l"));
    }
    if let Some((peer, peer_s)) = rows
        .iter()
        .filter(|r| r.baseline && r.method != "wc -l" && r.verified)
        .filter_map(|r| r.median_s.map(|m| (r, m)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
    {
        line.push_str(&format!(
            ", {:.2}× {} (the best peer)",
            peer_s / best_s,
            peer.method
        ));
    } else {
        line.push_str(", no other peer installed");
    }
    if let (Some(limit), Some(t)) = (ceiling, best.throughput_bytes_per_s) {
        let which = match cache {
            CacheState::Warm => "memory-scan",
            CacheState::Cold => "device-read",
        };
        line.push_str(&format!(
            "; {:.0}% of the {which} ceiling ({})",
            100.0 * t / limit,
            format_rate(limit)
        ));
        if cache == CacheState::Cold && t > limit {
            // Say why a row can beat "the device": the ceiling is what O_DIRECT reads get.
            line.push_str(
                " (above 100%: buffered reads with the kernel's read-ahead beat O_DIRECT reads \
                 here, as when the host or the device caches too)",
            );
        }
    }
    if let Some((peer, _)) = fastest(true)
        && peer.median_s < Some(best_s)
    {
        line.push_str(&format!(" — {} is faster", peer.method));
    }
    Some(line)
}

fn baseline_jobs(ctx: &mut Context<'_>, data: &[PathBuf]) -> Vec<Measured> {
    let mut jobs = Vec::new();
    for &(name, program, args, version_args) in BASELINES {
        match which(program) {
            Some(path) => {
                let mut full: Vec<OsString> = args.iter().map(OsString::from).collect();
                full.extend(data.iter().map(OsString::from));
                jobs.push(Measured {
                    version: version_line(&path, version_args),
                    job: Job::new(name, path, full, true),
                    extra: BTreeMap::new(),
                });
            }
            None => ctx.notes.push(format!(
                "baseline `{name}` skipped: `{program}` is not installed"
            )),
        }
    }
    jobs
}

fn parse_lines(outcome: &Outcome) -> Option<String> {
    parse_count(&outcome.stdout).map(|n| n.to_string())
}

/// The `total` line's count, the last line of `wc -l`'s (and `iolab count`'s) output for
/// several files.
fn parse_total(outcome: &Outcome) -> Option<String> {
    let last = outcome
        .stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())?;
    last.trim_end()
        .ends_with(" total")
        .then(|| parse_count(last).map(|n| n.to_string()))
        .flatten()
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
            iolab::lab::units::format_bytes(s.encoded_bytes)
        )),
        Ok(_) => {}
        Err(e) => ctx.notes.push(format!(
            "could not check {} for compressed extents (FIEMAP: {e})",
            path.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uring_direct_sweeps_cold_only_with_the_full_grid_and_threads_by_default() {
        let cold = CacheState::Cold;
        assert_eq!(
            variants(Method::UringDirect, cold, 2, Grid::Threads).len(),
            1
        );
        assert_eq!(
            variants(Method::UringDirect, cold, 2, Grid::Full).len(),
            SWEEP_QUEUE_DEPTHS.len() + SWEEP_BLOCK_SIZES.len()
        );
        assert_eq!(
            variants(Method::PreadParallel, cold, 2, Grid::Threads).len(),
            2
        );
        assert_eq!(variants(Method::PreadParallel, cold, 2, Grid::One).len(), 1);
        let warm = CacheState::Warm;
        assert_eq!(
            variants(Method::MmapParallel, warm, 4, Grid::Threads).len(),
            4
        );
    }

    #[test]
    fn a_big_data_set_takes_at_most_big_runs_unless_sweep() {
        let config = Config {
            runs: 5,
            ..Config::for_tests()
        };
        assert_eq!(counted_runs(false, &config), 5);
        assert_eq!(counted_runs(true, &config), BIG_RUNS);
        let one = Config {
            runs: 1,
            ..Config::for_tests()
        };
        assert_eq!(counted_runs(true, &one), 1, "never more than asked");
        let sweep = Config {
            sweep: true,
            ..config
        };
        assert_eq!(counted_runs(true, &sweep), 5);
    }

    #[test]
    fn only_rows_above_105_percent_of_the_ceiling_get_a_note() {
        assert_eq!(above_ceiling(CacheState::Cold, 105.0), None);
        let cold = above_ceiling(CacheState::Cold, 470.0).unwrap();
        assert!(cold.starts_with("470% of the cold ceiling"), "{cold}");
        assert!(cold.contains("host's cache"), "{cold}");
        let warm = above_ceiling(CacheState::Warm, 112.4).unwrap();
        assert!(warm.starts_with("112% of the warm ceiling"), "{warm}");
    }
}
