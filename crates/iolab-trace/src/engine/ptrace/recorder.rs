//! The ptrace backend's aggregation, in this process: each call, seen at its entry (the
//! seccomp stop) and its exit, is folded into its target's [`Target`] at once, so memory is
//! one entry per target, per open descriptor and per task, however long the command runs.
//!
//! Descriptors are named from `/proc/TID/fd/N` the first time a process uses them (the
//! tracee is stopped, so the answer is the one of the call) and after every `open`; the
//! offset of a descriptor is read from `fdinfo` once and then followed call by call.
//!
//! A call's time leaves out what the tracer's stops add to it ([`super::stops`]).

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Instant;

use super::HashMap;
use super::journal::{self, Finished, Journal};
use super::stops::{self, Probe, Sched, StopCosts};
use super::witness::{Before, Call, Witness, read_memory};
use crate::launch::child::{PROBE_OFFSET, Probes};
use crate::model::{Kind, Place, Target, TargetKey, Trace};
use crate::procfs::{self, FdFacts};
use crate::syscalls::{Role, Sys};

/// `ptrace` requests that make the caller a tracer, or a tracee of its parent.
const PTRACE_TRACEME: u64 = 0;
const PTRACE_ATTACH: u64 = 16;
const PTRACE_SEIZE: u64 = 0x4206;

/// An open descriptor of a process.
#[derive(Clone, Debug)]
struct Fd {
    target: usize,
    /// Where the next `read`/`write` starts, followed from `fdinfo`'s first answer.
    pos: u64,
    /// Where the last read through it started and ended (the sequential test), and the
    /// last write.
    last: [Option<(u64, u64)>; 2],
    /// Its status flags (`O_APPEND`, `O_DSYNC`, …) from `fdinfo`.
    flags: i32,
}

/// A process: its descriptors and its maps of files.
#[derive(Debug, Default)]
struct Proc {
    fds: HashMap<i32, Fd>,
    /// Map start → (length, target).
    maps: BTreeMap<u64, (u64, usize)>,
}

/// A call between its entry and its exit.
#[derive(Clone, Debug)]
struct Pending {
    sys: Sys,
    args: [u64; 6],
    t0: Instant,
    /// The task's CPU time and switches at the entry stop.
    sched0: Option<Sched>,
    /// One of the launch's probes of the round trip: timed, not recorded.
    probe: bool,
    /// Where a copy reads and writes (its offset pointers' values at the entry), `None`
    /// for a side that uses (and moves) its descriptor's offset.
    copy_at: [Option<u64>; 2],
    /// What the entry saw that the exit needs (did the file exist, its size).
    before: Before,
}

/// The 8 bytes at `address` in task `tid` (stopped).
fn read_u64(tid: i32, address: u64) -> Option<u64> {
    let bytes = read_memory(tid, address, 8);
    Some(u64::from_ne_bytes(bytes.try_into().ok()?))
}

/// A task (thread): its process, and the call it is in.
#[derive(Debug)]
struct Task {
    tgid: i32,
    pending: Option<Pending>,
    /// A call only the journal follows, between its entry and its exit: number, arguments.
    pending_extra: Option<(i64, [u64; 6])>,
    /// Its `/proc/TID/schedstat`, open once (`None` when it cannot be read).
    schedstat: Option<Option<std::fs::File>>,
    /// Whether its last call that did not wait ran with the tracer on another CPU.
    apart: bool,
}

/// Folds calls into a [`Trace`].
pub struct Recorder {
    /// What has been seen so far.
    pub trace: Trace,
    /// Targets by identity: the inode, and when it was made (a freed inode number given to
    /// a new file is another target).
    index: HashMap<(TargetKey, Option<std::time::SystemTime>), usize>,
    procs: HashMap<i32, Proc>,
    tasks: HashMap<i32, Task>,
    log: Option<std::io::BufWriter<std::fs::File>>,
    /// The journal of one folder's changes, for `iolab crash`.
    journal: Option<Journal>,
    started: Instant,
    warned_ptrace: bool,
    /// The batches of probes the launch makes.
    probe_batches: usize,
    /// The probes, until the first real call.
    probes: Vec<Probe>,
    /// What the stops cost, left out of every call's time.
    stop_costs: Option<StopCosts>,
    /// What was left out of the calls' times, summed: the stops' part inside the calls,
    /// as this run's load made them.
    stopped_ns: u64,
    /// The processes, the changes, the paths, the stacks.
    witness: Witness,
}

