//! The measurement loop the file-reading suites (`count`, `edit`) share: jobs over one input
//! in a cache state, warm-up and counted rounds interleaved, the cache prepared and its
//! residency measured before every run outside the timer, rows that cannot win stopped
//! early, and the methods' answers checked against the expected one or each other.

use std::path::{Path, PathBuf};

use crate::cache_state::{COLD_MAX_RESIDENCY, CacheState, WARM_MIN_RESIDENCY};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::interrupt;
use crate::probes::{self, Sampler};
use crate::progress::Progress;
use crate::results::Row;
use crate::runner::{Job, Outcome, schedule};
use iolab::lab::cache;

/// A job to measure, and what its rows carry besides timings.
pub struct Measured {
    /// The command.
    pub job: Job,
    /// The baseline's version line, if any.
    pub version: Option<String>,
    /// Suite-specific keys for its row (`variant`, `threads`, …).
    pub extra: std::collections::BTreeMap<String, serde_json::Value>,
}

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
    /// run, never stopped by [`CANNOT_WIN`], so its median is never one unlucky sample.
    pub default_method: Option<&'a str>,
    /// Counted runs per row (`--runs`, or fewer where each run is costly).
    pub runs: usize,
}

/// A method whose fastest run so far is more than this many times the fastest method's
/// cannot win: after one counted run it stops (unless `--sweep`), with a note. Rows within
/// 2× keep every run, so the verdict's noise test still sees all the contenders' spread;
/// baselines always keep every run (they are the references).
pub const CANNOT_WIN: f64 = 2.0;

/// Decides which rows stop early by [`CANNOT_WIN`] (never with `--sweep`): it keeps the
/// fastest right run of any method (not a baseline) seen so far.
#[derive(Clone, Copy, Debug)]
pub struct CannotWin {
    fastest_method: f64,
    active: bool,
}

impl CannotWin {
    /// The rule for a section; `sweep` turns it off.
    pub fn new(sweep: bool) -> CannotWin {
        CannotWin {
            fastest_method: f64::INFINITY,
            active: !sweep,
        }
    }

    /// Notes a right run of a method.
    pub fn saw(&mut self, wall_s: f64) {
        self.fastest_method = self.fastest_method.min(wall_s);
    }

    /// Whether a row with `counted` runs counted, whose fastest run so far (warm-up
    /// included) took `own_fastest`, stops now.
    pub fn stops(&self, own_fastest: Option<f64>, counted: usize) -> bool {
        self.active
            && counted > 0
            && own_fastest.is_some_and(|f| f > CANNOT_WIN * self.fastest_method)
    }
}

/// The note of a row stopped by [`CANNOT_WIN`].
pub fn cannot_win_note(runs: usize) -> String {
    format!(
        "{runs} counted run{}: more than {CANNOT_WIN}× the fastest method's time, it cannot win \
         (--sweep gives it every run)",
        if runs == 1 { "" } else { "s" }
    )
}

/// Per-job accumulation over the rounds of one cache state.
#[derive(Default)]
struct Accumulator {
    /// Its fastest run so far, warm-up included.
    fastest: Option<f64>,
    /// Stopped early: it cannot win.
    stopped: bool,
    wall: Vec<f64>,
    user: Vec<f64>,
    sys: Vec<f64>,
    residency: Vec<f64>,
    results: Vec<String>,
    unavailable: Option<String>,
    error: Option<String>,
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
    let reached = match (residency, cache_state) {
        (None, _) => true,
        (Some(r), CacheState::Cold) => r <= COLD_MAX_RESIDENCY,
        (Some(r), CacheState::Warm) => r >= WARM_MIN_RESIDENCY,
    };
    Ok((residency, reached))
}

