//! The ptrace backend: the command is seized before it executes, with a seccomp filter
//! ([`seccomp`]) that stops it only on the followed calls; every thread and child is
//! followed (`PTRACE_O_TRACEFORK`, `TRACEVFORK`, `TRACECLONE`, `TRACEEXEC`).
//!
//! Each followed call costs two stops: the seccomp stop at its entry (its arguments, from
//! `PTRACE_GET_SYSCALL_INFO`, Linux 5.3) and its exit (its result); the tracee is then
//! continued with `PTRACE_CONT` and runs untraced until its next I/O call. The calls are
//! folded into their targets at once ([`recorder`]). `PTRACE_O_EXITKILL` kills the tracees
//! if the tracer dies: a tracee whose filter has no tracer would see `ENOSYS` for every
//! I/O call, so it must not outlive it. For the same reason the backend follows every
//! tracee until it exits, not only the command.

pub mod recorder;
pub mod seccomp;

use std::io;
use std::time::Instant;

use crate::backend::{Backend, Outcome, RunOptions};
use crate::error::{Error, Result};
use crate::launch::child::{self, Start, Step};
use crate::launch::{self, Command};
use crate::model::Exit;
use crate::signals;
use crate::syscalls::Sys;
use recorder::Recorder;

/// What the per-call times of this backend include.
pub const TIMING_NOTE: &str = "ptrace: each call's time runs from its entry stop to its exit \
     stop, so it includes a round trip through the tracer";

/// `PTRACE_GET_SYSCALL_INFO`'s answer (`struct ptrace_syscall_info`, linux/ptrace.h): the
/// union is read as words.
#[repr(C)]
#[derive(Default)]
struct SyscallInfo {
    op: u8,
    pad: [u8; 3],
    arch: u32,
    instruction_pointer: u64,
    stack_pointer: u64,
    data: [u64; 8],
}

const OP_EXIT: u8 = 2;
const OP_SECCOMP: u8 = 3;

fn syscall_info(pid: i32) -> Option<SyscallInfo> {
    let mut info = SyscallInfo::default();
    // SAFETY: the kernel writes at most `size_of::<SyscallInfo>()` bytes into `info`.
    let n = unsafe {
        libc::ptrace(
            libc::PTRACE_GET_SYSCALL_INFO,
            pid,
            std::mem::size_of::<SyscallInfo>(),
            &mut info as *mut SyscallInfo,
        )
    };
    (n > 0).then_some(info)
}

/// Resumes a stopped tracee with `request` (`PTRACE_CONT`, `PTRACE_SYSCALL`,
/// `PTRACE_LISTEN`), delivering `sig` (0 for none). A tracee that died meanwhile is not an
/// error: its exit is reported next.
fn resume(request: libc::c_uint, pid: i32, sig: i32) {
    // SAFETY: ptrace resume requests take no pointers.
    unsafe { libc::ptrace(request, pid, 0, sig as libc::c_long) };
}

fn event_message(pid: i32) -> i32 {
    let mut msg: libc::c_ulong = 0;
    // SAFETY: the kernel writes one unsigned long into `msg`.
    unsafe {
        libc::ptrace(
            libc::PTRACE_GETEVENTMSG,
            pid,
            0,
            &mut msg as *mut libc::c_ulong,
        )
    };
    msg as i32
}

/// Why `PTRACE_SEIZE` of our own child failed, and how to allow it.
fn seize_refused(errno: i32) -> String {
    let cause = iolab::error::describe_io(&io::Error::from_raw_os_error(errno));
    let tracer = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("TracerPid:"))
                .map(|v| v.trim().to_string())
        })
        .filter(|v| v != "0");
    let yama = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
        .ok()
        .map(|s| s.trim().to_string());
    let how = if let Some(pid) = tracer {
        format!(
            "this process is itself traced (by pid {pid}), and the tracer follows its children: \
             run iolab trace outside the other tracer"
        )
    } else if yama.as_deref() == Some("3") {
        "Yama forbids ptrace (kernel.yama.ptrace_scope = 3, until reboot)".to_string()
    } else if yama.as_deref() == Some("2") {
        "Yama allows ptrace only with CAP_SYS_PTRACE (kernel.yama.ptrace_scope = 2): run as root, \
         or `sysctl kernel.yama.ptrace_scope=1`"
            .to_string()
    } else if errno == libc::EPERM {
        "ptrace is forbidden here (a seccomp policy or a container without CAP_SYS_PTRACE?): \
         allow the ptrace system call, e.g. `docker run --cap-add SYS_PTRACE`, or run as root \
         for the bpf backend"
            .to_string()
    } else {
        "ptrace is not available".to_string()
    };
    format!("ptrace(PTRACE_SEIZE) of the command was refused ({cause}): {how}")
}