/// A call that finished: who made it, what it was, what it returned and how long it took.
struct Done<'a> {
    tid: i32,
    tgid: i32,
    call: &'a Pending,
    ret: i64,
    ns: u64,
}

impl Recorder {
    /// An empty recorder, streaming every call to `log` when given, and the changes under
    /// a folder to `journal`.
    pub fn new(log: Option<std::fs::File>, journal: Option<Journal>) -> Recorder {
        Recorder {
            trace: Trace::default(),
            index: HashMap::default(),
            procs: HashMap::default(),
            tasks: HashMap::default(),
            log: log.map(std::io::BufWriter::new),
            journal,
            started: Instant::now(),
            warned_ptrace: false,
            probe_batches: 1,
            probes: Vec::new(),
            stop_costs: None,
            stopped_ns: 0,
            witness: Witness::default(),
        }
    }

    /// Notes a task seen for the first time (the command, or a new thread or process).
    pub fn task_started(&mut self, tid: i32) {
        if self.tasks.contains_key(&tid) {
            return;
        }
        let tgid = procfs::tgid_of(tid).unwrap_or(tid);
        if tgid == tid {
            self.trace.tasks.processes += 1;
            self.witness.process(&mut self.trace, tid, false);
        } else {
            self.trace.tasks.threads += 1;
        }
        self.tasks.insert(
            tid,
            Task {
                tgid,
                pending: None,
                pending_extra: None,
                schedstat: None,
                apart: false,
            },
        );
    }

    /// Forgets a task that exited (and its process, once it was the last task of it).
    pub fn task_exited(&mut self, tid: i32) {
        if let Some(task) = self.tasks.remove(&tid)
            && !self.tasks.values().any(|t| t.tgid == task.tgid)
        {
            self.procs.remove(&task.tgid);
        }
    }

    /// Notes a successful `execve` by `tid`, which was `former` before (a thread other than
    /// the leader that executes takes the leader's id): the close-on-exec descriptors are
    /// gone, so the process's descriptors are named again on their next use.
    pub fn exec(&mut self, tid: i32, former: i32) {
        self.trace.tasks.execs += 1;
        if former != tid {
            self.tasks.remove(&former);
        }
        let tgid = self.tasks.get(&tid).map_or(tid, |t| t.tgid);
        self.procs.remove(&tgid);
        self.witness.process(&mut self.trace, tgid, true);
        if let Some(task) = self.tasks.get_mut(&tid) {
            // A thread that executes takes the leader's id: read its schedstat anew.
            task.schedstat = None;
        }
    }

    /// The trace so far, leaving an empty one to go on with (its descriptors named anew):
    /// for the command's end when nothing is left running, where a copy would cost as much
    /// as sending it.
    pub fn take_trace(&mut self) -> Trace {
        self.index.clear();
        self.procs.clear();
        self.witness = Witness::default();
        std::mem::take(&mut self.trace)
    }

    /// Processes followed and not seen to exit: those still running.
    pub fn processes_running(&self) -> u64 {
        let mut groups: Vec<i32> = self.tasks.values().map(|t| t.tgid).collect();
        groups.sort_unstable();
        groups.dedup();
        groups.len() as u64
    }

    /// Whether the task is between a followed call's entry and its exit.
    pub fn in_call(&self, tid: i32) -> bool {
        self.tasks
            .get(&tid)
            .is_some_and(|t| t.pending.is_some() || t.pending_extra.is_some())
    }

