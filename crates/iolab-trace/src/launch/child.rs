//! The forked child, before it becomes the command.
//!
//! Between `fork` and `execve` the child only makes async-signal-safe system calls (the
//! tracer may have threads): everything it needs (the program, `argv`, the seccomp
//! program) is prepared before the fork. Its first step sets the signal dispositions and
//! mask the command inherits (`Command::inherit_signals`). Two ways to wait for the
//! tracer:
//!
//! - [`Start::Gated`] (eBPF): the child blocks reading a pipe until the tracer, its probes
//!   attached, writes one byte, then executes the command;
//! - [`Start::Stopped`] (ptrace): the child stops itself with `SIGSTOP`; the tracer seizes
//!   it and sends `SIGCONT`; the child then installs the seccomp filter (which must come
//!   after the tracer: a `SECCOMP_RET_TRACE` with no tracer fails the call with `ENOSYS`),
//!   makes the probes that time the tracer's round trip ([`PROBE_OFFSET`]) and executes
//!   the command.
//!
//! A program that `execve` refuses with `ENOEXEC` (a script without `#!`) is run by
//! `/bin/sh`, as `execvp` does.
//!
//! When a step fails the child writes `(step, errno)` into a close-on-exec error pipe and
//! exits 127; an end of file on that pipe means `execve` succeeded.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::Command;
use crate::error::{Error, Result};

/// How the child waits for the tracer.
pub enum Start<'a> {
    /// Blocks on a pipe until [`Child::release`].
    Gated,
    /// Stops itself with `SIGSTOP`; once continued, installs `filter` (a classic BPF
    /// seccomp program), makes the `probes` and executes the command.
    Stopped {
        /// The seccomp program.
        filter: &'a [libc::sock_filter],
        /// The calls that time the tracer's round trip.
        probes: Probes,
    },
}

/// Calls `lseek(-1, PROBE_OFFSET, SEEK_SET)` made before `execve`, which time the tracer's
/// round trip: a batch with the process pinned to the tracer's CPU, then one pinned to
/// another CPU (each skipped when not given: one batch unpinned when neither is), its own
/// affinity restored after.
#[derive(Clone, Copy, Debug)]
pub struct Probes {
    /// Calls per batch.
    pub count: u32,
    /// The tracer's CPU, where the first batch runs.
    pub together: Option<usize>,
    /// Another CPU, where the second batch runs.
    pub apart: Option<usize>,
}

impl Probes {
    /// How many batches the process makes.
    pub fn batches(&self) -> usize {
        1 + usize::from(self.together.is_some() && self.apart.is_some())
    }
}

/// A CPU affinity mask as the kernel takes it: 1024 CPUs, the size of glibc's
/// `cpu_set_t`. Its calls are raw system calls, async-signal-safe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuSet([u64; 16]);

impl CpuSet {
    /// The calling thread's mask.
    pub fn of_this_thread() -> Option<CpuSet> {
        let mut set = CpuSet([0; 16]);
        // SAFETY: the kernel writes at most `size_of_val(&set.0)` bytes into `set.0`.
        let n = unsafe {
            libc::syscall(
                libc::SYS_sched_getaffinity,
                0,
                std::mem::size_of_val(&set.0),
                set.0.as_mut_ptr(),
            )
        };
        (n > 0).then_some(set)
    }

    /// The mask of `cpu` alone (below 1024).
    pub fn only(cpu: usize) -> CpuSet {
        let mut set = CpuSet([0; 16]);
        set.0[cpu / 64 % 16] = 1 << (cpu % 64);
        set
    }

    /// The CPUs in the mask, in order.
    pub fn cpus(&self) -> impl Iterator<Item = usize> + '_ {
        (0..1024).filter(|&c| self.0[c / 64] & (1 << (c % 64)) != 0)
    }

    /// Makes it the calling thread's mask; whether the kernel took it.
    pub fn apply(&self) -> bool {
        // SAFETY: the kernel reads `size_of_val(&self.0)` bytes of `self.0`.
        unsafe {
            libc::syscall(
                libc::SYS_sched_setaffinity,
                0,
                std::mem::size_of_val(&self.0),
                self.0.as_ptr(),
            ) == 0
        }
    }
}

