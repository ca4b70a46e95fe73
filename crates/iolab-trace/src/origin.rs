//! Where a finding's calls came from: the processes that made them (pid, executable,
//! arguments, and their share of the calls), and sampled user stacks of the calls,
//! symbolized in the process's executable ([`crate::stacks`]).

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::model::{TargetKey, Trace, Use};
use crate::stacks::{Frame, Sample, Symbolizer};

/// Stacks a finding keeps.
pub const MAX_STACKS: usize = 8;

/// The calls that make a finding of `kind`, whose stacks come first.
pub fn offending_calls(kind: &str) -> &'static [&'static str] {
    const WRITES: &[&str] = &["write", "pwrite64", "writev", "pwritev", "pwritev2"];
    const READS: &[&str] = &["read", "pread64", "readv", "preadv", "preadv2"];
    match kind {
        "small-writes" | "small-direct-writes" => WRITES,
        "small-reads" | "random-reads" | "read-twice" | "whole-file-rewrite" => READS,
        "sync-per-record" | "unsynced-directory" => {
            &["fsync", "fdatasync", "sync_file_range", "msync"]
        }
        "open-churn" | "rename-before-sync" | "rewrite-in-place" => &["openat", "open", "creat"],
        _ => &[],
    }
}
/// Frames a stack keeps.
pub const MAX_FRAMES: usize = 16;

/// One process's part in a finding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProcessUse {
    /// Its pid.
    pub pid: u32,
    /// Its executable.
    pub exe: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its calls, bytes and time on the finding's targets.
    #[serde(flatten)]
    pub use_: Use,
}

/// A sampled stack of one call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Stack {
    /// The process.
    pub pid: u32,
    /// The call.
    pub call: String,
    /// Its frames in the executable, innermost first.
    pub frames: Vec<Frame>,
}

impl Stack {
    /// The innermost frame in the program's own code (not a runtime's or a library's), else
    /// the innermost frame.
    pub fn own_frame(&self) -> Option<&Frame> {
        self.frames
            .iter()
            .find(|f| crate::stacks::is_own_code(f))
            .or(self.frames.first())
    }
}

/// Finds processes and stacks for targets: one symbolizer per executable.
pub struct Origins<'a> {
    trace: &'a Trace,
    by_key: HashMap<TargetKey, Vec<usize>>,
    symbolizers: HashMap<String, Symbolizer>,
}

impl<'a> Origins<'a> {
    /// For the targets and stacks of `trace`.
    pub fn new(trace: &'a Trace) -> Origins<'a> {
        let mut by_key: HashMap<TargetKey, Vec<usize>> = HashMap::new();
        for (i, t) in trace.targets.iter().enumerate() {
            if let Some(k) = t.key {
                by_key.entry(k).or_default().push(i);
            }
        }
        Origins {
            trace,
            by_key,
            symbolizers: HashMap::new(),
        }
    }

    /// The processes that used `keys` (none: every target), the busiest first.
    pub fn processes(&self, keys: &[TargetKey]) -> Vec<ProcessUse> {
        let mut uses: BTreeMap<u32, Use> = BTreeMap::new();
        if keys.is_empty() {
            for t in &self.trace.targets {
                for (pid, u) in &t.by_process {
                    uses.entry(*pid).or_default().merge(u);
                }
            }
        }
        // Each target once, however often its key is listed (an inode number a path had
        // several times during the run).
        let mut targets: Vec<usize> = keys
            .iter()
            .flat_map(|k| self.by_key.get(k).into_iter().flatten().copied())
            .collect();
        targets.sort_unstable();
        targets.dedup();
        for i in targets {
            for (pid, u) in &self.trace.targets[i].by_process {
                uses.entry(*pid).or_default().merge(u);
            }
        }
        let mut out: Vec<ProcessUse> = uses
            .into_iter()
            .map(|(pid, use_)| {
                let p = self.trace.seen.process(pid);
                ProcessUse {
                    pid,
                    exe: p.map(|p| p.exe.clone()).unwrap_or_default(),
                    args: p.map(|p| p.args.clone()).unwrap_or_default(),
                    use_,
                }
            })
            .collect();
        out.sort_by(|a, b| b.use_.calls.cmp(&a.use_.calls).then(a.pid.cmp(&b.pid)));
        out
    }

    /// Sampled stacks of calls on `keys` (at most [`MAX_STACKS`]), symbolized, those of the
    /// calls `first` names first (a finding's offending calls); stacks with no frame in the
    /// executable are left out.
    pub fn stacks(&mut self, keys: &[TargetKey], first: &[&str]) -> Vec<Stack> {
        let mut out = Vec::new();
        let mut raws: Vec<&crate::model::RawStack> = self
            .trace
            .seen
            .stacks
            .iter()
            .filter(|s| keys.contains(&s.target))
            .collect();
        raws.sort_by_key(|s| !first.contains(&s.call.as_str()));
        for raw in raws {
            if out.len() >= MAX_STACKS {
                break;
            }
            let Some(p) = self.trace.seen.process(raw.pid) else {
                continue;
            };
            if p.exe.is_empty() {
                continue;
            }
            let symbolizer = self
                .symbolizers
                .entry(p.exe.clone())
                .or_insert_with(|| Symbolizer::new(std::path::Path::new(&p.exe)));
            let sample = Sample {
                ip: raw.ip,
                start_code: p.code.0,
                end_code: p.code.1,
                words: raw.words.clone(),
            };
            let frames = symbolizer.frames(&sample, MAX_FRAMES);
            if !frames.is_empty() {
                out.push(Stack {
                    pid: raw.pid,
                    call: raw.call.clone(),
                    frames,
                });
            }
        }
        out
    }
}
