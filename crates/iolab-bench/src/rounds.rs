//! The round driver every suite measures with, written once: jobs in interleaved rounds
//! ([`schedule`]), warm-up rounds then counted ones, Ctrl-C, the progress bar, a job that
//! failed or cannot run left out of later rounds, the cannot-win rule ([`CANNOT_WIN`]), a
//! costly job's runs capped, and the seconds each job took.
//!
//! A suite hands [`drive`] its jobs ([`Entry`]) and a [`Measure`] — usually a closure — that
//! prepares and runs one job once and returns a [`Run`]; it gets back each job's [`Tally`]
//! and makes its rows from that. How rounds are measured: `docs/methodology.md`.

use crate::context::{Config, Context};
use crate::error::Result;
use crate::interrupt;
use crate::progress::Progress;
use crate::results::Row;
use crate::runner::Outcome;

/// A method whose fastest run so far is more than this many times the fastest method's
/// cannot win: after one counted run it stops (unless `--sweep`), with a note. Rows within
/// 2× keep every run, so the verdict's noise test still sees all the contenders' spread;
/// baselines always keep every run (they are the references).
pub const CANNOT_WIN: f64 = 2.0;

/// The interleaved order of `rounds` rounds over `jobs` jobs: `(round, job)` pairs.
///
/// Round *r* runs every job exactly once, starting at job *r mod jobs* and wrapping
/// around, so no job is always first (or always right after the same neighbour).
pub fn schedule(jobs: usize, rounds: usize) -> Vec<(usize, usize)> {
    (0..rounds)
        .flat_map(|round| (0..jobs).map(move |i| (round, (round + i) % jobs)))
        .collect()
}

/// What a job is to the cannot-win rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// One of iolab's methods: its right runs set the pace, and it stops when it cannot win.
    Method,
    /// The row a user gets without choosing: it sets the pace but keeps every run, so its
    /// median is never one unlucky sample.
    Default,
    /// A reference (`wc -l`, fio, …): it keeps every run and never sets the pace.
    Baseline,
}

/// One job as the driver sees it.
#[derive(Clone, Debug)]
pub struct Entry {
    /// What the progress line shows while it runs.
    pub label: String,
    /// Its place in the cannot-win rule.
    pub role: Role,
    /// At most this many counted runs and no warm-up run (a costly peer).
    pub max_runs: Option<usize>,
}

impl Entry {
    /// A job labelled `label` with `role`, every round.
    pub fn new(label: impl Into<String>, role: Role) -> Entry {
        Entry {
            label: label.into(),
            role,
            max_runs: None,
        }
    }

    /// At most `max` counted runs, and none in the warm-up rounds.
    pub fn capped(mut self, max: usize) -> Entry {
        self.max_runs = Some(max);
        self
    }
}

/// How a section is measured.
#[derive(Clone, Debug)]
pub struct Rounds {
    /// The progress bar's title (`count warm`, `write pipe`, …).
    pub title: String,
    /// Print `<title>: N rows in X s` at the end when there is no terminal (a section
    /// that is one table); `false` when the suite prints its own lines.
    pub section_line: bool,
    /// Warm-up rounds (run, checked, not counted).
    pub warmup: usize,
    /// Counted rounds.
    pub runs: usize,
    /// Stop the methods that cannot win ([`CANNOT_WIN`]); `false` with `--sweep` and in
    /// suites that keep every run.
    pub cannot_win: bool,
    /// Show progress (`--progress`, the default).
    pub show: bool,
}

impl Rounds {
    /// A section titled `title` with `config`'s warm-up and counted rounds, progress as
    /// the run asks, the methods that cannot win stopped (unless `--sweep`), and the
    /// section's line printed at its end.
    pub fn section(title: impl Into<String>, config: &Config) -> Rounds {
        Rounds {
            title: title.into(),
            section_line: true,
            warmup: config.warmup,
            runs: config.runs,
            cannot_win: !config.sweep,
            show: config.progress,
        }
    }

    /// `warmup` warm-up rounds and `runs` counted ones instead of the configured ones.
    pub fn rounds(mut self, warmup: usize, runs: usize) -> Rounds {
        self.warmup = warmup;
        self.runs = runs;
        self
    }

    /// Every row keeps every run: no cannot-win rule.
    pub fn every_run(mut self) -> Rounds {
        self.cannot_win = false;
        self
    }