/// Runs `command` under ptrace until it and every process it started have exited.
pub fn run(command: &Command, options: &RunOptions, reason: String) -> Result<Outcome> {
    let log = match &options.log {
        Some(path) => Some(
            std::fs::File::create(path)
                .map_err(|e| Error::io(format!("cannot create {}", path.display()), e))?,
        ),
        None => None,
    };
    let setup_started = Instant::now();
    let filter = seccomp::filter(Sys::ALL);
    let mut child = child::spawn(command, Start::Stopped { filter: &filter })?;
    let root = child.pid;
    let mut status = 0;
    // SAFETY: waits for our own child to stop itself.
    let waited = unsafe { libc::waitpid(root, &mut status, libc::WUNTRACED | libc::__WALL) };
    if waited != root || !libc::WIFSTOPPED(status) {
        child.abandon();
        return Err(Error::Backend {
            backend: "ptrace",
            reason: "the command's process did not stop before executing".into(),
        });
    }
    let flags = libc::PTRACE_O_TRACESYSGOOD
        | libc::PTRACE_O_TRACEFORK
        | libc::PTRACE_O_TRACEVFORK
        | libc::PTRACE_O_TRACECLONE
        | libc::PTRACE_O_TRACEEXEC
        | libc::PTRACE_O_TRACESECCOMP
        | libc::PTRACE_O_EXITKILL;
    // SAFETY: PTRACE_SEIZE of our stopped child, options as data.
    if unsafe { libc::ptrace(libc::PTRACE_SEIZE, root, 0, flags as libc::c_long) } != 0 {
        let errno = io::Error::last_os_error().raw_os_error().unwrap_or(0);
        child.abandon();
        return Err(Error::NotPermitted(seize_refused(errno)));
    }
    let mut recorder = Recorder::new(log);
    recorder.task_started(root);
    let started = Instant::now();
    signals::forward_to(root);
    // SAFETY: continues our stopped child.
    unsafe { libc::kill(root, libc::SIGCONT) };
    let mut exit = None;
    let mut ended = started;
    loop {
        let mut status = 0;
        // SAFETY: waits for any tracee.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::__WALL) };
        if pid < 0 {
            match io::Error::last_os_error().raw_os_error() {
                Some(libc::EINTR) => continue,
                _ => break, // ECHILD: every tracee is gone.
            }
        }
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            recorder.task_exited(pid);
            if pid == root {
                // Reaped: its pid may be reused, so nothing more goes to it.
                signals::forward_to(0);
                exit = Some(launch::exit_of(status));
                ended = Instant::now();
            }
            continue;
        }
        if !libc::WIFSTOPPED(status) {
            continue;
        }
        recorder.task_started(pid);
        let sig = libc::WSTOPSIG(status);
        let event = status >> 16;
        let mut deliver = 0;
        match event {
            libc::PTRACE_EVENT_SECCOMP => {
                if let Some(info) = syscall_info(pid)
                    && info.op == OP_SECCOMP
                {
                    let mut args = [0u64; 6];
                    args.copy_from_slice(&info.data[1..7]);
                    recorder.enter(pid, info.data[0] as i64, args);
                }
            }
            libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK | libc::PTRACE_EVENT_CLONE => {
                recorder.task_started(event_message(pid));
            }
            libc::PTRACE_EVENT_EXEC => recorder.exec(pid, event_message(pid)),
            libc::PTRACE_EVENT_STOP => {
                if matches!(
                    sig,
                    libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
                ) {
                    // A group stop (Ctrl-Z): stay stopped until SIGCONT, as untraced.
                    resume(libc::PTRACE_LISTEN as libc::c_uint, pid, 0);
                    continue;
                }
            }
            0 if sig == libc::SIGTRAP | 0x80 => {
                if let Some(info) = syscall_info(pid)
                    && info.op == OP_EXIT
                {
                    recorder.exit(pid, info.data[0] as i64);
                }
            }
            0 => deliver = sig,
            _ => {}
        }
        // Between a followed call's entry and exit, stop again at its exit.
        let request = if recorder.in_call(pid) {
            libc::PTRACE_SYSCALL
        } else {
            libc::PTRACE_CONT
        };
        resume(request as libc::c_uint, pid, deliver);
    }
    let _ = recorder.finish();
    let exit = exit.unwrap_or(Exit::Code(127));
    if exit == Exit::Code(127)
        && let Some((step, errno)) = child.exec_error()
    {
        return Err(match step {
            Step::Exec => launch::exec_error(command, errno),
            _ => Error::NotPermitted(format!(
                "cannot install the seccomp filter: {}; allow seccomp filters, or run as root \
                 for the bpf backend",
                io::Error::from_raw_os_error(errno)
            )),
        });
    }
    Ok(Outcome {
        backend: Backend::Ptrace,
        reason,
        detail: "ptrace with a seccomp filter on the I/O calls".into(),
        trace: recorder.trace,
        exit,
        wall: ended.duration_since(started),
        setup: started.duration_since(setup_started),
        interrupted: signals::interrupted(),
        timing_note: TIMING_NOTE,
    })
}
