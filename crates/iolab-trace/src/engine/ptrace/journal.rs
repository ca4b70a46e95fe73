//! The journal `iolab crash` replays: every change a traced command makes under one
//! folder, in order, with the bytes it wrote, every sync, and every write to its standard
//! output (one JSON line per [`iolab_crash::Entry`]).
//!
//! Each entry is written at the call's exit stop, while the task is stopped, so what the
//! journal reads then is what the call left:
//! - **written bytes** are read back from the file (`/proc/TID/fd/N`) at the offset the
//!   call wrote (its argument, or the descriptor's offset after the call less the bytes
//!   written), so every writing call (`write`, `pwritev2`, `copy_file_range`, …) is
//!   recorded the same way;
//! - **inodes** are `stat`ed: the file's, and the folder's of a name that changed. A file
//!   or folder the command makes gets an identity of its own in the journal, since its
//!   inode number may be one a deleted file had;
//! - a file made with no name (`O_TMPFILE`) is [`iolab_crash::Op::Tmpfile`], and its
//!   `linkat` (through `/proc/self/fd/N` or `AT_EMPTY_PATH`) is [`iolab_crash::Op::Name`];
//! - contiguous writes of zeros to one file, one after the other, are one entry (a
//!   preallocation of 64 MiB in 1 MiB writes is one change, not 64).
//!
//! Calls whose effect cannot be replayed are refused by name ([`iolab_crash::Op::Refused`]):
//! a shared writable map of a file in the folder, io_uring, a symbolic link made there, a
//! `fallocate` that punches or shifts. Names beyond the folder are ignored; a rename into it
//! from outside is recorded as the file made with its bytes.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use iolab_crash::{Entry, Op};

use super::call_stacks::CallStacks;
use super::witness::{Before, read_memory, read_string, resolve};
use crate::procfs::normalize;
use crate::syscalls::{Role, Sys};

/// The first identity the journal gives a file or folder the command made (far above the
/// inode numbers file systems give).
const FIRST_MADE: u64 = 1 << 60;

/// The name-changing calls only `iolab crash` follows (`iolab trace` does not stop on them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Extra {
    Unlink,
    Unlinkat,
    Rmdir,
    Mkdir,
    Mkdirat,
    Link,
    Linkat,
    Symlink,
    Symlinkat,
    TruncatePath,
    Fallocate,
    IoUringSetup,
}

impl Extra {
    #[cfg(target_arch = "x86_64")]
    const ALL: [(Extra, i64); 12] = [
        (Extra::Unlink, libc::SYS_unlink),
        (Extra::Unlinkat, libc::SYS_unlinkat),
        (Extra::Rmdir, libc::SYS_rmdir),
        (Extra::Mkdir, libc::SYS_mkdir),
        (Extra::Mkdirat, libc::SYS_mkdirat),
        (Extra::Link, libc::SYS_link),
        (Extra::Linkat, libc::SYS_linkat),
        (Extra::Symlink, libc::SYS_symlink),
        (Extra::Symlinkat, libc::SYS_symlinkat),
        (Extra::TruncatePath, libc::SYS_truncate),
        (Extra::Fallocate, libc::SYS_fallocate),
        (Extra::IoUringSetup, libc::SYS_io_uring_setup),
    ];
    #[cfg(not(target_arch = "x86_64"))]
    const ALL: [(Extra, i64); 7] = [
        (Extra::Unlinkat, libc::SYS_unlinkat),
        (Extra::Mkdirat, libc::SYS_mkdirat),
        (Extra::Linkat, libc::SYS_linkat),
        (Extra::Symlinkat, libc::SYS_symlinkat),
        (Extra::TruncatePath, libc::SYS_truncate),
        (Extra::Fallocate, libc::SYS_fallocate),
        (Extra::IoUringSetup, libc::SYS_io_uring_setup),
    ];

    fn of(nr: i64) -> Option<Extra> {
        Extra::ALL.iter().find(|(_, n)| *n == nr).map(|(e, _)| *e)
    }

