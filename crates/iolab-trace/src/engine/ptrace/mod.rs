//! The ptrace backend: the command is seized before it executes, with a seccomp filter
//! ([`seccomp`]) that stops it only on the followed calls; every thread and child is
//! followed (`PTRACE_O_TRACEFORK`, `TRACEVFORK`, `TRACECLONE`, `TRACEEXEC`).
//!
//! Each followed call costs two stops: the seccomp stop at its entry (its arguments, from
//! `PTRACE_GET_SYSCALL_INFO`, Linux 5.3) and its exit (its result); the tracee is then
//! continued with `PTRACE_CONT` and runs untraced until its next I/O call. The calls are
//! folded into their targets at once ([`recorder`]).
//!
//! **A tracer process of its own** (`tracer.rs`). A tracee whose filter has lost its tracer
//! gets `ENOSYS` for every followed call, so tracees cannot be let go when the command
//! ends, and `PTRACE_O_EXITKILL` kills them if the tracer dies. Yet a shell waits for
//! `iolab trace`, not for what the command left running (`sleep 12 & echo started`
//! returns at once untraced). So this process forks (twice: the tracer is nobody's child
//! to reap) a tracer that forks, seizes and serves the command and its children; when the
//! command ends, the tracer sends the trace and the status here over a pipe (one JSON
//! line per message) and goes on serving the tracees still running, silently (its
//! standard descriptors are `/dev/null`; `--log` keeps streaming), until the last one
//! exits. This process then reports and returns.
//!
//! **Times without the stops.** From a call's entry stop to its exit stop there is a round
//! trip through the tracer (6–90 µs per call on these VMs, against about 0.5 µs for a
//! cached 512-byte read). The command's process, once its filter is in place and before
//! `execve`, makes `PROBES` calls that fail at once on the tracer's CPU and as many on
//! another; what they cost is left out of every call's time ([`stops`] says how), and the
//! timing note gives the figures.
//!
//! The tracer is a fork of the caller: it uses only the allocator (glibc's is fork-safe),
//! the file system and ptrace, and takes no lock another thread of the caller may hold.

pub mod recorder;
pub mod seccomp;
pub mod stops;
mod tracer;
mod witness;

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader};
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::backend::{Backend, Outcome, RunOptions};
use crate::costs::seconds;
use crate::error::{Error, Result};
use crate::launch::{self, Command};
use crate::model::{Exit, Trace};
use crate::signals;
use stops::{StopCost, StopCosts};

/// What the per-call times of this backend include when the round trip could not be
/// measured (the command made no call after the probes).
pub const TIMING_NOTE: &str = "ptrace: each call's time runs from its entry stop to its exit \
     stop, so it includes a round trip through the tracer";

/// How many probes time the tracer's round trip in each placement before the command
/// starts: a few dozen (each costs one round trip, 7–90 µs here), whose median resists a
/// stray slow one.
const PROBES: u32 = 24;

/// The timing note: what was left out of the calls' times.
fn timing_note(costs: Option<StopCosts>) -> String {
    let Some(costs) = costs else {
        return TIMING_NOTE.to_string();
    };
    let cost = |c: StopCost| {
        let round_trip = seconds(c.round_trip.as_secs_f64());
        match c.cpu {
            Some(cpu) => format!("{round_trip} ({} of CPU)", seconds(cpu.as_secs_f64())),
            None => round_trip,
        }
    };
    let placements = match costs.apart {
        Some(apart) => format!(
            "{} with the tracer on the command's CPU, {} on another",
            cost(costs.together),
            cost(apart)
        ),
        None => cost(costs.together),
    };
    format!(
        "ptrace: a call that did not wait counts the command's CPU time in it, one that \
         waited its time from entry stop to exit stop, both less the tracer's stops as \
         measured before the command started: a round trip of {placements}"
    )
}

/// What the tracer process tells this one, one JSON line per message.
#[derive(Debug, Serialize, Deserialize)]
enum Message {
    /// The command is seized and about to run: `kill PID` of iolab goes to `pid`.
    Started { pid: i32 },
    /// The command ended (its children may still run, served by the tracer).
    Ended(Box<Ended>),
    /// The command could not be started under the tracer.
    Failed(Failure),
}

/// What was seen until the command ended.
#[derive(Debug, Serialize, Deserialize)]
struct Ended {
    trace: Trace,
    exit: Exit,
    /// From the command's release to its end.
    wall_ns: u64,
    /// From the start of [`run`] to the command's release.
    setup_ns: u64,
    /// The command's user CPU time, its waited-for children's included.
    user_ns: u64,
    /// What the tracer's stops cost, left out of every call's time.
    stop_costs: Option<StopCosts>,
    /// The sampled stacks' words, each distinct sequence once; `trace`'s stacks come
    /// without theirs (a command that writes 3 000 files samples 8 192 stacks of a few
    /// call paths: 3 MB of JSON to write and parse).
    stack_words: Vec<Vec<u64>>,
    /// For each of `trace`'s stacks, the index of its words in `stack_words`.
    stack_of: Vec<u32>,
}

impl Ended {
    /// `trace` and the rest to send, its stacks' words moved to `stack_words`.
    fn new(mut trace: Trace, exit: Exit, stop_costs: Option<StopCosts>) -> Ended {
        let mut index: HashMap<Vec<u64>, u32> = HashMap::new();
        let mut stack_words = Vec::new();
        let stack_of = (trace.seen.stacks.iter_mut())
            .map(|stack| {
                let words = std::mem::take(&mut stack.words);
                *index.entry(words).or_insert_with_key(|words| {
                    stack_words.push(words.clone());
                    (stack_words.len() - 1) as u32
                })
            })
            .collect();
        Ended {
            trace,
            exit,
            wall_ns: 0,
            setup_ns: 0,
            user_ns: 0,
            stop_costs,
            stack_words,
            stack_of,
        }
    }

