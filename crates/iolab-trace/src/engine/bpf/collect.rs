//! Reading the program's maps back into a [`Trace`] once the command has ended, and the
//! paths it sent through its ring buffer while the command ran.

use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use aya::Ebpf;
use aya::maps::{Array, HashMap as BpfHashMap, MapData, RingBuf};

use super::events::{self, RawEvent};
use super::layout::{
    self, Counter, Key, PathEventHeader, RawCallStat, RawFaults, RawFlow, RawUse, Stats, SysKey,
};
use crate::model::events::{Faults, Seen};
use crate::model::{CallStat, Flow, Kind, Lost, Target, TargetKey, Trace, Use};
use crate::syscalls::Sys;

/// A path the program sent: the file's key, its path, and whether it is whole.
type Paths = HashMap<Key, (String, bool)>;

/// Size of a path event's header in the ring (`PATH_EVENT_HEADER`).
const EVENT_HEADER: usize = size_of::<PathEventHeader>();

/// How long the drainer sleeps in `poll` when the ring is empty.
const POLL_MS: i32 = 20;

/// The thread that empties the ring buffers (paths, events) while the command runs.
pub struct Drain {
    stop: Arc<AtomicBool>,
    /// Written at the end, so that the thread's `poll` returns at once.
    wake: Option<std::os::fd::OwnedFd>,
    thread: JoinHandle<(Paths, Vec<RawEvent>, Seen)>,
}

fn event(bytes: &[u8]) -> Option<(Key, String, bool)> {
    let h: PathEventHeader = layout::header(bytes)?;
    let key = Key {
        dev: h.dev,
        ino: h.ino,
        generation: h.generation,
        pad: 0,
    };
    let path = bytes.get(EVENT_HEADER..EVENT_HEADER + h.len as usize)?;
    Some((
        key,
        String::from_utf8_lossy(path).into_owned(),
        h.complete != 0,
    ))
}

impl Drain {
    /// Starts emptying the rings: `[paths, events, lookups, stacks]`: the paths into a
    /// table, the lookups and failed opens counted as they come, the rest into a list.
    pub fn start(rings: [RingBuf<MapData>; 4]) -> Drain {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        // SAFETY: eventfd takes no pointers; a descriptor it returns is ours alone.
        let raw = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        let wake = (raw >= 0).then(|| {
            // SAFETY: `raw` is a new descriptor owned by nothing else.
            unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(raw) }
        });
        let woken = wake.as_ref().map_or(-1, |fd| fd.as_raw_fd());
        let thread = std::thread::spawn(move || {
            let [mut ring, mut events, mut lookups, mut stacks] = rings;
            let mut paths = Paths::new();
            let mut list = Vec::new();
            // The lookups and failed opens, counted as they come.
            let mut counted = Seen::default();
            loop {
                // Read the flag before emptying: what was sent before it was set is taken.
                let last = flag.load(Ordering::SeqCst);
                while let Some(item) = ring.next() {
                    if let Some((key, path, complete)) = event(&item) {
                        paths.entry(key).or_insert((path, complete));
                    }
                }
                while let Some(item) = events.next() {
                    list.extend(events::parse(&item));
                }
                while let Some(item) = lookups.next() {
                    if let Some(e) = events::parse(&item) {
                        events::count_path(&e, &paths, &mut counted);
                    }
                }
                while let Some(item) = stacks.next() {
                    list.extend(events::parse(&item));
                }
                if last {
                    return (paths, list, counted);
                }
                let fds = [
                    ring.as_raw_fd(),
                    events.as_raw_fd(),
                    lookups.as_raw_fd(),
                    stacks.as_raw_fd(),
                    woken,
                ];
                let mut pfd = fds.map(|fd| libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                });
                // SAFETY: five pollfds (poll skips a negative descriptor), for the duration
                // of the call.
                unsafe { libc::poll(pfd.as_mut_ptr(), 5, POLL_MS) };
            }
        });
        Drain { stop, wake, thread }
    }

    /// Takes what is left in the rings and returns every path and event.
    pub fn finish(self) -> (Paths, Vec<RawEvent>, Seen) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(fd) = &self.wake {
            let one = 1u64.to_ne_bytes();
            // SAFETY: writes 8 bytes from `one` to our own eventfd.
            unsafe { libc::write(fd.as_raw_fd(), one.as_ptr().cast(), 8) };
        }
        self.thread.join().unwrap_or_default()
    }
}

