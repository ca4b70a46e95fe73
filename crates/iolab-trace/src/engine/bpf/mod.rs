//! The eBPF backend: iolab's own eBPF program (`bpf/trace.bpf.c`, compiled by clang when
//! the crate is built, or the object shipped beside it where clang is not; loaded here with `aya` on BTF-typed tracepoints) aggregates the
//! command's calls in kernel maps; the command waits on a gate until the program is attached, runs untouched, and
//! when it has exited the maps are read back ([`collect`]) and the program detached.
//!
//! Nothing runs beside iolab: the program lives as long as the descriptors this process
//! holds, so it goes when iolab does, however iolab ends. It needs root (or `CAP_BPF` with
//! `CAP_PERFMON`) and the kernel's BTF (`/sys/kernel/btf/vmlinux`, which the loader uses
//! to place the program's field accesses for the running kernel) and Linux 5.17 or later;
//! not tracefs, not bpftrace. Ready in about 0.16 s (no compiler at run time; docs/trace.md).

mod collect;
mod events;
mod layout;

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use aya::maps::{Array, HashMap as BpfHashMap, MapData, RingBuf};
use aya::programs::BtfTracePoint;
use aya::{Btf, Ebpf, EbpfLoader};

use crate::backend::{Backend, Outcome};
use crate::error::{Error, Result};
use crate::launch::child::{self, Start};
use crate::launch::{self, Command};
use crate::procfs;
use crate::signals;

/// What the per-call times of this backend include.
pub const TIMING_NOTE: &str = "bpf: each call's time runs from its entry to its exit as the \
     kernel's system-call tracepoints see them";

/// Where the kernel publishes its BTF.
const VMLINUX_BTF: &str = "/sys/kernel/btf/vmlinux";

/// The most targets the program keeps, unless `IOLAB_TRACE_TARGETS` says otherwise. Its
/// map grows as targets appear (no preallocation), so a large bound costs nothing until it
/// is used; past it, calls are counted as lost and the report says so.
pub const MAX_TARGETS: u32 = 262_144;

/// [`MAX_TARGETS`], or the caller's `IOLAB_TRACE_TARGETS`.
fn max_targets() -> u32 {
    std::env::var("IOLAB_TRACE_TARGETS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(MAX_TARGETS)
}

/// The compiled program: clang's at build time, or the shipped one (`build.rs`).
#[cfg(iolab_bpf)]
static OBJECT: Option<&[u8]> = Some(aya::include_bytes_aligned!(concat!(
    env!("OUT_DIR"),
    "/trace.bpf.o"
)));
#[cfg(not(iolab_bpf))]
static OBJECT: Option<&[u8]> = None;

/// Why the program is not in this build.
#[cfg(not(iolab_bpf))]
const NOT_BUILT: &str = include_str!(concat!(env!("OUT_DIR"), "/bpf-unavailable.txt"));
#[cfg(iolab_bpf)]
const NOT_BUILT: &str = "";

/// The programs and the BTF-typed tracepoints they attach to.
const PROGRAMS: [(&str, &str); 4] = [
    ("sys_enter", "sys_enter"),
    ("sys_exit", "sys_exit"),
    ("process_fork", "sched_process_fork"),
    ("process_exec", "sched_process_exec"),
];

/// The programs that follow page faults on maps, on tracepoints a kernel may not have
/// (`mm_filemap_fault` takes the mapping and the index since Linux 6.x): without them the
/// trace has no `page_faults`, and the rest runs.
const FAULT_PROGRAMS: [(&str, &str); 2] = [
    ("filemap_fault", "mm_filemap_fault"),
    ("page_added", "mm_filemap_add_to_page_cache"),
];

/// Capability numbers (linux/capability.h).
const CAP_SYS_ADMIN: u32 = 21;
const CAP_PERFMON: u32 = 38;
const CAP_BPF: u32 = 39;

/// This process's effective capabilities (`CapEff` of `/proc/self/status`).
fn effective_caps() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .unwrap_or(0)
}

