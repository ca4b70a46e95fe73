//! Choosing the backend and running it: eBPF ([`bpf`]) where it is allowed, ptrace with a
//! seccomp filter ([`ptrace`]) where it is not, each run saying which one ran and why.
//!
//! A fallback happens only before the command has started: the eBPF backend fails before
//! it releases the command (bpftrace cannot attach its probes), so the command never runs
//! twice.

pub mod bpf;
pub mod ptrace;

use crate::backend::{Choice, Outcome, RunOptions};
use crate::error::{Error, Result};
use crate::launch::Command;

/// Runs `command` with the backend `choice` names (or the best one allowed here).
pub fn run(command: &Command, choice: Choice, options: &RunOptions) -> Result<Outcome> {
    let bpf_reason = |note: Option<String>| {
        let mut r = "eBPF is allowed here (root or CAP_BPF, BTF, tracefs, bpftrace)".to_string();
        if let Some(n) = note {
            r.push_str("; ");
            r.push_str(&n);
        }
        r
    };
    match choice {
        Choice::Bpf => {
            if options.log.is_some() {
                return Err(Error::Unavailable {
                    backend: "bpf",
                    reason: "--log streams every call, which only the ptrace backend does".into(),
                });
            }
            let (bpftrace, note) = bpf::availability().map_err(|reason| Error::Unavailable {
                backend: "bpf",
                reason,
            })?;
            bpf::run(
                command,
                &bpftrace,
                format!("asked for; {}", bpf_reason(note)),
            )
        }
        Choice::Ptrace => ptrace::run(command, options, "asked for (--backend ptrace)".into()),
        Choice::Auto => {
            let why_not = if options.log.is_some() {
                "--log streams every call, which only the ptrace backend does".to_string()
            } else {
                match bpf::availability() {
                    Ok((bpftrace, note)) => match bpf::run(command, &bpftrace, bpf_reason(note)) {
                        Err(Error::Backend { reason, .. }) => {
                            format!("bpftrace failed: {reason}")
                        }
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
