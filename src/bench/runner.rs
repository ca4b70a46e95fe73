//! Running jobs: external processes timed from spawn to exit, in an interleaved order.
//!
//! Every job, iolab's own methods included, runs as a child process (`iolab count
//! --method NAME FILE`, `wc -l FILE`), so all rows pay the same process start-up and are
//! measured the same way: wall time around `spawn`…`wait4`, CPU time from `wait4`'s
//! `rusage`. The [`Executor`] trait lets the run loop be tested with a mock.
//!
//! Runs are interleaved round-robin ([`schedule`]): round *r* runs every job once,
//! starting at job *r mod n*, so slow drift of a shared machine (another tenant, thermal
//! state, a page-cache flush) spreads over all jobs instead of landing on one.

use std::ffi::OsString;
use std::io::{self, Read};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::time::Instant;

/// Where a job's standard output goes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Stdout {
    /// Captured and handed back in [`Outcome::stdout`] (for results printed by the job).
    #[default]
    Capture,
    /// `/dev/null`.
    Null,
    /// A file, created or truncated before the run.
    File(PathBuf),
}

/// A command to time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// The row's method name (`mmap-avx2`, `wc -l`, …).
    pub name: String,
    /// The program to run.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Whether this is an external baseline rather than an iolab method.
    pub baseline: bool,
    /// Where its standard output goes.
    pub stdout: Stdout,
}

impl Job {
    /// A job whose standard output is captured.
    pub fn new(
        name: impl Into<String>,
        program: impl Into<PathBuf>,
        args: impl IntoIterator<Item = impl Into<OsString>>,
        baseline: bool,
    ) -> Job {
        Job {
            name: name.into(),
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            baseline,
            stdout: Stdout::Capture,
        }
    }
}

/// What one run of a job did.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Wall-clock seconds from spawn to exit.
    pub wall_s: f64,
    /// User CPU seconds of the child.
    pub user_s: f64,
    /// System CPU seconds of the child.
    pub sys_s: f64,
    /// The exit code, or `None` when a signal ended it.
    pub code: Option<i32>,
    /// The signal that ended it, if any.
    pub signal: Option<i32>,
    /// Everything it printed on stdout.
    pub stdout: String,
    /// Everything it printed on stderr.
    pub stderr: String,
}

impl Outcome {
    /// Whether the job exited with status 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// The first line of stderr, for error notes.
    pub fn first_error_line(&self) -> String {
        self.stderr.lines().next().unwrap_or("").trim().to_string()
    }
}

/// Runs jobs. [`ProcessExecutor`] spawns them; tests use a mock.
pub trait Executor {
    /// Runs `job` once and reports what happened.
    fn execute(&mut self, job: &Job) -> io::Result<Outcome>;
}

/// Runs jobs as child processes and times them.
#[derive(Debug, Default)]
pub struct ProcessExecutor;

impl Executor for ProcessExecutor {
    fn execute(&mut self, job: &Job) -> io::Result<Outcome> {
        let stdout = match &job.stdout {
            Stdout::Capture => Stdio::piped(),
            Stdout::Null => Stdio::null(),
            Stdout::File(path) => Stdio::from(std::fs::File::create(path)?),
        };
        let start = Instant::now();
        let mut child = Command::new(&job.program)
            .args(&job.args)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()?;
        let pid = child.id() as libc::pid_t;
        let mut status: libc::c_int = 0;
        // SAFETY: all-zero is a valid `rusage`.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let (reaped, wall_s) = loop {
            // SAFETY: `status` and `usage` are valid for writes; `pid` is our child, not yet
            // reaped (std's `Child` has not waited on it).
            let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
            let wall_s = start.elapsed().as_secs_f64();
            if rc == pid {
                break (true, wall_s);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                break (false, wall_s);
            }
        };
        if !reaped {
            // Let std reap it instead; its rusage is then unknown.
            child.wait()?;
        }
        // The outputs are small (a count and a file name), so reading them after the exit
        // cannot deadlock on a full pipe in practice; a chatty job would block in write
        // and be reported here once the pipe is drained.
        let mut stdout = String::new();
        let mut stderr = String::new();
        if let Some(mut out) = child.stdout.take() {
            out.read_to_string(&mut stdout)?;
        }
        if let Some(mut err) = child.stderr.take() {
            err.read_to_string(&mut stderr)?;
        }
        let exit = ExitStatus::from_raw(status);
        Ok(Outcome {
            wall_s,
            user_s: timeval_s(usage.ru_utime),
            sys_s: timeval_s(usage.ru_stime),
            code: exit.code(),
            signal: exit.signal(),
            stdout,
            stderr,
        })
    }
}

fn timeval_s(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 / 1e6
}

/// The interleaved order of `rounds` rounds over `jobs` jobs: `(round, job)` pairs.
///
/// Round *r* runs every job exactly once, starting at job *r mod jobs* and wrapping
/// around, so no job is always first (or always right after the same neighbour).
pub fn schedule(jobs: usize, rounds: usize) -> Vec<(usize, usize)> {
    (0..rounds)
        .flat_map(|round| (0..jobs).map(move |i| (round, (round + i) % jobs)))
        .collect()
}

/// The first whitespace-separated token of a job's stdout, as a `u64`: the count printed
/// by `wc -l FILE`, `fwc -l FILE` and `iolab count FILE`.
pub fn parse_count(stdout: &str) -> Option<u64> {
    stdout.split_whitespace().next()?.parse().ok()
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
    fn parse_count_reads_wc_style_output() {
        assert_eq!(parse_count("42 file.txt\n"), Some(42));
        assert_eq!(parse_count("   7 -\n"), Some(7));
        assert_eq!(parse_count(""), None);
        assert_eq!(parse_count("x 1"), None);
    }

    #[test]
    fn process_executor_times_a_real_process_and_reports_its_exit() {
        let mut ex = ProcessExecutor;
        let ok = ex
            .execute(&Job::new(
                "sh",
                "sh",
                ["-c", "echo 5 x; echo oops >&2; exit 3"],
                true,
            ))
            .unwrap();
        assert_eq!(ok.code, Some(3));
        assert!(!ok.success());
        assert_eq!(parse_count(&ok.stdout), Some(5));
        assert_eq!(ok.first_error_line(), "oops");
        assert!(ok.wall_s > 0.0);
    }
}
