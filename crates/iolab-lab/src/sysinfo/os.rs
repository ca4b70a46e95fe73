//! The operating system: `uname`, io_uring availability, and pipe sizes.

use std::os::fd::AsRawFd;

use serde::{Deserialize, Serialize};

use crate::procfs::read_u64;
use crate::sys::uring;
use crate::text::or_dash as opt;

/// The running kernel.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Os {
    /// `uname -s`: `Linux`.
    pub sysname: Option<String>,
    /// `uname -r`: the kernel release, `6.8.0-45-generic`.
    pub release: Option<String>,
    /// `uname -v`: the kernel build, `#45-Ubuntu SMP PREEMPT_DYNAMIC …`.
    pub version: Option<String>,
    /// `uname -m`: `x86_64`.
    pub machine: Option<String>,
    /// Whether io_uring can be used, and which read operations it has.
    pub io_uring: IoUring,
    /// Capacity of a new pipe in bytes (`F_GETPIPE_SZ`; 65536 unless the user is over
    /// `pipe-user-pages-soft`).
    pub pipe_default_bytes: Option<u64>,
    /// The largest capacity an unprivileged process may set (`/proc/sys/fs/pipe-max-size`).
    pub pipe_max_bytes: Option<u64>,
}

/// io_uring on this kernel, from [`uring::support`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IoUring {
    /// Whether a ring can be set up at all.
    pub available: bool,
    /// The read operations it supports: `read`, `readv`, `read-fixed`.
    pub ops: Vec<String>,
    /// Why it is unavailable, when it is.
    pub reason: Option<String>,
    /// The sysctl `kernel.io_uring_disabled` (Linux 6.6+): 0 on, 1 restricted, 2 off.
    pub disabled_sysctl: Option<u8>,
}

/// The fields of `uname(2)`.
pub(super) struct Uname {
    pub sysname: Option<String>,
    pub nodename: Option<String>,
    pub release: Option<String>,
    pub version: Option<String>,
    pub machine: Option<String>,
}

pub(super) fn uname() -> Option<Uname> {
    let mut buf = std::mem::MaybeUninit::<libc::utsname>::zeroed();
    // SAFETY: `buf` is writable memory of the size and layout uname(2) fills.
    if unsafe { libc::uname(buf.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: uname returned 0, so it filled `buf` (which was zeroed before anyway).
    let u = unsafe { buf.assume_init() };
    Some(Uname {
        sysname: c_chars(&u.sysname),
        nodename: c_chars(&u.nodename),
        release: c_chars(&u.release),
        version: c_chars(&u.version),
        machine: c_chars(&u.machine),
    })
}

/// A NUL-terminated `char` array as a string; `None` when empty.
fn c_chars(chars: &[libc::c_char]) -> Option<String> {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    (!bytes.is_empty()).then(|| String::from_utf8_lossy(&bytes).into_owned())
}

pub(super) fn collect(uname: Option<Uname>, notes: &mut Vec<String>) -> Os {
    if uname.is_none() {
        notes.push("kernel: uname(2) failed".into());
    }
    let uname = uname.unwrap_or(Uname {
        sysname: None,
        nodename: None,
        release: None,
        version: None,
        machine: None,
    });
    let io_uring = match uring::support() {
        Ok(support) => IoUring {
            available: true,
            ops: [
                ("read", support.read),
                ("readv", support.readv),
                ("read-fixed", support.read_fixed),
            ]
            .into_iter()
            .filter(|(_, on)| *on)
            .map(|(name, _)| name.to_string())
            .collect(),
            reason: None,
            disabled_sysctl: uring::disabled_sysctl(),
        },
        Err(reason) => IoUring {
            available: false,
            ops: Vec::new(),
            reason: Some(reason),
            disabled_sysctl: uring::disabled_sysctl(),
        },
    };
    Os {
        sysname: uname.sysname,
        release: uname.release,
        version: uname.version,
        machine: uname.machine,
        io_uring,
        pipe_default_bytes: default_pipe_capacity(),
        pipe_max_bytes: read_u64("/proc/sys/fs/pipe-max-size"),
    }
}

/// The capacity of a freshly made pipe.
fn default_pipe_capacity() -> Option<u64> {
    let (reader, _writer) = std::io::pipe().ok()?;
    // SAFETY: F_GETPIPE_SZ on an open pipe descriptor has no memory effects.
    let size = unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_GETPIPE_SZ) };
    u64::try_from(size).ok()
}

impl Os {
    /// `Linux 6.8.0-45-generic x86_64`.
    pub(super) fn describe_kernel(&self) -> String {
        format!(
            "{} {} {}",
            self.sysname.as_deref().unwrap_or("-"),
            self.release.as_deref().unwrap_or("-"),
            self.machine.as_deref().unwrap_or("-")
        )
    }

    pub(super) fn details(&self) -> Vec<(String, String)> {
        let pipe =
            |bytes: Option<u64>| bytes.map_or_else(|| "-".into(), crate::units::format_bytes);
        vec![
            (
                "kernel".into(),
                format!("{} ({})", self.describe_kernel(), opt(&self.version)),
            ),
            ("io_uring".into(), self.io_uring.describe()),
            (
                "io_uring_disabled".into(),
                self.io_uring
                    .disabled_sysctl
                    .map_or_else(|| "- (no such sysctl)".into(), |v| v.to_string()),
            ),
            (
                "pipe capacity".into(),
                format!(
                    "{} default, {} max",
                    pipe(self.pipe_default_bytes),
                    pipe(self.pipe_max_bytes)
                ),
            ),
        ]
    }
}

impl IoUring {
    /// `available (read, readv, read-fixed)` or `unavailable: <reason>`.
    pub(super) fn describe(&self) -> String {
        if self.available {
            format!("available ({})", self.ops.join(", "))
        } else {
            format!(
                "unavailable: {}",
                self.reason.as_deref().unwrap_or("unknown reason")
            )
        }
    }
}