    fn name(self) -> &'static str {
        match self {
            Extra::Unlink => "unlink",
            Extra::Unlinkat => "unlinkat",
            Extra::Rmdir => "rmdir",
            Extra::Mkdir => "mkdir",
            Extra::Mkdirat => "mkdirat",
            Extra::Link => "link",
            Extra::Linkat => "linkat",
            Extra::Symlink => "symlink",
            Extra::Symlinkat => "symlinkat",
            Extra::TruncatePath => "truncate",
            Extra::Fallocate => "fallocate",
            Extra::IoUringSetup => "io_uring_setup",
        }
    }
}

/// The system calls a journaling trace stops on besides `iolab trace`'s.
pub fn extra_calls() -> Vec<i64> {
    let mut calls: Vec<i64> = Extra::ALL.iter().map(|(_, n)| *n).collect();
    calls.sort_unstable();
    calls.dedup();
    calls
}

/// Whether `nr` is one of [`extra_calls`].
pub fn is_extra(nr: i64) -> bool {
    Extra::of(nr).is_some()
}

/// Writes the journal of one folder.
pub struct Journal {
    dir: PathBuf,
    out: std::io::BufWriter<std::fs::File>,
    /// Refusals already written (each once).
    refused: HashSet<String>,
    /// The command's standard output (device, inode): writes to it are acknowledgements.
    stdout: Option<(u64, u64)>,
    /// Its standard output is a character device (a terminal, `/dev/null`), which others
    /// open too (a child's `2>/dev/null`): only writes to descriptor 1 acknowledge.
    stdout_shared: bool,
    /// Patterns of the files whose bytes need not survive a crash.
    volatile: Vec<String>,
    /// Files made with no name (`O_TMPFILE`) in the folder, not linked yet.
    unnamed: HashSet<u64>,
    /// The identity each inode number has in the journal now: a file or folder the
    /// command makes gets a new one ([`FIRST_MADE`] and up), because its number may be one
    /// an earlier file had before it was deleted.
    lives: HashMap<u64, u64>,
    /// The stacks of the calls.
    stacks: CallStacks,
    /// The stack of the call being recorded.
    stack: Vec<String>,
    /// The thread that made it.
    tid: i32,
    /// A write of zeros not written out yet: the next contiguous one joins it (a
    /// preallocation's many writes are one change).
    zeros: Option<Entry>,
}

/// A finished call, as the journal needs it.
pub struct Finished<'a> {
    /// The task.
    pub tid: i32,
    /// Its process.
    pub tgid: i32,
    /// The call's number.
    pub nr: i64,
    /// Its arguments.
    pub args: &'a [u64; 6],
    /// Its result (`-errno` on failure).
    pub ret: i64,
    /// What its entry saw.
    pub before: &'a Before,
    /// For a copy, where it wrote when its offset was a pointer (the value at the entry).
    pub copy_to_at: Option<u64>,
    /// The task's instruction and stack pointers at the exit, for the call's stack.
    pub regs: Option<(u64, u64)>,
}

impl<'a> Finished<'a> {
    /// A call that needs nothing its entry saw.
    pub fn plain(tid: i32, tgid: i32, nr: i64, args: &'a [u64; 6], ret: i64) -> Finished<'a> {
        const NOTHING: &Before = &Before {
            existed: None,
            creat: false,
            trunc: false,
            size: None,
        };
        Finished {
            tid,
            tgid,
            nr,
            args,
            ret,
            before: NOTHING,
            copy_to_at: None,
            regs: None,
        }
    }
}

impl Journal {
    /// A journal of the changes under `dir` (an absolute, resolved path), written to `out`.
    pub fn new(dir: PathBuf, out: std::fs::File, volatile: Vec<String>) -> Journal {
        Journal {
            dir,
            out: std::io::BufWriter::new(out),
            refused: HashSet::new(),
            stdout: None,
            stdout_shared: false,
            volatile,
            unnamed: HashSet::new(),
            lives: HashMap::new(),
            stacks: CallStacks::default(),
            stack: Vec::new(),
            tid: 0,
            zeros: None,
        }
    }

