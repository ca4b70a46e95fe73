//! One `iolab trace`: resolve the command, run it under the backend, recognise the
//! patterns, gather the figures their estimates need, and make the report.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::backend::{Backend, Choice, RunOptions};
use crate::costs::{Costs, bench};
use crate::engine;
use crate::error::{Error, Result};
use crate::launch::Command;
use crate::program::{Program, Recognised};
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
    if let Some(path) = &options.results {
        bench::Bench::load(Some(path)).map_err(|reason| Error::Results {
            path: path.clone(),
            reason,
        })?;
    }
    // The signals stay caught through the calibration: a Ctrl-C there stops it between
    // samples, and what the trace saw is still reported.
    let _signals = signals::Guard::install();
    let outcome = engine::run(
        &command,
        options.backend,
        &RunOptions {
            log: options.log.clone(),
        },
    )?;
    let analysis = rules::Analysis::new(&outcome.trace, outcome.backend == Backend::Bpf);
    let mut notes: Vec<String> = engine::ptrace_note(&outcome).into_iter().collect();
    if outcome.trace.seen.events_lost > 0 {
        notes.push(format!(
            "{} changes to files were lost (a full ring): the durability rules were not \
             applied, since a lost sync could make a synced file look unsynced",
            outcome.trace.seen.events_lost
        ));
    }
    let calibrate = options.calibrate && outcome.interrupted.is_none();
    if options.calibrate && !calibrate && !analysis.patterns.is_empty() {
        notes.push("interrupted: no calibration, estimates only from iolab bench results".into());
    }
    let costs = Costs::gather(&analysis.needs(), options.results.as_deref(), calibrate);
    if let Some(signal) = costs.sources.interrupted {
        notes.push(format!(
            "the calibration was interrupted (signal {signal}): the figure it was measuring has fewer samples, the ones after it are missing"
        ));
    }
    // A finding's share is of the run as it would have been untraced.
    let mut findings = analysis.findings(&costs, outcome.untraced_wall());
    let args: Vec<String> = words
        .iter()
        .skip(1)
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    let unbuffered = std::env::var_os("PYTHONUNBUFFERED").is_some_and(|v| !v.is_empty());
    let program = crate::program::recognise(&command.program, &args, unbuffered)
        .in_run(outcome.trace.tasks.execs);
    let mut origins = crate::origin::Origins::new(&outcome.trace);
    let mut programs: HashMap<(String, Vec<String>), Recognised> = HashMap::new();
    for f in &mut findings {
        f.processes = origins.processes(&f.keys);
        f.stacks = origins.stacks(&f.keys, crate::origin::offending_calls(f.kind.name()));
        // The program of the processes that made the finding's calls, when they all run
        // one (a pipeline's writer and reader do not); else the command's.
        // (Many processes: the command's program; each one's would take a scan.)
        let mut mine = f.processes.iter().take(8).map(|p| {
            programs
                .entry((p.exe.clone(), p.args.clone()))
                .or_insert_with(|| {
                    let rest = p.args.get(1..).unwrap_or_default();
                    crate::program::recognise(Path::new(&p.exe), rest, unbuffered)
                })
                .clone()
        });
        let first = mine.next();
        let r = match first {
            Some(one)
                if f.processes.len() <= 8
                    && one.program != Program::Unknown
                    && mine.all(|o| o.program == one.program) =>
            {
                one
            }
            _ => program.clone(),
        };
        f.program = r.program;
        if let Some(fix) = rules::programs::fix(&r, f) {
            f.fix = fix;
        }
    }
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
