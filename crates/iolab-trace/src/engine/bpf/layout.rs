//! The eBPF program's types as Rust sees them: the same `#[repr(C)]` layouts as
//! `bpf/trace.bpf.c` (its `_Static_assert` and the `const` asserts here pin the sizes on
//! both sides), the table of followed calls the program reads (`syscalls`), built from
//! [`crate::syscalls`] so the calls are listed once, and the indexes of its counters.

use crate::syscalls::{Role, Sys};

/// Size buckets per flow (`BUCKETS` in the program; [`crate::model::SIZE_BUCKETS`]).
pub const BUCKETS: usize = crate::model::SIZE_BUCKETS;

/// The highest system call number the program's table holds, plus one.
pub const MAX_SYSCALLS: u32 = 512;

/// The calls of [`Sys::ALL`] below this index are counted in a target's [`Stats`]
/// (`data_calls`), the others in the `sys_stats` map (`DATA_CALLS`).
pub const DATA_CALLS: usize = 16;

/// A target's key: the device (the kernel's `dev_t`), the inode and its generation.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Key {
    /// `inode->i_sb->s_dev`.
    pub dev: u64,
    /// `inode->i_ino`.
    pub ino: u64,
    /// `inode->i_generation`: a file made with a freed inode number has another, so it is
    /// not counted on the deleted file.
    pub generation: u32,
    pub pad: u32,
}

const _: () = assert!(
    size_of::<Key>() == 24,
    "bpf/trace.bpf.c holds the same struct"
);

/// One direction of a target's data (`struct flow`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RawFlow {
    pub calls: u64,
    pub bytes: u64,
    pub ns: u64,
    pub sequential: u64,
    pub repeated: u64,
    pub direct: u64,
    pub synced: u64,
    /// `bpf_ktime_get_ns()` when the first call started, 0 before any.
    pub first: u64,
    /// When the last call started.
    pub last: u64,
    /// The time since the task's previous followed call ended, summed, and the calls
    /// that had one.
    pub gap_ns: u64,
    pub gaps: u64,
    pub sizes: [u64; BUCKETS],
}

/// Everything the program counts of one target (`struct stats`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Stats {
    pub mode: u32,
    pub rdev: u32,
    pub size: u64,
    pub read: RawFlow,
    pub write: RawFlow,
    pub syncs: u64,
    pub sync_ns: u64,
    pub opens: u64,
    pub o_direct: u64,
    pub o_sync: u64,
    pub o_dsync: u64,
    pub o_append: u64,
    pub o_trunc: u64,
    pub o_creat: u64,
    pub seeks: u64,
    pub mmaps: u64,
    pub mmap_bytes: u64,
    pub ring_enters: u64,
    pub ring_submissions: u64,
    pub errors: u64,
    pub data_calls: [RawCallStat; DATA_CALLS],
    /// The first process that used it (0: none yet), and its calls, bytes and time.
    pub pid1: u32,
    pub pad1: u32,
    pub calls1: u64,
    pub bytes1: u64,
    pub ns1: u64,
}

const _: () = assert!(
    size_of::<Stats>() == 1240,
    "bpf/trace.bpf.c holds the same struct"
);

/// The key of a target's counts of one call (`struct sys_key`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SysKey {
    pub dev: u64,
    pub ino: u64,
    pub generation: u32,
    /// The call's position in [`Sys::ALL`].
    pub index: u32,
}

const _: () = assert!(
    size_of::<SysKey>() == 24,
    "bpf/trace.bpf.c holds the same struct"
);

/// Calls, failures and nanoseconds (`struct call_stat`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RawCallStat {
    pub calls: u64,
    pub errors: u64,
    pub ns: u64,
}

/// Calls, bytes and nanoseconds of one process on one target (`struct use`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RawUse {
    pub calls: u64,
    pub bytes: u64,
    pub ns: u64,
}

/// Page faults on the maps of one file (`struct faults`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RawFaults {
    pub faults: u64,
    pub added: u64,
    pub far: u64,
    pub last: u64,
}