/// Measures `jobs` over `bench.inputs` in `cache` state: warm-up rounds, then counted
/// rounds, interleaved; the cache is prepared and its residency measured before every run,
/// outside the timer. With `probe`, a ceiling's sampler and the samples it wants, those
/// samples are spread over the counted rounds, each taken before a round's first run.
pub fn measure(
    ctx: &mut Context<'_>,
    bench: &FileBench<'_>,
    jobs: &[Measured],
    cache_state: CacheState,
    mut probe: Option<(&mut dyn Sampler, usize)>,
) -> Result<Vec<Row>> {
    let config = ctx.config;
    let warmup = warmup_for(ctx, cache_state);
    let runs = bench.runs;
    let rounds = warmup + runs;
    let order = schedule(jobs.len(), rounds);
    let mut acc: Vec<Accumulator> = jobs.iter().map(|_| Accumulator::default()).collect();
    let mut rule = CannotWin::new(config.sweep);
    let mut title = format!("{} {}", bench.suite, cache_state.name());
    if !bench.section.is_empty() {
        title = format!("{title} {}", bench.section);
    }
    let progress = Progress::section(&title, order.len() as u64, jobs.len(), config.progress);
    if cache_state == CacheState::Warm {
        // One warm state for every run and every suite order: evicted, then read once in
        // order (see `settle_warm`).
        for input in bench.inputs {
            settle_warm(input, !bench.users)?;
        }
    }
    let mut missed_state = 0usize;
    let mut probed_round = None;
    for (round, j) in order {
        if interrupt::interrupted() {
            break;
        }
        if let Some((sampler, wanted)) = probe.as_mut()
            && round >= warmup
            && probed_round != Some(round)
        {
            probed_round = Some(round);
            let due = samples_due(round - warmup, runs, *wanted);
            if sampler.samples() < due {
                progress.set_message(format!(
                    "round {}/{rounds}: the {} ceiling's probe",
                    round + 1,
                    cache_state.name()
                ));
                probes::sample_up_to(&mut **sampler, due);
            }
        }
        progress.inc();
        let a = &mut acc[j];
        if a.unavailable.is_some() || a.error.is_some() || a.stopped {
            continue;
        }
        let job = &jobs[j].job;
        if !job.baseline
            && bench.default_method != Some(job.name.as_str())
            && rule.stops(a.fastest, a.wall.len())
        {
            a.stopped = true;
            continue;
        }
        progress.set_message(format!("round {}/{rounds}: {}", round + 1, job.name));
        let (residency, reached) = prepare_inputs(bench, cache_state, config.drop_caches)?;
        let outcome = ctx
            .executor
            .execute(job)
            .map_err(|e| Error::io("cannot run a benchmark job", e))?;
        if interrupt::interrupted() {
            // The run was cut short by Ctrl-C: it is not a measurement.
            break;
        }
        if !outcome.success() {
            match outcome.unavailable_reason() {
                Some(reason) => a.unavailable = Some(reason),
                None => a.error = Some(outcome.failure_reason()),
            }
            continue;
        }
        let result = (bench.parse)(&outcome).unwrap_or_else(|| "unreadable output".into());
        a.fastest = Some(a.fastest.map_or(outcome.wall_s, |f| f.min(outcome.wall_s)));
        let right = bench.expected.as_ref().is_none_or(|e| *e == result);
        if !job.baseline && right {
            rule.saw(outcome.wall_s);
        }
        if round < warmup {
            // Warm-up runs still must be right.
            if !right {
                a.results.push(result);
            }
            continue;
        }
        if !reached {
            missed_state += 1;
        }
        a.wall.push(outcome.wall_s);
        a.user.push(outcome.user_s);
        a.sys.push(outcome.sys_s);
        a.residency.extend(residency);
        a.results.push(result);
    }
    progress.finish();
    if missed_state > 0 {
        ctx.warnings.push(format!(
            "{}: {missed_state} {} run(s) started with the cache not {} (see residency_before)",
            bench.suite,
            cache_state.name(),
            cache_state.name()
        ));
    }
    let mut rows: Vec<Row> = jobs
        .iter()
        .zip(acc)
        .map(|(m, a)| to_row(bench, m, a, cache_state))
        .collect();
    if bench.expected.is_none() {
        check_agreement(&mut rows);
    }
    Ok(rows)
}

/// Puts `input` in the page cache as a sequential read leaves it: evicted, then read
/// whole in 1 MiB pieces. Resident pages keep the folios of whoever read them last; a
/// previous section's parallel or random reads could leave small ones, and with small
/// folios a warm `mmap` scan faults per 64 KiB instead of per 2 MiB: in two full runs the
/// warm `mmap` rows spent 50–60 ms of system time on 1 GiB against 4 ms.
fn settle_warm(input: &Path, ours: bool) -> Result<()> {
    cache::evict_with(input, false, ours)?;
    cache::warm(input)?;
    Ok(())
}

/// How many of `wanted` probe samples are due before counted round `round` (from 0) of
/// `runs`: spread evenly, the first before round 0, none owed after the last round.
fn samples_due(round: usize, runs: usize, wanted: usize) -> usize {
    if runs == 0 {
        return wanted;
    }
    ((round + 1) * wanted).div_ceil(runs).min(wanted)
}

