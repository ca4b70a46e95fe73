//! What a trace holds once aggregated: per target (a file, a pipe, a terminal, …) the reads
//! and writes (calls, bytes, time, a power-of-two size histogram, how many started where the
//! previous one ended), the syncs, opens and their flags, seeks and maps; and, for the whole
//! command, its tasks and the calls that belong to no target.
//!
//! Both backends fill the same structures: the eBPF one from the maps the kernel aggregated,
//! the ptrace one call by call in this process. Memory is one [`Target`] per distinct
//! target, whatever the number of calls.

pub mod events;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use events::{Change, Event, Process, RawStack, Seen, Use};

use crate::syscalls::Sys;

iolab_lab::named::named_enum! {
    /// What a descriptor refers to.
    pub enum Kind: "kind" {
        /// A regular file.
        File = "file",
        /// A pipe or FIFO.
        Pipe = "pipe",
        /// A terminal (a pseudo-terminal or a console).
        Tty = "tty",
        /// A socket.
        Socket = "socket",
        /// A directory (synced after a file in it was made or renamed).
        Directory = "directory",
        /// Another device: `/dev/null`, `/dev/zero`, a disk.
        Device = "device",
        /// Anything else: an eventfd, an io_uring ring, an inode of no kind.
        Other = "other",
    }
}

impl Kind {
    /// The kind of an inode from its mode (`st_mode`) and, for character devices, its
    /// device number: terminals are majors 4 (consoles), 5 (`/dev/tty`, `/dev/console`,
    /// `/dev/ptmx`) and 136–143 (Unix 98 pseudo-terminals), per the kernel's devices.txt.
    pub fn from_mode(mode: u32, rdev_major: u32) -> Kind {
        match mode & libc::S_IFMT {
            libc::S_IFREG => Kind::File,
            libc::S_IFIFO => Kind::Pipe,
            libc::S_IFSOCK => Kind::Socket,
            libc::S_IFDIR => Kind::Directory,
            libc::S_IFCHR if matches!(rdev_major, 4 | 5 | 136..=143) => Kind::Tty,
            libc::S_IFCHR | libc::S_IFBLK => Kind::Device,
            _ => Kind::Other,
        }
    }

    /// How a message names a target of this kind: "a file", "a pipe", …
    pub fn article(self) -> &'static str {
        match self {
            Kind::File => "a file",
            Kind::Pipe => "a pipe",
            Kind::Tty => "a terminal",
            Kind::Socket => "a socket",
            Kind::Directory => "a directory",
            Kind::Device => "a device",
            Kind::Other => "a descriptor of another kind",
        }
    }
}

/// Serializes a named value (a [`Kind`], a [`Sys`]) as its name, and reads it back.
macro_rules! serde_by_name {
    ($T:ty, $from:expr) => {
        impl Serialize for $T {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> Deserialize<'de> for $T {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$T, D::Error> {
                let name = String::deserialize(d)?;
                let from: fn(&str) -> Option<$T> = $from;
                from(&name).ok_or_else(|| serde::de::Error::custom(format!("unknown name {name}")))
            }
        }
    };
}

serde_by_name!(Kind, |n| n.parse().ok());
serde_by_name!(Sys, Sys::from_name);