/// What the program does for one system call number (`struct call_def`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallDef {
    pub role: u8,
    pub index: u8,
    pub fd: u8,
    pub pos: u8,
    pub fd2: u8,
    pub pos_ptr: u8,
    pub pos2_ptr: u8,
    pub flags: u8,
    /// Opens, lookups, renames: the (old) path's argument, and its directory
    /// descriptor's.
    pub path: u8,
    pub dirfd: u8,
    /// Renames: the new path's argument, and its directory descriptor's.
    pub path2: u8,
    pub dirfd2: u8,
}

// SAFETY: plain `#[repr(C)]` structs of integers, with no padding a value could leave
// uninitialised (every field is written by the program or zeroed by the kernel; `Key`'s
// explicit `pad` fills its tail), valid for any bit pattern: what `aya::Pod` asks.
unsafe impl aya::Pod for Key {}
// SAFETY: as above.
unsafe impl aya::Pod for Stats {}
// SAFETY: as above (no implicit padding: two u64 then two u32).
unsafe impl aya::Pod for SysKey {}
// SAFETY: as above.
unsafe impl aya::Pod for RawCallStat {}
// SAFETY: as above.
unsafe impl aya::Pod for CallDef {}
// SAFETY: as above.
unsafe impl aya::Pod for RawUse {}
// SAFETY: as above.
unsafe impl aya::Pod for RawFaults {}

/// `enum role` of the program.
mod role {
    pub const READ: u8 = 1;
    pub const WRITE: u8 = 2;
    pub const COPY: u8 = 3;
    pub const SYNC: u8 = 4;
    pub const MSYNC: u8 = 5;
    pub const SEEK: u8 = 6;
    pub const OPEN: u8 = 7;
    pub const CLOSE: u8 = 8;
    pub const FD: u8 = 9;
    pub const MMAP: u8 = 10;
    pub const MUNMAP: u8 = 11;
    pub const RING: u8 = 12;
    pub const OTHER: u8 = 13;
    pub const LOOKUP: u8 = 14;
    pub const RENAME: u8 = 15;
    pub const TRUNCATE: u8 = 16;
    pub const SYNC_ALL: u8 = 17;
}

/// `call_def.flags` of a sync that syncs its whole file system (`SYNCS_ALL`).
const SYNCS_ALL: u8 = 1;

/// No such argument.
const NO_ARG: u8 = 0xff;
/// `creat(2)`: `O_CREAT | O_TRUNC`.
const FLAGS_CREAT: u8 = 0xfe;
/// `openat2(2)`: the flags are in the `struct open_how` argument 2 points at.
const FLAGS_HOW: u8 = 0xfd;

/// `enum counter` of the program: indexes of the `counters` array.
#[derive(Clone, Copy, Debug)]
#[repr(u32)]
pub enum Counter {
    /// Processes forked by traced tasks (after the command's `execve`).
    Processes = 0,
    /// Threads started by traced tasks.
    Threads = 1,
    /// Successful `execve`s.
    Execs = 2,
    /// Calls that could not be kept (a full map).
    LostCalls = 3,
    /// Tasks that could not be followed.
    LostTasks = 4,
    /// Paths that could not be sent (a full ring buffer).
    LostPaths = 5,
    /// Events that could not be sent (a full ring buffer).
    LostEvents = 6,
    /// Lookups and failed opens that could not be sent (a full ring buffer).
    LostLookups = 8,
}

fn arg(i: Option<usize>) -> u8 {
    i.map_or(NO_ARG, |i| i as u8)
}