    /// No section line at the end: the suite prints its own, per table.
    pub fn without_line(mut self) -> Rounds {
        self.section_line = false;
        self
    }
}

/// Which run the driver asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Turn {
    /// The job's index in the entries.
    pub job: usize,
    /// The round, from 0 (warm-up rounds first).
    pub round: usize,
    /// Whether the run is counted (not a warm-up run).
    pub counted: bool,
}

/// One run of a job.
#[derive(Debug)]
pub enum Run<S> {
    /// It ended: its sample, its wall time (for the cannot-win rule), and whether its answer
    /// was right (a wrong run never sets the pace; the suite's rows say it was wrong).
    Done { sample: S, wall_s: f64, right: bool },
    /// It cannot run here, and why: no later round runs it.
    Unavailable(String),
    /// It failed, and how: no later round runs it.
    Failed(String),
    /// Its answer was wrong in a way that ends it: no later round runs it.
    Wrong(String),
}

impl<S> Run<S> {
    /// A right run taking `wall_s`.
    pub fn done(sample: S, wall_s: f64) -> Run<S> {
        Run::Done {
            sample,
            wall_s,
            right: true,
        }
    }
}

/// What a job's runs gathered.
#[derive(Debug)]
pub struct Tally<S> {
    /// The samples of its warm-up runs.
    pub warmup: Vec<S>,
    /// The samples of its counted runs.
    pub counted: Vec<S>,
    /// Why it cannot run here.
    pub unavailable: Option<String>,
    /// How it failed.
    pub error: Option<String>,
    /// How its answer was wrong.
    pub wrong: Option<String>,
    /// Stopped early: it cannot win.
    pub stopped: bool,
    /// Seconds spent on its runs, preparation included.
    pub seconds: f64,
    /// Its fastest run, warm-up included.
    fastest: Option<f64>,
}

impl<S> Default for Tally<S> {
    fn default() -> Self {
        Tally {
            warmup: Vec::new(),
            counted: Vec::new(),
            unavailable: None,
            error: None,
            wrong: None,
            stopped: false,
            seconds: 0.0,
            fastest: None,
        }
    }
}

impl<S> Tally<S> {
    /// Runs that ended, warm-up included.
    pub fn ended(&self) -> usize {
        self.warmup.len() + self.counted.len()
    }

    /// It is out of later rounds.
    fn out(&self) -> bool {
        self.unavailable.is_some() || self.error.is_some() || self.wrong.is_some() || self.stopped
    }

    /// The note of a row stopped by the cannot-win rule.
    pub fn stopped_note(&self) -> Option<String> {
        self.stopped.then(|| cannot_win_note(self.counted.len()))
    }

    fn record(&mut self, run: Run<S>, counted: bool) -> Option<(f64, bool)> {
        match run {
            Run::Done {
                sample,
                wall_s,
                right,
            } => {
                self.fastest = Some(self.fastest.map_or(wall_s, |f| f.min(wall_s)));
                if counted {
                    self.counted.push(sample);
                } else {
                    self.warmup.push(sample);
                }
                Some((wall_s, right))
            }
            Run::Unavailable(reason) => {
                self.unavailable = Some(reason);
                None
            }
            Run::Failed(error) => {
                self.error = Some(error);
                None
            }
            Run::Wrong(wrong) => {
                self.wrong = Some(wrong);
                None
            }
        }
    }
}

/// The note of a row stopped by [`CANNOT_WIN`] after `runs` counted runs.
pub fn cannot_win_note(runs: usize) -> String {
    format!(
        "{runs} counted run{}: more than {CANNOT_WIN}× the fastest method's time, it cannot win \
         (--sweep gives it every run)",
        if runs == 1 { "" } else { "s" }
    )
}

/// A run's wall, user and system seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Times {
    pub wall_s: f64,
    pub user_s: f64,
    pub sys_s: f64,
}

impl Times {
    /// The times of a child process's run.
    pub fn of(outcome: &Outcome) -> Times {
        Times {
            wall_s: outcome.wall_s,
            user_s: outcome.user_s,
            sys_s: outcome.sys_s,
        }
    }

