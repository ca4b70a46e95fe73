//! The `count` suite's measurement on the round driver: jobs over one input in a cache
//! state, the cache prepared and its residency measured before every run outside the
//! timer, and a ceiling's probe samples spread between the counted rounds.

use std::path::PathBuf;

use crate::cache_state::{CacheState, missed_warning, prepare, reached};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::probes::{self, Sampler};
use crate::progress::Progress;
use crate::rounds::{Entry, Measure, Role, Rounds, Run, Tally, Times, Turn, drive};
use crate::runner::{Job, Outcome};

/// A job to measure, and what its rows carry besides timings.
pub struct Measured {
    /// The command.
    pub job: Job,
    /// The baseline's version line, if any.
    pub version: Option<String>,
    /// Suite-specific keys for its row (`variant`, `threads`, …).
    pub extra: std::collections::BTreeMap<String, serde_json::Value>,
}

#[cfg(test)]
impl Measured {
    /// A job with no version and no extra keys.
    pub fn new(job: Job) -> Measured {
        Measured {
            job,
            version: None,
            extra: Default::default(),
        }
    }
}

/// What a file-reading suite measures: jobs over one input in several cache states.
pub struct FileBench<'a> {
    /// The suite's name, for the rows.
    pub suite: &'a str,
    /// What tells this input's section apart in the progress line (a `--file`'s path),
    /// or empty.
    pub section: &'a str,
    /// The input every job reads.
    pub inputs: &'a [PathBuf],
    /// Its size.
    pub bytes: u64,
    /// The result every run must print; `None` when unknown (a user's file): then the
    /// rows must agree with each other.
    pub expected: Option<String>,
    /// The input is the user's (`--file`): read only, never synced.
    pub users: bool,
    /// Reads a run's result from its output.
    pub parse: fn(&Outcome) -> Option<String>,
    /// The row a user gets without choosing (`auto`): like the baselines it keeps every
    /// run, never stopped by [`CANNOT_WIN`](crate::rounds::CANNOT_WIN), so its median is never one unlucky sample.
    pub default_method: Option<&'a str>,
    /// Counted runs per row (`--runs`, or fewer where each run is costly).
    pub runs: usize,
}

/// One run of a job: its times, the result it printed, the residency before it and whether
/// the cache state was reached.
#[derive(Debug)]
pub(super) struct FileSample {
    pub(super) times: Times,
    pub(super) result: String,
    pub(super) residency: Option<f64>,
    pub(super) reached: bool,
}

/// Every input put in `cache_state` before a run: the residency, the worst of them, and
/// whether the state was reached. An empty input has no pages: no cache state to prepare
/// or to miss.
fn prepare_inputs(
    bench: &FileBench<'_>,
    cache_state: CacheState,
    drop_caches: bool,
) -> Result<(Option<f64>, bool)> {
    let mut residency = None::<f64>;
    for input in bench.inputs.iter().filter(|_| bench.bytes > 0) {
        let r = prepare(input, cache_state, drop_caches, !bench.users)?;
        residency = Some(match (residency, cache_state) {
            (None, _) => r,
            (Some(w), CacheState::Warm) => w.min(r),
            (Some(w), CacheState::Cold) => w.max(r),
        });
    }
    let reached = residency.is_none_or(|r| reached(cache_state, r));
    Ok((residency, reached))
}

/// Runs one job once in a cache state, for the round driver; with a probe, takes the
/// ceiling's samples due before a counted round.
struct FileRuns<'b, 'p> {
    bench: &'b FileBench<'b>,
    jobs: &'b [Measured],
    cache_state: CacheState,
    warmup: usize,
    probe: Option<(&'p mut dyn Sampler, usize)>,
}

impl Measure for FileRuns<'_, '_> {
    type Sample = FileSample;

    fn run_once(&mut self, ctx: &mut Context<'_>, turn: Turn) -> Result<Run<FileSample>> {
        let bench = self.bench;
        let job = &self.jobs[turn.job].job;
        let (residency, reached) = prepare_inputs(bench, self.cache_state, ctx.config.drop_caches)?;
        let outcome = ctx
            .executor
            .execute(job)
            .map_err(|e| Error::io("cannot run a benchmark job", e))?;
        if !outcome.success() {
            return Ok(match outcome.unavailable_reason() {
                Some(reason) => Run::Unavailable(reason),
                None => Run::Failed(outcome.failure_reason()),
            });
        }
        let result = (bench.parse)(&outcome).unwrap_or_else(|| "unreadable output".into());
        let right = bench.expected.as_ref().is_none_or(|e| *e == result);
        Ok(Run::Done {
            wall_s: outcome.wall_s,
            right,
            sample: FileSample {
                times: Times::of(&outcome),
                result,
                residency,
                reached,
            },
        })
    }