/// The program's entry for `sys`, the `index`-th call of [`Sys::ALL`].
pub fn call_def(sys: Sys, index: usize) -> CallDef {
    let def = |role, fd: usize| CallDef {
        role,
        index: index as u8,
        fd: fd as u8,
        pos: NO_ARG,
        fd2: NO_ARG,
        pos_ptr: NO_ARG,
        pos2_ptr: NO_ARG,
        flags: NO_ARG,
        path: NO_ARG,
        dirfd: NO_ARG,
        path2: NO_ARG,
        dirfd2: NO_ARG,
    };
    match sys.role() {
        Role::Read { fd, pos } => CallDef {
            pos: arg(pos),
            ..def(role::READ, fd)
        },
        Role::Write { fd, pos } => CallDef {
            pos: arg(pos),
            ..def(role::WRITE, fd)
        },
        Role::Copy { from, to } => {
            let (from_off, to_off) = sys.copy_offsets();
            CallDef {
                fd2: to as u8,
                pos_ptr: arg(from_off),
                pos2_ptr: arg(to_off),
                ..def(role::COPY, from)
            }
        }
        Role::Sync if sys == Sys::Syncfs => CallDef {
            flags: SYNCS_ALL,
            ..def(role::SYNC, 0)
        },
        Role::Sync => def(role::SYNC, 0),
        Role::Msync => def(role::MSYNC, 0),
        Role::Seek => def(role::SEEK, 0),
        Role::Open { flags, creat } => {
            let (dirfd, path) = sys.open_path().unwrap_or((None, 0));
            CallDef {
                flags: match (flags, creat) {
                    (_, true) => FLAGS_CREAT,
                    (Some(i), false) => i as u8,
                    (None, false) => FLAGS_HOW,
                },
                path: path as u8,
                dirfd: arg(dirfd),
                ..def(role::OPEN, 0)
            }
        }
        Role::Lookup { dirfd, path } => CallDef {
            path: path as u8,
            dirfd: arg(dirfd),
            ..def(role::LOOKUP, 0)
        },
        Role::Rename { from, to } => CallDef {
            path: from.1 as u8,
            dirfd: arg(from.0),
            path2: to.1 as u8,
            dirfd2: arg(to.0),
            ..def(role::RENAME, 0)
        },
        Role::Truncate => def(role::TRUNCATE, 0),
        Role::Close => def(role::CLOSE, 0),
        Role::Dup | Role::Fcntl => def(role::FD, 0),
        Role::Mmap => def(role::MMAP, 4),
        Role::Munmap => def(role::MUNMAP, 0),
        Role::RingEnter => def(role::RING, 0),
        Role::CloseRange => def(role::OTHER, 0),
        Role::SyncAll => def(role::SYNC_ALL, 0),
        // Only the ptrace backend needs to see the command's own ptrace.
        Role::Ptrace => CallDef::default(),
    }
}

/// The program's `syscalls` table: (system call number, entry) for every followed call.
pub fn call_table() -> Vec<(u32, CallDef)> {
    Sys::ALL
        .iter()
        .enumerate()
        .map(|(i, &sys)| (sys.number() as u32, call_def(sys, i)))
        .filter(|&(nr, def)| def.role != 0 && nr < MAX_SYSCALLS)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_followed_call_has_an_entry_that_fits_the_table() {
        assert!(
            Sys::ALL.len() < 64,
            "the program's `other` array has 64 slots"
        );
        let table = call_table();
        for (nr, def) in &table {
            assert!(*nr < MAX_SYSCALLS, "{nr}");
            assert_eq!(Sys::ALL[def.index as usize].number(), *nr as i64);
            for a in [
                def.fd,
                def.pos,
                def.fd2,
                def.pos_ptr,
                def.pos2_ptr,
                def.path,
                def.dirfd,
                def.path2,
                def.dirfd2,
            ] {
                assert!(a < 6 || a == NO_ARG, "{def:?}");
            }
        }
        assert_eq!(table.len(), Sys::ALL.len() - 1, "all but ptrace");
        // The first DATA_CALLS calls are reads and writes: the program counts them in the
        // target's stats, where it has them at hand.
        for (i, sys) in Sys::ALL.iter().enumerate() {
            let data = matches!(sys.role(), Role::Read { .. } | Role::Write { .. });
            assert_eq!(data, i < 15, "{sys:?} at {i}");
        }
        assert!(Sys::ALL.len() > DATA_CALLS);
        let sendfile = call_def(Sys::Sendfile, 0);
        assert_eq!((sendfile.fd, sendfile.fd2, sendfile.pos_ptr), (1, 0, 2));
        assert_eq!(call_def(Sys::Openat, 0).flags, 2);
        assert_eq!(call_def(Sys::Openat2, 0).flags, FLAGS_HOW);
        let openat = call_def(Sys::Openat, 0);
        assert_eq!((openat.dirfd, openat.path), (0, 1));
        let renameat2 = call_def(Sys::Renameat2, 0);
        assert_eq!(
            (
                renameat2.dirfd,
                renameat2.path,
                renameat2.dirfd2,
                renameat2.path2
            ),
            (0, 1, 2, 3)
        );
        assert_eq!(call_def(Sys::Statx, 0).path, 1);
    }
}
