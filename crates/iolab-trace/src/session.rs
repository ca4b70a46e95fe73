//! One `iolab trace`: resolve the command, run it under the backend, recognise the
//! patterns, gather the figures their estimates need, and make the report.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::backend::{Backend, Choice, RunOptions};
use crate::costs::{Costs, bench};
use crate::engine;
use crate::error::{Error, Result};
use crate::launch::Command;
use crate::report::Report;
use crate::rules;
use crate::signals;

/// How to trace.
#[derive(Clone, Debug)]
pub struct Options {
    /// The backend asked for (default [`Choice::Auto`]).
    pub backend: Choice,
    /// The `iolab bench` results to take figures from (default: the newest run under
    /// `./iolab-results`).
    pub results: Option<PathBuf>,
    /// Where to stream every call (ptrace backend).
    pub log: Option<PathBuf>,
    /// Whether to calibrate the figures the results lack (default `true`).
    pub calibrate: bool,
    /// Standard descriptors (0, 1, 2) to close in the command before it starts: those
    /// that were closed when the caller started (default none).
    pub closed_std_fds: Vec<i32>,
    /// The signals the command starts ignoring and its blocked mask: the caller's own at
    /// its start, which the command would have inherited untraced (default: none ignored,
    /// none blocked).
    pub inherited_signals: signals::Inherited,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            backend: Choice::Auto,
            results: None,
            log: None,
            calibrate: true,
            closed_std_fds: Vec::new(),
            inherited_signals: signals::Inherited::default(),
        }
    }
}

/// Traces `words` (the command and its arguments) and reports.
///
/// The command's standard input, output and error are its own; while it runs, `SIGINT`,
/// `SIGTERM`, `SIGHUP` and `SIGQUIT` reach it (a terminal's Ctrl-C directly, a `kill` of
/// the tracer forwarded) and the report of what was seen is still made.
pub fn trace(words: &[OsString], options: &Options) -> Result<Report> {
    let mut command = Command::resolve(words)?;
    command.close_before_exec(&options.closed_std_fds);
    command.inherit_signals(options.inherited_signals);
    // Bad results given are refused before the command runs.
    let given = match &options.results {
        Some(path) => Some(
            bench::Bench::load(Some(path)).map_err(|reason| Error::Results {
                path: path.clone(),
                reason,
            })?,
        ),
        None => None,
    };
    // The signals stay caught through the calibration: a Ctrl-C there stops it between
    // samples, and what the trace saw is still reported.
    let _signals = signals::Guard::install();
    let outcome = engine::run(
        &command,
        options.backend,
        &RunOptions {
            log: options.log.clone(),
            journal: None,
        },
    )?;
    let analysis = rules::Analysis::new(&outcome.trace, outcome.backend == Backend::Bpf);
    let mut notes: Vec<String> = engine::ptrace_note(&outcome).into_iter().collect();
    notes.extend(analysis.notes.iter().cloned());
    let calibrate = options.calibrate && outcome.interrupted.is_none();
    if options.calibrate && !calibrate && !analysis.patterns.is_empty() {
        notes.push("interrupted: no calibration, estimates only from iolab bench results".into());
    }
    let costs = Costs::gather(&analysis.needs(), given, calibrate);
    if let Some(signal) = costs.sources.interrupted {
        notes.push(format!(
            "the calibration was interrupted (signal {signal}): the figure it was measuring has fewer samples, the ones after it are missing"
        ));
    }
    let args: Vec<String> = words
        .iter()
        .skip(1)
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    let unbuffered_env = std::env::var_os("PYTHONUNBUFFERED").is_some_and(|v| !v.is_empty());
    let program = crate::program::recognise(&command.program, &args, unbuffered_env)
        .in_run(outcome.trace.tasks.execs);
    let findings = analysis.findings(
        &costs,
        &rules::Run {
            trace: &outcome.trace,
            // A finding's share is of the run as it would have been untraced.
            wall: outcome.untraced_wall(),
            program: &program,
            unbuffered_env,
        },
    );
    Ok(Report {
        command: words
            .iter()
            .map(|w| w.to_string_lossy().into_owned())
            .collect(),
        display: command.display(),
        program,
        outcome,
        findings,
        groups: analysis.groups.into_iter().map(|g| g.target).collect(),
        sources: costs.sources,
        notes,
    })
}