/// A target's identity: the device and inode number, as the kernel knows them (a pipe's
/// inode lives on the kernel's pipe file system, so every pipe is a target of its own), and
/// which life of that inode number: a file lives from its creation to the unlink or
/// rename-over that ends it, and an inode number a file system frees and gives to a new
/// file during the run names another file. The eBPF backend tells lives apart by the
/// inode's generation (what `stat` does not show), the ptrace backend by its birth time
/// (`statx`'s `btime`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct TargetKey {
    /// The device's major number.
    pub major: u32,
    /// The device's minor number.
    pub minor: u32,
    /// The inode number.
    pub ino: u64,
    /// Which life of the inode number (0: unknown, or the only one).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub life: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl TargetKey {
    /// The key of a kernel `dev_t` (`MKDEV`: major in the top 12 bits of 32, minor in the
    /// low 20) and an inode number: what the eBPF backend reads from `struct inode`.
    pub fn from_kernel_dev(dev: u64, ino: u64) -> TargetKey {
        TargetKey {
            major: (dev >> 20) as u32,
            minor: (dev & 0xf_ffff) as u32,
            ino,
            life: 0,
        }
    }

    /// The key of a user-space `st_dev` and `st_ino` (from `stat`).
    pub fn from_stat(dev: u64, ino: u64) -> TargetKey {
        TargetKey {
            major: libc::major(dev),
            minor: libc::minor(dev),
            ino,
            life: 0,
        }
    }

    /// The same inode number in its life `life`.
    pub fn with_life(self, life: u32) -> TargetKey {
        TargetKey { life, ..self }
    }

    /// The life of a file born at `born` (its `statx` birth time, where the file system
    /// keeps one): its nanoseconds since the epoch, folded into 32 bits (two files that
    /// shared an inode number in one run were born at different times).
    pub fn life_from_birth(born: Option<std::time::SystemTime>) -> u32 {
        born.and_then(|b| b.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| {
                let n = d.as_nanos();
                ((n ^ (n >> 32)) as u32).max(1)
            })
    }

    /// Whether `other` is the same device and inode number, whatever the lives.
    pub fn same_inode(&self, other: &TargetKey) -> bool {
        (self.major, self.minor, self.ino) == (other.major, other.minor, other.ino)
    }
}

/// Size buckets of [`Flow::sizes`]: bucket 0 holds calls that moved 0 bytes, bucket `k`
/// (1..) calls that moved `2^(k-1)` to `2^k - 1` bytes; the last one holds everything from
/// 1 GiB up (Linux moves at most 2 GiB − 4 KiB in one call).
pub const SIZE_BUCKETS: usize = 32;

/// The bucket of a call that moved `bytes`.
pub fn size_bucket(bytes: u64) -> usize {
    ((u64::BITS - bytes.leading_zeros()) as usize).min(SIZE_BUCKETS - 1)
}

/// The smallest size bucket `k` holds.
pub fn bucket_floor(k: usize) -> u64 {
    if k == 0 { 0 } else { 1u64 << (k - 1) }
}

/// Where a read or write started, against the previous one on the same open file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Where the previous call ended (or at offset 0 for the first; every `O_APPEND`
    /// write).
    Sequential,
    /// Where the previous call started: the same bytes again (a header read twice).
    Repeated,
    /// Anywhere else.
    Scattered,
    /// Not a regular file: no offsets.
    Stream,
}

/// One direction of data through a target: its reads, or its writes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flow {
    /// Calls that succeeded.
    pub calls: u64,
    /// Bytes they moved.
    pub bytes: u64,
    /// Nanoseconds spent in them (see the backend for what that includes).
    pub ns: u64,
    /// Calls that moved data and started where the previous call on the same open file
    /// ended (regular files only; the first call at offset 0 counts).
    pub sequential: u64,
    /// Calls that moved data and started where the previous call on the same open file
    /// started.
    pub repeated: u64,
    /// Calls through a descriptor opened with `O_DIRECT`.
    pub direct: u64,
    /// Calls through a descriptor opened with `O_SYNC` or `O_DSYNC` (each write is a sync).
    pub synced: u64,
    /// When the first call started, in nanoseconds since the command started.
    pub first_ns: Option<u64>,
    /// When the last call started, likewise.
    pub last_ns: Option<u64>,
    /// Calls per size bucket ([`size_bucket`]).
    pub sizes: [u64; SIZE_BUCKETS],
    /// The program's own work before these calls: for each call, the nanoseconds since its
    /// task's previous followed call ended (its user-space work, and calls not followed,
    /// in between), summed over the calls that had one ([`Flow::gaps`]). eBPF only: under
    /// ptrace the work between two stops runs slower by the tracer's switch (0).
    #[serde(default)]
    pub gap_ns: u64,
    /// Calls that had a previous followed call in their task: those `gap_ns` sums.
    #[serde(default)]
    pub gaps: u64,
}