    /// The journal file's descriptor (kept open across the tracer's clean-up).
    pub fn raw_fd(&self) -> i32 {
        use std::os::fd::AsRawFd;
        self.out.get_ref().as_raw_fd()
    }

    /// Whether the file at `rel` in the folder is volatile (its bytes need not survive).
    fn is_volatile(&self, rel: &str) -> bool {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        self.volatile
            .iter()
            .any(|p| match (p.strip_prefix('*'), p.strip_suffix('*')) {
                (Some(end), _) => name.ends_with(end),
                (_, Some(start)) => name.starts_with(start),
                _ => name == p,
            })
    }

    /// Takes process `pid`'s descriptor 1 as the command's standard output.
    pub fn stdout_of(&mut self, pid: i32) {
        self.stdout = Journal::identity(pid, 1);
        self.stdout_shared = std::fs::metadata(format!("/proc/{pid}/fd/1"))
            .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_char_device(&m.file_type()));
    }

    /// The device and inode descriptor `fd` of `tid` refers to.
    fn identity(tid: i32, fd: i32) -> Option<(u64, u64)> {
        let meta = std::fs::metadata(format!("/proc/{tid}/fd/{fd}")).ok()?;
        Some((meta.dev(), meta.ino()))
    }

    /// Flushes what is written so far.
    pub fn flush(&mut self) -> std::io::Result<()> {
        if let Some(zeros) = self.zeros.take() {
            self.write_line(&zeros);
        }
        self.out.flush()
    }

    /// `path` relative to the folder, if it is in it (the folder itself is `""`).
    fn relative(&self, path: &Path) -> Option<String> {
        let rest = normalize(path).strip_prefix(&self.dir).ok()?.to_path_buf();
        Some(rest.to_string_lossy().into_owned())
    }

    /// The journal's identity of inode number `real` now.
    fn id(&self, real: u64) -> u64 {
        self.lives.get(&real).copied().unwrap_or(real)
    }

    /// A new identity for inode number `real`, which the command just made.
    fn made(&mut self, real: u64) -> u64 {
        let id = FIRST_MADE + self.lives.len() as u64;
        self.lives.insert(real, id);
        id
    }

    /// `op` with its inode numbers as the journal's identities.
    fn identified(&mut self, mut op: Op) -> Op {
        match &mut op {
            Op::Create { ino, parent, .. } | Op::Mkdir { ino, parent, .. } => {
                *parent = self.id(*parent);
                *ino = self.made(*ino);
            }
            Op::Tmpfile { ino } => *ino = self.made(*ino),
            Op::Name { ino, parent, .. } => {
                *ino = self.id(*ino);
                *parent = self.id(*parent);
            }
            Op::Write { ino, .. } | Op::Truncate { ino, .. } | Op::Sync { ino, .. } => {
                *ino = self.id(*ino);
            }
            Op::Rename {
                from_parent,
                to_parent,
                ..
            } => {
                *from_parent = self.id(*from_parent);
                *to_parent = self.id(*to_parent);
            }
            Op::Link { parent, .. } | Op::Unlink { parent, .. } | Op::Rmdir { parent, .. } => {
                *parent = self.id(*parent);
            }
            Op::SyncAll | Op::Stdout { .. } | Op::Refused { .. } => {}
        }
        op
    }

    fn emit(&mut self, op: Op, call: &str, pid: i32, synced: bool) {
        let op = self.identified(op);
        let entry = Entry {
            op,
            call: call.to_string(),
            pid: pid as u32,
            tid: self.tid as u32,
            synced,
            stack: self.stack.clone(),
        };
        let zero = zeros_joining(&entry);
        if let Some(mut run) = self.zeros.take() {
            if zero && joins(&mut run, &entry) {
                self.zeros = Some(run);
                return;
            }
            self.write_line(&run);
        }
        if zero {
            self.zeros = Some(entry);
        } else {
            self.write_line(&entry);
        }
    }

