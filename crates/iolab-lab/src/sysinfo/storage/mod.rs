//! The storage under a directory: file system, mount, free space, the block device
//! behind it and its queue settings, and the `O_DIRECT` alignment for files there.
//!
//! **File system**: `statfs(2)`'s magic number names it ([`fs_type_name`]); the mount
//! entry from `/proc/self/mountinfo` (the longest mount point that contains the path, the
//! topmost one where several are stacked) adds the type string the kernel prints, the
//! source and the options.
//! **Device**: `stat(2)`'s `st_dev` leads to `/sys/dev/block/MAJOR:MINOR`; a partition is
//! resolved to its disk, whose `queue/` holds rotational, read-ahead, scheduler and block
//! sizes. File systems on anonymous devices (tmpfs, overlayfs, btrfs, NFS) have major 0;
//! then the mount's source is tried if it is a block device node, else there is no device.
//! **`O_DIRECT`**: an empty probe file is created in the directory, asked with
//! [`crate::sys::dio::alignment`], reopened with `O_DIRECT` to see
//! whether the file system accepts the flag, and removed.

use std::ffi::CString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

mod device;
mod direct_io;
mod mountinfo;

use crate::text::{bytes_exact, or_dash as opt};
use device::block_device;
use direct_io::probe_direct_io;
use mountinfo::{MountEntry, mount_for, read_mountinfo};

/// The storage under the data directory.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Storage {
    /// The data directory, absolute and with symbolic links resolved where possible.
    pub path: String,
    /// The file system's name: from `statfs`'s magic number, refined by the mount table
    /// (`ext4`, `xfs`, `btrfs`, `tmpfs`, `overlayfs`, `zfs`, `nfs`, `fuse.sshfs`, …).
    pub fs_type: Option<String>,
    /// `statfs`'s `f_type`, in hexadecimal (`0xef53`).
    pub fs_magic: Option<String>,
    /// Whether the data lives in RAM (tmpfs or ramfs), so a cold-cache run is impossible.
    pub is_tmpfs: bool,
    /// The mount containing the path.
    pub mount: Option<Mount>,
    /// Size of the file system (`statvfs`), in bytes.
    pub total_bytes: Option<u64>,
    /// Free bytes, including those reserved for root.
    pub free_bytes: Option<u64>,
    /// Bytes an unprivileged user can still write.
    pub available_bytes: Option<u64>,
    /// The directory's `st_blksize`: the I/O size the file system prefers.
    pub block_size: Option<u64>,
    /// The block device behind the file system, when there is one.
    pub device: Option<BlockDevice>,
    /// What `O_DIRECT` needs (or why it cannot be used) for a file in the directory.
    pub direct_io: DirectIo,
}

/// One entry of `/proc/self/mountinfo`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Mount {
    /// Where it is mounted.
    pub mount_point: String,
    /// The file system type as the kernel names it (`ext4`, `fuse.sshfs`).
    pub fs_type: String,
    /// What is mounted: a device node, `tmpfs`, `overlay`, `server:/export`, …
    pub source: String,
    /// Per-mount options (`rw,relatime`).
    pub options: String,
    /// The file system's own options (`rw,discard`).
    pub super_options: String,
}

/// A block device and its request queue settings (`/sys/block/NAME/queue/`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BlockDevice {
    /// `MAJOR:MINOR` of the device the file system is on (the partition, if any).
    pub dev: String,
    /// The disk's kernel name: `sda`, `nvme0n1`, `vda`, `dm-0`.
    pub name: String,
    /// The partition's name when the file system is on one: `sda2`.
    pub partition: Option<String>,
    /// The devices under a device-mapper or md device (`slaves/`).
    pub backing: Vec<String>,
    /// Whether the disk says it spins (virtual disks often claim to).
    pub rotational: Option<bool>,
    /// Read-ahead in KiB.
    pub read_ahead_kb: Option<u64>,
    /// The active I/O scheduler (`none`, `mq-deadline`, `bfq`, `kyber`).
    pub scheduler: Option<String>,
    /// Smallest addressable unit, in bytes.
    pub logical_block_size: Option<u64>,
    /// Smallest unit written without read-modify-write, in bytes.
    pub physical_block_size: Option<u64>,
    /// Largest request the block layer sends, in KiB.
    pub max_sectors_kb: Option<u64>,
    /// Requests the queue holds.
    pub nr_requests: Option<u64>,
    /// The device's model string, when it has one.
    pub model: Option<String>,
}

