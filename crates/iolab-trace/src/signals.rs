//! Signals that would end the tracer (`SIGINT`, `SIGTERM`, `SIGHUP`, `SIGQUIT`) are caught
//! while the command runs, so that the summary of what was seen is still printed; one the
//! caller ignored (`nohup`) stays ignored.
//!
//! A signal the terminal sent (Ctrl-C, `si_code` `SI_KERNEL`) went to the whole foreground
//! process group, the command included, so the tracer only notes it, as a shell waiting
//! for its job does. A signal a process sent to the tracer alone (`kill PID`, `si_code`
//! ≤ 0) is forwarded to the command, which then ends as it would have: the tracer ends
//! when the command does. The handler forwards it itself (`kill` is async-signal-safe),
//! so a signal that lands between two `waitpid`s is not left waiting.
//!
//! Before the command's process is known, every caught signal is kept and sent to it as
//! soon as it is ([`forward_to`]), the terminal's too: its process may not have existed
//! when the terminal signalled the group. The backends name it before it executes the
//! command (the eBPF backend's child waits on its gate until then; the ptrace backend's
//! is stopped when its tracer names it), when it has no handler of its own: a copy of a
//! signal the terminal sent it too ends it, or is ignored, as the first one does. The
//! fork that makes it holds every signal back until the child has the command's
//! dispositions ([`block_all`]), so that none lands on the tracer's handlers there.
//!
//! The command gets the signal dispositions and mask it would have had untraced
//! ([`Inherited`]): Rust's runtime ignores `SIGPIPE` before `main` and `execve` keeps an
//! ignored disposition, so without this `yes | head -1` would print `Broken pipe` and
//! `seq 1000000 | head -1` would exit 1 instead of dying of `SIGPIPE`.

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

/// The highest signal number on Linux (`_NSIG - 1`): the kernel's sets are 64 bits.
pub const MAX_SIGNAL: libc::c_int = 64;

/// A set of signals 1..=64 in the kernel's layout: bit `n - 1` is signal `n`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SignalSet(u64);

impl SignalSet {
    /// No signal.
    pub const EMPTY: SignalSet = SignalSet(0);

    /// The set of these bits (bit `n - 1` for signal `n`).
    pub const fn from_bits(bits: u64) -> SignalSet {
        SignalSet(bits)
    }

    /// Its bits.
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// The set with `sig` added (numbers outside 1..=64 are ignored).
    pub const fn with(self, sig: libc::c_int) -> SignalSet {
        if sig >= 1 && sig <= MAX_SIGNAL {
            SignalSet(self.0 | 1 << (sig - 1))
        } else {
            self
        }
    }

    /// Whether `sig` is in the set.
    pub const fn contains(self, sig: libc::c_int) -> bool {
        sig >= 1 && sig <= MAX_SIGNAL && self.0 & (1 << (sig - 1)) != 0
    }
}

/// The signal state a program inherits through `execve`: the signals it starts ignoring
/// and its blocked mask (handled signals are reset to their default by `execve`).
///
/// The `iolab` binary records its own at start-up, before Rust's runtime ignores
/// `SIGPIPE`, and the launch gives it to the command. By default nothing is ignored and
/// nothing blocked, as a program started from a fresh login shell has it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inherited {
    /// Signals whose disposition is `SIG_IGN`.
    pub ignored: SignalSet,
    /// The blocked-signal mask.
    pub blocked: SignalSet,
}

/// `struct sigaction` as the `rt_sigaction` system call takes it (not glibc's, which
/// refuses the two signals it reserves for itself). Only `handler` is read or set: the
/// fields after it are zero, so their layout on other architectures does not matter.
#[repr(C)]
struct KernelSigaction {
    handler: usize,
    flags: libc::c_ulong,
    restorer: usize,
    mask: u64,
}

/// The size of the kernel's signal set, as `rt_sigaction` and `rt_sigprocmask` want it.
const KERNEL_SIGSET_SIZE: usize = 8;