    fn write_line(&mut self, entry: &Entry) {
        if let Ok(line) = serde_json::to_string(entry) {
            let _ = writeln!(self.out, "{line}");
        }
    }

    fn refuse(&mut self, why: String, call: &str, pid: i32) {
        if self.refused.insert(why.clone()) {
            self.emit(Op::Refused { why }, call, pid, false);
        }
    }

    /// Records what a finished call did to the folder, if anything.
    pub fn finished(&mut self, f: &Finished<'_>) {
        if f.ret < 0 {
            return;
        }
        self.tid = f.tid;
        self.stack = match f.regs {
            Some(regs) => self.stacks.of(f.tid, f.tgid, regs),
            None => Vec::new(),
        };
        match (Sys::from_number(f.nr), Extra::of(f.nr)) {
            (Some(sys), _) => self.followed(sys, f),
            (None, Some(extra)) => self.extra(extra, f),
            (None, None) => {}
        }
    }

    fn fd_path(tid: i32, fd: i32) -> Option<PathBuf> {
        std::fs::read_link(format!("/proc/{tid}/fd/{fd}")).ok()
    }

    fn ino_of(path: &Path) -> Option<u64> {
        std::fs::symlink_metadata(path).ok().map(|m| m.ino())
    }

    fn parent_ino(path: &Path) -> Option<u64> {
        Journal::ino_of(path.parent()?)
    }

    /// A path argument `(dirfd, path)` of `f`, resolved.
    fn path_arg(f: &Finished<'_>, dirfd: Option<usize>, path: usize) -> Option<PathBuf> {
        let text = read_string(f.tid, f.args[path])?;
        Some(resolve(f.tid, dirfd.map(|d| f.args[d] as i32), &text))
    }

    fn followed(&mut self, sys: Sys, f: &Finished<'_>) {
        let (tid, pid, name) = (f.tid, f.tgid, sys.name());
        match sys.role() {
            Role::Open { .. } => {
                let Some(path) = Journal::fd_path(tid, f.ret as i32) else {
                    return;
                };
                let Some(rel) = self.relative(&path) else {
                    return;
                };
                if let Some(ino) = unnamed_file(tid, f.ret as i32, &path) {
                    self.unnamed.insert(ino);
                    return self.emit(Op::Tmpfile { ino }, name, pid, false);
                }
                let Some(ino) = Journal::ino_of(&path) else {
                    return;
                };
                if f.before.creat && f.before.existed.is_none() {
                    self.created(&path, rel, ino, name, pid);
                } else if f.before.trunc && f.before.existed.is_some_and(|s| s > 0) {
                    self.emit(Op::Truncate { ino, size: 0 }, name, pid, false);
                }
            }
            Role::Write { fd, pos } => {
                let fd = f.args[fd] as i32;
                let at = pos.map(|p| f.args[p]);
                self.written(f, fd, at, name);
            }
            Role::Copy { to, .. } => {
                self.written(f, f.args[to] as i32, f.copy_to_at, name);
            }
            Role::Truncate => {
                if let Some((ino, _)) = self.file_of(tid, f.args[0] as i32) {
                    let size = f.args[1];
                    self.emit(Op::Truncate { ino, size }, name, pid, false);
                }
            }
            Role::Sync => match sys {
                Sys::Fsync | Sys::Fdatasync => {
                    let fd = f.args[0] as i32;
                    let path = Journal::fd_path(tid, fd);
                    if path.is_some_and(|p| self.relative(&p).is_some())
                        && let Some((_, ino)) = Journal::identity(tid, fd)
                    {
                        let data_only = sys == Sys::Fdatasync;
                        self.emit(Op::Sync { ino, data_only }, name, pid, false);
                    }
                }
                Sys::Syncfs => self.emit(Op::SyncAll, name, pid, false),
                // sync_file_range flushes no metadata and no disk cache: not durable.
                _ => {}
            },
            Role::SyncAll => self.emit(Op::SyncAll, name, pid, false),
            Role::Msync => {}
            Role::Mmap => {
                let (prot, flags, fd) = (f.args[2] as i32, f.args[3] as i32, f.args[4] as i32);
                let volatile = self
                    .file_of(tid, fd)
                    .and_then(|(_, path)| self.relative(&path))
                    .map(|rel| self.is_volatile(&rel));
                if prot & libc::PROT_WRITE != 0
                    && flags & libc::MAP_SHARED != 0
                    && volatile == Some(false)
                {
                    let rel = Journal::fd_path(tid, fd)
                        .and_then(|p| self.relative(&p))
                        .unwrap_or_default();
                    let why = format!(
                        "{rel}: a shared writable map (mmap) of a file in the folder: its \
                         writes cannot be seen, so they cannot be replayed (--volatile {rel} \
                         if its bytes need not survive a crash)"
                    );
                    self.refuse(why, name, pid);
                }
            }
            Role::RingEnter => self.refuse(
                "io_uring: its writes cannot be seen call by call".into(),
                name,
                pid,
            ),
            Role::Rename { from, to } => self.renamed(f, from, to, name),
            _ => {}
        }
    }

