//! The calling thread's CPU affinity (`sched_getaffinity`/`sched_setaffinity` with pid 0).
use std::io;

/// The CPUs the calling thread may run on, in increasing order.
pub(super) fn allowed() -> io::Result<Vec<usize>> {
    let set = get()?;
    Ok((0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below CPU_SETSIZE, the number of CPUs a cpu_set_t holds.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect())
}

pub(super) fn get() -> io::Result<libc::cpu_set_t> {
    // SAFETY: all-zero is a valid (empty) cpu_set_t.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is writable and its size is passed along.
    let rc = unsafe { libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set) };
    if rc == 0 {
        Ok(set)
    } else {
        Err(io::Error::last_os_error())
    }
}

pub(super) fn set(set: &libc::cpu_set_t) -> io::Result<()> {
    // SAFETY: `set` is a valid cpu_set_t of the size passed along; only read.
    let rc = unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Restricts the calling thread to `cpu`.
pub(super) fn pin(cpu: usize) -> io::Result<()> {
    // SAFETY: all-zero is a valid (empty) cpu_set_t.
    let mut one: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` comes from `allowed`, so it is below CPU_SETSIZE.
    unsafe { libc::CPU_SET(cpu, &mut one) };
    set(&one)
}
