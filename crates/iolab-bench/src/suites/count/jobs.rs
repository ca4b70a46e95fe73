//! The `count` suite's jobs: each method at its settings (threads, queue depth, block
//! size) as an `iolab count` child process, and the installed peers (`wc -l`, `fwc -l`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::BIG_RUNS;
use super::measure::Measured;
use crate::cache_state::CacheState;
use crate::context::{Config, Context};
use crate::peers::{version_line, which};
use crate::runner::{Job, Outcome, parse_count};
use iolab_lab::read::{CountMethod, uring_direct};
use iolab_lab::units::format_bytes;

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
/// Counted runs per row: `--runs`, at most [`BIG_RUNS`] on a big data set unless `--sweep`.
pub(super) fn counted_runs(big: bool, config: &Config) -> usize {
    if big && !config.sweep {
        config.runs.min(BIG_RUNS)
    } else {
        config.runs
    }
}

/// A parameter setting of a method, and its row label.
pub(super) struct Variant {
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

    pub(super) fn job(&self, exe: &Path, method: CountMethod, data: &[PathBuf]) -> Measured {
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
pub(super) enum Grid {
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
pub(super) fn variants(
    method: CountMethod,
    cache: CacheState,
    cores: usize,
    grid: Grid,
) -> Vec<Variant> {
    let threads = |t: usize| Variant {
        label: Some(format!("threads={t}")),
        threads: Some(t),
        ..Variant::plain()
    };
    match (method, cache) {
        (CountMethod::MmapParallel, CacheState::Warm)
        | (CountMethod::PreadParallel, CacheState::Cold)
            if grid != Grid::One =>
        {
            (1..=cores).map(threads).collect()
        }
        (CountMethod::UringDirect, CacheState::Cold) if grid == Grid::Full => {
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

pub(super) fn baseline_jobs(ctx: &mut Context<'_>, data: &[PathBuf]) -> Vec<Measured> {
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

pub(super) fn parse_lines(outcome: &Outcome) -> Option<String> {
    parse_count(&outcome.stdout).map(|n| n.to_string())
}

/// The `total` line's count, the last line of `wc -l`'s (and `iolab count`'s) output for
/// several files.
pub(super) fn parse_total(outcome: &Outcome) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uring_direct_sweeps_cold_only_with_the_full_grid_and_threads_by_default() {
        let cold = CacheState::Cold;
        assert_eq!(
            variants(CountMethod::UringDirect, cold, 2, Grid::Threads).len(),
            1
        );
        assert_eq!(
            variants(CountMethod::UringDirect, cold, 2, Grid::Full).len(),
            SWEEP_QUEUE_DEPTHS.len() + SWEEP_BLOCK_SIZES.len()
        );
        assert_eq!(
            variants(CountMethod::PreadParallel, cold, 2, Grid::Threads).len(),
            2
        );
        assert_eq!(
            variants(CountMethod::PreadParallel, cold, 2, Grid::One).len(),
            1
        );
        let warm = CacheState::Warm;
        assert_eq!(
            variants(CountMethod::MmapParallel, warm, 4, Grid::Threads).len(),
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
}
