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

mod call_stacks;
pub mod journal;
pub mod mutate;
pub mod recorder;
pub mod seccomp;
pub mod stops;
mod tracer;
mod witness;

use std::hash::{BuildHasherDefault, Hasher};
use std::io::{self, BufRead, BufReader};
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::backend::{Backend, Outcome, RunOptions};
use crate::costs::seconds;
use crate::error::{Error, Result};
use crate::launch::{self, Command};
use crate::model::{
    CallStat, Change, Event, Exit, Flow, Kind, OpenFlags, RawStack, SIZE_BUCKETS, Target,
    TargetKey, Trace, Use,
};
use crate::signals;
use crate::syscalls::Sys;
use stops::{StopCost, StopCosts};

/// A hash of small integer keys (task and process ids, descriptors, inode numbers) that
/// costs a multiplication a word: the maps below are looked up a dozen times a call. The
/// keys come from the kernel, not from an adversary.
#[derive(Clone, Copy, Default)]
pub(crate) struct WordHasher(u64);

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_ne_bytes(word));
        }
    }

    fn write_u64(&mut self, n: u64) {
        // FxHash's step (rustc's own hasher).
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_i32(&mut self, n: i32) {
        self.write_u64(u64::from(n as u32));
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A map keyed by small integers, hashed by [`WordHasher`].
pub(crate) type HashMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<WordHasher>>;

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

/// What was seen until the command ended. The trace's targets, changes and stacks, most
/// of it, travel apart in a compact form (`Wire*`: arrays, not objects with named fields): for
/// `tar xf` of 3 000 files, 2.0 MB of JSON instead of 4.5 MB, converted, written and
/// parsed in half the time (16 ms instead of 33 here).
#[derive(Debug, Serialize, Deserialize)]
struct Ended {
    /// The trace but its targets, changes and stacks.
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
    /// What was left out of the calls' times, summed.
    #[serde(default)]
    stopped_ns: u64,
    /// The trace's targets.
    targets: Vec<WireTarget>,
    /// The trace's changes to files.
    events: Vec<WireEvent>,
    /// The trace's stacks.
    stacks: Vec<WireStack>,
    /// The stacks' words, each distinct sequence once (a command that writes 3 000 files
    /// samples 8 192 stacks of a few call paths).
    stack_words: Vec<Vec<u64>>,
}

/// A [`TargetKey`]: major, minor, inode number, life.
type WireKey = (u32, u32, u64, u32);

/// A [`Change`], externally tagged (the model's tag inside the object makes the parser
/// buffer each one): made, truncated, dirtied, synced (a file); all synced (a device);
/// renamed (from, to).
#[derive(Debug, Serialize, Deserialize)]
enum WireChange {
    C(WireKey),
    T(WireKey),
    D(WireKey),
    S(WireKey),
    A(Option<(u32, u32)>),
    R(String, String),
}

/// An [`Event`]: when, which process, what.
#[derive(Debug, Serialize, Deserialize)]
struct WireEvent(u64, u32, WireChange);

fn wire_event(e: Event) -> WireEvent {
    let Event { at_ns, pid, change } = e;
    let change = match change {
        Change::Created { file } => WireChange::C(wire_key(file)),
        Change::Truncated { file } => WireChange::T(wire_key(file)),
        Change::Dirtied { file } => WireChange::D(wire_key(file)),
        Change::Synced { file } => WireChange::S(wire_key(file)),
        Change::SyncedAll { device } => WireChange::A(device),
        Change::Renamed { from, to } => WireChange::R(from, to),
    };
    WireEvent(at_ns, pid, change)
}

fn event_of(w: WireEvent) -> Event {
    let WireEvent(at_ns, pid, change) = w;
    let change = match change {
        WireChange::C(k) => Change::Created { file: key_of(k) },
        WireChange::T(k) => Change::Truncated { file: key_of(k) },
        WireChange::D(k) => Change::Dirtied { file: key_of(k) },
        WireChange::S(k) => Change::Synced { file: key_of(k) },
        WireChange::A(device) => Change::SyncedAll { device },
        WireChange::R(from, to) => Change::Renamed { from, to },
    };
    Event { at_ns, pid, change }
}

/// A [`crate::model::RawStack`]: pid, target, call, instruction pointer, and the index of
/// its words in [`Ended::stack_words`].
#[derive(Debug, Serialize, Deserialize)]
struct WireStack(u32, WireKey, String, u64, u32);

/// A [`Flow`]: calls, bytes, ns, sequential, repeated, direct, synced, gap_ns, gaps; first and last
/// call; the size buckets that are not 0.
#[derive(Debug, Serialize, Deserialize)]
struct WireFlow([u64; 9], Option<u64>, Option<u64>, Vec<(usize, u64)>);

/// A [`Target`]: key, kind, path, size, reads, writes; syncs, sync_ns, opens, seeks, mmaps,
/// mmap_bytes, ring_enters, ring_submissions, errors; the open flags (direct, sync,
/// dsync, append, trunc, creat); calls (by [`Sys::index`]: calls, errors, ns); by process
/// (calls, bytes, ns).
#[derive(Debug, Serialize, Deserialize)]
struct WireTarget(
    Option<WireKey>,
    Option<Kind>,
    String,
    u64,
    WireFlow,
    WireFlow,
    [u64; 9],
    [u64; 6],
    Vec<(usize, [u64; 3])>,
    Vec<(u32, [u64; 3])>,
);

fn wire_key(k: TargetKey) -> WireKey {
    let TargetKey {
        major,
        minor,
        ino,
        life,
    } = k;
    (major, minor, ino, life)
}

fn key_of((major, minor, ino, life): WireKey) -> TargetKey {
    TargetKey {
        major,
        minor,
        ino,
        life,
    }
}

fn wire_flow(f: Flow) -> WireFlow {
    // Every field named: one added to the model must be added here.
    let Flow {
        calls,
        bytes,
        ns,
        sequential,
        repeated,
        direct,
        synced,
        first_ns,
        last_ns,
        gap_ns,
        gaps,
        sizes,
    } = f;
    let counts = [
        calls, bytes, ns, sequential, repeated, direct, synced, gap_ns, gaps,
    ];
    let sizes = (sizes.iter().enumerate())
        .filter(|&(_, &n)| n > 0)
        .map(|(k, &n)| (k, n))
        .collect();
    WireFlow(counts, first_ns, last_ns, sizes)
}

fn flow_of(w: WireFlow) -> Flow {
    let WireFlow(c, first_ns, last_ns, buckets) = w;
    let mut sizes = [0; SIZE_BUCKETS];
    for (k, n) in buckets {
        if let Some(s) = sizes.get_mut(k) {
            *s = n;
        }
    }
    Flow {
        calls: c[0],
        bytes: c[1],
        ns: c[2],
        sequential: c[3],
        repeated: c[4],
        direct: c[5],
        synced: c[6],
        first_ns,
        last_ns,
        gap_ns: c[7],
        gaps: c[8],
        sizes,
    }
}

fn wire_target(t: Target) -> WireTarget {
    // Every field named: one added to the model must be added here.
    let Target {
        key,
        kind,
        path,
        size,
        read,
        write,
        syncs,
        sync_ns,
        opens,
        open_flags,
        seeks,
        mmaps,
        mmap_bytes,
        ring_enters,
        ring_submissions,
        errors,
        calls,
        by_process,
    } = t;
    let OpenFlags {
        direct,
        sync,
        dsync,
        append,
        trunc,
        creat,
    } = open_flags;
    let counts = [
        syncs,
        sync_ns,
        opens,
        seeks,
        mmaps,
        mmap_bytes,
        ring_enters,
        ring_submissions,
        errors,
    ];
    let calls = (calls.into_iter())
        .map(|(sys, CallStat { calls, errors, ns })| (sys.index(), [calls, errors, ns]))
        .collect();
    let by_process = (by_process.into_iter())
        .map(|(pid, Use { calls, bytes, ns })| (pid, [calls, bytes, ns]))
        .collect();
    WireTarget(
        key.map(wire_key),
        kind,
        path,
        size,
        wire_flow(read),
        wire_flow(write),
        counts,
        [direct, sync, dsync, append, trunc, creat],
        calls,
        by_process,
    )
}

fn target_of(w: WireTarget) -> Target {
    let WireTarget(key, kind, path, size, read, write, c, f, calls, by_process) = w;
    Target {
        key: key.map(key_of),
        kind,
        path,
        size,
        read: flow_of(read),
        write: flow_of(write),
        syncs: c[0],
        sync_ns: c[1],
        opens: c[2],
        open_flags: OpenFlags {
            direct: f[0],
            sync: f[1],
            dsync: f[2],
            append: f[3],
            trunc: f[4],
            creat: f[5],
        },
        seeks: c[3],
        mmaps: c[4],
        mmap_bytes: c[5],
        ring_enters: c[6],
        ring_submissions: c[7],
        errors: c[8],
        calls: (calls.into_iter())
            .filter_map(|(i, [calls, errors, ns])| {
                Some((*Sys::ALL.get(i)?, CallStat { calls, errors, ns }))
            })
            .collect(),
        by_process: (by_process.into_iter())
            .map(|(pid, [calls, bytes, ns])| (pid, Use { calls, bytes, ns }))
            .collect(),
    }
}

impl Ended {
    /// `trace` and the rest to send, its targets and stacks in their compact form.
    fn new(mut trace: Trace, exit: Exit, stop_costs: Option<StopCosts>) -> Ended {
        let mut index: HashMap<Vec<u64>, u32> = HashMap::default();
        let mut stack_words = Vec::new();
        let stacks = (std::mem::take(&mut trace.seen.stacks).into_iter())
            .map(|s| {
                let RawStack {
                    pid,
                    target,
                    call,
                    ip,
                    words,
                } = s;
                let words = *index.entry(words).or_insert_with_key(|words| {
                    stack_words.push(words.clone());
                    (stack_words.len() - 1) as u32
                });
                WireStack(pid, wire_key(target), call, ip, words)
            })
            .collect();
        let targets = std::mem::take(&mut trace.targets);
        let events = std::mem::take(&mut trace.seen.events);
        Ended {
            trace,
            exit,
            wall_ns: 0,
            setup_ns: 0,
            user_ns: 0,
            stop_costs,
            stopped_ns: 0,
            targets: targets.into_iter().map(wire_target).collect(),
            events: events.into_iter().map(wire_event).collect(),
            stacks,
            stack_words,
        }
    }

    /// The trace as the tracer saw it, its targets and stacks put back.
    fn trace(&mut self) -> Trace {
        let mut trace = std::mem::take(&mut self.trace);
        trace.targets = std::mem::take(&mut self.targets)
            .into_iter()
            .map(target_of)
            .collect();
        trace.seen.events = (std::mem::take(&mut self.events).into_iter())
            .map(event_of)
            .collect();
        trace.seen.stacks = (std::mem::take(&mut self.stacks).into_iter())
            .map(|WireStack(pid, target, call, ip, words)| RawStack {
                pid,
                target: key_of(target),
                call,
                ip,
                words: (self.stack_words.get(words as usize).cloned()).unwrap_or_default(),
            })
            .collect();
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
    let journal = match &options.journal {
        Some(to) => Some(journal::Journal::new(
            to.dir.clone(),
            std::fs::File::create(&to.out)
                .map_err(|e| Error::io(format!("cannot create {}", to.out.display()), e))?,
            to.volatile.clone(),
        )),
        None => None,
    };
    let mutator = options
        .journal
        .as_ref()
        .filter(|to| !to.drops.is_empty())
        .map(|to| mutate::Mutator::new(to.dir.clone(), to.drops.clone()));
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
            tracer::serve(command, log, journal, mutator, to_here, setup_started);
        }
        // SAFETY: _exit ends the intermediate child without running the caller's
        // destructors or atexit handlers.
        unsafe { libc::_exit(if tracer < 0 { 1 } else { 0 }) };
    }
    drop(to_here);
    drop(log);
    drop(journal);
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
                    stopped_in_calls: Some(Duration::from_nanos(ended.stopped_ns)),
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
            iolab_lab::error::describe_io(&io::Error::from_raw_os_error(errno))
        )),
        Failure::Interrupted(signal) => Error::Interrupted { signal },
        Failure::Backend(reason) => Error::Backend {
            backend: "ptrace",
            reason,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Place;

    /// A trace whose targets and stacks have every field set: what the tracer sends is
    /// what iolab reads.
    #[test]
    fn the_trace_crosses_whole() {
        let mut trace = Trace::default();
        let key = TargetKey::from_stat(0x803, 42).with_life(7);
        let mut t = Target::new(Some(key), Some(Kind::File), "/tmp/f");
        t.size = 9;
        t.read.add(4096, 10, 5, Place::Sequential);
        t.read.direct = 1;
        t.read.synced = 2;
        t.write.add(1, 11, 6, Place::Scattered);
        t.write.add(1 << 40, 12, 7, Place::Repeated);
        (t.syncs, t.sync_ns, t.opens, t.seeks) = (1, 2, 3, 4);
        (
            t.mmaps,
            t.mmap_bytes,
            t.ring_enters,
            t.ring_submissions,
            t.errors,
        ) = (5, 6, 7, 8, 9);
        t.open_flags
            .add(libc::O_DIRECT | libc::O_SYNC | libc::O_APPEND);
        t.open_flags
            .add(libc::O_DSYNC | libc::O_TRUNC | libc::O_CREAT);
        t.count(Sys::Pwrite64, 13, true);
        t.count(Sys::Fsync, 14, false);
        t.by_process.entry(12).or_default().add(3, 4);
        t.by_process.entry(13).or_default().add(5, 6);
        trace.targets.push(t);
        trace.targets.push(Target::new(None, None, "pipe:[1]"));
        for (i, words) in [vec![1, 2], vec![3], vec![1, 2]].into_iter().enumerate() {
            trace.seen.stacks.push(RawStack {
                pid: i as u32,
                target: key,
                call: "write".into(),
                ip: 100 + i as u64,
                words,
            });
        }
        trace.warnings.push("w".into());
        for change in [
            Change::Created { file: key },
            Change::Truncated { file: key },
            Change::Dirtied { file: key },
            Change::Synced { file: key },
            Change::SyncedAll { device: None },
            Change::SyncedAll {
                device: Some((8, 3)),
            },
            Change::Renamed {
                from: "/a".into(),
                to: "/b".into(),
            },
        ] {
            trace.seen.push(5, 6, change);
        }
        let sent = Message::Ended(Box::new(Ended::new(trace.clone(), Exit::Code(3), None)));
        let line = serde_json::to_string(&sent).unwrap();
        let Message::Ended(mut got) = serde_json::from_str(&line).unwrap() else {
            panic!("{line}");
        };
        assert_eq!(got.stack_words.len(), 2, "each sequence of words once");
        assert_eq!(got.trace(), trace);
        assert_eq!(got.exit, Exit::Code(3));
    }
}