/// Makes `n` probes. Async-signal-safe.
fn probe(n: u32) {
    for _ in 0..n {
        // SAFETY: lseek of descriptor -1 only fails; it takes no pointers.
        unsafe { libc::syscall(libc::SYS_lseek, -1, PROBE_OFFSET, libc::SEEK_SET) };
    }
}

/// The offset of the probes: `lseek(-1, PROBE_OFFSET, SEEK_SET)` fails at once (`EBADF`),
/// so the time the tracer sees from its entry stop to its exit stop is the tracer's own
/// round trip, which it subtracts from every call's. The number spells "iolabrtt".
pub const PROBE_OFFSET: i64 = 0x696f_6c61_6272_7474;

/// A step of the child that can fail, as written into the error pipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Waiting on the gate.
    Gate = 1,
    /// Installing the seccomp filter.
    Seccomp = 2,
    /// `execve`.
    Exec = 3,
}

/// The forked child.
#[derive(Debug)]
pub struct Child {
    /// Its process id.
    pub pid: libc::pid_t,
    gate: Option<OwnedFd>,
    errors: OwnedFd,
}

/// A close-on-exec pipe: (read end, write end).
fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Error::last_os("cannot make a pipe"));
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Writes `(step, errno)` to `fd` and exits 127, in the child. Async-signal-safe.
fn fail(fd: libc::c_int, step: Step, errno: i32) -> ! {
    let message = [step as i32, errno];
    // SAFETY: `message` is 8 readable bytes; write and _exit are async-signal-safe.
    unsafe {
        libc::write(fd, message.as_ptr().cast(), 8);
        libc::_exit(127)
    }
}

/// The calling thread's errno. Async-signal-safe.
fn errno() -> i32 {
    // SAFETY: __errno_location returns the calling thread's errno slot.
    unsafe { *libc::__errno_location() }
}

/// Installs `filter` as this process's seccomp filter; where the process lacks
/// `CAP_SYS_ADMIN`, sets `no_new_privs` first, as the kernel then requires (and as
/// `strace --seccomp-bpf` does). Returns the errno on failure. Async-signal-safe.
fn install_filter(filter: &[libc::sock_filter]) -> Result<(), i32> {
    let prog = libc::sock_fprog {
        len: filter.len() as libc::c_ushort,
        filter: filter.as_ptr().cast_mut(),
    };
    let install = || {
        // SAFETY: `prog` points at `filter`, alive for the call; the kernel copies it.
        unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0,
                &prog as *const libc::sock_fprog,
            )
        }
    };
    if install() == 0 {
        return Ok(());
    }
    if errno() != libc::EACCES {
        return Err(errno());
    }
    // SAFETY: prctl with PR_SET_NO_NEW_PRIVS takes plain integers.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(errno());
    }
    if install() == 0 { Ok(()) } else { Err(errno()) }
}

