//! io_uring support shared by the io_uring read methods: a cached capability probe that
//! explains *why* io_uring cannot be used, and a submit-and-wait step for one operation.

use std::io;
use std::sync::OnceLock;

use io_uring::{IoUring, Probe, opcode, squeue};

/// What the running kernel's io_uring supports, probed once per process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UringSupport {
    /// `IORING_OP_READ` (Linux 5.6).
    pub read: bool,
    /// `IORING_OP_READV` (Linux 5.1).
    pub readv: bool,
    /// `IORING_OP_READ_FIXED` with registered buffers (Linux 5.1).
    pub read_fixed: bool,
}

/// io_uring's capabilities here, or why io_uring cannot be used at all.
pub fn support() -> Result<UringSupport, String> {
    static SUPPORT: OnceLock<Result<UringSupport, String>> = OnceLock::new();
    SUPPORT.get_or_init(detect).clone()
}

/// `Ok(())` when `opcode` (named `name`) can be used, else the reason.
pub fn require(name: &str, pick: impl Fn(&UringSupport) -> bool) -> Result<(), String> {
    let s = support()?;
    if pick(&s) {
        Ok(())
    } else {
        Err(format!("this kernel's io_uring lacks {name}"))
    }
}

fn detect() -> Result<UringSupport, String> {
    let ring = IoUring::new(2).map_err(|e| setup_refused(&e))?;
    let mut probe = Probe::new();
    if ring.submitter().register_probe(&mut probe).is_err() {
        // Kernels before 5.6 cannot be probed; READ itself arrived in 5.6.
        return Ok(UringSupport {
            read: false,
            readv: true,
            read_fixed: true,
        });
    }
    Ok(UringSupport {
        read: probe.is_supported(opcode::Read::CODE),
        readv: probe.is_supported(opcode::Readv::CODE),
        read_fixed: probe.is_supported(opcode::ReadFixed::CODE),
    })
}

/// The sysctl that can switch io_uring off (Linux 6.6): 0 on, 1 root or group only, 2 off.
pub fn disabled_sysctl() -> Option<u8> {
    std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Why `io_uring_setup` failed, in words a user can act on.
pub fn setup_refused(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENOSYS) => "this kernel has no io_uring (io_uring_setup: ENOSYS)".to_string(),
        Some(libc::EPERM) => match disabled_sysctl() {
            Some(2) => "io_uring is disabled (sysctl kernel.io_uring_disabled = 2)".to_string(),
            Some(1) => "io_uring is restricted to root and kernel.io_uring_group \
                        (sysctl kernel.io_uring_disabled = 1)"
                .to_string(),
            _ => "io_uring_setup refused (EPERM): blocked by a seccomp filter or container policy"
                .to_string(),
        },
        _ => format!("io_uring_setup failed: {e}"),
    }
}

/// The ring size the one-in-flight methods use: small, since only one entry is ever queued.
pub const SMALL_RING_ENTRIES: u32 = 4;

/// A new ring, with setup failures turned into the reason io_uring is unavailable.
pub fn new_ring(entries: u32) -> Result<IoUring, String> {
    IoUring::new(entries).map_err(|e| setup_refused(&e))
}

/// A new ring that only the calling thread will ever submit to and wait on, set up as fio
/// sets up its rings: `IORING_SETUP_COOP_TASKRUN | SINGLE_ISSUER | DEFER_TASKRUN`
/// (Linux 6.1). A buffered read that waits for the device completes through task work;
/// by default the kernel interrupts the thread to run it as each read lands, and with
/// these flags it runs the work when the thread next waits, all of it at once. Kernels
/// that refuse the flags get a plain ring.
///
/// The caller must not hand the ring to another thread.
pub fn new_private_ring(entries: u32) -> Result<IoUring, String> {
    IoUring::builder()
        .setup_coop_taskrun()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries)
        .or_else(|_| new_ring(entries))
}

/// Submits `entry`, waits for its completion and returns its result (bytes, or `-errno`).
///
/// Retries the wait on `EINTR` and resubmits an operation that completed with `-EINTR` or
/// `-EAGAIN`.
///
/// # Safety
///
/// Every buffer and iovec `entry` points to must stay valid and unaliased until this
/// returns `Ok`. If it returns `Err`, the operation may still be in flight: the caller
/// must then never free or reuse those buffers (leak them).
pub unsafe fn submit_and_wait_one(ring: &mut IoUring, entry: &squeue::Entry) -> io::Result<i32> {
    loop {
        // SAFETY: the caller keeps every buffer of `entry` valid until the completion is
        // reaped below (or leaks them if we fail in between).
        unsafe { ring.submission().push(entry) }
            .map_err(|_| io::Error::other("io_uring submission queue is full"))?;
        let result = loop {
            match ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)
                    ) =>
                {
                    // The entry was (or will be) submitted; keep waiting for its completion.
                    if ring.completion().is_empty() {
                        continue;
                    }
                }
                Err(e) => return Err(e),
            }
            if let Some(cqe) = ring.completion().next() {
                break cqe.result();
            }
        };
        if result == -libc::EINTR || result == -libc::EAGAIN {
            continue;
        }
        return Ok(result);
    }
}

/// A read of `len` bytes at `offset` into `buf`: `READ_FIXED` of registered buffer `index`
/// when `registered`, else a plain `READ`; its user data is `index`.
pub fn read_entry(
    fd: io_uring::types::Fd,
    buf: *mut u8,
    len: u32,
    index: u16,
    offset: u64,
    registered: bool,
) -> squeue::Entry {
    if registered {
        opcode::ReadFixed::new(fd, buf, len, index)
            .offset(offset)
            .build()
    } else {
        opcode::Read::new(fd, buf, len).offset(offset).build()
    }
    .user_data(u64::from(index))
}