impl Default for Flow {
    fn default() -> Flow {
        Flow {
            calls: 0,
            bytes: 0,
            ns: 0,
            sequential: 0,
            repeated: 0,
            direct: 0,
            synced: 0,
            first_ns: None,
            last_ns: None,
            sizes: [0; SIZE_BUCKETS],
            gap_ns: 0,
            gaps: 0,
        }
    }
}

impl Flow {
    /// Adds one call that moved `bytes` in `ns` nanoseconds, started `at` nanoseconds after
    /// the command started, at `place` against the previous call (not counted for a call
    /// that moved nothing).
    pub fn add(&mut self, bytes: u64, ns: u64, at: u64, place: Place) {
        self.calls += 1;
        self.bytes += bytes;
        self.ns += ns;
        match place {
            _ if bytes == 0 => {}
            Place::Sequential => self.sequential += 1,
            Place::Repeated => self.repeated += 1,
            Place::Scattered | Place::Stream => {}
        }
        self.sizes[size_bucket(bytes)] += 1;
        self.first_ns = Some(self.first_ns.map_or(at, |f| f.min(at)));
        self.last_ns = Some(self.last_ns.map_or(at, |l| l.max(at)));
    }

    /// Adds the time since the previous call of the task that made one of these calls.
    pub fn add_gap(&mut self, ns: u64) {
        self.gap_ns += ns;
        self.gaps += 1;
    }

    /// The mean time since the task's previous call, per call that had one (0 without).
    pub fn mean_gap(&self) -> f64 {
        if self.gaps == 0 {
            0.0
        } else {
            self.gap_ns as f64 / self.gaps as f64
        }
    }

    /// Adds everything of `other` (the same target seen under another key).
    pub fn merge(&mut self, other: &Flow) {
        self.calls += other.calls;
        self.gap_ns += other.gap_ns;
        self.gaps += other.gaps;
        self.bytes += other.bytes;
        self.ns += other.ns;
        self.sequential += other.sequential;
        self.repeated += other.repeated;
        self.direct += other.direct;
        self.synced += other.synced;
        self.first_ns = match (self.first_ns, other.first_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last_ns = self.last_ns.max(other.last_ns);
        for (a, b) in self.sizes.iter_mut().zip(other.sizes) {
            *a += b;
        }
    }

    /// Bytes per call, 0 without calls.
    pub fn average(&self) -> f64 {
        if self.calls == 0 {
            0.0
        } else {
            self.bytes as f64 / self.calls as f64
        }
    }

    /// Calls that moved no bytes (a read at the end of a file).
    pub fn empty(&self) -> u64 {
        self.sizes[0]
    }

    /// Calls that moved data, at offsets that were neither where the last call ended nor
    /// where it started: the scattered ones.
    pub fn scattered(&self) -> u64 {
        self.calls
            .saturating_sub(self.sequential + self.repeated)
            .saturating_sub(self.empty())
    }

    /// The share of the calls that moved data that moved less than `limit` bytes (a power
    /// of two), 0..1, from the histogram.
    pub fn share_below(&self, limit: u64) -> f64 {
        let moved: u64 = self.sizes[1..].iter().sum();
        if moved == 0 {
            return 0.0;
        }
        let below: u64 = (1..SIZE_BUCKETS)
            .filter(|&k| 1u64 << k <= limit)
            .map(|k| self.sizes[k])
            .sum();
        below as f64 / moved as f64
    }

    /// The share of calls that were sequential, 0..1.
    pub fn sequential_share(&self) -> f64 {
        if self.calls == 0 {
            0.0
        } else {
            self.sequential as f64 / self.calls as f64
        }
    }

    /// The size bucket that holds the most calls, as its floor in bytes.
    pub fn typical_size(&self) -> u64 {
        let (k, _) = self
            .sizes
            .iter()
            .enumerate()
            .max_by_key(|&(k, n)| (*n, std::cmp::Reverse(k)))
            .unwrap_or((0, &0));
        bucket_floor(k)
    }

    /// The histogram as (bucket floor, calls) pairs, empty buckets left out.
    pub fn histogram(&self) -> Vec<(u64, u64)> {
        self.sizes
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n > 0)
            .map(|(k, &n)| (bucket_floor(k), n))
            .collect()
    }
}

