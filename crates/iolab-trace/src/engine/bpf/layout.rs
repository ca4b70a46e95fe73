//! The eBPF program's types as Rust sees them: the same `#[repr(C)]` layouts as
//! `bpf/records.h`, the one header the program takes them from (the test
//! `records_h_and_layout_rs_agree_on_every_field` compiles a C program over it and checks
//! the offset and size of every field, and every shared constant, against this file), the
//! table of followed calls the program reads (`syscalls`), built from [`crate::syscalls`]
//! so the calls are listed once, and the indexes of its counters.

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

/// The key of a target's counts of one call (`struct sys_key`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct SysKey {
    pub dev: u64,
    pub ino: u64,
    pub generation: u32,
    /// The call's position in [`Sys::ALL`].
    pub index: u32,
}

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

/// The header of a record of the `events`, `lookup_ring` and `stacks` rings (`struct
/// event` before its `data`): `len` bytes of data follow it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct EventHeader {
    /// One of [`kind`].
    pub kind: u32,
    pub pid: u32,
    /// `bpf_ktime_get_ns()` when it was sent.
    pub at: u64,
    /// The target, and the call's index in [`Sys::ALL`].
    pub k: SysKey,
    pub a: u64,
    pub b: u64,
    pub c: u64,
    pub len: u32,
    pub pad: u32,
}

/// The header of a record of the `paths` ring (`struct path_event` before its `path`):
/// `len` bytes of path follow it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct PathEventHeader {
    pub dev: u64,
    pub ino: u64,
    pub generation: u32,
    pub len: u32,
    /// 0 when the path was cut (too deep or too long).
    pub complete: u32,
    pub pad: u32,
}