/// `O_DIRECT` for a file in the data directory.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DirectIo {
    /// `Some(true)`: usable; `Some(false)`: refused; `None`: not probed (see `note`).
    pub supported: Option<bool>,
    /// Required alignment of buffer addresses, in bytes.
    pub memory_align: Option<usize>,
    /// Required alignment of file offsets and lengths, in bytes.
    pub offset_align: Option<usize>,
    /// Where the alignment came from: `statx`, `logical block size` or `fallback`.
    pub source: Option<String>,
    /// Why it is unsupported or was not probed.
    pub note: Option<String>,
}

impl DirectIo {
    fn not_probed(note: String) -> DirectIo {
        DirectIo {
            supported: None,
            memory_align: None,
            offset_align: None,
            source: None,
            note: Some(note),
        }
    }

    fn unsupported(note: String) -> DirectIo {
        DirectIo {
            supported: Some(false),
            ..DirectIo::not_probed(note)
        }
    }
}

/// `statfs` magic numbers (`f_type`, see statfs(2) and `linux/magic.h`) and their names.
const MAGICS: &[(u32, &str)] = &[
    (0xEF53, "ext4"), // shared by ext2/3/4; the mount table tells them apart
    (0x5846_5342, "xfs"),
    (0x9123_683E, "btrfs"),
    (0x0102_1994, "tmpfs"),
    (0x8584_58F6, "ramfs"),
    (0x794C_7630, "overlayfs"),
    (0x2FC1_2FC1, "zfs"),
    (0xCA45_1A4E, "bcachefs"),
    (0xF2F5_2010, "f2fs"),
    (0xE0F5_E1E2, "erofs"),
    (0x7371_7368, "squashfs"),
    (0x6969, "nfs"),
    (0x6573_5546, "fuse"),
    (0xFF53_4D42, "cifs"),
    (0xFE53_4D42, "smb2"),
    (0x0102_1997, "9p"),
    (0x00C3_6400, "ceph"),
    (0x4D44, "vfat"),
    (0x2011_BAB0, "exfat"),
    (0x9660, "iso9660"),
    (0x9FA0, "proc"),
    (0x6265_6572, "sysfs"),
    (0x9584_58F6, "hugetlbfs"),
];

const TMPFS_MAGIC: u32 = 0x0102_1994;
const RAMFS_MAGIC: u32 = 0x8584_58F6;
const EXT_MAGIC: u32 = 0xEF53;
const FUSE_MAGIC: u32 = 0x6573_5546;

/// The name of the file system holding `path` (`ext4`, `xfs`, `tmpfs`, `fuse.sshfs`, …),
/// or `None` when `statfs` fails (the path does not exist, for example).
pub fn fs_type_name(path: &Path) -> Option<String> {
    let magic = statfs_magic(path).ok()?;
    let path = resolve(path);
    let dev = fs::metadata(&path).ok().map(|m| m.dev());
    let mounts = read_mountinfo();
    let mount = mount_for(&mounts, &path, dev);
    Some(name_fs(magic, mount))
}

/// Whether `path` is on a memory-backed file system (tmpfs, or ramfs, which behaves the
/// same for caching): there its data can never be "cold", so cold-cache runs are
/// impossible. `false` when `statfs` fails.
pub fn is_tmpfs(path: &Path) -> bool {
    statfs_magic(path).is_ok_and(is_memory_magic)
}

fn is_memory_magic(magic: u32) -> bool {
    magic == TMPFS_MAGIC || magic == RAMFS_MAGIC
}

/// The name for a magic number, refined by the mount's type string.
fn name_fs(magic: u32, mount: Option<&MountEntry>) -> String {
    let mount_type = mount.map(|m| m.fs_type.as_str());
    match (magic, mount_type) {
        (EXT_MAGIC, Some(t @ ("ext2" | "ext3" | "ext4"))) => t.to_string(),
        (FUSE_MAGIC, Some(t)) if t.starts_with("fuse") => t.to_string(),
        _ => match MAGICS.iter().find(|(m, _)| *m == magic) {
            Some((_, name)) => name.to_string(),
            None => match mount_type {
                Some(t) => t.to_string(),
                None => format!("unknown (magic {magic:#x})"),
            },
        },
    }
}