    /// The trace as the tracer saw it, its stacks' words put back.
    fn trace(&mut self) -> Trace {
        let mut trace = std::mem::take(&mut self.trace);
        for (stack, &i) in trace.seen.stacks.iter_mut().zip(&self.stack_of) {
            stack.words = self
                .stack_words
                .get(i as usize)
                .cloned()
                .unwrap_or_default();
        }
        trace
    }
}

/// Why the command could not be started.
#[derive(Debug, Serialize, Deserialize)]
enum Failure {
    /// `PTRACE_SEIZE` was refused: the reason and how to allow it.
    NotPermitted(String),
    /// `execve` failed with this errno.
    Exec(i32),
    /// The seccomp filter could not be installed (errno).
    Seccomp(i32),
    /// A signal killed the command's process before it could be seized.
    Interrupted(i32),
    /// Something else broke.
    Backend(String),
}

/// A close-on-exec pipe: (read end, write end).
fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Error::last_os("cannot make a pipe"));
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Runs `command` under ptrace until it has exited; its children still running then are
/// served by the tracer process until they exit too.
pub fn run(command: &Command, options: &RunOptions, reason: String) -> Result<Outcome> {
    let log = match &options.log {
        Some(path) => Some(
            std::fs::File::create(path)
                .map_err(|e| Error::io(format!("cannot create {}", path.display()), e))?,
        ),
        None => None,
    };
    let setup_started = Instant::now();
    let (from_tracer, to_here) = pipe()?;
    // SAFETY: fork has no preconditions. The intermediate child only forks again and
    // exits (both async-signal-safe); the tracer, its child, runs on its own and never
    // returns (tracer::serve ends with _exit).
    let middle = unsafe { libc::fork() };
    if middle < 0 {
        return Err(Error::last_os("cannot fork the tracer"));
    }
    if middle == 0 {
        // SAFETY: as above.
        let tracer = unsafe { libc::fork() };
        if tracer == 0 {
            drop(from_tracer);
            tracer::serve(command, log, to_here, setup_started);
        }
        // SAFETY: _exit ends the intermediate child without running the caller's
        // destructors or atexit handlers.
        unsafe { libc::_exit(if tracer < 0 { 1 } else { 0 }) };
    }
    drop(to_here);
    drop(log);
    let mut status = 0;
    // SAFETY: reaps the intermediate child, which exits at once. ECHILD (SIGCHLD ignored
    // by the caller: reaped already) is fine.
    while unsafe { libc::waitpid(middle, &mut status, 0) } < 0
        && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
    {}
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) != 0 {
        return Err(Error::Backend {
            backend: "ptrace",
            reason: "cannot fork the tracer process".into(),
        });
    }
    let result = receive(command, from_tracer, reason);
    // The command is reaped by the tracer: its pid may be reused, so nothing more goes to
    // it.
    signals::forward_to(0);
    result
}

/// Reads the tracer's messages until the command has ended.
fn receive(command: &Command, from_tracer: OwnedFd, reason: String) -> Result<Outcome> {
    let mut lines = BufReader::new(std::fs::File::from(from_tracer));
    let mut line = String::new();
    loop {
        line.clear();
        // read_line retries reads a signal interrupted (Ctrl-C is forwarded meanwhile).
        let n = lines
            .read_line(&mut line)
            .map_err(|e| Error::io("cannot read from the tracer process", e))?;
        if n == 0 {
            return Err(Error::Backend {
                backend: "ptrace",
                reason: "the tracer process ended without a report".into(),
            });
        }
        let message: Message = serde_json::from_str(&line).map_err(|e| Error::Backend {
            backend: "ptrace",
            reason: format!("the tracer process sent a message that does not parse: {e}"),
        })?;
        match message {
            Message::Started { pid } => signals::forward_to(pid),
            Message::Failed(failure) => return Err(failure_error(command, failure)),
            Message::Ended(mut ended) => {
                return Ok(Outcome {
                    backend: Backend::Ptrace,
                    reason,
                    detail: "ptrace with a seccomp filter on the I/O calls".into(),
                    trace: ended.trace(),
                    exit: ended.exit,
                    wall: Duration::from_nanos(ended.wall_ns),
                    setup: Duration::from_nanos(ended.setup_ns),
                    interrupted: signals::interrupted(),
                    timing_note: timing_note(ended.stop_costs),
                    stop_round_trip: ended
                        .stop_costs
                        .map(|c| (c.together.round_trip, c.apart.map(|a| a.round_trip))),
                    user_cpu: Some(Duration::from_nanos(ended.user_ns)),
                });
            }
        }
    }
}

/// The error for a failure the tracer reported.
fn failure_error(command: &Command, failure: Failure) -> Error {
    match failure {
        Failure::NotPermitted(reason) => Error::NotPermitted(reason),
        Failure::Exec(errno) => launch::exec_error(command, errno),
        Failure::Seccomp(errno) => Error::NotPermitted(format!(
            "cannot install the seccomp filter: {}; allow seccomp filters, or run as root \
             for the bpf backend",
            iolab::lab::error::describe_io(&io::Error::from_raw_os_error(errno))
        )),
        Failure::Interrupted(signal) => Error::Interrupted { signal },
        Failure::Backend(reason) => Error::Backend {
            backend: "ptrace",
            reason,
        },
    }
}