    /// Runs `work` in this process and times it: wall time, and the CPU time of this
    /// thread (`who` = `RUSAGE_THREAD`) or of the whole process (`RUSAGE_SELF`: every
    /// thread, living or joined).
    pub fn in_process<T>(who: libc::c_int, work: impl FnOnce() -> T) -> (T, Times) {
        let before = cpu_s(who);
        let start = std::time::Instant::now();
        let out = work();
        let wall_s = start.elapsed().as_secs_f64();
        let after = cpu_s(who);
        let times = Times {
            wall_s,
            user_s: after.0 - before.0,
            sys_s: after.1 - before.1,
        };
        (out, times)
    }

    /// Each of `times` divided by `n` (per record, per operation).
    pub fn per(self, n: f64) -> Times {
        Times {
            wall_s: self.wall_s / n,
            user_s: self.user_s / n,
            sys_s: self.sys_s / n,
        }
    }
}

/// User and system CPU seconds of `who` (`RUSAGE_THREAD` or `RUSAGE_SELF`).
fn cpu_s(who: libc::c_int) -> (f64, f64) {
    // SAFETY: all-zero is a valid `rusage`.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is valid for writes; RUSAGE_THREAD is supported since Linux 2.6.26.
    let rc = unsafe { libc::getrusage(who, &mut usage) };
    if rc != 0 {
        return (0.0, 0.0);
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(usage.ru_utime), s(usage.ru_stime))
}

/// Sets `row`'s timings (runs, median, spread, throughput, user and system medians) from
/// its counted runs' times.
pub fn set_times(row: &mut Row, times: impl IntoIterator<Item = Times>) {
    let (mut wall, mut user, mut sys) = (Vec::new(), Vec::new(), Vec::new());
    for t in times {
        wall.push(t.wall_s);
        user.push(t.user_s);
        sys.push(t.sys_s);
    }
    row.set_timings(&wall, &user, &sys);
}

/// Runs one job once for the driver.
pub trait Measure {
    /// What a run gives.
    type Sample;

