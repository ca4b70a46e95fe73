//! What `/proc` says about a task's descriptors: the target's identity, kind, path, size,
//! open flags and offset; a task's process; and device names under `/dev`.

use std::collections::HashMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use crate::model::{Kind, TargetKey};

/// What one descriptor refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FdFacts {
    /// The target's identity.
    pub key: TargetKey,
    /// Its kind.
    pub kind: Kind,
    /// Its path (`/proc/PID/fd/N`'s link: a path, `pipe:[ino]`, `socket:[ino]`, …).
    pub path: String,
    /// Its size (regular files).
    pub size: u64,
    /// The descriptor's status flags (`O_APPEND`, `O_DIRECT`, `O_DSYNC`, …).
    pub flags: i32,
    /// The descriptor's offset.
    pub pos: u64,
    /// When the inode was made (`statx`'s birth time, where the file system keeps one):
    /// an inode number freed and given to a new file during the run names another file.
    pub born: Option<std::time::SystemTime>,
}

/// The facts of descriptor `fd` of task `tid`, or `None` when it is not open (or the task
/// is gone).
pub fn fd_facts(tid: i32, fd: i32) -> Option<FdFacts> {
    fd_facts_with(tid, fd, None)
}

/// The facts of descriptor `fd` of task `tid` that an open just returned, asked with
/// `asked` (its flags argument): its offset is 0 and its status flags are the ones asked
/// (less those only the open reads), so `fdinfo` is not read — two system calls a new
/// descriptor instead of six. An `O_PATH` open keeps few of the flags asked: `fdinfo` says.
pub fn opened_fd_facts(tid: i32, fd: i32, asked: i32) -> Option<FdFacts> {
    if asked & libc::O_PATH != 0 {
        return fd_facts(tid, fd);
    }
    let flags = asked & !(libc::O_CREAT | libc::O_EXCL | libc::O_NOCTTY | libc::O_TRUNC);
    fd_facts_with(tid, fd, Some((flags, 0)))
}

/// [`fd_facts`], with the descriptor's (flags, offset) when they are known already.
fn fd_facts_with(tid: i32, fd: i32, status: Option<(i32, u64)>) -> Option<FdFacts> {
    if fd < 0 {
        return None;
    }
    let link = format!("/proc/{tid}/fd/{fd}");
    let path = std::fs::read_link(&link).ok()?;
    let meta = std::fs::metadata(&link).ok()?;
    let (flags, pos) = status.or_else(|| fdinfo(tid, fd)).unwrap_or((0, 0));
    let rdev = meta.rdev();
    let kind = Kind::from_mode(meta.mode(), libc::major(rdev));
    Some(FdFacts {
        key: TargetKey::from_stat(meta.dev(), meta.ino())
            .with_life(TargetKey::life_from_birth(meta.created().ok())),
        kind,
        path: path.to_string_lossy().into_owned(),
        size: if kind == Kind::File { meta.size() } else { 0 },
        flags,
        pos,
        born: meta.created().ok(),
    })
}

/// The (flags, pos) of `/proc/TID/fdinfo/FD`.
fn fdinfo(tid: i32, fd: i32) -> Option<(i32, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/fdinfo/{fd}")).ok()?;
    let mut flags = 0;
    let mut pos = 0;
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("pos:") {
            pos = v.trim().parse().unwrap_or(0);
        } else if let Some(v) = line.strip_prefix("flags:") {
            flags = i32::from_str_radix(v.trim(), 8).unwrap_or(0);
        }
    }
    Some((flags, pos))
}

/// `path` without `.` and with each `..` taken back (as the name reads, symbolic links
/// aside).
pub fn normalize(path: &Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The process (thread group) of task `tid`.
pub fn tgid_of(tid: i32) -> Option<i32> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The facts of this process's own open descriptors 0..=`max`: what the command inherits
/// (the shell's redirections), named before it starts.
pub fn own_fds(max: i32) -> Vec<FdFacts> {
    // SAFETY: getpid cannot fail.
    let pid = unsafe { libc::getpid() };
    (0..=max).filter_map(|fd| fd_facts(pid, fd)).collect()
}

/// The path under `/dev` of the character or block device `major:minor` (`/dev/null`,
/// `/dev/pts/3`), looked up once per device.
pub fn device_path(major: u32, minor: u32) -> Option<String> {
    type Names = HashMap<(u32, u32), Option<String>>;
    static CACHE: OnceLock<Mutex<Names>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(found) = cache.lock().ok()?.get(&(major, minor)) {
        return found.clone();
    }
    let found = if (136..=143).contains(&major) {
        // Pseudo-terminals: /dev/pts/N, N counted across the majors.
        Some(format!("/dev/pts/{}", (major - 136) * 1_048_576 + minor))
    } else {
        find_device(Path::new("/dev"), major, minor, 2)
    };
    cache.lock().ok()?.insert((major, minor), found.clone());
    found
}

fn find_device(dir: &Path, major: u32, minor: u32, depth: u32) -> Option<String> {
    let entries = std::fs::read_dir(dir).ok()?;
    let mut subdirs = Vec::new();
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_char_device() || kind.is_block_device() {
            if let Ok(meta) = entry.metadata()
                && libc::major(meta.rdev()) == major
                && libc::minor(meta.rdev()) == minor
            {
                return Some(entry.path().to_string_lossy().into_owned());
            }
        } else if kind.is_dir() && depth > 0 {
            subdirs.push(entry.path());
        }
    }
    subdirs
        .iter()
        .find_map(|d| find_device(d, major, minor, depth - 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn names_this_process_descriptors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"hello").unwrap();
        let file = std::fs::File::open(&path).unwrap();
        // SAFETY: getpid cannot fail.
        let pid = unsafe { libc::getpid() };
        let facts = fd_facts(pid, file.as_raw_fd()).unwrap();
        assert_eq!(facts.kind, Kind::File);
        assert_eq!(facts.size, 5);
        assert_eq!(
            Path::new(&facts.path),
            path.canonicalize().unwrap().as_path()
        );
        assert_eq!(tgid_of(pid), Some(pid));
        assert!(fd_facts(pid, 100_000).is_none());
    }

    #[test]
    fn an_open_descriptor_has_the_flags_it_asked_for() {
        use std::os::unix::fs::OpenOptionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        // SAFETY: getpid cannot fail.
        let pid = unsafe { libc::getpid() };
        // The flags iolab reads (model::OpenFlags, the recorder): as fdinfo has them.
        let read = libc::O_APPEND | libc::O_DSYNC | libc::O_SYNC | libc::O_DIRECT;
        for custom in [0, libc::O_APPEND, libc::O_DSYNC, libc::O_SYNC, libc::O_EXCL] {
            let _ = std::fs::remove_file(&path);
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(custom & libc::O_APPEND == 0)
                .append(custom & libc::O_APPEND != 0)
                .custom_flags(custom)
                .open(&path)
                .unwrap();
            let fd = file.as_raw_fd();
            let asked = libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC | custom;
            let known = opened_fd_facts(pid, fd, asked).unwrap();
            let read_back = fd_facts(pid, fd).unwrap();
            assert_eq!(known.flags & read, read_back.flags & read, "{custom:o}");
            assert_eq!((known.pos, &known.path), (read_back.pos, &read_back.path));
        }
    }

    #[test]
    fn paths_are_taken_back_as_they_read() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), Path::new("/a/c"));
        assert_eq!(normalize(Path::new("/../a")), Path::new("/a"));
    }

    #[test]
    fn finds_dev_null() {
        assert_eq!(device_path(1, 3).as_deref(), Some("/dev/null"));
    }
}
