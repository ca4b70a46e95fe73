//! Choosing the backend and running it: eBPF ([`bpf`]) where it is allowed, ptrace with a
//! seccomp filter ([`ptrace`]) where it is not, each run saying which one ran and why.
//!
//! A fallback happens only before the command has started: the eBPF backend fails before
//! it releases the command (the kernel refuses its program), so the command never runs
//! twice.

pub mod bpf;
pub mod ptrace;

use crate::backend::{Choice, Outcome, RunOptions};
use crate::error::{Error, Result};
use crate::launch::Command;

/// Runs `command` with the backend `choice` names (or the best one allowed here).
pub fn run(command: &Command, choice: Choice, options: &RunOptions) -> Result<Outcome> {
    const ALLOWED: &str = "eBPF is allowed here (root or CAP_BPF with CAP_PERFMON, BTF)";
    const NEEDS_PTRACE: &str = "--log streams every call, which only the ptrace backend does";
    match choice {
        Choice::Bpf => {
            if options.log.is_some() {
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
        Choice::Auto => {
            let why_not = if options.log.is_some() {
                NEEDS_PTRACE.to_string()
            } else {
                match bpf::availability() {
                    Ok(()) => match bpf::run(command, ALLOWED.to_string()) {
                        Err(Error::Backend { reason, .. }) => reason,
                        other => return other,
                    },
                    Err(reason) => reason,
                }
            };
            match ptrace::run(command, options, format!("bpf is not available: {why_not}")) {
                Err(Error::NotPermitted(p)) => {
                    Err(Error::NotPermitted(format!("bpf: {why_not}; ptrace: {p}")))
                }
                other => other,
            }
        }
    }
}
