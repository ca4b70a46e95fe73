//! What the ptrace backend keeps beyond the sums ([`crate::model::Seen`]): the processes
//! (from `/proc` at their first stop and after each `execve`), which process made each
//! call, the changes to files in order, the paths of lookups and failed opens (read from
//! the tracee's memory at the call's exit, where the tracee left them), and sampled stacks
//! (the words at the stack pointer at the call's exit).

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::HashMap;
use crate::model::events::{Change, MAX_STACKS, Process, RawStack, STACK_WORDS, sampled};
use crate::model::{Kind, Target, TargetKey, Trace};
use crate::procfs::normalize;
use crate::syscalls::{Role, Sys};

/// The longest path read from a tracee.
const PATH_MAX: usize = 4096;

/// What a call's entry saw that its exit needs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Before {
    /// For an open with `O_CREAT` or `O_TRUNC`: whether its path named a file, and its
    /// size.
    pub existed: Option<u64>,
    /// For an open: whether it asked for `O_CREAT`, `O_TRUNC`.
    pub creat: bool,
    /// See `creat`.
    pub trunc: bool,
    /// For `ftruncate`: the file's size before.
    pub size: Option<u64>,
}

/// Reads `len` bytes at `address` in task `tid`; fewer where the memory ends.
pub fn read_memory(tid: i32, address: u64, len: usize) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    let n = read_into(tid, address, &mut buf);
    buf.truncate(n);
    buf
}

/// Reads the words at `address` in task `tid` into `buf`; returns how many it could
/// (fewer where the memory ends).
pub(super) fn read_words(tid: i32, address: u64, buf: &mut [u64]) -> usize {
    let len = std::mem::size_of_val(buf);
    // SAFETY: the bytes of `buf` are `len` initialised bytes of one allocation, borrowed
    // mutably for the view's life; every byte pattern is a valid `u64`.
    let bytes = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<u8>(), len) };
    read_into(tid, address, bytes) / 8
}

/// Reads `buf.len()` bytes at `address` in task `tid` into `buf`; returns how many it
/// could (fewer where the memory ends).
fn read_into(tid: i32, address: u64, buf: &mut [u8]) -> usize {
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: address as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: the kernel writes at most `buf.len()` bytes into `buf` through `local`;
    // `remote` names the other process's memory, which the kernel checks.
    let n = unsafe { libc::process_vm_readv(tid, &local, 1, &remote, 1, 0) };
    n.max(0) as usize
}

/// The NUL-terminated string at `address` in task `tid`, read a page at a time (a read
/// across the end of a mapping would fail whole).
pub fn read_string(tid: i32, address: u64) -> Option<String> {
    if address == 0 {
        return None;
    }
    let mut out = Vec::new();
    let mut at = address;
    while out.len() < PATH_MAX {
        let chunk = 4096 - (at % 4096) as usize;
        let bytes = read_memory(tid, at, chunk);
        if bytes.is_empty() {
            return None;
        }
        if let Some(end) = memchr::memchr(0, &bytes) {
            out.extend_from_slice(&bytes[..end]);
            return Some(String::from_utf8_lossy(&out).into_owned());
        }
        out.extend_from_slice(&bytes);
        at += bytes.len() as u64;
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// The absolute path that `path`, relative to the directory descriptor `dirfd` (or the
/// working directory), names in task `tid`.
pub(super) fn resolve(tid: i32, dirfd: Option<i32>, path: &str) -> PathBuf {
    if path.starts_with('/') {
        return normalize(Path::new(path));
    }
    let base = match dirfd {
        Some(fd) if fd != libc::AT_FDCWD => format!("/proc/{tid}/fd/{fd}"),
        _ => format!("/proc/{tid}/cwd"),
    };
    let base = std::fs::read_link(base).unwrap_or_default();
    normalize(&base.join(path))
}

/// The path argument `(dirfd, path)` of a call, resolved.
fn path_arg(tid: i32, args: &[u64; 6], (dirfd, path): (Option<usize>, usize)) -> Option<PathBuf> {
    let text = read_string(tid, args[path])?;
    Some(resolve(tid, dirfd.map(|d| args[d] as i32), &text))
}

/// A lookup's path as a string to count: absolute, relative ones resolved against the
/// directory they start from (the same name in many folders is many paths).
fn absolute(call: &Call<'_>, dirfd: Option<usize>, text: &str) -> String {
    resolve(call.tid, dirfd.map(|d| call.args[d] as i32), text)
        .to_string_lossy()
        .into_owned()
}

/// The process `pid` as `/proc` shows it now.
fn process_now(pid: i32, parent: Option<u32>) -> Process {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe"))
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let args = std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default();
    let code = code_range(pid);
    Process {
        pid: pid as u32,
        parent,
        exe,
        args,
        code,
    }
}

/// Where process `pid`'s executable's code is: fields 26 and 27 of /proc/PID/stat (after
/// the command name in parentheses, which may hold spaces), startcode and endcode.
pub(super) fn code_range(pid: i32) -> (u64, u64) {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let rest = &s[s.rfind(')')? + 2..];
            let f: Vec<&str> = rest.split(' ').collect();
            Some((f.get(23)?.parse().ok()?, f.get(24)?.parse().ok()?))
        })
        .unwrap_or((0, 0))
}