impl Inherited {
    /// This process's signal state now. Only raw system calls: no allocation, no lock, no
    /// use of Rust's runtime, so it may run from `.init_array` before `main`.
    pub fn of_this_process() -> Inherited {
        let mut ignored = SignalSet::EMPTY;
        for sig in 1..=MAX_SIGNAL {
            let mut old = KernelSigaction {
                handler: 0,
                flags: 0,
                restorer: 0,
                mask: 0,
            };
            // SAFETY: rt_sigaction with a null new action only writes the current one into
            // `old`, which is at least as large as the kernel's struct.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_rt_sigaction,
                    sig,
                    std::ptr::null::<KernelSigaction>(),
                    &mut old as *mut KernelSigaction,
                    KERNEL_SIGSET_SIZE,
                )
            };
            if r == 0 && old.handler == libc::SIG_IGN {
                ignored = ignored.with(sig);
            }
        }
        let mut blocked = 0u64;
        // SAFETY: rt_sigprocmask with a null new set only writes the current mask into
        // `blocked`, 8 bytes.
        unsafe {
            libc::syscall(
                libc::SYS_rt_sigprocmask,
                libc::SIG_BLOCK,
                std::ptr::null::<u64>(),
                &mut blocked as *mut u64,
                KERNEL_SIGSET_SIZE,
            )
        };
        Inherited {
            ignored,
            blocked: SignalSet::from_bits(blocked),
        }
    }

    /// Makes this the calling process's state: every catchable signal `SIG_IGN` if it is
    /// in `ignored`, else `SIG_DFL`, and the mask `blocked`. Async-signal-safe (raw
    /// `rt_sigaction` and `rt_sigprocmask` on data of the stack): the forked child calls it
    /// before `execve`.
    pub fn apply(&self) {
        for sig in 1..=MAX_SIGNAL {
            if sig == libc::SIGKILL || sig == libc::SIGSTOP {
                continue;
            }
            let action = KernelSigaction {
                handler: if self.ignored.contains(sig) {
                    libc::SIG_IGN
                } else {
                    libc::SIG_DFL
                },
                flags: 0,
                restorer: 0,
                mask: 0,
            };
            // SAFETY: rt_sigaction reads `action`, a valid struct whose handler is SIG_IGN
            // or SIG_DFL (no code to call, so no restorer needed).
            unsafe {
                libc::syscall(
                    libc::SYS_rt_sigaction,
                    sig,
                    &action as *const KernelSigaction,
                    std::ptr::null_mut::<KernelSigaction>(),
                    KERNEL_SIGSET_SIZE,
                )
            };
        }
        let mask = self.blocked.bits();
        // SAFETY: rt_sigprocmask reads the 8-byte mask; the old one is not asked for.
        unsafe {
            libc::syscall(
                libc::SYS_rt_sigprocmask,
                libc::SIG_SETMASK,
                &mask as *const u64,
                std::ptr::null_mut::<u64>(),
                KERNEL_SIGSET_SIZE,
            )
        };
    }
}

/// Blocks every signal in the calling thread (raw `rt_sigprocmask`: glibc's own two too,
/// as its `posix_spawn` does) and returns the mask it had, for [`restore_mask`]. Around a
/// `fork`: a signal that comes while the child still has the tracer's handlers (or the
/// ptrace tracer's ignored ones) waits, pending, until the child has set the command's
/// own ([`Inherited::apply`]), instead of being taken by a handler of the tracer's that
/// does nothing in the child. Async-signal-safe.
pub fn block_all() -> SignalSet {
    let all = u64::MAX;
    let mut old = 0u64;
    // SAFETY: rt_sigprocmask reads the 8-byte `all` and writes the old mask into `old`.
    unsafe {
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            &all as *const u64,
            &mut old as *mut u64,
            KERNEL_SIGSET_SIZE,
        )
    };
    SignalSet::from_bits(old)
}

/// Makes `mask` the calling thread's blocked mask again (after [`block_all`]): the signals
/// that came meanwhile are delivered now. Async-signal-safe.
pub fn restore_mask(mask: SignalSet) {
    let bits = mask.bits();
    // SAFETY: rt_sigprocmask reads the 8-byte mask; the old one is not asked for.
    unsafe {
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            &bits as *const u64,
            std::ptr::null_mut::<u64>(),
            KERNEL_SIGSET_SIZE,
        )
    };
}

/// The signals caught.
const CAUGHT: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// The command's process id once it runs (0 before): where signals are forwarded.
static COMMAND: AtomicI32 = AtomicI32::new(0);
/// Bit `n`: signal `n` arrived at all.
static SEEN: AtomicU64 = AtomicU64::new(0);
/// Bit `n`: signal `n` came before the command's pid was known (the tracer was still
/// starting it), or was sent to the tracer alone: forwarded as soon as it is.
static PENDING: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    let bit = 1u64 << (sig as u64 & 63);
    SEEN.fetch_or(bit, Ordering::SeqCst);
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let code = unsafe { (*info).si_code };
    // The terminal's signal reached a command that exists; not one still to be made.
    if code <= 0 || COMMAND.load(Ordering::SeqCst) <= 0 {
        // Pending first, then the command's pid: with `forward_to` storing the pid first,
        // then taking the pending ones, a signal that lands on another thread while the
        // pid is being set is sent by one of the two, never by neither.
        PENDING.fetch_or(bit, Ordering::SeqCst);
        send_pending(COMMAND.load(Ordering::SeqCst));
    }
}

