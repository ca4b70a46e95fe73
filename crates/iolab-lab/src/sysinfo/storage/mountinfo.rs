//! `/proc/self/mountinfo`: the mount entries, their escaped fields, and the mount that
//! holds a path (the longest mount point containing it, the topmost where several are
//! stacked).

use std::ffi::OsString;
use std::fs;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

/// One parsed line of `/proc/self/mountinfo` (see proc_pid_mountinfo(5)).
#[derive(Debug)]
pub(super) struct MountEntry {
    pub(super) dev: (u32, u32),
    pub(super) mount_point: PathBuf,
    pub(super) options: String,
    pub(super) fs_type: String,
    pub(super) source: String,
    pub(super) super_options: String,
}

pub(super) fn read_mountinfo() -> Vec<MountEntry> {
    fs::read_to_string("/proc/self/mountinfo")
        .map(|text| text.lines().filter_map(parse_mountinfo_line).collect())
        .unwrap_or_default()
}

/// `36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue`.
pub(super) fn parse_mountinfo_line(line: &str) -> Option<MountEntry> {
    let (left, right) = line.split_once(" - ")?;
    let left: Vec<&str> = left.split(' ').collect();
    let right: Vec<&str> = right.split(' ').collect();
    if left.len() < 6 || right.is_empty() {
        return None;
    }
    let (major, minor) = left[2].split_once(':')?;
    Some(MountEntry {
        dev: (major.parse().ok()?, minor.parse().ok()?),
        mount_point: PathBuf::from(OsString::from_vec(unescape(left[4]))),
        options: left[5].to_string(),
        fs_type: right[0].to_string(),
        source: String::from_utf8_lossy(&unescape(right.get(1).copied().unwrap_or("")))
            .into_owned(),
        super_options: right.get(2).copied().unwrap_or("").to_string(),
    })
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
pub(super) fn unescape(field: &str) -> Vec<u8> {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).filter(|d| {
            bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)) && d[0] <= b'3'
        });
        match octal {
            Some(d) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    out
}

/// The mount containing `path`: the longest mount point that is a prefix of it; among
/// mounts stacked on that point, the one on `path`'s device, else the last (topmost).
pub(super) fn mount_for<'a>(
    mounts: &'a [MountEntry],
    path: &Path,
    dev: Option<u64>,
) -> Option<&'a MountEntry> {
    let depth = |m: &MountEntry| m.mount_point.components().count();
    let containing = || mounts.iter().filter(|m| path.starts_with(&m.mount_point));
    let deepest = containing().map(depth).max()?;
    let dev = dev.map(|d| (libc::major(d), libc::minor(d)));
    let stacked = || containing().filter(move |m| depth(m) == deepest);
    stacked()
        .rfind(|m| Some(m.dev) == dev)
        .or_else(|| stacked().next_back())
}
