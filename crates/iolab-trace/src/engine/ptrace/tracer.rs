//! The tracer process: forks the command, seizes it, serves every followed call of it and
//! of its children, and tells iolab (over a pipe) when the command is running and when it
//! has ended; then goes on serving what the command left running until the last tracee
//! exits, silently.

use super::journal::Journal;
use super::mutate::Mutator;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Instant;

use super::recorder::Recorder;
use super::{Ended, Failure, Message, seccomp};
use crate::launch::child::{self, Child, CpuSet, Probes, Start, Step};
use crate::launch::{self, Command};
use crate::model::Exit;
use crate::syscalls::Sys;

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
    let cause = iolab_lab::error::describe_io(&io::Error::from_raw_os_error(errno));
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

/// The pipe to iolab, until the command has ended.
struct Report(Option<std::fs::File>);

impl Report {
    /// Sends one message; a reader that went away (iolab killed) is not this process's
    /// concern: it goes on serving the tracees.
    fn send(&mut self, message: &Message) {
        if let Some(pipe) = &mut self.0 {
            let mut line = serde_json::to_vec(message).unwrap_or_else(|e| {
                let failure = Failure::Backend(format!("cannot encode the trace: {e}"));
                serde_json::to_vec(&Message::Failed(failure)).unwrap_or_default()
            });
            line.push(b'\n');
            let _ = pipe.write_all(&line);
        }
    }

    /// Sends the last message and closes the pipe: iolab reads it to its end.
    fn last(&mut self, message: &Message) {
        self.send(message);
        self.0 = None;
    }
}

/// Sets the tracer's own signal dispositions: the terminal's signals (Ctrl-C reaches the
/// whole foreground process group) and a `kill` must not end it while tracees need it,
/// a closed pipe to iolab must not kill it, and `SIGCHLD` must not be ignored (or
/// `waitpid` would not report the command's end).
fn own_signals() {
    for (sig, action) in [
        (libc::SIGINT, libc::SIG_IGN),
        (libc::SIGQUIT, libc::SIG_IGN),
        (libc::SIGHUP, libc::SIG_IGN),
        (libc::SIGTERM, libc::SIG_IGN),
        (libc::SIGPIPE, libc::SIG_IGN),
        (libc::SIGCHLD, libc::SIG_DFL),
    ] {
        // SAFETY: signal with SIG_IGN or SIG_DFL installs no code.
        unsafe { libc::signal(sig, action) };
    }
}

/// Points descriptors 0, 1 and 2 at `/dev/null` and closes every other one but `keep`:
/// the tracer must not hold the caller's pipes or terminal open after the command ended
/// (a `$(iolab trace …)` would wait for it), nor print.
fn keep_only(keep: &[libc::c_int]) {
    // SAFETY: a NUL-terminated path; the descriptor is dup2'd then closed below.
    let null = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if null >= 0 {
        for fd in 0..3 {
            // SAFETY: dup2 of a descriptor we own onto a standard one.
            unsafe { libc::dup2(null, fd) };
        }
        if null > 2 {
            // SAFETY: closes the descriptor opened above.
            unsafe { libc::close(null) };
        }
    }
    let open: Vec<libc::c_int> = std::fs::read_dir("/proc/self/fd")
        .map(|dir| {
            dir.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    for fd in open {
        if fd > 2 && !keep.contains(&fd) {
            // SAFETY: closes a descriptor this process holds as a copy of the caller's;
            // nothing in this process uses it (the objects that own it are never dropped:
            // the tracer ends with _exit).
            unsafe { libc::close(fd) };
        }
    }
}

/// The tracer process's life: never returns.
pub(super) fn serve(
    command: &Command,
    log: Option<std::fs::File>,
    journal: Option<Journal>,
    mutator: Option<Mutator>,
    to_iolab: OwnedFd,
    setup_started: Instant,
) -> ! {
    let code = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        trace(
            command,
            log,
            journal,
            mutator.as_ref(),
            to_iolab,
            setup_started,
        )
    })) {
        Ok(()) => 0,
        Err(_) => 101,
    };
    // SAFETY: _exit ends the tracer without running the caller's destructors or atexit
    // handlers, which belong to the process it was forked from.
    unsafe { libc::_exit(code) }
}

