//! The backends' shared vocabulary: their names, what a run hands back, the settings
//! they take, and what `auto` remembers of the commands it traced ([`History`]). The
//! backends themselves are in `engine/`.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::costs::seconds;
use crate::model::{Exit, Trace};

iolab_lab::named::named_enum! {
    /// Which tracer follows the command.
    pub enum Backend: "backend" {
        /// eBPF: iolab's own program aggregates the calls in kernel maps; needs root or
        /// CAP_BPF with CAP_PERFMON, and the kernel's BTF.
        Bpf = "bpf",
        /// ptrace with a seccomp filter that stops the command only on the I/O calls (as
        /// `strace --seccomp-bpf`); works for any user allowed to trace its own children.
        Ptrace = "ptrace",
    }
}

iolab_lab::named::named_enum! {
    /// The backend asked for.
    pub enum Choice: "backend" {
        /// The backend that cost the command less when it was traced in this folder
        /// before ([`History`]), else eBPF where it is allowed, ptrace otherwise.
        Auto = "auto",
        /// eBPF only.
        Bpf = "bpf",
        /// ptrace only.
        Ptrace = "ptrace",
    }
}

/// Settings of a run that the backends read.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Where to stream every call, one line each (`--log`).
    pub log: Option<PathBuf>,
    /// For `iolab crash` (ptrace only): what to journal, and where.
    pub journal: Option<JournalTo>,
}

/// The journal `iolab crash` asks for.
#[derive(Clone, Debug, Default)]
pub struct JournalTo {
    /// The folder whose changes are journaled (absolute and resolved).
    pub dir: PathBuf,
    /// The file the journal goes to.
    pub out: PathBuf,
    /// Files of the folder whose bytes need not survive a crash (`*-shm`: a leading or
    /// trailing `*` matches any start or end): their writes through shared maps are not
    /// refused, and not replayed.
    pub volatile: Vec<String>,
    /// Syncs taken out of the command (`--drop`), to see that a check notices.
    pub drops: Vec<DroppedSync>,
}

/// What a backend hands back.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The backend that ran.
    pub backend: Backend,
    /// Why it was chosen (and why another was not).
    pub reason: String,
    /// Its version or mechanism, for the record (`ptrace with a seccomp filter on the I/O calls`).
    pub detail: String,
    /// What it saw.
    pub trace: Trace,
    /// How the command ended.
    pub exit: Exit,
    /// From the command's release to its end.
    pub wall: Duration,
    /// How long the tracer took to be ready before the command could start (loading and
    /// attaching the eBPF program; the seize for ptrace).
    pub setup: Duration,
    /// A caught signal that arrived while the command ran (Ctrl-C).
    pub interrupted: Option<i32>,
    /// What the per-call times include, for the reader of the figures.
    pub timing_note: String,
    /// What a stop of the ptrace backend cost per call here, measured before the command
    /// started: the tracer on the command's CPU, and on another (ptrace only).
    pub stop_round_trip: Option<(Duration, Option<Duration>)>,
    /// The command's user CPU time, its waited-for children's included.
    pub user_cpu: Option<Duration>,
    /// What was left out of the calls' times as the stops' part inside them, summed
    /// (ptrace only): about half of what the stops cost, the other half being in the time
    /// between the calls (the resume after a call's exit, the stop at the next one's entry).
    pub stopped_in_calls: Option<Duration>,
}

