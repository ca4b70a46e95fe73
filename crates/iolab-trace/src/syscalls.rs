//! The system calls the tracer follows, what each one does to a target, and their numbers
//! on this architecture (for the ptrace backend's seccomp filter) and their tracepoints
//! (for the eBPF backend).

/// What a traced call does, and where its arguments are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Reads from the descriptor in argument `fd`; `pos` is the argument holding an explicit
    /// offset (`pread64`), if any.
    Read {
        /// The descriptor's argument.
        fd: usize,
        /// The offset's argument, for the positioned reads.
        pos: Option<usize>,
    },
    /// Writes to the descriptor in argument `fd` (`pos` as for reads).
    Write {
        /// The descriptor's argument.
        fd: usize,
        /// The offset's argument, for the positioned writes.
        pos: Option<usize>,
    },
    /// Moves data from the descriptor in argument `from` to the one in argument `to`.
    Copy {
        /// The source descriptor's argument.
        from: usize,
        /// The destination descriptor's argument.
        to: usize,
    },
    /// Makes the descriptor in argument 0 durable (`fsync`, `fdatasync`, …).
    Sync,
    /// Makes a mapping durable: argument 0 is its address.
    Msync,
    /// Moves the descriptor's offset.
    Seek,
    /// Opens a file; `flags` is the argument holding the open flags, when it is a plain
    /// integer; `creat` for `creat(2)`.
    Open {
        /// The flags' argument.
        flags: Option<usize>,
        /// Whether this is `creat` (`O_CREAT | O_WRONLY | O_TRUNC`).
        creat: bool,
    },
    /// Closes the descriptor in argument 0.
    Close,
    /// Closes a range of descriptors.
    CloseRange,
    /// Duplicates a descriptor (argument 1 is the new one for `dup2`/`dup3`).
    Dup,
    /// `fcntl` of the descriptor in argument 0 (argument 1 the command: `F_DUPFD`
    /// duplicates it, `F_SETFL` changes its flags).
    Fcntl,
    /// Maps a file: arguments (address, length, protection, flags, descriptor, offset).
    Mmap,
    /// Unmaps: arguments (address, length).
    Munmap,
    /// Enters an io_uring (argument 0 is the ring, argument 1 the submissions).
    RingEnter,
    /// Flushes every file system (`sync`).
    SyncAll,
    /// `ptrace`: seen only to say that the command traces (the ptrace backend).
    Ptrace,
    /// Looks a path up (`stat`, `access`, …): argument `path`, relative to the directory
    /// descriptor in argument `dirfd` when there is one.
    Lookup {
        /// The directory descriptor's argument.
        dirfd: Option<usize>,
        /// The path's argument.
        path: usize,
    },
    /// Renames the path in argument `from.1` (relative to the directory descriptor in
    /// `from.0`) to the one in `to.1`.
    Rename {
        /// The old path's directory descriptor and path arguments.
        from: (Option<usize>, usize),
        /// The new path's.
        to: (Option<usize>, usize),
    },
    /// Truncates the descriptor in argument 0 to the length in argument 1.
    Truncate,
}