/// How the files a target was opened as asked to be written: counts of the opens with each
/// flag.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenFlags {
    /// `O_DIRECT`.
    pub direct: u64,
    /// `O_SYNC`.
    pub sync: u64,
    /// `O_DSYNC` without `O_SYNC`.
    pub dsync: u64,
    /// `O_APPEND`.
    pub append: u64,
    /// `O_TRUNC` (or `creat`).
    pub trunc: u64,
    /// `O_CREAT` (or `creat`).
    pub creat: u64,
}

impl OpenFlags {
    /// Counts one open with status `flags` (as `fdinfo` or `struct file` hold them, plus
    /// `O_TRUNC` and `O_CREAT` when the call asked for them).
    pub fn add(&mut self, flags: i32) {
        if flags & libc::O_DIRECT != 0 {
            self.direct += 1;
        }
        if flags & libc::O_SYNC == libc::O_SYNC {
            self.sync += 1;
        } else if flags & libc::O_DSYNC != 0 {
            self.dsync += 1;
        }
        if flags & libc::O_APPEND != 0 {
            self.append += 1;
        }
        if flags & libc::O_TRUNC != 0 {
            self.trunc += 1;
        }
        if flags & libc::O_CREAT != 0 {
            self.creat += 1;
        }
    }

    /// Adds the counts of `other`.
    pub fn merge(&mut self, other: &OpenFlags) {
        self.direct += other.direct;
        self.sync += other.sync;
        self.dsync += other.dsync;
        self.append += other.append;
        self.trunc += other.trunc;
        self.creat += other.creat;
    }
}

/// The calls of one system call on a target: how many, how many failed, and the time in
/// them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallStat {
    /// Calls.
    pub calls: u64,
    /// Calls that failed.
    pub errors: u64,
    /// Nanoseconds in them.
    pub ns: u64,
}

impl CallStat {
    /// Adds one call that took `ns` and `failed` or not.
    pub fn add(&mut self, ns: u64, failed: bool) {
        self.calls += 1;
        self.errors += u64::from(failed);
        self.ns += ns;
    }

    /// Adds `other`.
    pub fn merge(&mut self, other: &CallStat) {
        self.calls += other.calls;
        self.errors += other.errors;
        self.ns += other.ns;
    }
}

/// Everything seen of one target.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// Its identity.
    pub key: Option<TargetKey>,
    /// What it is.
    pub kind: Option<Kind>,
    /// Its path: the path of the file as the kernel names it (eBPF: its dentries up to the
    /// root; ptrace: `/proc/PID/fd/N`), what `/proc` names it (`pipe:[123]`), or a
    /// description when neither was seen. A path that could not be had whole starts with
    /// `…/`.
    pub path: String,
    /// Its size in bytes when last read or written (regular files).
    pub size: u64,
    /// The reads: `read`, `pread64`, `readv`, `preadv`, `preadv2`, `recvfrom`, `recvmsg`,
    /// and the reading side of `sendfile`, `splice`, `copy_file_range` and `tee`.
    pub read: Flow,
    /// The writes: `write`, `pwrite64`, `writev`, `pwritev`, `pwritev2`, `vmsplice`,
    /// `sendto`, `sendmsg`, and the writing side of the copies.
    pub write: Flow,
    /// `fsync`, `fdatasync`, `sync_file_range`, `syncfs` and `msync` of a map of it that
    /// succeeded.
    pub syncs: u64,
    /// Nanoseconds in those.
    pub sync_ns: u64,
    /// Opens that returned a descriptor for it.
    pub opens: u64,
    /// The flags of those opens.
    pub open_flags: OpenFlags,
    /// `lseek` calls.
    pub seeks: u64,
    /// `mmap` calls that mapped it.
    pub mmaps: u64,
    /// Bytes those mapped.
    pub mmap_bytes: u64,
    /// `io_uring_enter` calls on it (it is a ring).
    pub ring_enters: u64,
    /// Submissions those calls asked for.
    pub ring_submissions: u64,
    /// Calls on it that failed.
    pub errors: u64,
    /// Calls per system call: count, failures, time.
    pub calls: BTreeMap<Sys, CallStat>,
    /// Calls, bytes and time per process (by pid).
    pub by_process: BTreeMap<u32, Use>,
}