    /// Takes the probes made so far as all of them (at the first real call, or when the
    /// command ended without one).
    pub fn settle_probes(&mut self) {
        if self.stop_costs.is_none() && !self.probes.is_empty() {
            self.stop_costs = StopCosts::from_probes(&self.probes, self.probe_batches);
            self.probes = Vec::new();
        }
    }

    /// What the tracer's stops cost, measured by the launch's probes and left out of every
    /// call's time; `None` before the first real call, or without probes.
    pub fn stop_costs(&self) -> Option<StopCosts> {
        self.stop_costs
    }

    /// What was left out of the calls' times, summed (the stops' part inside them).
    pub fn stopped_ns(&self) -> u64 {
        self.stopped_ns
    }

    /// Expects the launch's probes as `probes` says (by default one batch).
    pub fn expect_probes(&mut self, probes: Probes) {
        self.probe_batches = probes.batches();
    }

    /// The task's CPU time and switches now (it is stopped), its schedstat opened on first
    /// use.
    fn sched_of(&mut self, tid: i32) -> Option<Sched> {
        let task = self.tasks.get_mut(&tid)?;
        let file = task
            .schedstat
            .get_or_insert_with(|| std::fs::File::open(format!("/proc/{tid}/schedstat")).ok());
        stops::sched(file.as_ref()?)
    }

    /// A followed call's entry (the seccomp stop): call `nr` with `args`.
    pub fn enter(&mut self, tid: i32, nr: i64, args: [u64; 6]) {
        self.task_started(tid);
        let Some(sys) = Sys::from_number(nr) else {
            if self.journal.is_some()
                && journal::is_extra(nr)
                && let Some(task) = self.tasks.get_mut(&tid)
            {
                task.pending_extra = Some((nr, args));
            }
            return;
        };
        let probe = sys == Sys::Lseek
            && args[0] as i32 == -1
            && args[1] as i64 == PROBE_OFFSET
            && args[2] as i32 == libc::SEEK_SET;
        if !probe {
            self.settle_probes();
        }
        let Some(tgid) = self.tasks.get(&tid).map(|t| t.tgid) else {
            return;
        };
        // Name the descriptors before the call moves their offsets: a read's start is the
        // offset it finds.
        match sys.role() {
            Role::Read { fd, .. } | Role::Write { fd, .. } => {
                self.fd(tid, tgid, args[fd] as i32);
            }
            Role::Copy { from, to } => {
                self.fd(tid, tgid, args[from] as i32);
                self.fd(tid, tgid, args[to] as i32);
            }
            _ => {}
        }
        // Before the call moves them: where a copy starts, when its offsets are pointers.
        // An unreadable one (the call will fail with EFAULT) counts as none.
        let (from_at, to_at) = sys.copy_offsets();
        let copy_at = [from_at, to_at].map(|arg| match arg {
            Some(i) if args[i] != 0 => read_u64(tid, args[i]),
            _ => None,
        });
        let before = Witness::before(tid, sys, &args);
        // Last, so that the tracer's own work before the resume is not timed.
        let sched0 = self.sched_of(tid);
        let t0 = Instant::now();
        if let Some(task) = self.tasks.get_mut(&tid) {
            task.pending = Some(Pending {
                sys,
                args,
                t0,
                sched0,
                probe,
                copy_at,
                before,
            });
        }
    }

