//! Surviving a mapped file that shrinks: a `SIGBUS` guard.
//!
//! When another process truncates a file while it is mapped, touching a page past the new
//! end raises `SIGBUS`, which kills the process: the fate of most mmap-based tools. iolab
//! registers each map it scans ([`Guard`]); its `SIGBUS` handler checks whether the
//! faulting address lies in a registered map and, if so, maps a page of zeros over the
//! lost page (`mmap(MAP_FIXED | MAP_ANONYMOUS)`), marks the map as truncated and returns,
//! so the interrupted load re-runs and reads zeros. When the scan is over, the caller asks
//! [`Guard::truncated`] and reports an error instead of a count made partly of zeros.
//! The kernel raises the same `SIGBUS` for a mapped page it cannot read (an I/O error), and
//! the handler cannot tell the two apart: such a page also reads as zeros and the scan
//! reports [`FileShrank`](crate::Error::FileShrank) — an error either way, never a wrong
//! count. A `SIGBUS` outside every registered map (a real bus error) gets the default
//! action.
//!
//! **Signal safety**: the handler only reads atomics and calls `mmap(2)`, a system call
//! with no user-space locks (POSIX does not list it as async-signal-safe, but on Linux it
//! is a plain system call; JVMs rely on the same). The registry is a fixed array of
//! atomics, so the handler never allocates or locks.

use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Maps that can be guarded at once: 1024, more than the maps
/// [`RandomAccessFile`](crate::file::RandomAccessFile) keeps open by default (1000) plus
/// the scans of a few threads. The handler walks them only when a `SIGBUS` arrives.
pub const SLOTS: usize = 1024;

struct Slot {
    start: AtomicUsize,
    len: AtomicUsize,
    truncated: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)] // the array initialiser needs a const
const EMPTY: Slot = Slot {
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    truncated: AtomicBool::new(false),
};

static SLOTS_IN_USE: [Slot; SLOTS] = [EMPTY; SLOTS];
static INSTALL: Once = Once::new();
/// The page size, read before the handler is installed (`sysconf` is not signal-safe).
static PAGE_SIZE: AtomicUsize = AtomicUsize::new(4096);

/// A registered map; unregistered on drop.
#[derive(Debug)]
pub struct Guard {
    slot: Option<usize>,
}

impl Guard {
    /// Registers `len` bytes at `start` (a map iolab owns) and installs the handler once.
    /// When all slots are taken, the map is simply not guarded.
    pub fn new(start: *const u8, len: usize) -> Guard {
        INSTALL.call_once(install);
        for (i, slot) in SLOTS_IN_USE.iter().enumerate() {
            if slot
                .len
                .compare_exchange(0, usize::MAX, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                slot.truncated.store(false, Ordering::Relaxed);
                slot.start.store(start as usize, Ordering::Relaxed);
                slot.len.store(len.max(1), Ordering::Release);
                return Guard { slot: Some(i) };
            }
        }
        Guard { slot: None }
    }

    /// Whether the map has a slot, so that a lost page is caught; `false` only with
    /// [`SLOTS`] maps guarded at once.
    pub fn is_registered(&self) -> bool {
        self.slot.is_some()
    }

    /// Whether a page of the map was lost (the file shrank) since the guard was made.
    pub fn truncated(&self) -> bool {
        self.slot
            .is_some_and(|i| SLOTS_IN_USE[i].truncated.load(Ordering::Acquire))
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            let slot = &SLOTS_IN_USE[i];
            slot.start.store(0, Ordering::Relaxed);
            slot.len.store(0, Ordering::Release);
        }
    }
}

extern "C" fn on_sigbus(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    _context: *mut libc::c_void,
) {
    // SAFETY: the kernel passes a valid siginfo for a SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = PAGE_SIZE.load(Ordering::Relaxed);
    for slot in &SLOTS_IN_USE {
        let len = slot.len.load(Ordering::Acquire);
        let start = slot.start.load(Ordering::Relaxed);
        if len == 0 || len == usize::MAX || addr < start || addr >= start.saturating_add(len) {
            continue;
        }
        let page_start = addr & !(page - 1);
        // SAFETY: the page lies inside a map that iolab created and still owns (its guard
        // is alive); replacing it with anonymous zeros keeps the address range valid for
        // the reader and touches no other memory.
        let replaced = unsafe {
            libc::mmap(
                page_start as *mut libc::c_void,
                page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_FIXED | libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if replaced != libc::MAP_FAILED {
            slot.truncated.store(true, Ordering::Release);
            return;
        }
    }
    // Not ours: fall back to the default action and let it happen again.
    // SAFETY: resetting a signal's disposition and re-raising it are async-signal-safe.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

fn install() {
    PAGE_SIZE.store(super::page_size() as usize, Ordering::Relaxed);
    // SAFETY: a zeroed sigaction with a valid SA_SIGINFO handler and an empty mask.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigbus as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
    }
}