    /// Prepares and runs job `turn.job` once (cleaning up after it), and says how it went.
    /// An `Err` ends the whole measurement (the machine, not the job, failed).
    fn run_once(&mut self, ctx: &mut Context<'_>, turn: Turn) -> Result<Run<Self::Sample>>;

    /// Called before the first run of each round (`round` from 0, warm-up rounds first).
    fn before_round(
        &mut self,
        _ctx: &mut Context<'_>,
        _round: usize,
        _progress: &Progress,
    ) -> Result<()> {
        Ok(())
    }
}

impl<S, F> Measure for F
where
    F: FnMut(&mut Context<'_>, Turn) -> Result<Run<S>>,
{
    type Sample = S;

    fn run_once(&mut self, ctx: &mut Context<'_>, turn: Turn) -> Result<Run<S>> {
        self(ctx, turn)
    }
}

/// Decides which rows stop early by [`CANNOT_WIN`]: it keeps the fastest right run of any
/// method (not a baseline) seen so far.
#[derive(Clone, Copy, Debug)]
struct CannotWin {
    fastest_method: f64,
    active: bool,
}

impl CannotWin {
    fn new(active: bool) -> CannotWin {
        CannotWin {
            fastest_method: f64::INFINITY,
            active,
        }
    }

    /// Notes a right run of a method.
    fn saw(&mut self, wall_s: f64) {
        self.fastest_method = self.fastest_method.min(wall_s);
    }

    /// Whether a row with `counted` runs counted, whose fastest run so far (warm-up
    /// included) took `own_fastest`, stops now.
    fn stops(&self, own_fastest: Option<f64>, counted: usize) -> bool {
        self.active
            && counted > 0
            && own_fastest.is_some_and(|f| f > CANNOT_WIN * self.fastest_method)
    }
}

/// Whether `entry` runs in this round: a capped entry skips the warm-up rounds and stops
/// after its counted runs.
fn wants_run<S>(entry: &Entry, tally: &Tally<S>, counted: bool) -> bool {
    match entry.max_runs {
        Some(max) => counted && tally.counted.len() < max,
        None => true,
    }
}

/// Measures `entries` in `rounds`: every job once per round, warm-up rounds first, each
/// round starting one job later; returns each job's tally, in the entries' order. Ctrl-C
/// stops at the next run, and a run it cut short is not kept.
pub fn drive<M: Measure>(
    ctx: &mut Context<'_>,
    rounds: &Rounds,
    entries: &[Entry],
    measure: &mut M,
) -> Result<Vec<Tally<M::Sample>>> {
    let total = rounds.warmup + rounds.runs;
    let order = schedule(entries.len(), total);
    let mut tallies: Vec<Tally<M::Sample>> = entries.iter().map(|_| Tally::default()).collect();
    let mut rule = CannotWin::new(rounds.cannot_win);
    let progress = if rounds.section_line {
        Progress::section(
            &rounds.title,
            order.len() as u64,
            entries.len(),
            rounds.show,
        )
    } else {
        Progress::new(&rounds.title, order.len() as u64, rounds.show)
    };
    let mut started_round = None;
    for (round, job) in order {
        if interrupt::interrupted() {
            break;
        }
        if started_round != Some(round) {
            started_round = Some(round);
            measure.before_round(ctx, round, &progress)?;
        }
        progress.inc();
        let (entry, tally) = (&entries[job], &mut tallies[job]);
        let counted = round >= rounds.warmup;
        if tally.out() || !wants_run(entry, tally, counted) {
            continue;
        }
        if entry.role == Role::Method && rule.stops(tally.fastest, tally.counted.len()) {
            tally.stopped = true;
            continue;
        }
        progress.set_message(format!("round {}/{total}: {}", round + 1, entry.label));
        let started = std::time::Instant::now();
        let run = measure.run_once(
            ctx,
            Turn {
                job,
                round,
                counted,
            },
        )?;
        tally.seconds += started.elapsed().as_secs_f64();
        if interrupt::interrupted() {
            // The run was cut short by Ctrl-C: it is not a measurement.
            break;
        }
        if let Some((wall_s, right)) = tally.record(run, counted)
            && right
            && entry.role != Role::Baseline
        {
            rule.saw(wall_s);
        }
    }
    progress.finish();
    Ok(tallies)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_runs_every_job_once_per_round_and_rotates() {
        let order = schedule(3, 4);
        assert_eq!(order.len(), 12);
        for round in 0..4 {
            let mut seen: Vec<usize> = order
                .iter()
                .filter(|(r, _)| *r == round)
                .map(|(_, j)| *j)
                .collect();
            assert_eq!(
                seen[0],
                round % 3,
                "round {round} starts at job round mod n"
            );
            seen.sort();
            assert_eq!(seen, vec![0, 1, 2]);
        }
        // Rounds come one after another: all of round 0 before any of round 1.
        assert!(order.windows(2).all(|w| w[0].0 <= w[1].0));
    }

    #[test]
    fn schedule_of_nothing_is_empty() {
        assert!(schedule(0, 5).is_empty());
        assert!(schedule(5, 0).is_empty());
    }

    #[test]
    fn a_row_stops_only_after_a_counted_run_more_than_cannot_win_times_the_fastest() {
        let mut rule = CannotWin::new(true);
        assert!(!rule.stops(Some(100.0), 1), "no method seen yet");
        rule.saw(1.0);
        assert!(rule.stops(Some(CANNOT_WIN * 1.01), 1));
        assert!(!rule.stops(Some(CANNOT_WIN * 0.99), 1), "within the factor");
        assert!(!rule.stops(Some(100.0), 0), "not before one counted run");
        assert!(!rule.stops(None, 3));
        let mut sweep = CannotWin::new(false);
        sweep.saw(1.0);
        assert!(!sweep.stops(Some(100.0), 1), "--sweep keeps every run");
    }

    /// Runs `f` with a context of the tests' configuration.
    fn with_ctx<T>(f: impl FnOnce(&mut Context<'_>) -> T) -> T {
        let config = Config::for_tests();
        let mut executor = crate::runner::ProcessExecutor;
        let mut ctx = Context {
            config: &config,
            executor: &mut executor,
            warnings: Vec::new(),
            notes: Vec::new(),
        };
        f(&mut ctx)
    }

    fn rounds(warmup: usize, runs: usize) -> Rounds {
        Rounds {
            title: "test".into(),
            section_line: false,
            warmup,
            runs,
            cannot_win: true,
            show: false,
        }
    }

    /// Drives `entries` whose runs take `walls[job]` seconds (or fail with `fails[job]`),
    /// and logs every turn.
    fn drive_fake(
        rounds: &Rounds,
        entries: &[Entry],
        run: impl Fn(Turn) -> Run<f64>,
    ) -> (Vec<Tally<f64>>, Vec<Turn>) {
        let mut turns = Vec::new();
        let tallies = with_ctx(|ctx| {
            drive(ctx, rounds, entries, &mut |_: &mut Context<'_>, t: Turn| {
                turns.push(t);
                Ok(run(t))
            })
        })
        .unwrap();
        (tallies, turns)
    }

    #[test]
    fn warm_up_runs_are_kept_apart_and_a_failed_job_leaves_later_rounds() {
        let entries = [
            Entry::new("a", Role::Method),
            Entry::new("b", Role::Method),
            Entry::new("c", Role::Baseline),
        ];
        let (tallies, turns) = drive_fake(&rounds(1, 3), &entries, |t| match t.job {
            1 if t.round == 2 => Run::Failed("broke".into()),
            _ => Run::done(t.round as f64, 1.0),
        });
        assert_eq!(tallies[0].warmup, [0.0]);
        assert_eq!(tallies[0].counted, [1.0, 2.0, 3.0]);
        assert_eq!(tallies[1].counted, [1.0]);
        assert_eq!(tallies[1].error.as_deref(), Some("broke"));
        assert_eq!(
            turns.iter().filter(|t| t.job == 1).count(),
            3,
            "not after failing"
        );
        assert_eq!(tallies[2].ended(), 4);
        assert!(turns.iter().all(|t| t.counted == (t.round >= 1)));
    }

    #[test]
    fn a_method_that_cannot_win_stops_but_the_default_and_baselines_keep_every_run() {
        let entries = [
            Entry::new("fast", Role::Method),
            Entry::new("slow", Role::Method),
            Entry::new("slow default", Role::Default),
            Entry::new("slow baseline", Role::Baseline),
        ];
        let walls = [1.0, 3.0, 3.0, 0.1];
        let (tallies, _) = drive_fake(&rounds(1, 4), &entries, |t| {
            Run::done(walls[t.job], walls[t.job])
        });
        assert_eq!(tallies[0].counted.len(), 4);
        assert!(tallies[1].stopped);
        assert_eq!(
            tallies[1].counted.len(),
            1,
            "one counted run, then it stops"
        );
        assert!(
            tallies[1]
                .stopped_note()
                .unwrap()
                .starts_with("1 counted run:")
        );
        assert_eq!(tallies[2].counted.len(), 4, "the default keeps every run");
        assert_eq!(tallies[3].counted.len(), 4, "a baseline keeps every run");
        assert!(
            !tallies[0].stopped,
            "a baseline's faster runs do not set the pace"
        );
    }

    #[test]
    fn a_wrong_run_does_not_set_the_pace() {
        let entries = [
            Entry::new("wrong", Role::Method),
            Entry::new("right", Role::Method),
        ];
        let (tallies, _) = drive_fake(&rounds(0, 3), &entries, |t| match t.job {
            0 => Run::Done {
                sample: 0.1,
                wall_s: 0.1,
                right: false,
            },
            _ => Run::done(1.0, 1.0),
        });
        assert!(!tallies[1].stopped);
        assert_eq!(tallies[1].counted.len(), 3);
    }

    #[test]
    fn a_capped_job_skips_the_warm_up_and_stops_at_its_cap() {
        let entries = [
            Entry::new("a", Role::Method),
            Entry::new("peer", Role::Baseline).capped(2),
        ];
        let (tallies, turns) = drive_fake(&rounds(1, 4), &entries, |_| Run::done(0.0, 1.0));
        assert_eq!(tallies[1].warmup.len(), 0);
        assert_eq!(tallies[1].counted.len(), 2);
        assert!(turns.iter().filter(|t| t.job == 1).all(|t| t.counted));
        assert_eq!(tallies[0].counted.len(), 4);
    }

    #[test]
    fn before_round_comes_once_before_each_rounds_first_run() {
        struct Log(Vec<String>);
        impl Measure for Log {
            type Sample = ();
            fn run_once(&mut self, _: &mut Context<'_>, t: Turn) -> Result<Run<()>> {
                self.0.push(format!("{}", t.job));
                Ok(Run::done((), 1.0))
            }
            fn before_round(&mut self, _: &mut Context<'_>, r: usize, _: &Progress) -> Result<()> {
                self.0.push(format!("r{r}"));
                Ok(())
            }
        }
        let mut log = Log(Vec::new());
        let entries = [Entry::new("a", Role::Method), Entry::new("b", Role::Method)];
        with_ctx(|ctx| drive(ctx, &rounds(1, 2), &entries, &mut log)).unwrap();
        assert_eq!(log.0.join(" "), "r0 0 1 r1 1 0 r2 0 1");
    }
}