/// The parent of process `pid` (`PPid` of its status).
fn parent_of(pid: i32) -> Option<u32> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("PPid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The state the witness keeps between calls.
#[derive(Debug, Default)]
pub struct Witness {
    /// Files written since they were last synced.
    dirty: HashSet<TargetKey>,
    /// Calls per (process, target, call), for the stacks' sampling: the first calls of
    /// each kind (a map's `msync` after its `open` and `mmap`).
    calls: HashMap<(i32, usize, Sys), u64>,
    /// The words of the last stack sampled: one buffer for all samples.
    stack: Vec<u64>,
}

/// One finished call, as the witness needs it.
pub struct Call<'a> {
    /// The task and its process.
    pub tid: i32,
    /// See `tid`.
    pub tgid: i32,
    /// The call.
    pub sys: Sys,
    /// Its arguments.
    pub args: &'a [u64; 6],
    /// What its entry saw.
    pub before: Before,
    /// Its result.
    pub ret: i64,
    /// Its time.
    pub ns: u64,
    /// When it started, since the command started.
    pub at: u64,
    /// Its target, when it has one (a copy's: its source).
    pub target: Option<usize>,
    /// The target it wrote, and the flags of the descriptor it wrote through (`O_DSYNC`
    /// writes sync).
    pub written: Option<(usize, i32)>,
    /// The instruction and stack pointers at its exit.
    pub regs: Option<(u64, u64)>,
}

impl Witness {
    /// Notes a process seen for the first time, or one that executed a new program.
    pub fn process(&self, trace: &mut Trace, pid: i32, exec: bool) {
        let seen = &mut trace.seen.processes;
        if exec || !seen.contains_key(&(pid as u32)) {
            let parent = seen
                .get(&(pid as u32))
                .and_then(|p| p.parent)
                .or_else(|| parent_of(pid).filter(|pp| seen.contains_key(pp)));
            seen.insert(pid as u32, process_now(pid, parent));
        }
    }

    /// What the entry of `sys` must note for its exit.
    pub fn before(tid: i32, sys: Sys, args: &[u64; 6]) -> Before {
        let mut b = Before::default();
        match sys.role() {
            Role::Open { flags, creat } => {
                let asked = if creat {
                    libc::O_CREAT | libc::O_TRUNC
                } else {
                    flags.map_or(0, |i| args[i] as i32)
                };
                b.creat = asked & libc::O_CREAT != 0;
                b.trunc = asked & libc::O_TRUNC != 0;
                // O_CREAT | O_EXCL succeeds only where no file was: no need to look.
                let exclusive = b.creat && asked & libc::O_EXCL != 0;
                if (b.creat || b.trunc)
                    && !exclusive
                    && let Some(at) = sys.open_path()
                    && let Some(path) = path_arg(tid, args, at)
                {
                    b.existed = std::fs::metadata(path).ok().map(|m| m.size());
                }
            }
            Role::Truncate => {
                b.size = std::fs::metadata(format!("/proc/{tid}/fd/{}", args[0] as i32))
                    .ok()
                    .map(|m| m.size());
            }
            _ => {}
        }
        b
    }