/// `path` made absolute, with symbolic links resolved when it exists.
fn resolve(path: &Path) -> PathBuf {
    fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

pub(super) fn collect(data_dir: &Path, notes: &mut Vec<String>) -> Storage {
    let path = resolve(data_dir);
    let mut storage = Storage {
        path: path.to_string_lossy().into_owned(),
        fs_type: None,
        fs_magic: None,
        is_tmpfs: false,
        mount: None,
        total_bytes: None,
        free_bytes: None,
        available_bytes: None,
        block_size: None,
        device: None,
        direct_io: DirectIo::not_probed("the data directory cannot be read".into()),
    };
    let metadata = match fs::metadata(&path) {
        Ok(m) => m,
        Err(e) => {
            notes.push(format!(
                "storage: cannot stat {}: {}",
                path.display(),
                describe(&e)
            ));
            return storage;
        }
    };
    let mounts = read_mountinfo();
    let mount = mount_for(&mounts, &path, Some(metadata.dev()));
    match statfs_magic(&path) {
        Ok(magic) => {
            storage.fs_type = Some(name_fs(magic, mount));
            storage.fs_magic = Some(format!("{magic:#x}"));
            storage.is_tmpfs = is_memory_magic(magic);
        }
        Err(e) => notes.push(format!("storage: statfs failed: {}", describe(&e))),
    }
    if mount.is_none() {
        notes.push("storage: no entry in /proc/self/mountinfo contains the path".into());
    }
    storage.mount = mount.map(|m| Mount {
        mount_point: m.mount_point.to_string_lossy().into_owned(),
        fs_type: m.fs_type.clone(),
        source: m.source.clone(),
        options: m.options.clone(),
        super_options: m.super_options.clone(),
    });
    match statvfs_sizes(&path) {
        Ok(sizes) => {
            storage.total_bytes = Some(sizes.total);
            storage.free_bytes = Some(sizes.free);
            storage.available_bytes = Some(sizes.available);
        }
        Err(e) => notes.push(format!("storage: statvfs failed: {}", describe(&e))),
    }
    storage.block_size = Some(metadata.blksize());
    storage.device = block_device(metadata.dev(), mount, storage.is_tmpfs, notes);
    storage.direct_io = if metadata.is_dir() {
        probe_direct_io(&path)
    } else {
        DirectIo::not_probed("the data path is not a directory".into())
    };
    storage
}

impl Storage {
    /// `/work on ext4 (/dev/vda), 78.0 GiB available of 252 GiB`.
    pub(super) fn describe(&self) -> String {
        let Some(fs_type) = &self.fs_type else {
            return format!("{}: file system unknown", self.path);
        };
        let mut text = format!("{} on {fs_type}", self.path);
        // The source says something only when it is not just the type again ("tmpfs").
        if let Some(mount) = self.mount.as_ref().filter(|m| m.source != m.fs_type) {
            text.push_str(&format!(" ({})", mount.source));
        }
        if let (Some(available), Some(total)) = (self.available_bytes, self.total_bytes) {
            text.push_str(&format!(
                ", {} available of {}",
                crate::units::format_bytes(available),
                crate::units::format_bytes(total)
            ));
        }
        if self.is_tmpfs {
            text.push_str("; in RAM, no cold cache");
        }
        text
    }

    /// `vda, rotational, mq-deadline, read-ahead 8 MiB, blocks 512/4096; O_DIRECT 512/512 (statx)`.
    pub(super) fn describe_device(&self) -> String {
        let mut text = match &self.device {
            Some(d) => format!(
                "{}, {}, scheduler {}, read-ahead {}, blocks {}/{}",
                d.describe_name(),
                match d.rotational {
                    Some(true) => "rotational",
                    Some(false) => "non-rotational",
                    None => "rotational unknown",
                },
                opt(&d.scheduler),
                d.read_ahead_kb
                    .map_or_else(|| "-".into(), |kb| crate::units::format_bytes(kb * 1024)),
                opt(&d.logical_block_size),
                opt(&d.physical_block_size)
            ),
            None => "no block device".to_string(),
        };
        text.push_str("; O_DIRECT ");
        text.push_str(&self.direct_io.describe());
        text
    }

    pub(super) fn details(&self) -> Vec<(String, String)> {
        let mut rows = vec![
            ("data dir".to_string(), self.path.clone()),
            (
                "file system".into(),
                format!(
                    "{} (statfs magic {})",
                    opt(&self.fs_type),
                    opt(&self.fs_magic)
                ),
            ),
        ];
        if let Some(m) = &self.mount {
            rows.push((
                "mount".into(),
                format!("{} on {} type {}", m.source, m.mount_point, m.fs_type),
            ));
            rows.push((
                "mount options".into(),
                format!("{} (super: {})", m.options, m.super_options),
            ));
        }
        rows.extend([
            ("space total".into(), bytes_exact(self.total_bytes)),
            ("space free".into(), bytes_exact(self.free_bytes)),
            ("space available".into(), bytes_exact(self.available_bytes)),
            ("st_blksize".into(), opt(&self.block_size)),
            (
                "in RAM (tmpfs)".into(),
                if self.is_tmpfs {
                    "yes: cold-cache runs are impossible".into()
                } else {
                    "no".into()
                },
            ),
        ]);
        match &self.device {
            Some(d) => rows.extend([
                (
                    "device".into(),
                    format!("{} ({})", d.describe_name(), d.dev),
                ),
                ("device model".into(), opt(&d.model)),
                (
                    "rotational".into(),
                    d.rotational
                        .map_or_else(|| "-".into(), |r| if r { "yes" } else { "no" }.into()),
                ),
                ("scheduler".into(), opt(&d.scheduler)),
                (
                    "read-ahead".into(),
                    d.read_ahead_kb
                        .map_or_else(|| "-".into(), |kb| format!("{kb} KiB")),
                ),
                (
                    "block size".into(),
                    format!(
                        "logical {}, physical {}",
                        opt(&d.logical_block_size),
                        opt(&d.physical_block_size)
                    ),
                ),
                (
                    "max request".into(),
                    d.max_sectors_kb
                        .map_or_else(|| "-".into(), |kb| format!("{kb} KiB")),
                ),
                ("queue depth".into(), opt(&d.nr_requests)),
            ]),
            None => rows.push(("device".into(), "none".into())),
        }
        rows.push(("O_DIRECT".into(), self.direct_io.describe()));
        rows
    }
}

impl BlockDevice {
    /// `vda`, `sda (partition sda2)`, `dm-0 (over nvme0n1p3)`.
    fn describe_name(&self) -> String {
        let mut text = self.name.clone();
        if let Some(p) = &self.partition {
            text.push_str(&format!(" (partition {p})"));
        }
        if !self.backing.is_empty() {
            text.push_str(&format!(" (over {})", self.backing.join(", ")));
        }
        text
    }
}

impl DirectIo {
    /// `memory 512, offset 512 (statx)` or `unsupported: <why>`.
    fn describe(&self) -> String {
        match self.supported {
            Some(true) => format!(
                "memory {}, offset {} ({})",
                opt(&self.memory_align),
                opt(&self.offset_align),
                opt(&self.source)
            ),
            Some(false) => format!("unsupported: {}", opt(&self.note)),
            None => format!("not probed: {}", opt(&self.note)),
        }
    }
}

/// An I/O error's text without Rust's ` (os error N)` suffix.
fn describe(e: &io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(io::Error::from)
}

/// `statfs(2)`'s `f_type`.
fn statfs_magic(path: &Path) -> io::Result<u32> {
    let c = c_path(path)?;
    let mut buf = std::mem::MaybeUninit::<libc::statfs>::zeroed();
    // SAFETY: `c` is a NUL-terminated path and `buf` writable memory of the size and
    // layout statfs(2) fills.
    if unsafe { libc::statfs(c.as_ptr(), buf.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: statfs returned 0, so it filled `buf` (which was zeroed before anyway).
    let s = unsafe { buf.assume_init() };
    // Magic numbers are 32-bit; `f_type`'s width and signedness differ between ABIs.
    Ok(s.f_type as u32)
}

struct Sizes {
    total: u64,
    free: u64,
    available: u64,
}

fn statvfs_sizes(path: &Path) -> io::Result<Sizes> {
    let c = c_path(path)?;
    let mut buf = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: `c` is a NUL-terminated path and `buf` writable memory of the size and
    // layout statvfs(3) fills.
    if unsafe { libc::statvfs(c.as_ptr(), buf.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: statvfs returned 0, so it filled `buf` (which was zeroed before anyway).
    let s = unsafe { buf.assume_init() };
    // Block counts are in units of f_frsize (the fundamental block size).
    #[allow(clippy::unnecessary_cast)] // the field types differ between ABIs
    let (unit, blocks, free, available) = (
        s.f_frsize as u64,
        s.f_blocks as u64,
        s.f_bfree as u64,
        s.f_bavail as u64,
    );
    Ok(Sizes {
        total: blocks.saturating_mul(unit),
        free: free.saturating_mul(unit),
        available: available.saturating_mul(unit),
    })
}

#[cfg(test)]
mod tests {
    use super::mountinfo::{parse_mountinfo_line, unescape};
    use super::*;

    const MOUNTINFO: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw,size=12334492k,mode=755
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684092k
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684092k
31 27 8:2 / /mnt/my\\040disk rw,noatime shared:1 master:2 - xfs /dev/sda2 rw,attr2
32 27 0:40 / /home/user/remote rw,nosuid - fuse.sshfs me@host:/ rw,user_id=1000
";

    fn mounts() -> Vec<MountEntry> {
        MOUNTINFO.lines().filter_map(parse_mountinfo_line).collect()
    }

    #[test]
    fn mountinfo_lines() {
        let m = mounts();
        assert_eq!(m.len(), 7);
        assert_eq!(m[3].dev, (254, 0));
        assert_eq!(m[3].fs_type, "ext4");
        assert_eq!(m[3].source, "/dev/vda");
        assert_eq!(m[3].super_options, "rw,discard");
        // Optional fields before the separator, and an escaped space.
        assert_eq!(m[5].mount_point, Path::new("/mnt/my disk"));
        assert_eq!(m[5].fs_type, "xfs");
        assert_eq!(m[5].options, "rw,noatime");
    }

    #[test]
    fn longest_prefix_and_stacking() {
        let m = mounts();
        let pick = |p: &str, dev| mount_for(&m, Path::new(p), dev).map(|e| e.dev);
        assert_eq!(pick("/work/main", None), Some((254, 0)));
        assert_eq!(pick("/", None), Some((254, 0)));
        assert_eq!(pick("/dev/shmx", None), Some((0, 6)));
        // Stacked mounts: the one on the path's device, else the topmost.
        assert_eq!(
            pick("/dev/shm/a", Some(libc::makedev(0, 23))),
            Some((0, 23))
        );
        assert_eq!(pick("/dev/shm/a", None), Some((0, 27)));
        assert_eq!(pick("/mnt/my disk/x", None), Some((8, 2)));
        assert!(mount_for(&[], Path::new("/"), None).is_none());
    }

    #[test]
    fn names() {
        let m = mounts();
        assert_eq!(name_fs(EXT_MAGIC, Some(&m[3])), "ext4");
        assert_eq!(name_fs(EXT_MAGIC, None), "ext4");
        assert_eq!(name_fs(TMPFS_MAGIC, Some(&m[2])), "tmpfs");
        assert_eq!(name_fs(FUSE_MAGIC, Some(&m[6])), "fuse.sshfs");
        assert_eq!(name_fs(0x1234_5678, Some(&m[5])), "xfs");
        assert_eq!(name_fs(0x1234_5678, None), "unknown (magic 0x12345678)");
    }

    #[test]
    fn every_block_device_resolves() {
        let Ok(entries) = fs::read_dir("/sys/dev/block") else {
            return;
        };
        for entry in entries {
            let name = entry.unwrap().file_name().into_string().unwrap();
            let (major, minor) = name.split_once(':').unwrap();
            let dev = libc::makedev(major.parse().unwrap(), minor.parse().unwrap());
            let mut notes = Vec::new();
            let device = block_device(dev, None, false, &mut notes).expect(&name);
            assert_eq!(device.dev, name);
            assert!(!device.name.is_empty(), "{name}");
            let is_partition = Path::new("/sys/dev/block").join(&name).join("partition");
            assert_eq!(device.partition.is_some(), is_partition.exists(), "{name}");
            assert!(notes.is_empty(), "{notes:?}");
        }
    }

    #[test]
    fn escapes() {
        assert_eq!(unescape(r"a\040b\011c\134d"), b"a b\tc\\d");
        assert_eq!(unescape(r"trailing\04"), br"trailing\04");
        assert_eq!(unescape(r"\999"), br"\999");
    }
}