/// The header `T` at the start of `bytes`, or `None` when `bytes` is shorter.
pub fn header<T: aya::Pod>(bytes: &[u8]) -> Option<T> {
    let head = bytes.get(..size_of::<T>())?;
    // SAFETY: `head` holds `size_of::<T>()` bytes, `read_unaligned` asks no alignment, and
    // a `Pod` type is valid for any bit pattern.
    Some(unsafe { std::ptr::read_unaligned(head.as_ptr().cast::<T>()) })
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
// SAFETY: as above (no implicit padding: its fields tile it, the test below checks).
unsafe impl aya::Pod for EventHeader {}
// SAFETY: as above.
unsafe impl aya::Pod for PathEventHeader {}

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

/// `enum event_kind` of the program: the kinds of [`EventHeader`].
pub mod kind {
    pub const EXEC: u32 = 1;
    pub const FORK: u32 = 2;
    pub const OPENED: u32 = 3;
    pub const TRUNCATED: u32 = 4;
    pub const DIRTIED: u32 = 5;
    pub const SYNCED: u32 = 6;
    pub const RENAMED: u32 = 7;
    pub const LOOKUP: u32 = 8;
    pub const FAILED_OPEN: u32 = 9;
    pub const STACK: u32 = 10;
    pub const SYNCED_ALL: u32 = 11;
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

    /// A field both sides hold: its Rust and C names, and where Rust puts it.
    struct Field {
        rust: &'static str,
        c: &'static str,
        offset: usize,
        size: usize,
    }

    /// A record both sides hold: its C name, the C expression of its size (a ring record's
    /// header ends where its data starts), its Rust size and its fields.
    struct Record {
        c: &'static str,
        extent: &'static str,
        size: usize,
        fields: Vec<Field>,
    }

    fn field_size<S, T>(_: fn(&S) -> &T) -> usize {
        size_of::<T>()
    }

    /// `Rust = "c name", "C size" { field, rust_field = c_field, … }`: each field's offset
    /// and size as Rust lays it out.
    macro_rules! records {
        ($($rust:ident = $c:literal, $extent:literal { $($f:ident $(= $cf:ident)?),+ $(,)? })+) => {
            vec![$(Record {
                c: $c,
                extent: $extent,
                size: size_of::<$rust>(),
                fields: vec![$(Field {
                    rust: stringify!($f),
                    c: records!(@c $f $($cf)?),
                    offset: std::mem::offset_of!($rust, $f),
                    size: field_size(|r: &$rust| &r.$f),
                }),+],
            }),+]
        };
        (@c $f:ident) => { stringify!($f) };
        (@c $f:ident $cf:ident) => { stringify!($cf) };
    }

    fn records() -> Vec<Record> {
        records! {
            Key = "key", "sizeof(struct key)" { dev, ino, generation = gen, pad }
            RawFlow = "flow", "sizeof(struct flow)" {
                calls, bytes, ns, sequential, repeated, direct, synced, first, last, gap_ns, gaps, sizes
            }
            RawCallStat = "call_stat", "sizeof(struct call_stat)" { calls, errors, ns }
            Stats = "stats", "sizeof(struct stats)" {
                mode, rdev, size, read, write, syncs, sync_ns, opens, o_direct, o_sync,
                o_dsync, o_append, o_trunc, o_creat, seeks, mmaps, mmap_bytes, ring_enters,
                ring_submissions, errors, data_calls, pid1, pad1, calls1, bytes1, ns1
            }
            SysKey = "sys_key", "sizeof(struct sys_key)" { dev, ino, generation = gen, index }
            RawUse = "use", "sizeof(struct use)" { calls, bytes, ns }
            RawFaults = "faults", "sizeof(struct faults)" { faults, added, far, last }
            CallDef = "call_def", "sizeof(struct call_def)" {
                role, index, fd, pos, fd2, pos_ptr, pos2_ptr, flags, path, dirfd, path2, dirfd2
            }
            EventHeader = "event", "offsetof(struct event, data)" {
                kind, pid, at, k, a, b, c, len, pad
            }
            PathEventHeader = "path_event", "offsetof(struct path_event, path)" {
                dev, ino, generation = gen, len, complete, pad
            }
        }
    }

    /// The constants both sides hold: the C name and Rust's value.
    fn constants() -> Vec<(&'static str, u64)> {
        let mut c = vec![
            ("MAX_SYSCALLS", u64::from(MAX_SYSCALLS)),
            ("BUCKETS", BUCKETS as u64),
            ("DATA_CALLS", DATA_CALLS as u64),
            ("SYNCS_ALL", u64::from(SYNCS_ALL)),
            ("NO_ARG", u64::from(NO_ARG)),
            ("FLAGS_CREAT", u64::from(FLAGS_CREAT)),
            ("FLAGS_HOW", u64::from(FLAGS_HOW)),
            ("EVENT_HEADER", size_of::<EventHeader>() as u64),
            ("PATH_EVENT_HEADER", size_of::<PathEventHeader>() as u64),
            ("ROLE_READ", role::READ.into()),
            ("ROLE_WRITE", role::WRITE.into()),
            ("ROLE_COPY", role::COPY.into()),
            ("ROLE_SYNC", role::SYNC.into()),
            ("ROLE_MSYNC", role::MSYNC.into()),
            ("ROLE_SEEK", role::SEEK.into()),
            ("ROLE_OPEN", role::OPEN.into()),
            ("ROLE_CLOSE", role::CLOSE.into()),
            ("ROLE_FD", role::FD.into()),
            ("ROLE_MMAP", role::MMAP.into()),
            ("ROLE_MUNMAP", role::MUNMAP.into()),
            ("ROLE_RING", role::RING.into()),
            ("ROLE_OTHER", role::OTHER.into()),
            ("ROLE_LOOKUP", role::LOOKUP.into()),
            ("ROLE_RENAME", role::RENAME.into()),
            ("ROLE_TRUNCATE", role::TRUNCATE.into()),
            ("ROLE_SYNC_ALL", role::SYNC_ALL.into()),
            ("EV_EXEC", kind::EXEC.into()),
            ("EV_FORK", kind::FORK.into()),
            ("EV_OPENED", kind::OPENED.into()),
            ("EV_TRUNCATED", kind::TRUNCATED.into()),
            ("EV_DIRTIED", kind::DIRTIED.into()),
            ("EV_SYNCED", kind::SYNCED.into()),
            ("EV_RENAMED", kind::RENAMED.into()),
            ("EV_LOOKUP", kind::LOOKUP.into()),
            ("EV_FAILED_OPEN", kind::FAILED_OPEN.into()),
            ("EV_STACK", kind::STACK.into()),
            ("EV_SYNCED_ALL", kind::SYNCED_ALL.into()),
        ];
        for (name, counter) in [
            ("C_PROCESSES", Counter::Processes),
            ("C_THREADS", Counter::Threads),
            ("C_EXECS", Counter::Execs),
            ("C_LOST_CALLS", Counter::LostCalls),
            ("C_LOST_TASKS", Counter::LostTasks),
            ("C_LOST_PATHS", Counter::LostPaths),
            ("C_LOST_EVENTS", Counter::LostEvents),
            ("C_LOST_LOOKUPS", Counter::LostLookups),
        ] {
            c.push((name, counter as u64));
        }
        c
    }

    /// A C program that prints, over `bpf/records.h`, each record's size and each field's
    /// offset and size (`name offset size` lines), and each constant (`name value`).
    fn c_program(records: &[Record], constants: &[(&str, u64)]) -> String {
        let mut p = String::from(
            "#include <stddef.h>\n#include <stdint.h>\n#include <stdio.h>\n\
             typedef uint8_t u8;\ntypedef uint16_t u16;\ntypedef uint32_t u32;\n\
             typedef uint64_t u64;\ntypedef int32_t s32;\ntypedef int64_t s64;\n\
             #include \"records.h\"\nint main(void)\n{\n",
        );
        for r in records {
            p += &format!("\tprintf(\"{} %zu\\n\", (size_t)({}));\n", r.c, r.extent);
            for f in &r.fields {
                p += &format!(
                    "\tprintf(\"{s}.{f} %zu %zu\\n\", offsetof(struct {s}, {f}), \
                     sizeof(((struct {s} *)0)->{f}));\n",
                    s = r.c,
                    f = f.c
                );
            }
        }
        for (name, _) in constants {
            p += &format!("\tprintf(\"{name} %llu\\n\", (unsigned long long)({name}));\n");
        }
        p + "\treturn 0;\n}\n"
    }

    #[test]
    fn every_shared_record_is_tiled_by_its_fields() {
        for r in records() {
            let mut fields: Vec<&Field> = r.fields.iter().collect();
            fields.sort_by_key(|f| f.offset);
            let mut next = 0;
            for f in fields {
                assert_eq!(
                    f.offset, next,
                    "{}.{}: a field between, or padding",
                    r.c, f.rust
                );
                next += f.size;
            }
            assert_eq!(next, r.size, "{}: fields missing at its end", r.c);
        }
    }

    #[test]
    fn records_h_and_layout_rs_agree_on_every_field() {
        let dir = tempfile::tempdir().unwrap();
        let records = records();
        let constants = constants();
        let source = dir.path().join("records.c");
        std::fs::write(&source, c_program(&records, &constants)).unwrap();
        let exe = dir.path().join("records");
        let include = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bpf");
        let built = std::process::Command::new("cc")
            .args(["-std=c11", "-Wall", "-Werror", "-I"])
            .arg(&include)
            .arg("-o")
            .arg(&exe)
            .arg(&source)
            .status();
        match built {
            Ok(s) => assert!(s.success(), "cc failed on bpf/records.h: {s}"),
            Err(e) => {
                iolab_testkit::skip(format!("no C compiler (cc: {e})"));
                return;
            }
        }
        let out = std::process::Command::new(&exe).output().unwrap();
        assert!(out.status.success());
        let c: std::collections::HashMap<String, Vec<u64>> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let mut w = l.split(' ');
                let name = w.next().unwrap().to_string();
                (name, w.map(|n| n.parse().unwrap()).collect())
            })
            .collect();
        for r in &records {
            assert_eq!(c[r.c], [r.size as u64], "size of struct {}", r.c);
            for f in &r.fields {
                assert_eq!(
                    c[&format!("{}.{}", r.c, f.c)],
                    [f.offset as u64, f.size as u64],
                    "struct {} field {} (Rust {}): offset and size",
                    r.c,
                    f.c,
                    f.rust
                );
            }
        }
        for (name, value) in &constants {
            assert_eq!(c[*name], [*value], "{name}");
        }
    }

    #[test]
    fn a_header_is_read_from_unaligned_bytes_and_not_from_too_few() {
        let mut bytes = vec![0u8; 1 + size_of::<PathEventHeader>()];
        bytes[1..9].copy_from_slice(&7u64.to_ne_bytes());
        let h: PathEventHeader = header(&bytes[1..]).unwrap();
        assert_eq!(h.dev, 7);
        assert!(header::<PathEventHeader>(&bytes[2..]).is_none());
    }
}