impl Outcome {
    /// The command's wall time as it would have been untraced, as near as can be told.
    /// Under eBPF, whose cost is a fraction of a microsecond per call, the wall time. Under
    /// ptrace, whose stops can make a run of I/O calls a hundred times longer, the larger
    /// of two estimates that err in opposite ways, at most the wall time: the wall time
    /// less the stops, twice what they took inside the calls ([`Outcome::stopped_in_calls`],
    /// as this run's load made them; without it, a probe's round trip per call), long when
    /// the tracer's work between the stops adds more; and the command's user CPU time plus the
    /// time in its followed calls (waits included, the stops left out), short for a command
    /// that also sleeps, waits for children or faults outside those calls. With the larger,
    /// a finding's share of the run is the same under both backends, to within the stops'
    /// error, whether the command works or waits between its calls.
    pub fn untraced_wall(&self) -> Duration {
        if self.backend != Backend::Ptrace {
            return self.wall;
        }
        let working = self.untraced_wall_at_least();
        let unstopped = match self.stopped_in_calls {
            Some(inside) => self.wall.saturating_sub(inside.saturating_mul(2)),
            None => {
                let calls = self.trace.total_calls().min(u64::from(u32::MAX)) as u32;
                self.stop_round_trip
                    .map_or(Duration::ZERO, |(together, apart)| {
                        let stop = together.max(apart.unwrap_or(together));
                        self.wall.saturating_sub(stop.saturating_mul(calls))
                    })
            }
        };
        working.max(unstopped)
    }

    /// The shorter estimate of [`Outcome::untraced_wall`] under ptrace (the command's user
    /// CPU time and the time in its followed calls, at most the wall time), the wall time
    /// under eBPF. What a trace cost is its time less this ([`History`]): a loaded machine,
    /// where the stops cost more than the probe measured, never makes ptrace look cheaper.
    pub fn untraced_wall_at_least(&self) -> Duration {
        if self.backend != Backend::Ptrace {
            return self.wall;
        }
        let in_calls: u64 = self
            .trace
            .targets
            .iter()
            .flat_map(|t| t.calls.values())
            .chain(self.trace.other_calls.values())
            .map(|c| c.ns)
            .sum();
        (self.user_cpu.unwrap_or_default() + Duration::from_nanos(in_calls)).min(self.wall)
    }
}

/// What a ptrace trace adds per I/O call on this machine when a command's own was not
/// measured yet: a stop at the call's entry and one at its exit, the tracer's work between,
/// and the trace handed over after (the Intel VM, 28 Nov 2026: 11 µs a call for `dd`, 23 µs
/// for `tar xf` of 3 000 files, 50 µs for `git status`, whose threads stop on many CPUs).
pub const PTRACE_CALL_GUESS: Duration = Duration::from_micros(25);

/// eBPF's start before one was measured here: loading the program and the kernel's BTF,
/// the verifier (0.20–0.23 s on the Intel VM, 28 Nov 2026).
pub const BPF_READY_GUESS: Duration = Duration::from_millis(200);

/// What eBPF adds per I/O call, the maps read after included (about 0.5 µs in the kernel).
pub const BPF_CALL: Duration = Duration::from_micros(1);

/// Commands a [`History`] keeps: the ones traced last.
pub const HISTORY_MAX: usize = 256;

/// What `auto` remembers of the commands it traced, by folder and command line, so that
/// the next trace of one takes the backend that cost it less: eBPF's start (0.2 s) is
/// worth paying only for a command of thousands of I/O calls. The file is
/// `trace-history.json` in iolab's cache folder; it keeps no command line, only a hash of
/// it and of the folder.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    /// The machine the costs were measured on (kernel release and cores): another one's
    /// are not used.
    pub machine: String,
    /// eBPF's last start here.
    pub bpf_ready_ns: Option<u64>,
    /// By [`History::key`].
    pub commands: BTreeMap<String, Past>,
}

/// Traces of one command under one backend whose costs a [`Past`] keeps: the least of them
/// counts, so that one slow run (another program's burst on the machine) does not turn
/// `auto` from a backend for good, nor one lucky run for longer than this many traces.
pub const COSTS_KEPT: usize = 3;

/// What the last traces of one command in one folder saw.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Past {
    /// The I/O calls of its last trace.
    pub calls: u64,
    /// What tracing it under eBPF cost, its last [`COSTS_KEPT`] times under eBPF.
    pub bpf: Vec<Cost>,
    /// What tracing it under ptrace cost, its last [`COSTS_KEPT`] times under ptrace.
    pub ptrace: Vec<Cost>,
    /// When it was traced last (seconds since the epoch): the oldest are forgotten first.
    pub at: u64,
}

/// What one trace cost the command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cost {
    /// The time the trace added: from the backend's start to the trace in hand, less the
    /// command's time as it would have been untraced, at least ([`Outcome::untraced_wall_at_least`]).
    pub ns: u64,
    /// The command's I/O calls then.
    pub calls: u64,
}

