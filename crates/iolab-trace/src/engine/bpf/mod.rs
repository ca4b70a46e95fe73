//! The eBPF backend: bpftrace runs the program of [`script`], which aggregates the
//! command's calls in kernel maps; the command waits on a gate until the probes are
//! attached, runs untouched, and when it has exited bpftrace is interrupted and prints the
//! maps, which [`parse`] reads back.
//!
//! It needs root (or `CAP_BPF` with `CAP_PERFMON`), the kernel's BTF, tracefs (mounted
//! here when it is not, as root) and bpftrace (`IOLAB_BPFTRACE` names another binary).
//! bpftrace runs in a process group of its own, so the terminal's Ctrl-C reaches the
//! command and the tracer but not it: the maps are printed once the command has ended.

pub mod parse;
pub mod script;

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child as Process, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::backend::{Backend, Outcome};
use crate::error::{Error, Result};
use crate::launch::child::{self, Start};
use crate::launch::{self, Command};
use crate::procfs;
use crate::signals;

/// What the per-call times of this backend include.
pub const TIMING_NOTE: &str =
    "bpf: each call's time runs from its entry tracepoint to its exit tracepoint, in the kernel";

/// Where tracefs is mounted on current kernels.
const TRACEFS: &str = "/sys/kernel/tracing";

/// How long bpftrace may take to compile and attach its probes.
const ATTACH_TIMEOUT: Duration = Duration::from_secs(120);

/// The most entries a map may hold (targets, open files, tasks alive at once), unless
/// `BPFTRACE_MAP_KEYS_MAX` says otherwise: the kernel preallocates every map, so the start
/// grows with it (measured: 0.9 s to attach at 8192, 1.1–1.6 s at 16384, 1.9–3.4 s at
/// 65536).
pub const MAP_KEYS_MAX: u64 = 8192;

/// [`MAP_KEYS_MAX`], or the caller's `BPFTRACE_MAP_KEYS_MAX`.
fn map_keys_max() -> u64 {
    std::env::var("BPFTRACE_MAP_KEYS_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(MAP_KEYS_MAX)
}

/// Bytes of a path an open's probe keeps: more overflows the 512-byte BPF stack of the
/// open's exit probe (bpftrace 0.17); longer paths end in `…`.
pub const STRLEN: usize = 96;

/// Capability numbers (linux/capability.h).
const CAP_SYS_ADMIN: u32 = 21;
const CAP_PERFMON: u32 = 38;
const CAP_BPF: u32 = 39;

/// The bpftrace binary: `IOLAB_BPFTRACE`, else `bpftrace` on `PATH`.
fn bpftrace() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("IOLAB_BPFTRACE") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/bin:/bin"));
    std::env::split_paths(&path)
        .map(|d| d.join("bpftrace"))
        .find(|p| p.is_file())
}

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

/// Whether tracefs is mounted (its syscall events are there).
fn tracefs_mounted() -> bool {
    Path::new(TRACEFS).join("events").is_dir()
}

/// Mounts tracefs on [`TRACEFS`] (root only).
fn mount_tracefs() -> std::io::Result<()> {
    let c = |s: &str| std::ffi::CString::new(s).expect("no NUL");
    let (source, target, kind) = (c("nodev"), c(TRACEFS), c("tracefs"));
    // SAFETY: all three are valid NUL-terminated strings; no data argument.
    let r = unsafe {
        libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            kind.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Whether this backend can run here: `Ok` with bpftrace's path and a note (tracefs
/// mounted now), or why not and how to allow it.
pub fn availability() -> Result<(PathBuf, Option<String>), String> {
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
    let Some(bpftrace) = bpftrace() else {
        return Err("bpftrace is not installed (apt-get install bpftrace)".into());
    };
    if !Path::new("/sys/kernel/btf/vmlinux").exists() {
        return Err(
            "the kernel has no BTF (/sys/kernel/btf/vmlinux; CONFIG_DEBUG_INFO_BTF)".into(),
        );
    }
    let mut note = None;
    if !tracefs_mounted() {
        if !has(CAP_SYS_ADMIN) {
            return Err(format!(
                "tracefs is not mounted on {TRACEFS}: mount it as root \
                 (`mount -t tracefs nodev {TRACEFS}`)"
            ));
        }
        mount_tracefs().map_err(|e| {
            format!("tracefs is not mounted on {TRACEFS} and mounting it failed: {e}")
        })?;
        note = Some(format!("mounted tracefs on {TRACEFS}"));
    }
    if !Path::new(TRACEFS).join("events/syscalls").is_dir() {
        return Err("the kernel has no syscall tracepoints (CONFIG_FTRACE_SYSCALLS)".into());
    }
    Ok((bpftrace, note))
}

/// bpftrace's version line.
fn version(bpftrace: &Path) -> String {
    std::process::Command::new(bpftrace)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "bpftrace".into())
}

/// Ends the program and reads its maps: the tracer's `lseek(-1, MAGIC, 0)` makes it
/// print them and exit. bpftrace is not waited for: detaching its probes takes as long as
/// attaching them, and nothing it does after the maps matters; a thread reaps it.
fn finish(mut process: Process, lines: &mpsc::Receiver<String>) -> (parse::Maps, String) {
    // SAFETY: lseek on an invalid descriptor only fails (EBADF); the probe sees its offset.
    unsafe { libc::lseek(-1, script::MAGIC as libc::off_t, libc::SEEK_SET) };
    let mut maps = parse::Maps::default();
    let deadline = Instant::now() + ATTACH_TIMEOUT;
    loop {
        match lines.recv_timeout(Duration::from_millis(200)) {
            Ok(line) if line.contains(script::DONE) => break,
            Ok(line) => {
                maps.take_line(&line);
            }
            Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
            Err(_) => break,
        }
    }
    let stderr = process.stderr.take();
    std::thread::spawn(move || {
        let _ = process.wait();
    });
    let mut text = String::new();
    if !maps.is_empty() {
        return (maps, text);
    }
    if let Some(mut e) = stderr {
        let _ = e.read_to_string(&mut text);
    }
    (maps, text)
}

/// Stops bpftrace before the command ran (`SIGINT`) and returns what it said on stderr.
fn abort(mut process: Process) -> String {
    // SAFETY: signals our own child.
    unsafe { libc::kill(process.id() as i32, libc::SIGINT) };
    let mut text = String::new();
    if let Some(mut e) = process.stderr.take() {
        let _ = e.read_to_string(&mut text);
    }
    let _ = process.wait();
    text
}

/// The first line of bpftrace's complaint worth showing.
fn first_error(stderr: &str) -> String {
    // bpftrace 0.17 warns about RLIMIT_MEMLOCK on every start, as an "ERROR"; kernels
    // since 5.11 charge BPF memory to the cgroup instead, so it is no error.
    let lines = || {
        stderr
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.contains("RLIMIT_MEMLOCK"))
    };
    lines()
        .find(|l| l.to_ascii_lowercase().contains("error"))
        .or_else(|| lines().next())
        .unwrap_or("bpftrace exited before attaching its probes")
        .to_string()
}

