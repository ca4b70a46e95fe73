//! seccomp filters for tests: make chosen system calls fail as a restricted machine would
//! (io_uring refused as under Docker's default profile, `O_DIRECT` refused, a sync that
//! fails with `EIO`), in a child before it runs a program, or in the calling process.
//!
//! x86-64 only (the filters check the architecture and allow everything elsewhere).
use std::io;
use std::mem::offset_of;
use std::os::unix::process::CommandExt;
use std::process::{Command, Output};

use libc::{c_ulong, seccomp_data, sock_filter, sock_fprog};

/// `AUDIT_ARCH_X86_64` from `<linux/audit.h>` (not in the libc crate).
const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;

const LOAD_WORD: u32 = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
const JUMP_EQ: u32 = libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K;
const JUMP_SET: u32 = libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K;
const RETURN: u32 = libc::BPF_RET | libc::BPF_K;

fn stmt(code: u32, k: u32) -> sock_filter {
    jump(code, k, 0, 0)
}

fn jump(code: u32, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    }
}

fn ret_errno(errno: i32) -> sock_filter {
    stmt(
        RETURN,
        libc::SECCOMP_RET_ERRNO | (errno as u32 & libc::SECCOMP_RET_DATA),
    )
}

fn ret_allow() -> sock_filter {
    stmt(RETURN, libc::SECCOMP_RET_ALLOW)
}

const ARCH: u32 = offset_of!(seccomp_data, arch) as u32;
const NR: u32 = offset_of!(seccomp_data, nr) as u32;
/// The low 32 bits of the third argument (x86_64 is little-endian).
const ARG2_LOW: u32 = (offset_of!(seccomp_data, args) + 2 * 8) as u32;

/// `io_uring_setup` fails with EPERM, as under Docker's default profile.
pub fn deny_io_uring_setup() -> Vec<sock_filter> {
    vec![
        stmt(LOAD_WORD, ARCH),
        jump(JUMP_EQ, AUDIT_ARCH_X86_64, 0, 3), // other arch: allow
        stmt(LOAD_WORD, NR),
        jump(JUMP_EQ, libc::SYS_io_uring_setup as u32, 0, 1),
        ret_errno(libc::EPERM),
        ret_allow(),
    ]
}

/// `openat` with `O_DIRECT` fails with EINVAL, as on a file system without O_DIRECT.
pub fn refuse_o_direct() -> Vec<sock_filter> {
    vec![
        stmt(LOAD_WORD, ARCH),
        jump(JUMP_EQ, AUDIT_ARCH_X86_64, 0, 5), // other arch: allow
        stmt(LOAD_WORD, NR),
        jump(JUMP_EQ, libc::SYS_openat as u32, 0, 3), // not openat: allow
        stmt(LOAD_WORD, ARG2_LOW),
        jump(JUMP_SET, libc::O_DIRECT as u32, 0, 1), // no O_DIRECT: allow
        ret_errno(libc::EINVAL),
        ret_allow(),
    ]
}

/// Installs `filter` in the child of `cmd` just before it executes the program.
pub fn with_filter(cmd: &mut Command, mut filter: Vec<sock_filter>) {
    // SAFETY: the closure runs in the forked child before exec and only makes two
    // prctl calls (async-signal-safe) and no allocation. The program it points to is
    // owned by the closure, so it lives until the kernel has copied it.
    unsafe {
        cmd.pre_exec(move || {
            let prog = sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_mut_ptr(),
            };
            // Without no_new_privs an unprivileged process may not add a filter.
            if !no_new_privs()
                || libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER as c_ulong,
                    &prog as *const sock_fprog,
                ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Runs `cmd` under `filter`, or returns `None` (with a note) when seccomp cannot be
/// used here.
pub fn output_under(mut cmd: Command, filter: Vec<sock_filter>) -> Option<Output> {
    with_filter(&mut cmd, filter);
    match cmd.output() {
        Ok(output) => Some(output),
        Err(e) => {
            crate::skip(format!("cannot install a seccomp filter here ({e})"));
            None
        }
    }
}

/// The calls in `calls` fail with `errno`; everything else is allowed.
pub fn deny(calls: &[libc::c_long], errno: i32) -> Vec<sock_filter> {
    let mut filter = vec![
        stmt(LOAD_WORD, ARCH),
        jump(JUMP_EQ, AUDIT_ARCH_X86_64, 0, calls.len() as u8 + 3), // other arch: allow
        stmt(LOAD_WORD, NR),
    ];
    for (i, &nr) in calls.iter().enumerate() {
        // Matched: jump to the errno return after the remaining comparisons.
        filter.push(jump(JUMP_EQ, nr as u32, (calls.len() - i) as u8, 0));
    }
    filter.push(ret_allow());
    filter.push(ret_errno(errno));
    filter.push(ret_allow());
    filter
}

/// Installs `filter` in this process, for every thread (`SECCOMP_FILTER_FLAG_TSYNC`), for
/// good: only for a child process that runs a test's half and exits.
pub fn install_in_this_process(mut filter: Vec<sock_filter>) -> io::Result<()> {
    let prog = sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_mut_ptr(),
    };
    // SAFETY: the seccomp system call with a valid program that outlives it.
    unsafe {
        if !no_new_privs()
            || libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                libc::SECCOMP_FILTER_FLAG_TSYNC,
                &prog as *const sock_fprog,
            ) != 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Sets `no_new_privs` for this thread (which an unprivileged process needs before adding
/// a filter); `false` when refused. Async-signal-safe: usable between fork and exec.
fn no_new_privs() -> bool {
    // SAFETY: prctl(PR_SET_NO_NEW_PRIVS) takes integer arguments and touches no memory.
    unsafe {
        libc::prctl(
            libc::PR_SET_NO_NEW_PRIVS,
            1 as c_ulong,
            0 as c_ulong,
            0 as c_ulong,
            0 as c_ulong,
        ) == 0
    }
}
