//! Ctrl-C handling: the first SIGINT sets a flag that the run loop checks between runs, so
//! the results measured so far are written (marked partial) instead of lost. Child
//! processes are in the same process group, so they receive the same SIGINT and stop.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_signal: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Installs the SIGINT handler (idempotent).
pub fn install() {
    // SAFETY: `sigaction` is given a zeroed (valid) struct whose handler is an
    // `extern "C"` function that only performs an atomic store, which is
    // async-signal-safe; SA_RESTART keeps interrupted system calls from failing.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigint as *const () as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
    }
}

/// Whether Ctrl-C was pressed since [`install`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Sets the flag as SIGINT would (for tests and for internal cancellation).
pub fn request_stop() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}