impl Past {
    /// What ptrace would add to the command: the least it added in its last traces, in
    /// proportion to the calls, else the calls at [`PTRACE_CALL_GUESS`].
    pub fn ptrace_estimate(&self) -> Duration {
        let scaled = |c: &Cost| match c.calls {
            0 => c.ns,
            n => (c.ns as u128 * self.calls as u128 / n as u128) as u64,
        };
        match self.ptrace.iter().map(scaled).min() {
            Some(ns) => Duration::from_nanos(ns),
            None => PTRACE_CALL_GUESS * self.calls.min(u32::MAX as u64) as u32,
        }
    }

    /// What eBPF would add: the least it added in its last traces (its start, mostly) and
    /// [`BPF_CALL`] a call more, else its start here (`ready`, or [`BPF_READY_GUESS`]) and
    /// the calls.
    pub fn bpf_estimate(&self, ready: Option<Duration>) -> Duration {
        let calls = |n: u64| BPF_CALL * n.min(u32::MAX as u64) as u32;
        let measured = (self.bpf.iter())
            .map(|c| Duration::from_nanos(c.ns) + calls(self.calls.saturating_sub(c.calls)))
            .min();
        measured.unwrap_or_else(|| ready.unwrap_or(BPF_READY_GUESS) + calls(self.calls))
    }
}

impl History {
    /// The key of `words` run in `folder`: a hash, so that no argument is written down.
    pub fn key(folder: &Path, words: &[OsString]) -> String {
        // SipHash with fixed keys: the same key in every run of this build.
        let mut h = std::hash::DefaultHasher::new();
        folder.hash(&mut h);
        words.hash(&mut h);
        format!("{:016x}", h.finish())
    }

    /// The backend that cost the command under `key` less, as far as its last traces
    /// tell, and why; `None` for a command not traced here before.
    pub fn choose(&self, key: &str) -> Option<(Backend, String)> {
        let past = self.commands.get(key)?;
        let ready = self.bpf_ready_ns.map(Duration::from_nanos);
        let (ptrace, bpf) = (past.ptrace_estimate(), past.bpf_estimate(ready));
        let guess = |c: &[Cost]| if c.is_empty() { "about " } else { "" };
        let figures = format!(
            "{} I/O calls when traced last: ptrace {}{}, eBPF {}{}",
            past.calls,
            guess(&past.ptrace),
            seconds(ptrace.as_secs_f64()),
            guess(&past.bpf),
            seconds(bpf.as_secs_f64())
        );
        Some(if ptrace < bpf {
            (
                Backend::Ptrace,
                format!("ptrace costs this command less in this folder; {figures}"),
            )
        } else {
            (
                Backend::Bpf,
                format!("eBPF costs this command less in this folder; {figures}"),
            )
        })
    }

