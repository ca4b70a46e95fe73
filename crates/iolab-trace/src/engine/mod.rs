//! Choosing the backend and running it: eBPF ([`bpf`]) where it is allowed, ptrace with a
//! seccomp filter ([`ptrace`]) where it is not, each run saying which one ran and why.
//!
//! A fallback happens only before the command has started: the eBPF backend fails before
//! it releases the command (the kernel refuses its program), so the command never runs
//! twice.

pub mod bpf;
pub mod ptrace;

use std::time::{Duration, Instant};

use crate::backend::{Backend, Choice, History, Outcome, RunOptions};
use crate::costs::seconds;
use crate::error::{Error, Result};
use crate::launch::Command;

/// Whether the backend `choice` names can trace here, else why not: eBPF when it is
/// allowed (root or `CAP_BPF` with `CAP_PERFMON`, BTF); ptrace when it traces `true`;
/// `auto` when either can.
pub fn availability(choice: Choice) -> std::result::Result<(), String> {
    match choice {
        Choice::Bpf => bpf::availability(),
        Choice::Ptrace => {
            let command = Command::resolve(&["true".into()]).map_err(|e| e.to_string())?;
            ptrace::run(&command, &RunOptions::default(), "a probe".into())
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
        Choice::Auto => availability(Choice::Bpf).or_else(|_| availability(Choice::Ptrace)),
    }
}

const ALLOWED: &str = "eBPF is allowed here (root or CAP_BPF with CAP_PERFMON, BTF)";

/// Runs `command` with the backend `choice` names (or, for `auto`, the one that costs it
/// less here: [`auto`]).
pub fn run(command: &Command, choice: Choice, options: &RunOptions) -> Result<Outcome> {
    const NEEDS_PTRACE: &str =
        "--log and iolab crash see every call, which only the ptrace backend does";
    match choice {
        Choice::Bpf => {
            if options.log.is_some() || options.journal.is_some() {
                return Err(Error::Unavailable {
                    backend: "bpf",
                    reason: NEEDS_PTRACE.into(),
                });
            }
            bpf::availability().map_err(|reason| Error::Unavailable {
                backend: "bpf",
                reason,
            })?;
            bpf::run(command, format!("asked for; {ALLOWED}"))
        }
        Choice::Ptrace => ptrace::run(command, options, "asked for (--backend ptrace)".into()),
        Choice::Auto if options.log.is_some() || options.journal.is_some() => {
            ptrace_else_refused(command, options, NEEDS_PTRACE.to_string())
        }
        Choice::Auto => auto(command, options),
    }
}

/// ptrace, when eBPF cannot trace (`why_not`).
fn ptrace_else_refused(
    command: &Command,
    options: &RunOptions,
    why_not: String,
) -> Result<Outcome> {
    match ptrace::run(command, options, format!("bpf is not available: {why_not}")) {
        Err(Error::NotPermitted(p)) => {
            Err(Error::NotPermitted(format!("bpf: {why_not}; ptrace: {p}")))
        }
        other => other,
    }
}

/// `auto`: the backend that cost the command less the last time it was traced in this
/// folder ([`History`]), else eBPF where it is allowed — for a command never traced here,
/// eBPF's start (0.2 s) is the most it can cost more than ptrace, where ptrace's stops
/// can make a long command ten times slower than eBPF — else ptrace. What the trace cost
/// is noted for the next time.
fn auto(command: &Command, options: &RunOptions) -> Result<Outcome> {
    let path = iolab_lab::profile::cache_dir().map(|d| d.join("trace-history.json"));
    let machine = format!(
        "{} {} cores",
        iolab_lab::profile::kernel_release(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let history = (path.as_deref()).map_or_else(History::default, |p| History::load(p, &machine));
    let folder = std::env::current_dir().unwrap_or_default();
    let key = History::key(&folder, &command.words);
    let started = Instant::now();
    let outcome = match history.choose(&key) {
        Some((Backend::Ptrace, why)) => {
            match ptrace::run(command, options, format!("{why} (--backend bpf for eBPF)")) {
                // Refused before the command ran: eBPF may trace it.
                Err(Error::NotPermitted(p)) if bpf::availability().is_ok() => {
                    bpf::run(command, format!("{ALLOWED}; ptrace is not: {p}"))
                }
                other => other,
            }
        }
        chosen => {
            let why = chosen.map_or(
                format!("{ALLOWED}; not traced in this folder before, so eBPF, whose start is the most it can cost"),
                |(_, why)| format!("{why}; {ALLOWED}"),
            );
            let why_not = match bpf::availability() {
                Ok(()) => match bpf::run(command, why) {
                    Err(Error::Backend { reason, .. }) => reason,
                    other => return remember(history, path, &key, other, started),
                },
                Err(reason) => reason,
            };
            ptrace_else_refused(command, options, why_not)
        }
    };
    remember(history, path, &key, outcome, started)
}

/// Notes in the history what `outcome` cost, from `started`; a run that was interrupted or
/// failed teaches nothing. The history is a hint: it not being written is no error.
fn remember(
    mut history: History,
    path: Option<std::path::PathBuf>,
    key: &str,
    outcome: Result<Outcome>,
    started: Instant,
) -> Result<Outcome> {
    if let (Ok(o), Some(path)) = (&outcome, path)
        && o.interrupted.is_none()
    {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        history.note(key, o, started.elapsed(), now);
        let _ = history.save(&path);
    }
    outcome
}

/// The least a ptrace stop has cost per I/O call on the machines measured (the tracer on
/// the command's CPU: 7 µs on the AMD VM, 26 Nov 2026): below `setup / this` calls, ptrace
/// might have traced the command for less than eBPF took to be ready.
const LEAST_STOP: Duration = Duration::from_micros(5);

/// After an eBPF run of a short command: whether ptrace would have cost less, measured (a
/// trace of `true` under ptrace gives its stops' cost here), as a note for the summary.
pub fn ptrace_note(outcome: &Outcome) -> Option<String> {
    if outcome.backend != Backend::Bpf {
        return None;
    }
    let calls = outcome.trace.total_calls();
    if LEAST_STOP * calls.min(u32::MAX as u64) as u32 >= outcome.setup {
        return None;
    }
    let probe = Command::resolve(&crate::launch::words(["true"])).ok()?;
    let measured = ptrace::run(&probe, &RunOptions::default(), String::new()).ok()?;
    let (together, apart) = measured.stop_round_trip?;
    let cost = |stop: Duration| measured.setup + stop * calls.min(u32::MAX as u64) as u32;
    let (low, high) = (cost(together), cost(apart.unwrap_or(together)));
    if low >= outcome.setup {
        return None;
    }
    let how = if high < outcome.setup {
        "would have cost less"
    } else {
        "might have cost less"
    };
    Some(format!(
        "ptrace {how} for this command: {calls} I/O calls at {}–{} per stop here is {}–{}, \
         against {} for eBPF to be ready (--backend ptrace)",
        seconds(together.as_secs_f64()),
        seconds(apart.unwrap_or(together).as_secs_f64()),
        seconds(low.as_secs_f64()),
        seconds(high.as_secs_f64()),
        seconds(outcome.setup.as_secs_f64())
    ))
}