impl Target {
    /// A target of `kind` named `path`.
    pub fn new(key: Option<TargetKey>, kind: Option<Kind>, path: impl Into<String>) -> Target {
        Target {
            key,
            kind,
            path: path.into(),
            ..Target::default()
        }
    }

    /// Counts one call of `sys` that took `ns` and failed or not.
    pub fn count(&mut self, sys: Sys, ns: u64, failed: bool) {
        self.calls.entry(sys).or_default().add(ns, failed);
    }

    /// All calls seen on it.
    pub fn total_calls(&self) -> u64 {
        self.calls.values().map(|c| c.calls).sum()
    }

    /// Nanoseconds in its reads, writes and syncs.
    pub fn total_ns(&self) -> u64 {
        self.read.ns + self.write.ns + self.sync_ns
    }

    /// Syncs of it: sync calls and writes through `O_SYNC`/`O_DSYNC`.
    pub fn sync_units(&self) -> u64 {
        self.syncs + self.write.synced
    }

    /// The calls of `sys` on it.
    pub fn calls_of(&self, sys: Sys) -> CallStat {
        self.calls.get(&sys).copied().unwrap_or_default()
    }

    /// Its kind, `Other` when unknown.
    pub fn kind_or_other(&self) -> Kind {
        self.kind.unwrap_or(Kind::Other)
    }

    /// Adds everything of `other` (the same path under another inode: a file replaced
    /// between opens, such as a journal made anew for each transaction).
    pub fn merge(&mut self, other: &Target) {
        self.size = self.size.max(other.size);
        self.read.merge(&other.read);
        self.write.merge(&other.write);
        self.syncs += other.syncs;
        self.sync_ns += other.sync_ns;
        self.opens += other.opens;
        self.open_flags.merge(&other.open_flags);
        self.seeks += other.seeks;
        self.mmaps += other.mmaps;
        self.mmap_bytes += other.mmap_bytes;
        self.ring_enters += other.ring_enters;
        self.ring_submissions += other.ring_submissions;
        self.errors += other.errors;
        for (sys, c) in &other.calls {
            self.calls.entry(*sys).or_default().merge(c);
        }
        for (pid, u) in &other.by_process {
            self.by_process.entry(*pid).or_default().merge(u);
        }
    }
}

/// How the traced command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Exit {
    /// It exited with this code.
    Code(i32),
    /// A signal killed it.
    Signal(i32),
}

impl Exit {
    /// The code a shell reports: the exit code, or 128 + the signal number.
    pub fn shell_code(self) -> i32 {
        match self {
            Exit::Code(c) => c,
            Exit::Signal(s) => 128 + s,
        }
    }
}

/// Counts of the tasks the command ran.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tasks {
    /// Processes, the command included.
    pub processes: u64,
    /// Threads beyond each process's first.
    pub threads: u64,
    /// Successful `execve` calls, the command's own included.
    pub execs: u64,
}

/// What a backend could not keep (its tables were full, a path was too deep): the trace is
/// incomplete by this much, and the report says so instead of "no findings".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lost {
    /// Targets that were not kept.
    pub targets: u64,
    /// Calls on targets that were not kept, or that could not be recorded.
    pub calls: u64,
    /// Tasks that were not followed.
    pub tasks: u64,
}

impl Lost {
    /// Whether nothing was lost.
    pub fn is_none(&self) -> bool {
        *self == Lost::default()
    }
}