/// Runs `command` with the eBPF backend.
pub fn run(command: &Command, bpftrace: &Path, reason: String) -> Result<Outcome> {
    let names: HashMap<_, _> = procfs::own_fds(64)
        .into_iter()
        .map(|f| (f.key, f.path))
        .collect();
    let setup_started = Instant::now();
    // Asked while bpftrace compiles, not after.
    let version = {
        let bpftrace = bpftrace.to_path_buf();
        std::thread::spawn(move || version(&bpftrace))
    };
    let mut child = child::spawn(command, Start::Gated)?;
    let spawned = std::process::Command::new(bpftrace)
        .args(["-f", "json", "-B", "none", "--no-warnings", "-e"])
        .arg(script::program())
        .arg(child.pid.to_string())
        // SAFETY: getpid cannot fail.
        .arg(unsafe { libc::getpid() }.to_string())
        .env("BPFTRACE_MAP_KEYS_MAX", map_keys_max().to_string())
        .env("BPFTRACE_STRLEN", STRLEN.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn();
    let mut process = match spawned {
        Ok(p) => p,
        Err(e) => {
            child.abandon();
            return Err(Error::io(format!("cannot run {}", bpftrace.display()), e));
        }
    };
    let stdout = process.stdout.take().expect("piped");
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // Wait for the probes: the program prints its marker from BEGIN, after attaching.
    let deadline = Instant::now() + ATTACH_TIMEOUT;
    let mut ready = false;
    while !ready {
        match lines.recv_timeout(Duration::from_millis(100)) {
            Ok(line) => ready = line.contains(script::READY),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if Instant::now() > deadline || signals::interrupted().is_some() {
                    break;
                }
            }
        }
    }
    if !ready {
        child.abandon();
        let stderr = abort(process);
        if let Some(signal) = signals::interrupted() {
            return Err(Error::Interrupted { signal });
        }
        return Err(Error::Backend {
            backend: "bpf",
            reason: first_error(&stderr),
        });
    }
    if let Err(e) = child.release() {
        child.abandon();
        let _ = abort(process);
        return Err(e);
    }
    signals::forward_to(child.pid);
    let started = Instant::now();
    let setup = started.duration_since(setup_started);
    let exec_failed = child.exec_error();
    let mut status = 0;
    loop {
        // SAFETY: waits for our own child.
        let r = unsafe { libc::waitpid(child.pid, &mut status, 0) };
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
    let (maps, stderr) = finish(process, &lines);
    if let Some((_, errno)) = exec_failed {
        return Err(launch::exec_error(command, errno));
    }
    let mut trace = parse::trace(&maps, &names);
    if trace.targets.is_empty() && trace.tasks.execs == 0 {
        return Err(Error::Backend {
            backend: "bpf",
            reason: format!("bpftrace printed no maps: {}", first_error(&stderr)),
        });
    }
    if maps.largest() as u64 >= map_keys_max() - 1 {
        trace.warnings.push(format!(
            "a kernel map was full ({} entries): later targets or calls were not counted; \
             set BPFTRACE_MAP_KEYS_MAX higher",
            map_keys_max()
        ));
    }
    Ok(Outcome {
        backend: Backend::Bpf,
        reason,
        detail: version.join().unwrap_or_else(|_| "bpftrace".into()),
        trace,
        exit: launch::exit_of(status),
        wall,
        setup,
        interrupted: signals::interrupted(),
        timing_note: TIMING_NOTE,
    })
}
