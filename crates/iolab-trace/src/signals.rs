//! Signals that would end the tracer (`SIGINT`, `SIGTERM`, `SIGHUP`, `SIGQUIT`) are caught
//! while the command runs, so that the summary of what was seen is still printed.
//!
//! A signal the terminal sent (Ctrl-C, `si_code` `SI_KERNEL`) went to the whole foreground
//! process group, the command included, so the tracer only notes it, as a shell waiting
//! for its job does. A signal a process sent to the tracer alone (`kill PID`, `si_code`
//! ≤ 0) is forwarded to the command, which then ends as it would have: the tracer ends
//! when the command does. The handler forwards it itself (`kill` is async-signal-safe),
//! so a signal that lands between two `waitpid`s is not left waiting.

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

/// The signals caught.
const CAUGHT: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// The command's process id once it runs (0 before): where signals are forwarded.
static COMMAND: AtomicI32 = AtomicI32::new(0);
/// Bit `n`: signal `n` arrived at all.
static SEEN: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    let bit = 1u64 << (sig as u64 & 63);
    SEEN.fetch_or(bit, Ordering::SeqCst);
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let code = unsafe { (*info).si_code };
    let command = COMMAND.load(Ordering::SeqCst);
    if code <= 0 && command > 0 {
        // SAFETY: kill is async-signal-safe; `command` is the traced command's pid.
        unsafe { libc::kill(command, sig) };
    }
}

/// Catches the signals while it lives; restores the previous actions when dropped.
pub struct Guard {
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

impl Guard {
    /// Installs the handler (without `SA_RESTART`, so that a blocking `waitpid` returns
    /// `EINTR` and the tracer can forward the signal at once).
    pub fn install() -> Guard {
        COMMAND.store(0, Ordering::SeqCst);
        SEEN.store(0, Ordering::SeqCst);
        let mut previous = Vec::new();
        for sig in CAUGHT {
            // SAFETY: a zeroed sigaction is a valid starting point; the handler only stores
            // to atomics, which is async-signal-safe; `old` receives the previous action.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO;
                libc::sigemptyset(&mut action.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, &action, &mut old) == 0 {
                    previous.push((sig, old));
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
/// (until the [`Guard`] is dropped).
pub fn forward_to(pid: libc::pid_t) {
    COMMAND.store(pid, Ordering::SeqCst);
}

/// Whether a caught signal arrived since [`Guard::install`]: the trace was interrupted.
pub fn interrupted() -> Option<libc::c_int> {
    let bits = SEEN.load(Ordering::SeqCst);
    (1..64)
        .find(|&s| bits & (1 << s) != 0)
        .map(|s| s as libc::c_int)
}
