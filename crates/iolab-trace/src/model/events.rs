//! What a trace keeps beyond the per-target sums: the processes the command ran and which
//! of them used each target; the changes to files in the order they happened (made,
//! written after their last sync, synced, renamed, truncated), which the durability rules
//! read; the paths looked up (`stat` and friends) and the opens that failed; and sampled
//! user stacks of the calls on each target.
//!
//! Every list has a bound ([`MAX_EVENTS`], [`MAX_PATHS`]): past it, what is not kept is
//! counted, and the report says so.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::TargetKey;

/// The most changes a trace keeps.
pub const MAX_EVENTS: usize = 1 << 20;
/// The most distinct paths a trace keeps per table (lookups, failed opens).
pub const MAX_PATHS: usize = 1 << 16;
/// Stacks kept per target and process: the first few of its calls, then one in
/// [`STACK_EVERY`].
pub const STACKS_FIRST: u64 = 3;
/// See [`STACKS_FIRST`].
pub const STACK_EVERY: u64 = 4096;
/// Stack words a sample holds: 8 KiB above the stack pointer (a C function's buffers of a
/// few KiB sit between a call and its callers' return addresses).
pub const STACK_WORDS: usize = 1024;
/// Stacks a trace samples at most.
pub const MAX_STACKS: usize = 8192;

/// Whether the `n`-th call (from 0) of one process on one target has its stack sampled.
pub fn sampled(n: u64) -> bool {
    n < STACKS_FIRST || n.is_multiple_of(STACK_EVERY)
}

/// A process the command ran (the command's own included).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Process {
    /// Its process id.
    pub pid: u32,
    /// The process that started it, when that one was followed too.
    pub parent: Option<u32>,
    /// The program it ran last: the path its `execve` named (or its parent's, when it
    /// forked without executing).
    pub exe: String,
    /// Its arguments, the program's name first, as its `execve` passed them (cut at a few
    /// hundred bytes).
    pub args: Vec<String>,
    /// Where its executable's code is mapped (`start_code`, `end_code`), for its stacks.
    pub code: (u64, u64),
}

/// What one process did to one target.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Use {
    /// Calls (of every kind) on the target.
    pub calls: u64,
    /// Bytes read or written.
    pub bytes: u64,
    /// Nanoseconds in the calls.
    pub ns: u64,
}

impl Use {
    /// Adds one call that moved `bytes` in `ns`.
    pub fn add(&mut self, bytes: u64, ns: u64) {
        self.calls += 1;
        self.bytes += bytes;
        self.ns += ns;
    }

    /// Adds `other`.
    pub fn merge(&mut self, other: &Use) {
        self.calls += other.calls;
        self.bytes += other.bytes;
        self.ns += other.ns;
    }
}

/// A change to a file or a directory, as the durability rules need it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "kebab-case")]
pub enum Change {
    /// An open made the file (`O_CREAT` on a path that did not exist).
    Created {
        /// The file.
        file: TargetKey,
    },
    /// The file was truncated while it held data: an `O_TRUNC` open of a file that
    /// existed, or an `ftruncate` to a shorter size.
    Truncated {
        /// The file.
        file: TargetKey,
    },
    /// The file was written for the first time since it was made, opened or last synced.
    Dirtied {
        /// The file.
        file: TargetKey,
    },
    /// The file or directory was synced (`fsync`, `fdatasync`, `sync_file_range`, `msync`,
    /// or a write through `O_SYNC`/`O_DSYNC`).
    Synced {
        /// The file or directory.
        file: TargetKey,
    },
    /// Every file was synced (`sync`), or every file of one file system (`syncfs` of a
    /// descriptor on the device `device`: major, minor).
    SyncedAll {
        /// The file system's device, for `syncfs`.
        device: Option<(u32, u32)>,
    },
    /// A path was renamed to another (both absolute, as far as they could be resolved).
    Renamed {
        /// The old path.
        from: String,
        /// The new path.
        to: String,
    },
}

/// A [`Change`], when and by whom.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Nanoseconds since the command started.
    pub at_ns: u64,
    /// The process.
    pub pid: u32,
    /// What happened.
    pub change: Change,
}

/// A sampled user stack of one call on a target: the words at the stack pointer and the
/// instruction pointer, as [`crate::stacks`] reads them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RawStack {
    /// The process.
    pub pid: u32,
    /// The target of the call.
    pub target: TargetKey,
    /// The call's name.
    pub call: String,
    /// The instruction pointer.
    pub ip: u64,
    /// The words from the stack pointer up.
    pub words: Vec<u64>,
}