    /// A followed call's exit, with its result (`-errno` on failure) and the task's
    /// instruction and stack pointers.
    pub fn exit(&mut self, tid: i32, ret: i64, regs: Option<(u64, u64)>) {
        let now = Instant::now();
        let Some(task) = self.tasks.get_mut(&tid) else {
            return;
        };
        let Some(call) = task.pending.take() else {
            if let (Some((nr, args)), Some(journal)) =
                (task.pending_extra.take(), &mut self.journal)
            {
                let plain = Finished::plain(tid, task.tgid, nr, &args, ret);
                journal.finished(&Finished { regs, ..plain });
            }
            return;
        };
        let tgid = task.tgid;
        let wall = now.duration_since(call.t0).as_nanos() as u64;
        let sched1 = self.sched_of(tid);
        let cpu = stops::cpu_without_wait(call.sched0, sched1);
        if call.probe {
            self.probes.push((wall, cpu));
            return;
        }
        let ns = match (self.stop_costs, self.tasks.get_mut(&tid)) {
            (Some(costs), Some(task)) => costs.call_time(wall, cpu, &mut task.apart),
            _ => wall,
        };
        self.stopped_ns += wall.saturating_sub(ns);
        let at = call.t0.duration_since(self.started).as_nanos() as u64;
        let target = self.apply(tid, tgid, &call, ret, ns, at);
        let written = match call.sys.role() {
            Role::Write { fd, .. } => Some(call.args[fd]),
            Role::Copy { to, .. } => Some(call.args[to]),
            _ => None,
        }
        .and_then(|fd| self.procs.get(&tgid)?.fds.get(&(fd as i32)))
        .map(|f| (f.target, f.flags));
        self.witness.after(
            &mut self.trace,
            &Call {
                tid,
                tgid,
                sys: call.sys,
                args: &call.args,
                before: call.before,
                ret,
                ns,
                at,
                target,
                written,
                regs,
            },
        );
        if let Some(journal) = &mut self.journal {
            journal.finished(&Finished {
                before: &call.before,
                copy_to_at: call.copy_at[1],
                regs,
                ..Finished::plain(tid, tgid, call.sys.number(), &call.args, ret)
            });
        }
        if let Some(log) = &mut self.log {
            let path = target.map_or("", |t| self.trace.targets[t].path.as_str());
            let _ = writeln!(
                log,
                "{:.6} {tid} {}({}) = {ret} {ns}ns {path}",
                call.t0.duration_since(self.started).as_secs_f64(),
                call.sys.name(),
                call.args[0] as i32,
            );
        }
    }

    /// Notes what standard output of process `pid` (the command's) is: the journal takes
    /// only writes to it as acknowledgements.
    pub fn journal_stdout_of(&mut self, pid: i32) {
        if let Some(journal) = &mut self.journal {
            journal.stdout_of(pid);
        }
    }

    /// Flushes the log (it may go on after).
    pub fn finish(&mut self) -> std::io::Result<()> {
        if let Some(log) = &mut self.log {
            log.flush()?;
        }
        if let Some(journal) = &mut self.journal {
            journal.flush()?;
        }
        Ok(())
    }

    /// The target for `facts`, made on first sight.
    fn target(&mut self, facts: &FdFacts) -> usize {
        if let Some(&i) = self.index.get(&(facts.key, facts.born)) {
            let t = &mut self.trace.targets[i];
            t.size = t.size.max(facts.size);
            return i;
        }
        let mut t = Target::new(Some(facts.key), Some(facts.kind), facts.path.clone());
        t.size = facts.size;
        self.trace.targets.push(t);
        self.index
            .insert((facts.key, facts.born), self.trace.targets.len() - 1);
        self.trace.targets.len() - 1
    }

    /// Descriptor `fd` of process `tgid` (asked of task `tid`), named on first use.
    fn fd(&mut self, tid: i32, tgid: i32, fd: i32) -> Option<Fd> {
        if let Some(f) = self.procs.get(&tgid).and_then(|p| p.fds.get(&fd)) {
            return Some(f.clone());
        }
        let facts = procfs::fd_facts(tid, fd)?;
        Some(self.name_fd(tgid, fd, &facts))
    }

    /// Descriptor `fd` that an open by task `tid` of process `tgid` just returned, asked
    /// with the flags `asked` when they were an argument (`openat2`'s are not).
    fn opened_fd(&mut self, tid: i32, tgid: i32, fd: i32, asked: Option<i32>) -> Option<Fd> {
        let facts = match asked {
            Some(asked) => procfs::opened_fd_facts(tid, fd, asked),
            None => procfs::fd_facts(tid, fd),
        }?;
        Some(self.name_fd(tgid, fd, &facts))
    }