/// Sends the pending signals to `command` when it is known (> 0), taking them: each is
/// sent once, by whichever of the handler and [`forward_to`] takes it. Async-signal-safe.
fn send_pending(command: libc::pid_t) {
    if command <= 0 {
        return;
    }
    let pending = PENDING.swap(0, Ordering::SeqCst);
    for sig in (1..64).filter(|&s| pending & (1 << s) != 0) {
        // SAFETY: kill is async-signal-safe and takes plain integers; `command` is the
        // traced command's pid.
        unsafe { libc::kill(command, sig as libc::c_int) };
    }
}

/// Catches the signals while it lives; restores the previous actions when dropped.
pub struct Guard {
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

impl Guard {
    /// Installs the handler (without `SA_RESTART`, so that a blocking `waitpid` returns
    /// `EINTR` and the tracer can forward the signal at once) for each caught signal that
    /// is not ignored: an ignored one (`nohup`) stays ignored, as a shell leaves it.
    pub fn install() -> Guard {
        COMMAND.store(0, Ordering::SeqCst);
        SEEN.store(0, Ordering::SeqCst);
        PENDING.store(0, Ordering::SeqCst);
        let mut previous = Vec::new();
        for sig in CAUGHT {
            // SAFETY: a zeroed sigaction is a valid starting point; the handler only stores
            // to atomics and calls kill, which is async-signal-safe; `old` receives the
            // previous action.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                    || old.sa_sigaction == libc::SIG_IGN
                {
                    continue;
                }
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO;
                libc::sigemptyset(&mut action.sa_mask);
                if libc::sigaction(sig, &action, &mut old) == 0 {
                    previous.push((sig, old));
                }
            }
        }
        // A caller that ignores SIGCHLD has its children reaped by the kernel, and the
        // tracer could not wait for the command: SIGCHLD is the default while tracing (the
        // command still starts with the caller's disposition, see `launch`).
        // SAFETY: reads and sets SIGCHLD's action; `old` receives the previous one.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGCHLD, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_IGN
            {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = libc::SIG_DFL;
                libc::sigemptyset(&mut action.sa_mask);
                if libc::sigaction(libc::SIGCHLD, &action, std::ptr::null_mut()) == 0 {
                    previous.push((libc::SIGCHLD, old));
                }
            }
        }
        Guard { previous }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        COMMAND.store(0, Ordering::SeqCst);
        for (sig, old) in &self.previous {
            // SAFETY: restores an action sigaction returned earlier.
            unsafe { libc::sigaction(*sig, old, std::ptr::null_mut()) };
        }
    }
}

/// From now on, signals that processes send to the tracer go on to `pid`, the command
/// (until the [`Guard`] is dropped), and every one that came before it (the terminal's
/// too); 0 stops forwarding. Call it as soon as the command's process exists, before it
/// executes the command where the backend can (see the module's notes).
pub fn forward_to(pid: libc::pid_t) {
    COMMAND.store(pid, Ordering::SeqCst);
    send_pending(pid);
}

/// Whether a caught signal arrived since [`Guard::install`]: the trace was interrupted.
pub fn interrupted() -> Option<libc::c_int> {
    let bits = SEEN.load(Ordering::SeqCst);
    (1..64)
        .find(|&s| bits & (1 << s) != 0)
        .map(|s| s as libc::c_int)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_holds_signals_one_to_sixty_four() {
        let s = SignalSet::EMPTY.with(1).with(64).with(0).with(65);
        assert!(s.contains(1) && s.contains(64));
        assert!(!s.contains(2) && !s.contains(0) && !s.contains(65));
        assert_eq!(s.bits(), 1 | 1 << 63);
    }

    #[test]
    fn applied_state_reads_back() {
        let want = Inherited {
            ignored: SignalSet::EMPTY.with(libc::SIGUSR1).with(libc::SIGPIPE),
            blocked: SignalSet::EMPTY.with(libc::SIGUSR2),
        };
        // In a child: the test process's own signals stay as they are.
        // SAFETY: the child makes only raw system calls (apply, of_this_process, _exit).
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            want.apply();
            let got = Inherited::of_this_process();
            // SAFETY: _exit ends the child without running the parent's destructors.
            unsafe { libc::_exit(if got == want { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    }

    #[test]
    fn block_all_blocks_every_blockable_signal_until_the_mask_is_restored() {
        // The mask is the calling thread's: the test's own thread, no other.
        let before = Inherited::of_this_process().blocked;
        let previous = block_all();
        let blocked = Inherited::of_this_process().blocked;
        restore_mask(previous);
        assert_eq!(previous, before);
        let unblockable = SignalSet::EMPTY.with(libc::SIGKILL).with(libc::SIGSTOP);
        assert_eq!(blocked.bits(), !unblockable.bits());
        assert_eq!(Inherited::of_this_process().blocked, before);
    }
}