macro_rules! syscalls {
    ($( $(#[$meta:meta])* $variant:ident = $name:literal, $tp:literal, $nr:expr, $role:expr; )*) => {
        /// A system call the tracer follows.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Sys {
            $( $(#[$meta])* #[doc = concat!("`", $name, "`")] $variant, )*
        }

        impl Sys {
            /// Every followed call that exists on this architecture.
            pub const ALL: &'static [Sys] = &[ $( $(#[$meta])* Sys::$variant, )* ];

            /// Its name, as `strace` spells it.
            pub fn name(self) -> &'static str {
                match self { $( $(#[$meta])* Sys::$variant => $name, )* }
            }

            /// The name of its tracepoints (`sys_enter_<this>`, `sys_exit_<this>`).
            pub fn tracepoint(self) -> &'static str {
                match self { $( $(#[$meta])* Sys::$variant => $tp, )* }
            }

            /// Its number on this architecture.
            pub fn number(self) -> i64 {
                match self { $( $(#[$meta])* Sys::$variant => $nr as i64, )* }
            }

            /// What it does.
            pub fn role(self) -> Role {
                match self { $( $(#[$meta])* Sys::$variant => $role, )* }
            }
        }
    };
}

use Role::*;

syscalls! {
    Read = "read", "read", libc::SYS_read, Read { fd: 0, pos: None };
    Pread64 = "pread64", "pread64", libc::SYS_pread64, Read { fd: 0, pos: Some(3) };
    Readv = "readv", "readv", libc::SYS_readv, Read { fd: 0, pos: None };
    Preadv = "preadv", "preadv", libc::SYS_preadv, Read { fd: 0, pos: Some(3) };
    Preadv2 = "preadv2", "preadv2", libc::SYS_preadv2, Read { fd: 0, pos: Some(3) };
    Write = "write", "write", libc::SYS_write, Write { fd: 0, pos: None };
    Pwrite64 = "pwrite64", "pwrite64", libc::SYS_pwrite64, Write { fd: 0, pos: Some(3) };
    Writev = "writev", "writev", libc::SYS_writev, Write { fd: 0, pos: None };
    Pwritev = "pwritev", "pwritev", libc::SYS_pwritev, Write { fd: 0, pos: Some(3) };
    Pwritev2 = "pwritev2", "pwritev2", libc::SYS_pwritev2, Write { fd: 0, pos: Some(3) };
    Vmsplice = "vmsplice", "vmsplice", libc::SYS_vmsplice, Write { fd: 0, pos: None };
    Recvfrom = "recvfrom", "recvfrom", libc::SYS_recvfrom, Read { fd: 0, pos: None };
    Recvmsg = "recvmsg", "recvmsg", libc::SYS_recvmsg, Read { fd: 0, pos: None };
    Sendto = "sendto", "sendto", libc::SYS_sendto, Write { fd: 0, pos: None };
    Sendmsg = "sendmsg", "sendmsg", libc::SYS_sendmsg, Write { fd: 0, pos: None };
    Sendfile = "sendfile", "sendfile64", libc::SYS_sendfile, Copy { from: 1, to: 0 };
    Splice = "splice", "splice", libc::SYS_splice, Copy { from: 0, to: 2 };
    Tee = "tee", "tee", libc::SYS_tee, Copy { from: 0, to: 1 };
    CopyFileRange = "copy_file_range", "copy_file_range", libc::SYS_copy_file_range, Copy { from: 0, to: 2 };
    Fsync = "fsync", "fsync", libc::SYS_fsync, Sync;
    Fdatasync = "fdatasync", "fdatasync", libc::SYS_fdatasync, Sync;
    SyncFileRange = "sync_file_range", "sync_file_range", libc::SYS_sync_file_range, Sync;
    Syncfs = "syncfs", "syncfs", libc::SYS_syncfs, Sync;
    SyncAll = "sync", "sync", libc::SYS_sync, SyncAll;
    Msync = "msync", "msync", libc::SYS_msync, Msync;
    Lseek = "lseek", "lseek", libc::SYS_lseek, Seek;
    #[cfg(target_arch = "x86_64")]
    Open = "open", "open", libc::SYS_open, Open { flags: Some(1), creat: false };
    #[cfg(target_arch = "x86_64")]
    Creat = "creat", "creat", libc::SYS_creat, Open { flags: None, creat: true };
    Openat = "openat", "openat", libc::SYS_openat, Open { flags: Some(2), creat: false };
    Openat2 = "openat2", "openat2", libc::SYS_openat2, Open { flags: None, creat: false };
    Close = "close", "close", libc::SYS_close, Close;
    CloseRange = "close_range", "close_range", libc::SYS_close_range, CloseRange;
    Dup = "dup", "dup", libc::SYS_dup, Dup;
    #[cfg(target_arch = "x86_64")]
    Dup2 = "dup2", "dup2", libc::SYS_dup2, Dup;
    Dup3 = "dup3", "dup3", libc::SYS_dup3, Dup;
    Fcntl = "fcntl", "fcntl", libc::SYS_fcntl, Fcntl;
    Mmap = "mmap", "mmap", libc::SYS_mmap, Mmap;
    Munmap = "munmap", "munmap", libc::SYS_munmap, Munmap;
    IoUringEnter = "io_uring_enter", "io_uring_enter", libc::SYS_io_uring_enter, RingEnter;
    Ptrace = "ptrace", "ptrace", libc::SYS_ptrace, Ptrace;
    #[cfg(target_arch = "x86_64")]
    Stat = "stat", "newstat", libc::SYS_stat, Lookup { dirfd: None, path: 0 };
    #[cfg(target_arch = "x86_64")]
    Lstat = "lstat", "newlstat", libc::SYS_lstat, Lookup { dirfd: None, path: 0 };
    Newfstatat = "newfstatat", "newfstatat", libc::SYS_newfstatat, Lookup { dirfd: Some(0), path: 1 };
    Statx = "statx", "statx", libc::SYS_statx, Lookup { dirfd: Some(0), path: 1 };
    #[cfg(target_arch = "x86_64")]
    Access = "access", "access", libc::SYS_access, Lookup { dirfd: None, path: 0 };
    Faccessat = "faccessat", "faccessat", libc::SYS_faccessat, Lookup { dirfd: Some(0), path: 1 };
    Faccessat2 = "faccessat2", "faccessat2", libc::SYS_faccessat2, Lookup { dirfd: Some(0), path: 1 };
    #[cfg(target_arch = "x86_64")]
    Rename = "rename", "rename", libc::SYS_rename, Rename { from: (None, 0), to: (None, 1) };
    Renameat = "renameat", "renameat", libc::SYS_renameat, Rename { from: (Some(0), 1), to: (Some(2), 3) };
    Renameat2 = "renameat2", "renameat2", libc::SYS_renameat2, Rename { from: (Some(0), 1), to: (Some(2), 3) };
    Ftruncate = "ftruncate", "ftruncate", libc::SYS_ftruncate, Truncate;
}

impl Sys {
    /// The call of number `nr` on this architecture, if followed.
    pub fn from_number(nr: i64) -> Option<Sys> {
        Sys::ALL.iter().copied().find(|s| s.number() == nr)
    }

    /// For a copy, the arguments that point at its source's and its destination's
    /// offsets (`NULL`: the descriptor's own position, which the call then moves).
    pub fn copy_offsets(self) -> (Option<usize>, Option<usize>) {
        match self {
            Sys::Sendfile => (Some(2), None),
            Sys::Splice | Sys::CopyFileRange => (Some(1), Some(3)),
            _ => (None, None),
        }
    }

    /// For an open, where its path is: the directory descriptor's argument (if any) and
    /// the path's.
    pub fn open_path(self) -> Option<(Option<usize>, usize)> {
        match self.role() {
            Role::Open { .. } if matches!(self.name(), "openat" | "openat2") => Some((Some(0), 1)),
            Role::Open { .. } => Some((None, 0)),
            _ => None,
        }
    }

    /// The call named `name` (as [`Sys::name`] spells it), if followed.
    pub fn from_name(name: &str) -> Option<Sys> {
        Sys::ALL.iter().copied().find(|s| s.name() == name)
    }

    /// Its position in [`Sys::ALL`]: a small number the eBPF program uses as a key.
    pub fn index(self) -> usize {
        Sys::ALL.iter().position(|&s| s == self).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_names_are_unique() {
        for (i, a) in Sys::ALL.iter().enumerate() {
            for b in &Sys::ALL[i + 1..] {
                assert_ne!(a.number(), b.number(), "{a:?} {b:?}");
                assert_ne!(a.name(), b.name());
            }
            assert_eq!(Sys::from_number(a.number()), Some(*a));
            assert_eq!(Sys::ALL[a.index()], *a);
        }
    }
}
