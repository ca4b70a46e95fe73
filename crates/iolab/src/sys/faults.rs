//! A thread's page faults, and which pages of a map the page tables hold: what a map's
//! first touches cost, for the trials of a `RandomAccessFile`.
//!
//! **System calls**: `getrusage(RUSAGE_THREAD)` (Linux 2.6.26) for the calling thread's
//! minor faults; a `pread` of `/proc/self/pagemap` (opened once per process, Linux 2.6.25;
//! the present bit stays readable without `CAP_SYS_ADMIN`, which hides only the frame
//! numbers) for whether each page of a 2 MiB window is mapped.
//!
//! **Limits**: `pagemap` may be absent (a restricted `/proc`): then nothing is known of
//! what a fault maps, and [`mapped_run`] answers `None`.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::OnceLock;

/// The page size the pagemap's entries describe.
const PAGE: usize = 4096;
/// Pages in the window [`mapped_run`] looks at: a 2 MiB huge page's worth, the most one
/// fault maps of a file.
const WINDOW_PAGES: usize = 512;
/// `pagemap`'s "page present" bit.
const PRESENT: u64 = 1 << 63;

/// The calling thread's minor page faults so far.
pub fn thread_minor_faults() -> u64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` is valid for writes; RUSAGE_THREAD reads the calling thread's
    // counts (Linux 2.6.26).
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr()) };
    if rc != 0 {
        return 0;
    }
    // SAFETY: getrusage succeeded, so it filled `usage` (and it was zeroed before).
    let usage = unsafe { usage.assume_init() };
    usage.ru_minflt as u64
}

/// `/proc/self/pagemap`, opened once.
fn pagemap() -> Option<&'static File> {
    static PAGEMAP: OnceLock<Option<File>> = OnceLock::new();
    PAGEMAP
        .get_or_init(|| File::open("/proc/self/pagemap").ok())
        .as_ref()
}

/// How many pages around `at` are mapped now: the run of present pages that holds `at`,
/// within the 2 MiB-aligned window around it and the map `[start, start + len)`; `None`
/// when `pagemap` cannot be read or `at` is not mapped. Right after a fault at `at`, what
/// that fault mapped (with whatever was mapped beside it before).
pub fn mapped_run(start: *const u8, len: usize, at: *const u8) -> Option<usize> {
    let (start, end, at) = (start as usize, start as usize + len, at as usize);
    if !(start..end).contains(&at) {
        return None;
    }
    let page = at / PAGE;
    let first = (page - page % WINDOW_PAGES).max(start / PAGE);
    let last = (page - page % WINDOW_PAGES + WINDOW_PAGES).min(end.div_ceil(PAGE));
    let mut raw = vec![0u8; (last - first) * 8];
    let read = pagemap()?.read_at(&mut raw, (first * 8) as u64).ok()?;
    let entries: Vec<u64> = raw[..read - read % 8]
        .chunks_exact(8)
        .map(|e| u64::from_ne_bytes([e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7]]))
        .collect();
    let present = |p: usize| entries.get(p - first).is_some_and(|e| e & PRESENT != 0);
    if !present(page) {
        return None;
    }
    let below = (first..page).rev().take_while(|&p| present(p)).count();
    let above = (page + 1..last).take_while(|&p| present(p)).count();
    Some(below + 1 + above)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_touched_page_counts_as_a_fault_and_shows_as_mapped() {
        const LEN: usize = 64 * PAGE;
        // SAFETY: a fresh private anonymous map; unmapped below.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                LEN,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(map, libc::MAP_FAILED);
        let base = map.cast::<u8>();
        if pagemap().is_none() {
            eprintln!("skipped: no /proc/self/pagemap");
        } else {
            // SAFETY: inside the map.
            let at = unsafe { base.add(10 * PAGE) };
            assert_eq!(mapped_run(base, LEN, at), None, "untouched");
            let before = thread_minor_faults();
            // SAFETY: `at` is inside the writable map.
            unsafe { at.write_volatile(1) };
            assert!(thread_minor_faults() > before);
            // One anonymous page (or a larger folio, where anonymous mTHP is enabled).
            assert!(mapped_run(base, LEN, at).is_some_and(|n| n >= 1));
            // SAFETY: outside the map.
            assert_eq!(mapped_run(base, LEN, unsafe { base.add(LEN) }), None);
        }
        // SAFETY: `map` is the LEN-byte map made above, unmapped once.
        unsafe { libc::munmap(map, LEN) };
    }
}