    /// The inode and path of descriptor `fd` of `tid`, when it is a regular file in the
    /// folder.
    fn file_of(&self, tid: i32, fd: i32) -> Option<(u64, PathBuf)> {
        let path = Journal::fd_path(tid, fd)?;
        self.relative(&path)?;
        let meta = std::fs::metadata(format!("/proc/{tid}/fd/{fd}")).ok()?;
        meta.is_file().then(|| (meta.ino(), path))
    }

    /// `f.ret` bytes written through descriptor `fd` (at `at`, or where its offset was).
    fn written(&mut self, f: &Finished<'_>, fd: i32, at: Option<u64>, name: &str) {
        let n = f.ret as u64;
        if n == 0 {
            return;
        }
        let Some((ino, _)) = self.file_of(f.tid, fd) else {
            if self.stdout.is_some()
                && (fd == 1 || !self.stdout_shared)
                && Journal::identity(f.tid, fd) == self.stdout
            {
                let data = match Sys::from_number(f.nr) {
                    Some(Sys::Write) => read_memory(f.tid, f.args[1], n as usize),
                    Some(Sys::Writev) => gather_iovecs(f.tid, f.args[1], f.args[2], n as usize),
                    _ => return,
                };
                self.emit(Op::Stdout { data }, name, f.tgid, false);
            }
            return;
        };
        let (offset, flags) = match fdinfo(f.tid, fd) {
            Some((pos, flags)) => (at.unwrap_or_else(|| pos.saturating_sub(n)), flags),
            None => return,
        };
        let Ok(file) = std::fs::File::open(format!("/proc/{}/fd/{fd}", f.tid)) else {
            return;
        };
        let mut data = vec![0u8; n as usize];
        let Ok(()) = file.read_exact_at(&mut data, offset) else {
            return;
        };
        let synced = flags & libc::O_DSYNC != 0;
        self.emit(Op::Write { ino, offset, data }, name, f.tgid, synced);
    }

    fn renamed(
        &mut self,
        f: &Finished<'_>,
        from: (Option<usize>, usize),
        to: (Option<usize>, usize),
        name: &str,
    ) {
        let (Some(a), Some(b)) = (
            Journal::path_arg(f, from.0, from.1),
            Journal::path_arg(f, to.0, to.1),
        ) else {
            return;
        };
        let pid = f.tgid;
        match (self.relative(&a), self.relative(&b)) {
            (Some(from), Some(to)) => {
                let from_parent = Journal::parent_ino(&a).unwrap_or(0);
                let to_parent = Journal::parent_ino(&b).unwrap_or(0);
                let op = Op::Rename {
                    from,
                    to,
                    from_parent,
                    to_parent,
                };
                self.emit(op, name, pid, false);
            }
            (None, Some(to)) => self.moved_in(&b, to, name, pid),
            (Some(from), None) => {
                let parent = Journal::parent_ino(&a).unwrap_or(0);
                self.emit(Op::Unlink { path: from, parent }, name, pid, false);
            }
            (None, None) => {}
        }
    }