fn flow(raw: &RawFlow, start: u64) -> Flow {
    let at = |t: u64| (t != 0).then(|| t.saturating_sub(start));
    Flow {
        calls: raw.calls,
        bytes: raw.bytes,
        ns: raw.ns,
        sequential: raw.sequential,
        repeated: raw.repeated,
        direct: raw.direct,
        synced: raw.synced,
        first_ns: at(raw.first),
        last_ns: at(raw.last),
        sizes: raw.sizes,
        gap_ns: raw.gap_ns,
        gaps: raw.gaps,
    }
}

fn call_stat(raw: &RawCallStat) -> CallStat {
    CallStat {
        calls: raw.calls,
        errors: raw.errors,
        ns: raw.ns,
    }
}

/// A target from the program's stats of `key`.
fn target(key: Key, s: &Stats, start: u64) -> Target {
    let (major, minor) = ((s.rdev >> 20), (s.rdev & 0xf_ffff));
    let kind = Kind::from_mode(s.mode, major);
    let mut t = Target::new(
        Some(TargetKey::from_kernel_dev(key.dev, key.ino).with_life(key.generation)),
        Some(kind),
        "",
    );
    if matches!(kind, Kind::Tty | Kind::Device)
        && let Some(p) = crate::procfs::device_path(major, minor)
    {
        t.path = p;
    }
    if kind == Kind::File {
        t.size = s.size;
    }
    t.read = flow(&s.read, start);
    t.write = flow(&s.write, start);
    t.syncs = s.syncs;
    t.sync_ns = s.sync_ns;
    t.opens = s.opens;
    t.open_flags.direct = s.o_direct;
    t.open_flags.sync = s.o_sync;
    t.open_flags.dsync = s.o_dsync;
    t.open_flags.append = s.o_append;
    t.open_flags.trunc = s.o_trunc;
    t.open_flags.creat = s.o_creat;
    t.seeks = s.seeks;
    t.mmaps = s.mmaps;
    t.mmap_bytes = s.mmap_bytes;
    t.ring_enters = s.ring_enters;
    t.ring_submissions = s.ring_submissions;
    t.errors = s.errors;
    if s.pid1 != 0 {
        t.by_process.insert(
            s.pid1,
            Use {
                calls: s.calls1,
                bytes: s.bytes1,
                ns: s.ns1,
            },
        );
    }
    for (sys, c) in Sys::ALL.iter().zip(&s.data_calls) {
        if c.calls > 0 {
            t.calls.insert(*sys, call_stat(c));
        }
    }
    t
}

/// A name for a target whose path was not sent: what `/proc` would call it.
fn describe(t: &Target) -> String {
    let key = t.key.unwrap_or_default();
    match t.kind {
        Some(Kind::Pipe) => format!("pipe:[{}]", key.ino),
        Some(Kind::Socket) => format!("socket:[{}]", key.ino),
        _ if t.ring_enters > 0 => "anon_inode:[io_uring]".to_string(),
        _ => format!("inode {} on {}:{}", key.ino, key.major, key.minor),
    }
}

fn map<'a>(ebpf: &'a Ebpf, name: &str) -> Result<&'a aya::maps::Map, String> {
    ebpf.map(name)
        .ok_or_else(|| format!("the program has no map {name}"))
}