    fn before_round(
        &mut self,
        _ctx: &mut Context<'_>,
        round: usize,
        progress: &Progress,
    ) -> Result<()> {
        let Some((sampler, wanted)) = self.probe.as_mut() else {
            return Ok(());
        };
        if round < self.warmup {
            return Ok(());
        }
        let due = samples_due(round - self.warmup, self.bench.runs, *wanted);
        if sampler.samples() < due {
            progress.set_message(format!(
                "round {}/{}: the {} ceiling's probe",
                round + 1,
                self.warmup + self.bench.runs,
                self.cache_state.name()
            ));
            probes::sample_up_to(&mut **sampler, due);
        }
        Ok(())
    }
}

/// Measures `jobs` over `bench.inputs` in `cache` state (each job's tally, in order):
/// warm-up rounds, then counted rounds, interleaved; the cache is prepared and its residency measured before every run,
/// outside the timer. With `probe`, a ceiling's sampler and the samples it wants, those
/// samples are spread over the counted rounds, each taken before a round's first run.
pub fn measure(
    ctx: &mut Context<'_>,
    bench: &FileBench<'_>,
    jobs: &[Measured],
    cache_state: CacheState,
    probe: Option<(&mut dyn Sampler, usize)>,
) -> Result<Vec<Tally<FileSample>>> {
    let config = ctx.config;
    let warmup = warmup_for(ctx, cache_state);
    let mut title = format!("{} {}", bench.suite, cache_state.name());
    if !bench.section.is_empty() {
        title = format!("{title} {}", bench.section);
    }
    let rounds = Rounds::section(title, config).rounds(warmup, bench.runs);
    let entries: Vec<Entry> = jobs
        .iter()
        .map(|m| {
            let role = if m.job.baseline {
                Role::Baseline
            } else if bench.default_method == Some(m.job.name.as_str()) {
                Role::Default
            } else {
                Role::Method
            };
            Entry::new(&m.job.name, role)
        })
        .collect();
    if cache_state == CacheState::Warm {
        // One warm state for every run and every suite order: evicted, then read once in
        // order (see [`settle_warm`](crate::cache_state::settle_warm)).
        for input in bench.inputs {
            crate::cache_state::settle_warm(input, !bench.users)?;
        }
    }
    let mut runs = FileRuns {
        bench,
        jobs,
        cache_state,
        warmup,
        probe,
    };
    let tallies = drive(ctx, &rounds, &entries, &mut runs)?;
    let missed = tallies
        .iter()
        .flat_map(|t| &t.counted)
        .filter(|s| !s.reached);
    ctx.warnings
        .extend(missed_warning(bench.suite, missed.count(), cache_state));
    Ok(tallies)
}

/// How many of `wanted` probe samples are due before counted round `round` (from 0) of
/// `runs`: spread evenly, the first before round 0, none owed after the last round.
fn samples_due(round: usize, runs: usize, wanted: usize) -> usize {
    if runs == 0 {
        return wanted;
    }
    ((round + 1) * wanted).div_ceil(runs).min(wanted)
}

/// The warm-up rounds for `cache_state`: none for a cold state measured after the warm
/// one (the programs are in memory already; a cold warm-up run would only read the file
/// once more from the device), else the configured ones.
fn warmup_for(ctx: &Context<'_>, cache_state: CacheState) -> usize {
    let config = ctx.config;
    let warm_first = config.caches.first() == Some(&CacheState::Warm);
    if cache_state == CacheState::Cold && warm_first && !config.sweep {
        0
    } else {
        config.warmup
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_samples_are_spread_over_the_counted_rounds() {
        let due: Vec<usize> = (0..5).map(|r| samples_due(r, 5, 3)).collect();
        assert_eq!(due, [1, 2, 2, 3, 3]);
        assert_eq!((0..5).map(|r| samples_due(r, 5, 5)).max(), Some(5));
        assert_eq!(samples_due(0, 5, 5), 1, "one per round");
        assert_eq!(samples_due(0, 2, 3), 2, "fewer rounds than samples");
        assert_eq!(samples_due(1, 2, 3), 3, "none owed after the last round");
        assert_eq!(samples_due(0, 0, 3), 3);
    }

    /// Logs every run and every probe sample, in order.
    struct Log(std::rc::Rc<std::cell::RefCell<Vec<String>>>);

    impl crate::runner::Executor for Log {
        fn execute(&mut self, job: &Job) -> std::io::Result<Outcome> {
            self.0.borrow_mut().push(job.name.clone());
            Ok(Outcome {
                wall_s: 0.01,
                code: Some(0),
                stdout: "3 f\n".into(),
                ..Outcome::default()
            })
        }
    }

    impl Sampler for Log {
        fn sample(&mut self) {
            self.0.borrow_mut().push("probe".into());
        }
        fn samples(&self) -> usize {
            self.0.borrow().iter().filter(|e| *e == "probe").count()
        }
        fn finish(self: Box<Self>) -> crate::probes::Probe {
            crate::probes::Probe::default()
        }
    }

    #[test]
    fn probe_samples_fall_between_the_runs_of_counted_rounds() {
        let dir = iolab_testkit::scratch();
        let input = dir.path().join("f");
        std::fs::write(&input, "a\nb\nc\n").unwrap();
        let events = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let mut executor = Log(events.clone());
        let mut sampler = Log(events.clone());
        let config = crate::context::Config {
            warmup: 1,
            ..crate::context::Config::for_tests()
        };
        let mut ctx = Context {
            config: &config,
            executor: &mut executor,
            warnings: Vec::new(),
            notes: Vec::new(),
        };
        let inputs = [input];
        let bench = FileBench {
            suite: "count",
            section: "",
            inputs: &inputs,
            bytes: 6,
            expected: Some("3".into()),
            users: false,
            parse: |o| o.stdout.split_whitespace().next().map(str::to_string),
            default_method: None,
            runs: 5,
        };
        let jobs: Vec<Measured> = ["a", "b"]
            .iter()
            .map(|n| Measured::new(Job::new(*n, "/bin/true", Vec::<String>::new(), false)))
            .collect();
        let rows = measure(
            &mut ctx,
            &bench,
            &jobs,
            CacheState::Warm,
            Some((&mut sampler, 3)),
        )
        .unwrap();
        assert!(
            rows.iter()
                .all(|t| t.counted.len() == 5 && t.counted.iter().all(|s| s.result == "3")),
            "{rows:?}"
        );
        let events = events.borrow().join(" ");
        // Warm-up round (no probe), then counted rounds 0, 1 and 3 start with a sample.
        assert_eq!(
            events, "a b probe b a probe a b b a probe a b b a",
            "the schedule alternates which job goes first"
        );
    }
}