    /// Keeps descriptor `fd` of process `tgid` as `facts` names it.
    fn name_fd(&mut self, tgid: i32, fd: i32, facts: &FdFacts) -> Fd {
        let target = self.target(facts);
        let entry = Fd {
            target,
            pos: facts.pos,
            last: [None; 2],
            flags: facts.flags,
        };
        self.procs
            .entry(tgid)
            .or_default()
            .fds
            .insert(fd, entry.clone());
        entry
    }

    /// Counts one call of `sys` on the target of descriptor `fd`; returns the target.
    fn count_on(
        &mut self,
        tid: i32,
        tgid: i32,
        fd: i32,
        sys: Sys,
        ns: u64,
        failed: bool,
    ) -> Option<usize> {
        let f = self.fd(tid, tgid, fd)?;
        self.trace.targets[f.target].count(sys, ns, failed);
        Some(f.target)
    }

    fn store_fd(&mut self, tgid: i32, fd: i32, entry: Fd) {
        self.procs.entry(tgid).or_default().fds.insert(fd, entry);
    }

    fn forget_fd(&mut self, tgid: i32, fd: i32) {
        if let Some(p) = self.procs.get_mut(&tgid) {
            p.fds.remove(&fd);
        }
    }

    /// One read or write through `fd` that returned `ret`, starting at `explicit` (a
    /// positioned call) or the descriptor's offset, `at` nanoseconds after the start.
    #[allow(clippy::too_many_arguments)]
    fn transfer(
        &mut self,
        tid: i32,
        tgid: i32,
        fd: i32,
        explicit: Option<u64>,
        ret: i64,
        ns: u64,
        at: u64,
        write: bool,
        sys: Sys,
    ) -> Option<usize> {
        let mut entry = self.fd(tid, tgid, fd)?;
        let t = &mut self.trace.targets[entry.target];
        t.count(sys, ns, ret < 0);
        if ret < 0 {
            t.errors += 1;
            return Some(entry.target);
        }
        let n = ret as u64;
        let file = t.kind == Some(Kind::File);
        let start = explicit.unwrap_or(entry.pos);
        let append = entry.flags & libc::O_APPEND != 0;
        let place = match entry.last[usize::from(write)] {
            _ if !file => Place::Stream,
            _ if append && write => Place::Sequential,
            None if start == 0 => Place::Sequential,
            Some((_, end)) if end == start => Place::Sequential,
            Some((begin, _)) if begin == start => Place::Repeated,
            _ => Place::Scattered,
        };
        let flow = if write { &mut t.write } else { &mut t.read };
        flow.add(n, ns, at, place);
        if entry.flags & libc::O_DIRECT != 0 {
            flow.direct += 1;
        }
        if write && entry.flags & libc::O_DSYNC != 0 {
            flow.synced += 1;
        }
        if file {
            entry.last[usize::from(write)] = Some((start, start + n));
            if explicit.is_none() {
                entry.pos = start + n;
            }
            // A file read past the size it had when first seen has grown.
            t.size = t.size.max(start + n);
        }
        let target = entry.target;
        self.store_fd(tgid, fd, entry);
        Some(target)
    }