/// Whether this backend can run here, or why not and how to allow it.
pub fn availability() -> Result<(), String> {
    if OBJECT.is_none() {
        return Err(NOT_BUILT.trim().to_string());
    }
    let caps = effective_caps();
    let has = |cap: u32| caps & (1 << cap) != 0;
    if !(has(CAP_BPF) && has(CAP_PERFMON) || has(CAP_SYS_ADMIN)) {
        // SAFETY: geteuid cannot fail.
        let uid = unsafe { libc::geteuid() };
        return Err(format!(
            "eBPF needs root or CAP_BPF and CAP_PERFMON (running as uid {uid} without them): \
             run with sudo, or `setcap cap_bpf,cap_perfmon+ep` on iolab"
        ));
    }
    if !Path::new(VMLINUX_BTF).exists() {
        return Err(format!(
            "the kernel has no BTF ({VMLINUX_BTF}; CONFIG_DEBUG_INFO_BTF)"
        ));
    }
    Ok(())
}

/// `CLOCK_MONOTONIC` in nanoseconds: the clock of `bpf_ktime_get_ns`.
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for clock_gettime to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The first line of a loader or verifier complaint worth showing.
fn first_line(e: &dyn std::fmt::Display) -> String {
    let text = e.to_string();
    text.lines().next().unwrap_or("unknown").to_string()
}

fn backend_error(what: &str, e: &dyn std::fmt::Display) -> Error {
    Error::Backend {
        backend: "bpf",
        reason: format!("{what}: {}", first_line(e)),
    }
}

/// Loads the program, fills its table of followed calls and attaches it; says whether the
/// fault programs attached too.
fn load() -> Result<(Ebpf, bool)> {
    let object = OBJECT.ok_or_else(|| Error::Unavailable {
        backend: "bpf",
        reason: NOT_BUILT.trim().to_string(),
    })?;
    let btf = Btf::from_sys_fs().map_err(|e| backend_error("cannot read the kernel's BTF", &e))?;
    let mut ebpf = EbpfLoader::new()
        .btf(Some(&btf))
        // The per-task state is task-local storage, which aya creates but has no type for
        // (only the program uses it).
        .allow_unsupported_maps()
        .map_max_entries("stats", max_targets())
        .map_max_entries("sys_stats", max_targets().saturating_mul(4))
        .load(object)
        .map_err(|e| backend_error("the kernel refused the eBPF program's maps", &e))?;
    {
        let mut table: Array<&mut MapData, layout::CallDef> = Array::try_from(
            ebpf.map_mut("syscalls")
                .ok_or_else(|| backend_error("the program", &"has no syscalls table"))?,
        )
        .map_err(|e| backend_error("the program's syscalls table", &e))?;
        for (nr, def) in layout::call_table() {
            table
                .set(nr, def, 0)
                .map_err(|e| backend_error("cannot fill the syscalls table", &e))?;
        }
    }
    for (name, tracepoint) in PROGRAMS {
        let program: &mut BtfTracePoint = ebpf
            .program_mut(name)
            .ok_or_else(|| backend_error("the eBPF object", &format!("has no program {name}")))?
            .try_into()
            .map_err(|e| backend_error(name, &e))?;
        program
            .load(tracepoint, &btf)
            .map_err(|e| backend_error(&format!("the kernel refused {name}"), &e))?;
        program
            .attach()
            .map_err(|e| backend_error(&format!("cannot attach {name} to {tracepoint}"), &e))?;
    }
    // Both fault programs or neither: one alone would count faults without what they read.
    let faults = FAULT_PROGRAMS.iter().all(|(name, tracepoint)| {
        let Some(program) = ebpf.program_mut(name) else {
            return false;
        };
        let Ok(program): std::result::Result<&mut BtfTracePoint, _> = program.try_into() else {
            return false;
        };
        program.load(tracepoint, &btf).is_ok() && program.attach().is_ok()
    });
    if !faults {
        for (name, _) in FAULT_PROGRAMS {
            if let Some(program) = ebpf.program_mut(name)
                && let Ok(p) = <&mut BtfTracePoint>::try_from(program)
            {
                let _ = p.unload();
            }
        }
    }
    Ok((ebpf, faults))
}