/// Everything a backend saw of one command.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// The targets, in no particular order.
    pub targets: Vec<Target>,
    /// The tasks.
    pub tasks: Tasks,
    /// Calls that name no target: `dup*`, `close` of unknown descriptors, `sync`, failed
    /// opens, and I/O calls on descriptors that were not open.
    pub other_calls: BTreeMap<Sys, CallStat>,
    /// What could not be kept.
    pub lost: Lost,
    /// Remarks on what the trace may have missed.
    pub warnings: Vec<String>,
    /// The processes, the changes in order, the paths looked up, the stacks.
    pub seen: Seen,
}

impl Trace {
    /// Counts a call that names no target.
    pub fn count_other(&mut self, sys: Sys, ns: u64, failed: bool) {
        self.other_calls.entry(sys).or_default().add(ns, failed);
    }

    /// All I/O calls seen.
    pub fn total_calls(&self) -> u64 {
        self.targets.iter().map(Target::total_calls).sum::<u64>()
            + self.other_calls.values().map(|c| c.calls).sum::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_powers_of_two() {
        assert_eq!(size_bucket(0), 0);
        assert_eq!(size_bucket(1), 1);
        assert_eq!(size_bucket(511), 9);
        assert_eq!(size_bucket(512), 10);
        assert_eq!(bucket_floor(10), 512);
        assert_eq!(size_bucket(u64::MAX), SIZE_BUCKETS - 1);
    }

    #[test]
    fn a_flow_counts_calls_bytes_and_sizes() {
        let mut f = Flow::default();
        for at in 0..3 {
            f.add(9, 100, 10 + at, Place::Sequential);
        }
        f.add(8192, 100, 5, Place::Scattered);
        f.add(0, 100, 20, Place::Sequential);
        f.add(9, 100, 30, Place::Repeated);
        assert_eq!((f.calls, f.bytes, f.ns, f.sequential), (6, 8228, 600, 3));
        assert_eq!((f.first_ns, f.last_ns), (Some(5), Some(30)));
        assert_eq!((f.repeated, f.empty(), f.scattered()), (1, 1, 1));
        f.add_gap(300);
        f.add_gap(500);
        assert_eq!((f.gaps, f.gap_ns, f.mean_gap()), (2, 800, 400.0));
        let mut g = Flow::default();
        assert_eq!(g.mean_gap(), 0.0, "no gap seen");
        g.merge(&f);
        g.merge(&f);
        assert_eq!((g.calls, g.first_ns, g.sizes[0]), (12, Some(5), 2));
        assert_eq!((g.gaps, g.gap_ns), (4, 1600));
        assert_eq!(f.typical_size(), 8);
        assert_eq!(f.histogram(), vec![(0, 1), (8, 4), (8192, 1)]);
        assert_eq!(f.share_below(16), 0.8);
        assert_eq!(f.share_below(8192), 0.8);
        assert_eq!(f.share_below(16384), 1.0);
    }

    #[test]
    fn kinds_from_modes() {
        assert_eq!(Kind::from_mode(libc::S_IFREG | 0o644, 0), Kind::File);
        assert_eq!(Kind::from_mode(libc::S_IFIFO, 0), Kind::Pipe);
        assert_eq!(Kind::from_mode(libc::S_IFCHR, 136), Kind::Tty);
        assert_eq!(Kind::from_mode(libc::S_IFCHR, 1), Kind::Device);
        assert_eq!(Kind::from_mode(libc::S_IFDIR, 0), Kind::Directory);
    }

    #[test]
    fn a_trace_goes_through_json_and_back() {
        let mut t = Target::new(None, Some(Kind::Directory), "/d");
        t.count(Sys::Fsync, 5, false);
        t.write.add(3, 1, 2, Place::Stream);
        let mut trace = Trace::default();
        trace.targets.push(t);
        trace.count_other(Sys::Openat, 7, true);
        let text = serde_json::to_string(&trace).unwrap();
        assert!(text.contains("\"fsync\""), "{text}");
        assert_eq!(serde_json::from_str::<Trace>(&text).unwrap(), trace);
    }

    #[test]
    fn kernel_and_user_device_numbers_agree() {
        let k = TargetKey::from_kernel_dev((254 << 20) | 3, 7);
        let u = TargetKey::from_stat(libc::makedev(254, 3), 7);
        assert_eq!(k, u);
    }
}