    /// Folds what `call` shows beyond the sums into `trace`.
    pub fn after(&mut self, trace: &mut Trace, call: &Call<'_>) {
        let failed = call.ret < 0;
        let pid = call.tgid as u32;
        match call.sys.role() {
            Role::Lookup { dirfd, path } => {
                let text = read_string(call.tid, call.args[path]);
                // An empty path with AT_EMPTY_PATH is an fstat of the descriptor.
                if text.as_deref() != Some("") {
                    let full = text.map(|t| absolute(call, dirfd, &t));
                    trace.seen.lookups.add(full.as_deref(), call.ns, call.ret);
                }
            }
            Role::Open { .. } if failed => {
                let (dirfd, path) = call.sys.open_path().unwrap_or((None, 0));
                let text =
                    read_string(call.tid, call.args[path]).map(|t| absolute(call, dirfd, &t));
                trace
                    .seen
                    .failed_opens
                    .add(text.as_deref(), call.ns, call.ret);
            }
            Role::SyncAll if !failed => {
                trace
                    .seen
                    .push(call.at, pid, Change::SyncedAll { device: None });
            }
            Role::Rename { from, to } if !failed => {
                if let (Some(a), Some(b)) = (
                    path_arg(call.tid, call.args, from),
                    path_arg(call.tid, call.args, to),
                ) {
                    let change = Change::Renamed {
                        from: a.to_string_lossy().into_owned(),
                        to: b.to_string_lossy().into_owned(),
                    };
                    trace.seen.push(call.at, pid, change);
                }
            }
            _ => {}
        }
        let Some(i) = call.target else {
            return;
        };
        let moved = match call.sys.role() {
            Role::Read { .. } | Role::Write { .. } | Role::Copy { .. } => call.ret.max(0) as u64,
            _ => 0,
        };
        trace.targets[i]
            .by_process
            .entry(pid)
            .or_default()
            .add(moved, call.ns);
        if !failed {
            self.change(trace, call, i);
            if let Some((w, flags)) = call.written {
                self.written(trace, call, w, flags);
            }
        }
        let n = self.calls.entry((call.tgid, i, call.sys)).or_default();
        let take = sampled(*n);
        *n += 1;
        if take
            && trace.seen.stacks.len() < MAX_STACKS
            && let Some((ip, sp)) = call.regs
        {
            // As much of the stack as is mapped above the stack pointer (a read across
            // the end of the mapping fails whole), into a buffer kept for the next sample.
            self.stack.resize(STACK_WORDS, 0);
            let n = [STACK_WORDS, STACK_WORDS / 4, STACK_WORDS / 32]
                .into_iter()
                .map(|n| read_words(call.tid, sp, &mut self.stack[..n]))
                .find(|&n| n > 0)
                .unwrap_or(0);
            // Only the words in the executable's code can be frames (`stacks` ignores the
            // others): 8 KiB of words a sample would be 20 MB of trace to hand over for a
            // command of 3 000 files.
            let code = trace.seen.process(pid).map_or((0, 0), |p| p.code);
            let words = (self.stack[..n].iter().copied())
                .filter(|w| (code.0..code.1).contains(w))
                .collect();
            let t = &trace.targets[i];
            trace.seen.stacks.push(RawStack {
                pid,
                target: t.key.unwrap_or_default(),
                call: call.sys.name().to_string(),
                ip,
                words,
            });
        }
    }

    /// A write of `call.ret` bytes to target `i` through a descriptor with `flags`: the file
    /// is dirty until its next sync (a write through `O_SYNC`/`O_DSYNC` syncs itself).
    fn written(&mut self, trace: &mut Trace, call: &Call<'_>, i: usize, flags: i32) {
        let t = &trace.targets[i];
        if let Some(key) = t.key
            && t.kind == Some(Kind::File)
            && call.ret > 0
            && flags & libc::O_DSYNC == 0
            && self.dirty.insert(key)
        {
            trace
                .seen
                .push(call.at, call.tgid as u32, Change::Dirtied { file: key });
        }
    }

    /// The change a successful call (not a write) on target `i` made, if any.
    fn change(&mut self, trace: &mut Trace, call: &Call<'_>, i: usize) {
        let t: &Target = &trace.targets[i];
        let Some(key) = t.key else {
            return;
        };
        let file = t.kind == Some(Kind::File);
        let change = match call.sys.role() {
            Role::Sync if call.sys == Sys::Syncfs => {
                self.dirty.remove(&key);
                Some(Change::SyncedAll {
                    device: Some((key.major, key.minor)),
                })
            }
            // Every sync is a change, as under eBPF (a file that looks clean may have had its
            // size cut since its last sync).
            Role::Sync | Role::Msync => {
                self.dirty.remove(&key);
                matches!(t.kind, Some(Kind::File | Kind::Directory))
                    .then_some(Change::Synced { file: key })
            }
            Role::Open { .. } if file => {
                let b = call.before;
                match b.existed {
                    None if b.creat => Some(Change::Created { file: key }),
                    // An existing file truncated, as under eBPF (which cannot see its size
                    // before).
                    Some(_) if b.trunc => Some(Change::Truncated { file: key }),
                    _ => None,
                }
            }
            Role::Truncate if file => call
                .before
                .size
                .filter(|&s| call.args[1] < s)
                .map(|_| Change::Truncated { file: key }),
            _ => None,
        };
        if let Some(c) = change {
            trace.seen.push(call.at, call.tgid as u32, c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_strings_and_processes_of_this_process() {
        // SAFETY: getpid cannot fail.
        let pid = unsafe { libc::getpid() };
        let text = b"/tmp/some path\0rest";
        assert_eq!(
            read_string(pid, text.as_ptr() as u64).as_deref(),
            Some("/tmp/some path")
        );
        assert_eq!(read_string(pid, 0), None);
        let p = process_now(pid, None);
        assert!(p.exe.starts_with('/'), "{p:?}");
        assert!(!p.args.is_empty());
        assert!(p.code.0 > 0 && p.code.1 > p.code.0, "{p:?}");
        let here = std::env::current_dir().unwrap();
        assert_eq!(resolve(pid, None, "x/../y"), normalize(&here.join("y")));
    }
}
