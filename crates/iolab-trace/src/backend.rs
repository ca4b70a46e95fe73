//! The backends' shared vocabulary: their names, what a run hands back, and the settings
//! they take. The backends themselves are in `engine/`.

use std::path::PathBuf;
use std::time::Duration;

use crate::model::{Exit, Trace};

iolab::named_enum! {
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

iolab::named_enum! {
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
}