    /// The file `ino` made at `path` (`rel` in the folder).
    fn created(&mut self, path: &Path, rel: String, ino: u64, name: &str, pid: i32) {
        let parent = Journal::parent_ino(path).unwrap_or(0);
        let op = Op::Create {
            path: rel,
            ino,
            parent,
        };
        self.emit(op, name, pid, false);
    }

    /// A file renamed into the folder from outside: made there, with its bytes.
    fn moved_in(&mut self, path: &Path, rel: String, name: &str, pid: i32) {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        if !meta.is_file() {
            let why = format!("{rel}: a folder or link renamed into the folder from outside");
            return self.refuse(why, name, pid);
        }
        let ino = meta.ino();
        self.created(path, rel, ino, name, pid);
        if let Ok(data) = std::fs::read(path) {
            self.emit(
                Op::Write {
                    ino,
                    offset: 0,
                    data,
                },
                name,
                pid,
                false,
            );
        }
    }

    /// `b` made a second name of `a` (`link`, `linkat`).
    fn linked(&mut self, a: &Path, b: &Path, name: &str, pid: i32) {
        let Some(to) = self.relative(b) else {
            return;
        };
        // A file made with no name, linked through its descriptor (its `/proc/self/fd/N`
        // link, or `AT_EMPTY_PATH`).
        if let Some(ino) = Journal::ino_of(b).filter(|i| self.unnamed.remove(i)) {
            let parent = Journal::parent_ino(b).unwrap_or(0);
            let op = Op::Name {
                ino,
                path: to,
                parent,
            };
            return self.emit(op, name, pid, false);
        }
        match self.relative(a) {
            Some(from) => {
                let parent = Journal::parent_ino(b).unwrap_or(0);
                self.emit(Op::Link { from, to, parent }, name, pid, false);
            }
            None => self.moved_in(b, to, name, pid),
        }
    }

    fn extra(&mut self, extra: Extra, f: &Finished<'_>) {
        let name = extra.name();
        let pid = f.tgid;
        // (dirfd, path) of the name the call changes.
        let at = |dirfd: Option<usize>, path: usize| Journal::path_arg(f, dirfd, path);
        match extra {
            Extra::Unlink | Extra::Unlinkat | Extra::Rmdir => {
                let path = match extra {
                    Extra::Unlinkat => at(Some(0), 1),
                    _ => at(None, 0),
                };
                let dir = extra == Extra::Rmdir
                    || (extra == Extra::Unlinkat && f.args[2] as i32 & libc::AT_REMOVEDIR != 0);
                if let Some(path) = path
                    && let Some(rel) = self.relative(&path)
                {
                    let parent = Journal::parent_ino(&path).unwrap_or(0);
                    let op = if dir {
                        Op::Rmdir { path: rel, parent }
                    } else {
                        Op::Unlink { path: rel, parent }
                    };
                    self.emit(op, name, pid, false);
                }
            }
            Extra::Mkdir | Extra::Mkdirat => {
                let path = if extra == Extra::Mkdirat {
                    at(Some(0), 1)
                } else {
                    at(None, 0)
                };
                if let Some(path) = path
                    && let Some(rel) = self.relative(&path)
                    && let Some(ino) = Journal::ino_of(&path)
                {
                    let parent = Journal::parent_ino(&path).unwrap_or(0);
                    self.emit(
                        Op::Mkdir {
                            path: rel,
                            ino,
                            parent,
                        },
                        name,
                        pid,
                        false,
                    );
                }
            }
            Extra::Link | Extra::Linkat => {
                let (a, b) = if extra == Extra::Linkat {
                    (at(Some(0), 1), at(Some(2), 3))
                } else {
                    (at(None, 0), at(None, 1))
                };
                if let (Some(a), Some(b)) = (a, b) {
                    self.linked(&a, &b, name, pid);
                }
            }
            Extra::Symlink | Extra::Symlinkat => {
                let path = if extra == Extra::Symlinkat {
                    at(Some(1), 2)
                } else {
                    at(None, 1)
                };
                if let Some(rel) = path.as_deref().and_then(|p| self.relative(p)) {
                    self.refuse(
                        format!("{rel}: a symbolic link made in the folder"),
                        name,
                        pid,
                    );
                }
            }
            Extra::TruncatePath => {
                if let Some(path) = at(None, 0)
                    && self.relative(&path).is_some()
                    && let Some(ino) = Journal::ino_of(&path)
                {
                    let size = f.args[1];
                    self.emit(Op::Truncate { ino, size }, name, pid, false);
                }
            }
            Extra::Fallocate => {
                let Some((ino, path)) = self.file_of(f.tid, f.args[0] as i32) else {
                    return;
                };
                if f.args[1] as i32 & !libc::FALLOC_FL_KEEP_SIZE != 0 {
                    let rel = self.relative(&path).unwrap_or_default();
                    let why = format!("{rel}: fallocate that punches, zeroes or shifts");
                    return self.refuse(why, name, pid);
                }
                if f.args[1] as i32 & libc::FALLOC_FL_KEEP_SIZE == 0
                    && let Ok(meta) = std::fs::metadata(&path)
                {
                    self.emit(
                        Op::Truncate {
                            ino,
                            size: meta.size(),
                        },
                        name,
                        pid,
                        false,
                    );
                }
            }
            Extra::IoUringSetup => self.refuse(
                "io_uring: its writes cannot be seen call by call".into(),
                name,
                pid,
            ),
        }
    }
}