/// The trace the maps of `ebpf` hold. `start`: `CLOCK_MONOTONIC` nanoseconds when the
/// command was released; `paths` from the ring; `names`: the tracer's own descriptors,
/// which the command inherited, by key.
pub fn trace(
    ebpf: &Ebpf,
    start: u64,
    (paths, mut raw, counted): (Paths, Vec<RawEvent>, Seen),
    names: &HashMap<TargetKey, String>,
) -> Result<Trace, String> {
    let paths = &paths;
    let err = |e: aya::maps::MapError| e.to_string();
    let stats: BpfHashMap<&MapData, Key, Stats> =
        BpfHashMap::try_from(map(ebpf, "stats")?).map_err(err)?;
    let mut index: HashMap<Key, usize> = HashMap::new();
    let mut trace = Trace::default();
    for item in stats.iter() {
        let (key, s) = item.map_err(err)?;
        let mut t = target(key, &s, start);
        if let Some((path, complete)) = paths.get(&key) {
            t.path = if *complete {
                path.clone()
            } else {
                format!("…{path}")
            };
        }
        if t.path.is_empty() {
            t.path = t
                .key
                .and_then(|k| names.get(&k.with_life(0)).cloned())
                .unwrap_or_else(|| describe(&t));
        }
        index.insert(key, trace.targets.len());
        trace.targets.push(t);
    }
    let sys_stats: BpfHashMap<&MapData, SysKey, RawCallStat> =
        BpfHashMap::try_from(map(ebpf, "sys_stats")?).map_err(err)?;
    for item in sys_stats.iter() {
        let (k, c) = item.map_err(err)?;
        let key = Key {
            dev: k.dev,
            ino: k.ino,
            generation: k.generation,
            pad: 0,
        };
        if let (Some(&i), Some(&sys)) = (index.get(&key), Sys::ALL.get(k.index as usize)) {
            trace.targets[i].calls.insert(sys, call_stat(&c));
        }
    }
    let uses: BpfHashMap<&MapData, SysKey, RawUse> =
        BpfHashMap::try_from(map(ebpf, "uses")?).map_err(err)?;
    for item in uses.iter() {
        let (k, u) = item.map_err(err)?;
        let key = Key {
            dev: k.dev,
            ino: k.ino,
            generation: k.generation,
            pad: 0,
        };
        if let Some(&i) = index.get(&key) {
            let by = trace.targets[i].by_process.entry(k.index).or_default();
            by.merge(&Use {
                calls: u.calls,
                bytes: u.bytes,
                ns: u.ns,
            });
        }
    }
    let faults: BpfHashMap<&MapData, Key, RawFaults> =
        BpfHashMap::try_from(map(ebpf, "faults")?).map_err(err)?;
    trace.seen.faults_seen = true;
    for item in faults.iter() {
        let (k, f) = item.map_err(err)?;
        trace.seen.faults.push(Faults {
            target: TargetKey::from_kernel_dev(k.dev, k.ino).with_life(k.generation),
            faults: f.faults,
            pages_read: f.added,
            far: f.far,
        });
    }
    trace.seen.lookups = counted.lookups;
    trace.seen.failed_opens = counted.failed_opens;
    events::fold(&mut raw, start, paths, &mut trace.seen);
    let other: Array<&MapData, RawCallStat> = Array::try_from(map(ebpf, "other")?).map_err(err)?;
    for (i, &sys) in Sys::ALL.iter().enumerate() {
        let c = other.get(&(i as u32), 0).map_err(err)?;
        if c.calls > 0 {
            trace.other_calls.insert(sys, call_stat(&c));
        }
    }
    let counters: Array<&MapData, u64> = Array::try_from(map(ebpf, "counters")?).map_err(err)?;
    let counter = |c: Counter| counters.get(&(c as u32), 0).unwrap_or(0);
    trace.tasks.processes = 1 + counter(Counter::Processes);
    trace.tasks.threads = counter(Counter::Threads);
    trace.tasks.execs = counter(Counter::Execs);
    trace.lost = Lost {
        targets: 0,
        calls: counter(Counter::LostCalls),
        tasks: counter(Counter::LostTasks),
    };
    trace.seen.events_lost += counter(Counter::LostEvents);
    let lost_lookups = counter(Counter::LostLookups);
    if lost_lookups > 0 {
        trace.warnings.push(format!(
            "{lost_lookups} lookups and failed opens could not be sent (their ring was full): \
             their counts by path are short by that many"
        ));
    }
    let lost_paths = counter(Counter::LostPaths);
    if lost_paths > 0 {
        trace.warnings.push(format!(
            "{lost_paths} paths could not be sent (the ring buffer was full): those files are \
             named by their inode"
        ));
    }
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_path_event() {
        let mut bytes = Vec::new();
        bytes.extend(7u64.to_ne_bytes());
        bytes.extend(9u64.to_ne_bytes());
        bytes.extend(3u32.to_ne_bytes());
        bytes.extend(6u32.to_ne_bytes());
        bytes.extend(1u32.to_ne_bytes());
        bytes.extend(0u32.to_ne_bytes());
        bytes.extend(b"/tmp/x");
        let (key, path, complete) = event(&bytes).unwrap();
        assert_eq!(
            (key.dev, key.ino, key.generation, path.as_str(), complete),
            (7, 9, 3, "/tmp/x", true)
        );
        assert!(event(&bytes[..37]).is_none(), "a cut event is no event");
    }
}
