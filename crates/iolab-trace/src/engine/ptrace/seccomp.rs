//! The seccomp filter that makes ptrace cheap: a classic BPF program that returns
//! `SECCOMP_RET_TRACE` (a stop for the tracer) for the followed calls and
//! `SECCOMP_RET_ALLOW` for every other, so the command runs at full speed between I/O
//! calls — `strace --seccomp-bpf`'s filter. Calls of another ABI (32-bit programs on a
//! 64-bit kernel) are allowed untraced.

/// `AUDIT_ARCH_*` of this build's architecture (`linux/audit.h`).
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

/// Offsets in `struct seccomp_data`: the call's number, then its architecture.
const OFFSET_NR: u32 = 0;
const OFFSET_ARCH: u32 = 4;

const LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
const RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;

fn stmt(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// The filter: stop on `calls`, allow everything else. At most 250 calls (the jumps are 8
/// bits).
pub fn filter(calls: &[i64]) -> Vec<libc::sock_filter> {
    assert!(calls.len() < 250, "too many calls for 8-bit jumps");
    let n = calls.len();
    // Layout: 0 load arch, 1 compare, 2 load nr, 3..3+n compares, 3+n allow, 4+n trace.
    let allow = 3 + n;
    let trace = allow + 1;
    let mut prog = Vec::with_capacity(n + 5);
    prog.push(stmt(LD_W_ABS, OFFSET_ARCH));
    prog.push(jump(JEQ_K, AUDIT_ARCH, 0, (allow - 2) as u8));
    prog.push(stmt(LD_W_ABS, OFFSET_NR));
    for (i, call) in calls.iter().enumerate() {
        let at = 3 + i;
        prog.push(jump(JEQ_K, *call as u32, (trace - at - 1) as u8, 0));
    }
    prog.push(stmt(RET_K, libc::SECCOMP_RET_ALLOW));
    prog.push(stmt(RET_K, libc::SECCOMP_RET_TRACE));
    prog
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syscalls::Sys;

    fn numbers(calls: &[Sys]) -> Vec<i64> {
        calls.iter().map(|c| c.number()).collect()
    }

    /// Runs the filter over a call, as the kernel would (only the instructions it uses).
    fn run(prog: &[libc::sock_filter], arch: u32, nr: u32) -> u32 {
        let mut pc = 0;
        let mut acc = 0u32;
        loop {
            let ins = prog[pc];
            match ins.code {
                LD_W_ABS => acc = if ins.k == OFFSET_ARCH { arch } else { nr },
                JEQ_K => {
                    pc += if acc == ins.k { ins.jt } else { ins.jf } as usize;
                }
                RET_K => return ins.k,
                other => panic!("unexpected instruction {other}"),
            }
            pc += 1;
        }
    }

    #[test]
    fn stops_only_on_the_followed_calls() {
        let calls = [Sys::Read, Sys::Write, Sys::Fsync];
        let prog = filter(&numbers(&calls));
        for call in calls {
            assert_eq!(
                run(&prog, AUDIT_ARCH, call.number() as u32),
                libc::SECCOMP_RET_TRACE
            );
        }
        assert_eq!(
            run(&prog, AUDIT_ARCH, libc::SYS_getpid as u32),
            libc::SECCOMP_RET_ALLOW
        );
        assert_eq!(
            run(&prog, 0x4000_0003, Sys::Read.number() as u32),
            libc::SECCOMP_RET_ALLOW
        );
        let all = filter(&numbers(Sys::ALL));
        for call in Sys::ALL {
            assert_eq!(
                run(&all, AUDIT_ARCH, call.number() as u32),
                libc::SECCOMP_RET_TRACE
            );
        }
    }
}