/// The inode of a file with no name (`O_TMPFILE`) that descriptor `fd` of `tid` opens,
/// whose `/proc` link reads `path`.
fn unnamed_file(tid: i32, fd: i32, path: &Path) -> Option<u64> {
    let meta = std::fs::metadata(format!("/proc/{tid}/fd/{fd}")).ok()?;
    let deleted = path.to_string_lossy().ends_with(" (deleted)");
    (deleted && meta.is_file() && meta.nlink() == 0).then(|| meta.ino())
}

/// Whether `entry` is a write of zeros that a following contiguous one may join.
fn zeros_joining(entry: &Entry) -> bool {
    matches!(&entry.op, Op::Write { data, .. } if !data.is_empty() && data.iter().all(|&b| b == 0))
}

/// Joins the write of zeros `next` to `run` if it continues it (same file, process and
/// sync; starting where `run` ends).
fn joins(run: &mut Entry, next: &Entry) -> bool {
    let (
        Op::Write {
            ino, offset, data, ..
        },
        Op::Write {
            ino: next_ino,
            offset: next_offset,
            data: next_data,
        },
    ) = (&mut run.op, &next.op)
    else {
        return false;
    };
    if ino != next_ino
        || *offset + data.len() as u64 != *next_offset
        || run.pid != next.pid
        || run.synced != next.synced
        || run.call != next.call
    {
        return false;
    }
    data.resize(data.len() + next_data.len(), 0);
    true
}

/// The position and the status flags of descriptor `fd` of `tid`, from `fdinfo`.
fn fdinfo(tid: i32, fd: i32) -> Option<(u64, i32)> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/fdinfo/{fd}")).ok()?;
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
    };
    let pos = field("pos:")?.parse().ok()?;
    let flags = i32::from_str_radix(&field("flags:")?, 8).ok()?;
    Some((pos, flags))
}

/// The first `n` bytes that `iovcnt` iovecs at `iov` in task `tid` describe.
fn gather_iovecs(tid: i32, iov: u64, iovcnt: u64, n: usize) -> Vec<u8> {
    let raw = read_memory(tid, iov, 16 * iovcnt.min(1024) as usize);
    let mut out = Vec::with_capacity(n);
    for pair in raw.chunks_exact(16) {
        if out.len() >= n {
            break;
        }
        let base = u64::from_ne_bytes(pair[..8].try_into().expect("8 bytes"));
        let len = u64::from_ne_bytes(pair[8..].try_into().expect("8 bytes")) as usize;
        let take = len.min(n - out.len());
        out.extend(read_memory(tid, base, take));
    }
    out
}
