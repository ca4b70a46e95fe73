//! What a trace reports: the command and how it ended, the backend and why, the findings,
//! the targets, and where the figures came from; as a terminal summary ([`summary`]) and
//! as JSON ([`json`]).

pub mod json;
pub mod summary;
pub mod wrap;

use crate::backend::Outcome;
use crate::costs::Sources;
use crate::model::{Exit, Process, Target, TargetKey, Use};
use crate::rules::Finding;

/// Everything `iolab trace` says about one run.
#[derive(Clone, Debug)]
pub struct Report {
    /// The command's words.
    pub command: Vec<String>,
    /// The command as a shell shows it.
    pub display: String,
    /// The program the command runs, as recognised ([`crate::program`]).
    pub program: crate::program::Recognised,
    /// What the backend saw, and how the command ended.
    pub outcome: Outcome,
    /// The findings, the largest saving first.
    pub findings: Vec<Finding>,
    /// The targets as the findings see them: every inode a path named during the run
    /// merged into one ([`crate::rules::group`]).
    pub groups: Vec<Target>,
    /// Where the estimates' figures came from.
    pub sources: Sources,
    /// Remarks for the reader (calibration skipped, …).
    pub notes: Vec<String>,
}

impl Report {
    /// The exit code `iolab trace` gives: the command's, as a shell reports it.
    pub fn exit_code(&self) -> i32 {
        self.outcome.exit.shell_code()
    }

    /// The targets (one per inode), the busiest first: by time in their calls, then by
    /// calls.
    pub fn targets_by_time(&self) -> Vec<&Target> {
        by_time(self.outcome.trace.targets.iter().collect())
    }

    /// The targets by path ([`Report::groups`]), the busiest first.
    pub fn groups_by_time(&self) -> Vec<&Target> {
        by_time(self.groups.iter().collect())
    }

    /// Every process the command ran, with what it did on all targets, by pid.
    pub fn processes(&self) -> Vec<(&Process, Use)> {
        let trace = &self.outcome.trace;
        let mut uses: std::collections::HashMap<u32, Use> = Default::default();
        for t in &trace.targets {
            for (pid, u) in &t.by_process {
                uses.entry(*pid).or_default().merge(u);
            }
        }
        trace
            .seen
            .processes
            .values()
            .map(|p| (p, uses.get(&p.pid).copied().unwrap_or_default()))
            .collect()
    }

    /// The path of the target `key`, or its inode when it has none.
    pub fn path_of(&self, key: TargetKey) -> String {
        self.outcome
            .trace
            .targets
            .iter()
            .find(|t| t.key == Some(key))
            .map_or_else(|| format!("inode {}", key.ino), |t| t.path.clone())
    }

    /// How the command ended, in words: `exit 0`, `killed by signal 9 (exit 137)`.
    pub fn ending(&self) -> String {
        match self.outcome.exit {
            Exit::Code(c) => format!("exit {c}"),
            Exit::Signal(s) => format!("killed by signal {s} (exit {})", 128 + s),
        }
    }
}

/// `t`, the busiest first: by time in their calls, then by calls, then by path.
fn by_time(mut t: Vec<&Target>) -> Vec<&Target> {
    t.sort_by(|a, b| {
        b.total_ns()
            .cmp(&a.total_ns())
            .then(b.total_calls().cmp(&a.total_calls()))
            .then(a.path.cmp(&b.path))
    });
    t
}