/// Forks the child that will become `command`, waiting as `start` says.
pub fn spawn(command: &Command, start: Start<'_>) -> Result<Child> {
    let (gate_r, gate_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    let mut argv: Vec<*const libc::c_char> = command.argv_c.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let mut sh_argv: Vec<*const libc::c_char> =
        command.sh_argv_c.iter().map(|a| a.as_ptr()).collect();
    sh_argv.push(std::ptr::null());
    let program = command.program_c.as_ptr();
    let (gate_fd, err_fd) = (gate_r.as_raw_fd(), err_w.as_raw_fd());
    let close: &[i32] = &command.close;
    let signals = command.signals;
    // Every signal waits through the fork: the child starts with the tracer's handlers
    // (they would take a Ctrl-C and do nothing with it there) or, under ptrace, the
    // tracer's ignored Ctrl-C; it sets the command's own before any is delivered.
    let mask = crate::signals::block_all();
    // SAFETY: fork has no preconditions; the child below only makes async-signal-safe calls
    // on data prepared before the fork, and never returns.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let e = Error::last_os("cannot fork");
        crate::signals::restore_mask(mask);
        return Err(e);
    }
    if pid == 0 {
        // First, so that a Ctrl-C before `execve` (one that came during the fork too: it
        // is pending) ends the child as it would end the command. The mask it sets is the
        // command's.
        signals.apply();
        match start {
            Start::Gated => {
                let mut byte = 0u8;
                loop {
                    // SAFETY: reads at most one byte into `byte`.
                    let n = unsafe { libc::read(gate_fd, (&mut byte as *mut u8).cast(), 1) };
                    if n == 1 {
                        break;
                    }
                    if n < 0 && errno() == libc::EINTR {
                        continue;
                    }
                    // The tracer went away without releasing the command: do not run it.
                    fail(
                        err_fd,
                        Step::Gate,
                        if n == 0 { libc::EPIPE } else { errno() },
                    );
                }
            }
            Start::Stopped { filter, probes } => {
                // SAFETY: stops this process until the tracer continues it.
                unsafe { libc::raise(libc::SIGSTOP) };
                if let Err(e) = install_filter(filter) {
                    fail(err_fd, Step::Seccomp, e);
                }
                match (probes.together, CpuSet::of_this_thread()) {
                    (Some(together), Some(own)) => {
                        CpuSet::only(together).apply();
                        probe(probes.count);
                        if let Some(apart) = probes.apart {
                            CpuSet::only(apart).apply();
                            probe(probes.count);
                        }
                        own.apply();
                    }
                    _ => probe(probes.count),
                }
            }
        }
        for &fd in close {
            // SAFETY: close is async-signal-safe; these are the child's own descriptors.
            unsafe { libc::close(fd) };
        }
        // SAFETY: `program` and `argv` are NUL-terminated C strings and a null-terminated
        // array prepared before the fork; execv only returns on failure.
        unsafe { libc::execv(program, argv.as_ptr()) };
        let failed = errno();
        if failed == libc::ENOEXEC {
            // Not a binary the kernel knows and no `#!`: a shell script, as `execvp` and
            // `env` run it.
            // SAFETY: as above; `sh_argv[0]` is the shell's path.
            unsafe { libc::execv(sh_argv[0], sh_argv.as_ptr()) };
        }
        fail(err_fd, Step::Exec, failed);
    }
    crate::signals::restore_mask(mask);
    drop(gate_r);
    drop(err_w);
    Ok(Child {
        pid,
        gate: Some(gate_w),
        errors: err_r,
    })
}

impl Child {
    /// Lets a [`Start::Gated`] child go on to `execve`. A child that is gone already (a
    /// Ctrl-C ended it at the gate: `EPIPE`) is not an error: waiting for it tells how it
    /// ended, as it would have ended the command.
    pub fn release(&mut self) -> Result<()> {
        if let Some(gate) = self.gate.take() {
            // SAFETY: writes one byte from a local.
            let n = unsafe { libc::write(gate.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
            if n != 1 && errno() != libc::EPIPE {
                return Err(Error::last_os("cannot release the command"));
            }
        }
        Ok(())
    }

    /// Waits until the child has executed the command or failed to: `None` when `execve`
    /// succeeded, else the failing step and its errno. Blocks until one of them happened,
    /// so only call it when nothing else must serve the child meanwhile (the eBPF
    /// backend), or once it has exited.
    pub fn exec_error(&self) -> Option<(Step, i32)> {
        let mut message = [0i32; 2];
        loop {
            // SAFETY: reads at most 8 bytes into `message`.
            let n = unsafe { libc::read(self.errors.as_raw_fd(), message.as_mut_ptr().cast(), 8) };
            if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            if n != 8 {
                return None;
            }
            let step = match message[0] {
                1 => Step::Gate,
                2 => Step::Seccomp,
                _ => Step::Exec,
            };
            return Some((step, message[1]));
        }
    }

    /// The tracer's own descriptors for this child (the gate's write end, the error
    /// pipe's read end): what a process that closes everything else must keep.
    pub fn descriptors(&self) -> Vec<libc::c_int> {
        let mut fds = vec![self.errors.as_raw_fd()];
        fds.extend(self.gate.as_ref().map(|g| g.as_raw_fd()));
        fds
    }

    /// Kills the child (it has not executed the command yet, or must not go on) and reaps
    /// it.
    pub fn abandon(&mut self) {
        self.gate = None;
        // SAFETY: kill and waitpid on our own child.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
            let mut status = 0;
            while libc::waitpid(self.pid, &mut status, libc::__WALL) < 0
                && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
            {}
        }
    }
}
