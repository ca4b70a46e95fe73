//! The backends' shared vocabulary: their names, what a run hands back, and the settings
//! they take. The backends themselves are in `engine/`.

use std::path::PathBuf;
use std::time::Duration;

use crate::model::{Exit, Trace};

iolab::lab::named::named_enum! {
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

iolab::lab::named::named_enum! {
    /// The backend asked for.
    pub enum Choice: "backend" {
        /// eBPF where it is allowed, ptrace otherwise.
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
}

impl Outcome {
    /// The command's wall time as it would have been untraced, as near as can be told.
    /// Under eBPF, whose cost is a fraction of a microsecond per call, the wall time. Under
    /// ptrace, whose stops can make a run of I/O calls a hundred times longer, the
    /// command's user CPU time plus the time in its calls (waits included; the stops left
    /// out), at most the wall time: the stops cost system time and wall time, not user
    /// time. (It errs short for a command that also waits outside the followed calls.)
    pub fn untraced_wall(&self) -> Duration {
        if self.backend != Backend::Ptrace {
            return self.wall;
        }
        let in_calls: u64 = self.trace.targets.iter().map(|t| t.total_ns()).sum();
        (self.user_cpu.unwrap_or_default() + Duration::from_nanos(in_calls)).min(self.wall)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Exit, Place, Target};

    #[test]
    fn the_untraced_wall_time_leaves_ptraces_stops_out() {
        let mut trace = Trace::default();
        let mut t = Target::default();
        t.write.add(9, 40_000_000, 0, Place::Stream);
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
        };
        // 10 ms of user time and 40 ms in the calls: the rest of the second was stops.
        assert_eq!(o.untraced_wall(), Duration::from_millis(50));
        o.wall = Duration::from_millis(30);
        assert_eq!(o.untraced_wall(), Duration::from_millis(30));
        o.backend = Backend::Bpf;
        assert_eq!(o.untraced_wall(), o.wall);
    }
}
