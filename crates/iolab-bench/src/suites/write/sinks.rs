//! The `write` suite's sinks: consumer processes reading a pipe, the pinned diagnostic
//! pipes, `/dev/null` and the file, and what a writer's standard output is in each.

use super::Facts;
use crate::peers::which;
use crate::runner::{Consumer, CpuPlacement, PipeSink, Stdout};
use iolab_lab::write::DestinationKind;
use std::ffi::OsString;
use std::path::PathBuf;

/// A place the writers write to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Sink {
    /// A pipe read by a consumer process, both unpinned, as a shell pipeline runs them:
    /// where users' output goes, so the verdict and the defaults are read here.
    Consumer(ConsumerKind),
    /// A pipe drained by the bench process itself ([`runner::drain`]), both sides pinned:
    /// a diagnostic, which isolates one placement.
    Pipe {
        /// The capacity: the kernel's default (when known), or what `F_SETPIPE_SZ` gave.
        capacity: Option<usize>,
        /// Whether it was enlarged with `F_SETPIPE_SZ`.
        resized: bool,
        /// Where the writer and the reader run.
        cpus: CpuPlacement,
    },
    Null,
    File(PathBuf),
}

/// The consumer processes of [`Sink::Consumer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ConsumerKind {
    /// `iolab drain`: `splice(2)` to `/dev/null`, never copying (the fastest reader).
    Splice,
    /// `head -c N > /dev/null`: `read(2)` into an 8 KiB buffer and `write(2)` to
    /// `/dev/null`, as the common shell consumer.
    Head,
    /// `pv -S -s N > /dev/null`: pv in the middle of a pipeline (it splices when it can).
    Pv,
}

impl ConsumerKind {
    pub(super) const ALL: [ConsumerKind; 3] =
        [ConsumerKind::Splice, ConsumerKind::Head, ConsumerKind::Pv];

    /// The consumer's process: program and arguments, reading N bytes at most.
    pub(super) fn process(self, config: &crate::context::Config, bytes: u64) -> Option<Consumer> {
        let n = OsString::from(bytes.to_string());
        let (program, args): (PathBuf, Vec<OsString>) = match self {
            ConsumerKind::Splice => (
                config.iolab_exe.clone(),
                vec!["drain".into(), "--limit".into(), n],
            ),
            ConsumerKind::Head => (which("head")?, vec!["-c".into(), n]),
            ConsumerKind::Pv => (
                which("pv")?,
                ["-f", "-n", "-b", "-S", "-s"]
                    .map(OsString::from)
                    .into_iter()
                    .chain([n])
                    .collect(),
            ),
        };
        Some(Consumer { program, args })
    }

    /// The consumer as a shell spells it, for the rows.
    pub(super) fn command(self) -> &'static str {
        match self {
            ConsumerKind::Splice => "iolab drain --limit N (splice to /dev/null)",
            ConsumerKind::Head => "head -c N > /dev/null",
            ConsumerKind::Pv => "pv -f -n -b -S -s N > /dev/null",
        }
    }
}

impl Sink {
    pub(super) fn name(&self) -> &'static str {
        match self {
            Sink::Consumer(ConsumerKind::Splice) => "splice-reader",
            Sink::Consumer(ConsumerKind::Head) => "head",
            Sink::Consumer(ConsumerKind::Pv) => "pv",
            Sink::Pipe { resized: true, .. } => "pipe-resized",
            Sink::Pipe {
                cpus: CpuPlacement::Separate,
                ..
            } => "pipe-two-cpus",
            Sink::Pipe { .. } => "pipe-same-cpu",
            Sink::Null => "/dev/null",
            Sink::File(_) => "file",
        }
    }

    /// Whether the sink is a diagnostic (pinned) rather than where users write.
    pub(super) fn diagnostic(&self) -> bool {
        matches!(self, Sink::Pipe { .. })
    }

    pub(super) fn kind(&self) -> DestinationKind {
        match self {
            Sink::Pipe { .. } | Sink::Consumer(_) => DestinationKind::Pipe,
            Sink::Null => DestinationKind::Null,
            Sink::File(_) => DestinationKind::RegularFile,
        }
    }

    /// The pipe's capacity: what a consumer's fresh pipe gets by default, or the diagnostic
    /// pipe's.
    pub(super) fn pipe_capacity(&self, facts: &Facts) -> Option<usize> {
        match self {
            Sink::Consumer(_) => facts.pipe_default,
            Sink::Pipe { capacity, .. } => *capacity,
            Sink::Null | Sink::File(_) => None,
        }
    }

    pub(super) fn stdout(
        &self,
        config: &crate::context::Config,
        bytes: u64,
        limit: Option<u64>,
    ) -> Stdout {
        match self {
            Sink::Consumer(kind) => match kind.process(config, bytes) {
                Some(consumer) => Stdout::Consumer(consumer),
                None => Stdout::Null,
            },
            Sink::Pipe {
                capacity,
                resized,
                cpus,
            } => Stdout::Pipe(PipeSink {
                capacity: if *resized { *capacity } else { None },
                limit,
                cpus: *cpus,
            }),
            Sink::Null => Stdout::Null,
            Sink::File(path) => Stdout::File(path.clone()),
        }
    }
}