    /// Notes what the trace of the command under `key` cost: `outcome`, `took` from the
    /// backend's start to the trace in hand, at `now` (seconds since the epoch).
    pub fn note(&mut self, key: &str, outcome: &Outcome, took: Duration, now: u64) {
        let calls = outcome.trace.total_calls();
        let added = took.saturating_sub(outcome.untraced_wall_at_least());
        let cost = Cost {
            ns: added.as_nanos() as u64,
            calls,
        };
        let past = self.commands.entry(key.to_string()).or_default();
        past.calls = calls;
        past.at = now;
        let costs = match outcome.backend {
            Backend::Bpf => {
                self.bpf_ready_ns = Some(outcome.setup.as_nanos() as u64);
                &mut past.bpf
            }
            Backend::Ptrace => &mut past.ptrace,
        };
        costs.push(cost);
        if costs.len() > COSTS_KEPT {
            costs.remove(0);
        }
        while self.commands.len() > HISTORY_MAX {
            let oldest = (self.commands.iter())
                .min_by_key(|(_, p)| p.at)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                self.commands.remove(&k);
            }
        }
    }

    /// The history in `path` when this user wrote it on this `machine`, else an empty one.
    pub fn load(path: &Path, machine: &str) -> History {
        use std::os::unix::fs::MetadataExt;
        let fresh = History {
            machine: machine.to_string(),
            ..History::default()
        };
        let Ok(text) = std::fs::read(path) else {
            return fresh;
        };
        // SAFETY: geteuid cannot fail.
        let mine = std::fs::metadata(path).is_ok_and(|m| m.uid() == unsafe { libc::geteuid() });
        match serde_json::from_slice::<History>(&text) {
            Ok(h) if mine && h.machine == machine => h,
            _ => fresh,
        }
    }

    /// Writes the history to `path` whole (a file of another user's is left alone).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid cannot fail.
        if std::fs::metadata(path).is_ok_and(|m| m.uid() != unsafe { libc::geteuid() }) {
            return Ok(());
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
        std::fs::write(
            &tmp,
            serde_json::to_vec(self).map_err(std::io::Error::other)?,
        )?;
        std::fs::rename(&tmp, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Exit, Target};
    use crate::syscalls::Sys;

    fn outcome(backend: Backend, calls: u64, wall_ms: u64, setup_ms: u64) -> Outcome {
        let mut trace = Trace::default();
        let mut t = Target::default();
        for _ in 0..calls {
            t.count(crate::syscalls::Sys::Close, 0, false);
        }
        trace.targets.push(t);
        Outcome {
            backend,
            reason: String::new(),
            detail: String::new(),
            trace,
            exit: Exit::Code(0),
            wall: Duration::from_millis(wall_ms),
            setup: Duration::from_millis(setup_ms),
            interrupted: None,
            timing_note: String::new(),
            stop_round_trip: None,
            user_cpu: Some(Duration::from_millis(5)),
            stopped_in_calls: None,
        }
    }

    #[test]
    fn auto_takes_the_backend_that_cost_the_command_less_last_time() {
        let key = History::key(Path::new("/here"), &["git".into(), "status".into()]);
        assert_ne!(
            key,
            History::key(Path::new("/there"), &["git".into(), "status".into()])
        );
        let mut h = History::default();
        assert_eq!(h.choose(&key), None, "never traced here");
        // Under eBPF: 3 000 calls, 0.2 s to start; ptrace at the guess would add 75 ms.
        let bpf = outcome(Backend::Bpf, 3_000, 10, 200);
        h.note(&key, &bpf, Duration::from_millis(215), 1);
        assert_eq!(h.bpf_ready_ns, Some(200_000_000));
        let (chosen, why) = h.choose(&key).unwrap();
        assert_eq!(chosen, Backend::Ptrace, "{why}");
        assert!(why.starts_with("ptrace costs this command less"), "{why}");
        assert!(why.contains("3000 I/O calls"), "{why}");
        // Measured under ptrace at 0.1 s: ptrace again; one slow run (0.5 s) of it among
        // its last three does not count.
        let ptrace = outcome(Backend::Ptrace, 3_000, 105, 1);
        h.note(&key, &ptrace, Duration::from_millis(110), 2);
        assert_eq!(h.choose(&key).unwrap().0, Backend::Ptrace);
        let slow = outcome(Backend::Ptrace, 3_000, 505, 1);
        h.note(&key, &slow, Duration::from_millis(510), 3);
        assert_eq!(h.choose(&key).unwrap().0, Backend::Ptrace);
        // Three slow ones in a row: eBPF again.
        h.note(&key, &slow, Duration::from_millis(510), 4);
        h.note(&key, &slow, Duration::from_millis(510), 5);
        assert_eq!(h.commands[&key].ptrace.len(), COSTS_KEPT);
        assert_eq!(h.choose(&key).unwrap().0, Backend::Bpf);
        // A command of 400 000 calls: eBPF, whatever ptrace's guess.
        let dd = History::key(Path::new("/here"), &["dd".into()]);
        h.note(
            &dd,
            &outcome(Backend::Bpf, 400_000, 500, 200),
            Duration::from_millis(720),
            3,
        );
        assert_eq!(h.choose(&dd).unwrap().0, Backend::Bpf);
        // The oldest are forgotten past HISTORY_MAX.
        for i in 0..HISTORY_MAX as u64 {
            h.note(&format!("{i}"), &bpf, Duration::from_millis(215), 10 + i);
        }
        assert_eq!(h.commands.len(), HISTORY_MAX);
        assert!(h.choose(&key).is_none() && h.choose(&dd).is_none());
    }

    #[test]
    fn a_history_is_read_back_only_on_the_machine_that_wrote_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("iolab").join("trace-history.json");
        assert_eq!(
            History::load(&path, "m1"),
            History {
                machine: "m1".into(),
                ..History::default()
            }
        );
        let mut h = History::load(&path, "m1");
        h.note(
            "k",
            &outcome(Backend::Bpf, 10, 1, 200),
            Duration::from_millis(205),
            1,
        );
        h.save(&path).unwrap();
        assert_eq!(History::load(&path, "m1"), h);
        assert!(History::load(&path, "m2").commands.is_empty());
        std::fs::write(&path, b"not json").unwrap();
        assert!(History::load(&path, "m1").commands.is_empty());
    }

    #[test]
    fn the_untraced_wall_time_leaves_ptraces_stops_out() {
        let mut trace = Trace::default();
        let mut t = Target::default();
        t.count(Sys::Write, 40_000_000, false);
        trace.targets.push(t);
        let mut o = Outcome {
            backend: Backend::Ptrace,
            reason: String::new(),
            detail: String::new(),
            trace,
            exit: Exit::Code(0),
            wall: Duration::from_secs(1),
            setup: Duration::ZERO,
            interrupted: None,
            timing_note: String::new(),
            stop_round_trip: None,
            user_cpu: Some(Duration::from_millis(10)),
            stopped_in_calls: None,
        };
        // 10 ms of user time and 40 ms in the calls: the rest of the second was stops.
        assert_eq!(o.untraced_wall(), Duration::from_millis(50));
        // Unless its one stop, at 10 ms, explains only 10 ms of it: the command waited for
        // the rest outside its calls.
        o.stop_round_trip = Some((Duration::from_millis(10), None));
        assert_eq!(o.untraced_wall(), Duration::from_millis(990));
        // At 990 ms, the stop explains more than the work leaves: the work is the estimate.
        o.stop_round_trip = Some((Duration::from_millis(990), None));
        assert_eq!(o.untraced_wall(), Duration::from_millis(50));
        // What the stops took inside the calls in this run, when known, counts twice
        // (the other half is between the calls), in place of the probe's round trip.
        o.stopped_in_calls = Some(Duration::from_millis(100));
        assert_eq!(o.untraced_wall(), Duration::from_millis(800));
        o.stopped_in_calls = Some(Duration::from_millis(600));
        assert_eq!(o.untraced_wall(), Duration::from_millis(50));
        o.wall = Duration::from_millis(30);
        assert_eq!(o.untraced_wall(), Duration::from_millis(30));
        o.backend = Backend::Bpf;
        assert_eq!(o.untraced_wall(), o.wall);
    }
}

/// A kind of sync to take out of the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DroppedSync {
    /// `fsync` of a file.
    Fsync,
    /// `fdatasync` of a file.
    Fdatasync,
    /// `fsync` or `fdatasync` of a folder.
    DirFsync,
    /// `O_DSYNC` and `O_SYNC` on the files opened.
    ODsync,
}

impl DroppedSync {
    /// Every kind.
    pub const ALL: [DroppedSync; 4] = [
        DroppedSync::Fsync,
        DroppedSync::Fdatasync,
        DroppedSync::DirFsync,
        DroppedSync::ODsync,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            DroppedSync::Fsync => "fsync",
            DroppedSync::Fdatasync => "fdatasync",
            DroppedSync::DirFsync => "dir-fsync",
            DroppedSync::ODsync => "o-dsync",
        }
    }
}

impl std::fmt::Display for DroppedSync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for DroppedSync {
    type Err = String;

    fn from_str(s: &str) -> Result<DroppedSync, String> {
        DroppedSync::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| {
                format!("unknown sync `{s}` to drop (known: fsync, fdatasync, dir-fsync, o-dsync)")
            })
    }
}