/// Runs `command` with the eBPF backend.
pub fn run(command: &Command, reason: String) -> Result<Outcome> {
    let names: HashMap<_, _> = procfs::own_fds(64)
        .into_iter()
        .map(|f| (f.key.with_life(0), f.path))
        .collect();
    let setup_started = Instant::now();
    let (mut ebpf, faults) = load()?;
    let mut ring = |name: &str| {
        ebpf.take_map(name)
            .ok_or_else(|| backend_error("the program", &format!("has no ring {name}")))
            .and_then(|m| RingBuf::try_from(m).map_err(|e| backend_error(name, &e)))
    };
    let rings = [
        ring("paths")?,
        ring("events")?,
        ring("lookup_ring")?,
        ring("stacks")?,
    ];
    let mut child = child::spawn(command, Start::Gated)?;
    // A signal that came before the command's process existed (while the program loaded)
    // did not reach it: a terminal's Ctrl-C goes to the process group as it was then, and
    // the tracer only notes it. The command has not started (it waits on the gate): it
    // never does. One that comes from now on reaches it, or is forwarded to it.
    if let Some(signal) = signals::interrupted() {
        child.abandon();
        return Err(Error::Interrupted { signal });
    }
    {
        // The command is followed from its execve on.
        let follow = BpfHashMap::<&mut MapData, u32, u8>::try_from(
            ebpf.map_mut("roots")
                .ok_or_else(|| backend_error("the program", &"has no roots map"))?,
        )
        .and_then(|mut roots| roots.insert(child.pid as u32, 1, 0));
        if let Err(e) = follow {
            child.abandon();
            return Err(backend_error("cannot follow the command", &e));
        }
    }
    // Before the release: a signal kept since the check above reaches the command before
    // it executes (see `signals`).
    signals::forward_to(child.pid);
    let drain = collect::Drain::start(rings);
    let start = monotonic_ns();
    if let Err(e) = child.release() {
        signals::forward_to(0);
        child.abandon();
        let _ = drain.finish();
        return Err(e);
    }
    let started = Instant::now();
    let setup = started.duration_since(setup_started);
    let exec_failed = child.exec_error();
    let mut status = 0;
    // SAFETY: a zeroed rusage is valid for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: waits for our own child; `status` and `usage` are ours to fill.
        let r = unsafe { libc::wait4(child.pid, &mut status, 0, &mut usage) };
        if r == child.pid {
            break;
        }
        if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return Err(Error::last_os("cannot wait for the command"));
    }
    // The command is reaped: its pid may be reused, so nothing more goes to it.
    signals::forward_to(0);
    let wall = started.elapsed();
    let user_cpu = launch::user_cpu_of(&usage);
    let drained = drain.finish();
    if let Some((_, errno)) = exec_failed {
        return Err(launch::exec_error(command, errno));
    }
    let mut trace = collect::trace(&ebpf, start, drained, &names)
        .map_err(|e| backend_error("cannot read the program's maps", &e))?;
    if !faults {
        trace.seen.faults_seen = false;
        trace.seen.faults.clear();
    }
    // Detached now (half a millisecond): the calibration that may follow must not pay for
    // the program's look-up on each of its own calls.
    drop(ebpf);
    if trace.lost.calls > 0 {
        trace.warnings.push(format!(
            "incomplete: {} calls could not be kept (more than {} targets, or as many tasks \
             in calls at once); set IOLAB_TRACE_TARGETS higher",
            trace.lost.calls,
            max_targets()
        ));
    }
    if trace.lost.tasks > 0 {
        trace.warnings.push(format!(
            "incomplete: {} threads or processes could not be followed (more than 65536 at \
             once)",
            trace.lost.tasks
        ));
    }
    Ok(Outcome {
        backend: Backend::Bpf,
        reason,
        detail: "iolab's eBPF program on the system-call tracepoints".into(),
        trace,
        exit: launch::exit_of(status),
        wall,
        setup,
        interrupted: signals::interrupted(),
        timing_note: TIMING_NOTE.to_string(),
        stop_round_trip: None,
        user_cpu: Some(user_cpu),
        stopped_in_calls: None,
    })
}