/// Calls on one path that names no open target: `stat` and its kin, or a failed open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathCalls {
    /// Calls.
    pub calls: u64,
    /// Calls that failed.
    pub errors: u64,
    /// Nanoseconds in them.
    pub ns: u64,
    /// The error of the last failure (`errno`).
    pub errno: i32,
}

/// A table of calls by path, bounded by [`MAX_PATHS`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathTable {
    /// The calls per path.
    pub paths: BTreeMap<String, PathCalls>,
    /// Calls on paths that did not fit, or whose path could not be read.
    pub unnamed: PathCalls,
}

impl PathTable {
    /// Counts one call on `path` (`None`: unreadable) that took `ns` and returned `ret`.
    pub fn add(&mut self, path: Option<&str>, ns: u64, ret: i64) {
        let fits = |t: &Self, p: &str| t.paths.len() < MAX_PATHS || t.paths.contains_key(p);
        let entry = match path {
            Some(p) if fits(self, p) => self.paths.entry(p.to_string()).or_default(),
            _ => &mut self.unnamed,
        };
        entry.calls += 1;
        entry.ns += ns;
        if ret < 0 {
            entry.errors += 1;
            entry.errno = (-ret) as i32;
        }
    }

    /// Every call counted.
    pub fn calls(&self) -> u64 {
        self.paths.values().map(|c| c.calls).sum::<u64>() + self.unnamed.calls
    }

    /// Nanoseconds in every call.
    pub fn ns(&self) -> u64 {
        self.paths.values().map(|c| c.ns).sum::<u64>() + self.unnamed.ns
    }
}

/// The lists of a trace ([`super::Trace::seen`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seen {
    /// The processes, by pid.
    pub processes: BTreeMap<u32, Process>,
    /// The changes, in order.
    pub events: Vec<Event>,
    /// Changes not kept (past [`MAX_EVENTS`], or lost by the backend).
    pub events_lost: u64,
    /// `stat`, `lstat`, `newfstatat`, `statx`, `access`, `faccessat`, by path.
    pub lookups: PathTable,
    /// Opens that failed, by path.
    pub failed_opens: PathTable,
    /// Sampled stacks.
    pub stacks: Vec<RawStack>,
    /// Whether the backend saw the page faults on maps (eBPF); `faults` holds them.
    pub faults_seen: bool,
    /// Page faults on the maps of each file.
    pub faults: Vec<Faults>,
}

/// Page faults taken on the maps of one file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Faults {
    /// The file.
    pub target: TargetKey,
    /// Faults that went to the file's pages (`filemap_fault`).
    pub faults: u64,
    /// Pages added to the page cache by the command's tasks while it read the file
    /// through its maps: what the faults read in, read-ahead included.
    pub pages_read: u64,
    /// Faults more than [`FAR_PAGES`] pages from the previous fault on the same file: the
    /// scattered ones.
    pub far: u64,
}

/// Pages between two faults beyond which the second is scattered.
pub const FAR_PAGES: u64 = 64;

impl Seen {
    /// Adds a change, unless the list is full.
    pub fn push(&mut self, at_ns: u64, pid: u32, change: Change) {
        if self.events.len() < MAX_EVENTS {
            self.events.push(Event { at_ns, pid, change });
        } else {
            self.events_lost += 1;
        }
    }

    /// The process `pid`, as far as it was seen.
    pub fn process(&self, pid: u32) -> Option<&Process> {
        self.processes.get(&pid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_table_is_bounded() {
        let mut t = PathTable::default();
        for i in 0..MAX_PATHS + 10 {
            t.add(Some(&format!("/p{i}")), 2, -2);
        }
        t.add(Some("/p0"), 2, 0);
        t.add(None, 2, 0);
        assert_eq!(t.paths.len(), MAX_PATHS);
        assert_eq!(t.unnamed.calls, 11);
        assert_eq!(t.calls(), MAX_PATHS as u64 + 12);
        assert_eq!(t.paths["/p0"].errors, 1);
        assert_eq!(t.paths["/p0"].errno, 2);
    }

    #[test]
    fn sampling_takes_the_first_calls_and_then_a_few() {
        let taken: Vec<u64> = (0..10_000).filter(|&n| sampled(n)).collect();
        assert_eq!(taken, [0, 1, 2, 4096, 8192]);
    }
}