fn trace(
    command: &Command,
    log: Option<std::fs::File>,
    journal: Option<Journal>,
    mutator: Option<&Mutator>,
    to_iolab: OwnedFd,
    setup_started: Instant,
) {
    own_signals();
    let mut report = Report(Some(std::fs::File::from(to_iolab)));
    let filter = seccomp_filter(journal.is_some());
    // The probes run with the command's process pinned to this process's first allowed
    // CPU (this process pins itself there meanwhile), then to its second: the stops'
    // cost on one CPU and across two (see `stops`).
    let own_cpus = CpuSet::of_this_thread();
    let mut cpus = own_cpus.iter().flat_map(|set| set.cpus());
    let probes = Probes {
        count: super::PROBES,
        together: cpus.next(),
        apart: cpus.next(),
    };
    let start = Start::Stopped {
        filter: &filter,
        probes,
    };
    let mut child = match child::spawn(command, start) {
        Ok(child) => child,
        Err(e) => return report.last(&Message::Failed(Failure::Backend(e.to_string()))),
    };
    let mut keep = child.descriptors();
    keep.extend(report.0.as_ref().map(|f| f.as_raw_fd()));
    keep.extend(log.as_ref().map(|f| f.as_raw_fd()));
    keep.extend(journal.as_ref().map(Journal::raw_fd));
    keep_only(&keep);
    let root = child.pid;
    if let Err(failure) = seize(&mut child) {
        return report.last(&Message::Failed(failure));
    }
    let mut recorder = Recorder::new(log, journal);
    recorder.expect_probes(probes);
    recorder.task_started(root);
    recorder.journal_stdout_of(root);
    // Pinned while the probes run.
    let mut pinned = match (probes.together, own_cpus) {
        (Some(cpu), Some(own)) if CpuSet::only(cpu).apply() => Some(own),
        _ => None,
    };
    report.send(&Message::Started { pid: root });
    let started = Instant::now();
    // SAFETY: continues our stopped child.
    unsafe { libc::kill(root, libc::SIGCONT) };
    loop {
        let mut status = 0;
        // SAFETY: a zeroed rusage is valid for wait4 to fill.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: waits for any tracee; `status` and `usage` are ours to fill.
        let pid = unsafe { libc::wait4(-1, &mut status, libc::__WALL, &mut usage) };
        if pid < 0 {
            match io::Error::last_os_error().raw_os_error() {
                Some(libc::EINTR) => continue,
                _ => break, // ECHILD: every tracee is gone.
            }
        }
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            recorder.task_exited(pid);
            if pid == root {
                let ended = Instant::now();
                // The log holds the command's calls when iolab returns; its children's
                // later calls follow.
                let _ = recorder.finish();
                recorder.settle_probes();
                if let Some(own) = pinned.take() {
                    own.apply();
                }
                let message = command_ended(
                    &mut recorder,
                    &child,
                    launch::exit_of(status),
                    ended.duration_since(started).as_nanos() as u64,
                    started.duration_since(setup_started).as_nanos() as u64,
                    launch::user_cpu_of(&usage).as_nanos() as u64,
                );
                report.last(&message);
            }
            continue;
        }
        if !libc::WIFSTOPPED(status) {
            continue;
        }
        on_stop(&mut recorder, mutator, &mut pinned, pid, status);
    }
    let _ = recorder.finish();
}

/// The seccomp filter: the trace's calls, and the journal's besides when journaling.
fn seccomp_filter(journaling: bool) -> Vec<libc::sock_filter> {
    let mut calls: Vec<i64> = Sys::ALL.iter().map(|s| s.number()).collect();
    if journaling {
        calls.extend(super::journal::extra_calls());
    }
    seccomp::filter(&calls)
}

/// Waits for the command's process to stop itself before it executes, then seizes it
/// with the options that follow its threads, children and execs; why not, otherwise (the
/// child abandoned where it did not stop or could not be seized).
fn seize(child: &mut child::Child) -> Result<(), Failure> {
    let root = child.pid;
    let mut status = 0;
    // SAFETY: waits for our own child to stop itself.
    let waited = unsafe { libc::waitpid(root, &mut status, libc::WUNTRACED | libc::__WALL) };
    if waited == root && libc::WIFSIGNALED(status) {
        // Ctrl-C (or another signal) killed it before it could stop: it never ran.
        return Err(Failure::Interrupted(libc::WTERMSIG(status)));
    }
    if waited != root || !libc::WIFSTOPPED(status) {
        child.abandon();
        return Err(Failure::Backend(
            "the command's process did not stop before executing".into(),
        ));
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
        return Err(Failure::NotPermitted(seize_refused(errno)));
    }
    Ok(())
}

/// One stop of tracee `pid` (a followed call's entry or exit, a new task, an exec, a
/// group stop, a signal): recorded, then the tracee resumed as it would run untraced.
fn on_stop(
    recorder: &mut Recorder,
    mutator: Option<&Mutator>,
    pinned: &mut Option<CpuSet>,
    pid: i32,
    status: i32,
) {
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
                let mut nr = info.data[0] as i64;
                if let Some(mutator) = mutator {
                    // The call as it will run, with a dropped sync taken out.
                    (nr, args) = mutator.apply(pid, nr, args);
                }
                recorder.enter(pid, nr, args);
                if recorder.stop_costs().is_some()
                    && let Some(own) = pinned.take()
                {
                    own.apply();
                }
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
                return;
            }
        }
        0 if sig == libc::SIGTRAP | 0x80 => {
            if let Some(info) = syscall_info(pid)
                && info.op == OP_EXIT
            {
                let regs = (info.instruction_pointer, info.stack_pointer);
                recorder.exit(pid, info.data[0] as i64, Some(regs));
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

/// The message for the command's end: the trace so far (noting the processes it left
/// running), or why it never ran.
fn command_ended(
    recorder: &mut Recorder,
    child: &Child,
    exit: Exit,
    wall_ns: u64,
    setup_ns: u64,
    user_ns: u64,
) -> Message {
    if exit == Exit::Code(127)
        && let Some((step, errno)) = child.exec_error()
    {
        return Message::Failed(match step {
            Step::Exec => Failure::Exec(errno),
            _ => Failure::Seccomp(errno),
        });
    }
    let running = recorder.processes_running();
    // Nothing left to follow: the recorder's trace is not needed any more.
    let mut trace = if running == 0 {
        recorder.take_trace()
    } else {
        recorder.trace.clone()
    };
    if running > 0 {
        trace.warnings.push(format!(
            "followed until the command ended: {running} {} it started {} still running, and \
             {} calls after that are not in this report",
            if running == 1 { "process" } else { "processes" },
            if running == 1 { "was" } else { "were" },
            if running == 1 { "its" } else { "their" },
        ));
    }
    let mut ended = Ended::new(trace, exit, recorder.stop_costs());
    ended.wall_ns = wall_ns;
    ended.setup_ns = setup_ns;
    ended.user_ns = user_ns;
    ended.stopped_ns = recorder.stopped_ns();
    Message::Ended(Box::new(ended))
}