    /// Folds one finished call into the trace; returns its (first) target.
    fn apply(
        &mut self,
        tid: i32,
        tgid: i32,
        call: &Pending,
        ret: i64,
        ns: u64,
        at: u64,
    ) -> Option<usize> {
        let a = call.args;
        let sys = call.sys;
        let failed = ret < 0;
        let target = match call.sys.role() {
            Role::Read { fd, pos } | Role::Write { fd, pos } => {
                let write = matches!(call.sys.role(), Role::Write { .. });
                // preadv2/pwritev2 take -1 for "the current offset".
                let explicit = pos.map(|p| a[p]).filter(|&p| p as i64 >= 0);
                self.transfer(tid, tgid, a[fd] as i32, explicit, ret, ns, at, write, sys)
            }
            Role::Copy { from, to } => {
                let [read_at, write_at] = call.copy_at;
                let r = self.transfer(
                    tid,
                    tgid,
                    a[from] as i32,
                    read_at,
                    ret,
                    ns / 2,
                    at,
                    false,
                    sys,
                );
                self.transfer(
                    tid,
                    tgid,
                    a[to] as i32,
                    write_at,
                    ret,
                    ns / 2,
                    at,
                    true,
                    sys,
                );
                r
            }
            Role::Sync | Role::Msync | Role::Seek => self.apply_sync_or_seek(&Done {
                tid,
                tgid,
                call,
                ret,
                ns,
            }),
            Role::Open { .. } | Role::Close | Role::CloseRange | Role::Fcntl | Role::Dup => self
                .apply_descriptor(&Done {
                    tid,
                    tgid,
                    call,
                    ret,
                    ns,
                }),
            Role::Mmap | Role::Munmap => {
                let done = Done {
                    tid,
                    tgid,
                    call,
                    ret,
                    ns,
                };
                // Not counted at all (an anonymous map, an unmap), or counted on its file.
                self.apply_map(&done)?
            }
            Role::RingEnter => self.fd(tid, tgid, a[0] as i32).map(|f| {
                let t = &mut self.trace.targets[f.target];
                t.count(sys, ns, failed);
                t.ring_enters += 1;
                t.ring_submissions += a[1] & 0xffff_ffff;
                f.target
            }),
            Role::SyncAll | Role::Lookup { .. } | Role::Rename { .. } => None,
            Role::Truncate => self.count_on(tid, tgid, a[0] as i32, sys, ns, failed),
            Role::Ptrace => {
                let request = a[0];
                if matches!(request, PTRACE_TRACEME | PTRACE_ATTACH | PTRACE_SEIZE)
                    && ret == -(libc::EPERM as i64)
                    && !self.warned_ptrace
                {
                    self.warned_ptrace = true;
                    self.trace.warnings.push(
                        "the command tried to trace a process (ptrace) and the kernel refused: \
                         a process has one tracer, and the ptrace backend is it; run as root \
                         (or with CAP_BPF and CAP_PERFMON) for the bpf backend, which leaves \
                         ptrace to the command"
                            .to_string(),
                    );
                }
                return None;
            }
        };
        if target.is_none() {
            self.trace.count_other(sys, ns, failed);
        }
        target
    }

    /// An `mmap` or `munmap`: `None` when the call is not counted (an anonymous map, an
    /// unmap), else the target it mapped, if its descriptor was known.
    fn apply_map(&mut self, d: &Done<'_>) -> Option<Option<usize>> {
        let (tid, tgid, call, ret, ns) = (d.tid, d.tgid, d.call, d.ret, d.ns);
        let (a, sys, failed) = (call.args, call.sys, ret < 0);
        if sys.role() == Role::Munmap {
            if let Some(p) = self.procs.get_mut(&tgid) {
                let end = a[0].saturating_add(a[1]);
                let gone: Vec<u64> = p.maps.range(a[0]..end).map(|(&s, _)| s).collect();
                for s in gone {
                    p.maps.remove(&s);
                }
            }
            return None;
        }
        let anonymous = a[3] as i32 & libc::MAP_ANONYMOUS != 0;
        if anonymous || ret < 0 && ret > -4096 {
            return None;
        }
        Some(self.fd(tid, tgid, a[4] as i32).map(|f| {
            let t = &mut self.trace.targets[f.target];
            t.count(sys, ns, failed);
            t.mmaps += 1;
            t.mmap_bytes += a[1];
            self.procs
                .entry(tgid)
                .or_default()
                .maps
                .insert(ret as u64, (a[1], f.target));
            f.target
        }))
    }