/// Without a known answer, the methods verify each other: the result most rows printed
/// (every run of a row printed the same, or it already failed) is taken as right, and a
/// row that printed another is wrong.
fn check_agreement(rows: &mut [Row]) {
    let mut votes: Vec<(String, usize)> = Vec::new();
    for r in rows.iter().filter(|r| r.verified) {
        let result = r.result.clone().unwrap_or_default();
        match votes.iter_mut().find(|(v, _)| *v == result) {
            Some((_, n)) => *n += 1,
            None => votes.push((result, 1)),
        }
    }
    let Some((agreed, _)) = votes.into_iter().max_by_key(|(_, n)| *n) else {
        return;
    };
    for r in rows.iter_mut().filter(|r| r.verified) {
        if r.result.as_deref() != Some(agreed.as_str()) {
            r.verified = false;
            r.error = Some(format!(
                "disagrees with the other methods: printed {}, most printed {agreed}",
                r.result.as_deref().unwrap_or("nothing")
            ));
        }
    }
}

fn to_row(bench: &FileBench<'_>, m: &Measured, a: Accumulator, cache_state: CacheState) -> Row {
    let mut row = Row {
        suite: bench.suite.to_string(),
        method: m.job.name.clone(),
        cache: Some(cache_state.name().to_string()),
        baseline: m.job.baseline,
        version: m.version.clone(),
        bytes: bench.bytes,
        extra: m.extra.clone(),
        ..Row::default()
    };
    if let Some(reason) = a.unavailable {
        row.unavailable = Some(reason);
        return row;
    }
    row.error = a.error;
    row.set_timings(&a.wall, &a.user, &a.sys);
    if a.stopped {
        row.notes.push(cannot_win_note(a.wall.len()));
    }
    // Against the known answer, or, without one, against the row's own first result (the
    // rows are then checked against each other, see check_agreement).
    let expected = bench.expected.as_ref().or(a.results.first());
    let wrong: Vec<&String> = a.results.iter().filter(|r| Some(*r) != expected).collect();
    row.verified = !a.wall.is_empty() && wrong.is_empty();
    row.result = a.results.last().cloned();
    if let (Some(bad), Some(expected)) = (wrong.first(), expected) {
        row.error
            .get_or_insert(format!("wrong result: printed {bad}, expected {expected}"));
    }
    row.set_residency(cache_state, a.residency);
    if bench.bytes == 0 {
        row.notes.push(EMPTY_NOTE.to_string());
    }
    row
}

/// The note of a row measured on an empty input.
pub const EMPTY_NOTE: &str = "an empty file: its cache state and its share of a ceiling are n/a (no page to cache, no byte to read)";

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

/// Puts `input` in `cache_state` and returns the residency measured afterwards. A file
/// that is not ours (`ours` false: a user's `--file`) is evicted without `fdatasync`.
pub fn prepare(
    input: &Path,
    cache_state: CacheState,
    drop_caches: bool,
    ours: bool,
) -> Result<f64> {
    match cache_state {
        CacheState::Cold => {
            let first = cache::evict_with(input, drop_caches, ours)?;
            if first.residency <= COLD_MAX_RESIDENCY {
                return Ok(first.residency);
            }
            // Read-ahead of a concurrent reader or a slow writeback: one more try.
            Ok(cache::evict_with(input, drop_caches, ours)?.residency)
        }
        CacheState::Warm => {
            let now = cache::residency_of(input)?;
            if now >= WARM_MIN_RESIDENCY {
                Ok(now)
            } else {
                Ok(cache::warm(input)?)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_stops_only_after_a_counted_run_more_than_cannot_win_times_the_fastest() {
        let mut rule = CannotWin::new(false);
        assert!(!rule.stops(Some(100.0), 1), "no method seen yet");
        rule.saw(1.0);
        assert!(rule.stops(Some(CANNOT_WIN * 1.01), 1));
        assert!(!rule.stops(Some(CANNOT_WIN * 0.99), 1), "within the factor");
        assert!(!rule.stops(Some(100.0), 0), "not before one counted run");
        assert!(!rule.stops(None, 3));
        let mut sweep = CannotWin::new(true);
        sweep.saw(1.0);
        assert!(!sweep.stops(Some(100.0), 1), "--sweep keeps every run");
    }

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
            ceilings: None,
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
            rows.iter().all(|r| r.runs.len() == 5 && r.verified),
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