    /// An open, close, `fcntl` or `dup`: the descriptor table kept up to date; the target it names.
    fn apply_descriptor(&mut self, d: &Done<'_>) -> Option<usize> {
        let (tid, tgid, call, ret, ns) = (d.tid, d.tgid, d.call, d.ret, d.ns);
        let (a, sys, failed) = (call.args, call.sys, ret < 0);
        match call.sys.role() {
            Role::Open { flags, creat } => {
                if ret < 0 {
                    // A failed open names no target: it counts among the other calls.
                    None
                } else {
                    let fd = ret as i32;
                    self.forget_fd(tgid, fd);
                    let asked = if creat {
                        Some(libc::O_WRONLY | libc::O_TRUNC | libc::O_CREAT)
                    } else {
                        flags.map(|i| a[i] as i32)
                    };
                    self.opened_fd(tid, tgid, fd, asked).map(|f| {
                        let t = &mut self.trace.targets[f.target];
                        t.count(sys, ns, failed);
                        t.opens += 1;
                        let asked = asked.unwrap_or(0);
                        t.open_flags
                            .add(f.flags | (asked & (libc::O_TRUNC | libc::O_CREAT)));
                        f.target
                    })
                }
            }
            Role::Close => {
                let fd = a[0] as i32;
                let known = self
                    .procs
                    .get(&tgid)
                    .and_then(|p| p.fds.get(&fd))
                    .map(|f| f.target);
                self.forget_fd(tgid, fd);
                if let Some(i) = known {
                    self.trace.targets[i].count(sys, ns, failed);
                }
                known
            }
            Role::CloseRange => {
                if let Some(p) = self.procs.get_mut(&tgid) {
                    let (lo, hi) = (a[0] as i64, a[1] as i64);
                    p.fds.retain(|&fd, _| (fd as i64) < lo || (fd as i64) > hi);
                }
                None
            }
            Role::Fcntl => {
                let cmd = a[1] as i32;
                if ret >= 0 && matches!(cmd, libc::F_DUPFD | libc::F_DUPFD_CLOEXEC) {
                    self.forget_fd(tgid, ret as i32);
                }
                if ret >= 0 && cmd == libc::F_SETFL {
                    // Named again, with its new flags, on its next use.
                    self.forget_fd(tgid, a[0] as i32);
                }
                // Counted on the descriptor's target, as the eBPF backend does.
                self.count_on(tid, tgid, a[0] as i32, sys, ns, failed)
            }
            Role::Dup => {
                // The new descriptor is named again on its next use.
                let new = if call.sys == Sys::Dup {
                    ret
                } else {
                    a[1] as i64
                };
                if new != a[0] as i64 {
                    self.forget_fd(tgid, new as i32);
                }
                // Counted on the target of the descriptor duplicated.
                self.count_on(tid, tgid, a[0] as i32, sys, ns, failed)
            }
            _ => None,
        }
    }

    /// A sync (of a descriptor or a map) or a seek: counted on its target.
    fn apply_sync_or_seek(&mut self, d: &Done<'_>) -> Option<usize> {
        let (tid, tgid, call, ret, ns) = (d.tid, d.tgid, d.call, d.ret, d.ns);
        let (a, sys, failed) = (call.args, call.sys, ret < 0);
        match call.sys.role() {
            Role::Sync => self.fd(tid, tgid, a[0] as i32).map(|f| {
                let t = &mut self.trace.targets[f.target];
                t.count(sys, ns, failed);
                if ret < 0 {
                    t.errors += 1;
                } else {
                    t.syncs += 1;
                    t.sync_ns += ns;
                }
                f.target
            }),
            Role::Msync => {
                let found = self.procs.get(&tgid).and_then(|p| {
                    p.maps
                        .range(..=a[0])
                        .next_back()
                        .filter(|(start, (len, _))| a[0] < *start + *len)
                        .map(|(_, &(_, t))| t)
                });
                if let Some(i) = found {
                    let t = &mut self.trace.targets[i];
                    t.count(sys, ns, failed);
                    t.syncs += 1;
                    t.sync_ns += ns;
                }
                found
            }
            Role::Seek => {
                let fd = a[0] as i32;
                self.fd(tid, tgid, fd).map(|mut f| {
                    let i = f.target;
                    self.trace.targets[i].count(sys, ns, failed);
                    self.trace.targets[i].seeks += 1;
                    if ret >= 0 {
                        f.pos = ret as u64;
                        self.store_fd(tgid, fd, f);
                    }
                    i
                })
            }
            _ => None,
        }
    }
}
