//! The block device behind a file system: `st_dev` to `/sys/dev/block/MAJOR:MINOR`, a
//! partition resolved to its disk, or the mount's source when the device is anonymous.

use super::{BlockDevice, MountEntry};
use crate::procfs::{bracketed, read_trimmed, read_u64};
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// The block device behind device number `dev`, resolved to its disk.
pub(super) fn block_device(
    dev: u64,
    mount: Option<&MountEntry>,
    in_ram: bool,
    notes: &mut Vec<String>,
) -> Option<BlockDevice> {
    let (mut major, mut minor) = (libc::major(dev), libc::minor(dev));
    if major == 0 {
        // An anonymous device: tmpfs, overlayfs, btrfs, NFS, FUSE. A btrfs mount's source
        // is still the real block device node.
        match mount.and_then(|m| device_node_rdev(&m.source)) {
            Some(rdev) => (major, minor) = (libc::major(rdev), libc::minor(rdev)),
            None => {
                if !in_ram {
                    let source = mount.map_or("unknown", |m| m.source.as_str());
                    notes.push(format!(
                        "storage: no block device (anonymous device {major}:{minor}, source {source})"
                    ));
                }
                return None;
            }
        }
    }
    let link = format!("/sys/dev/block/{major}:{minor}");
    let Ok(node) = fs::canonicalize(&link) else {
        notes.push(format!("storage: {link} does not exist"));
        return None;
    };
    let (disk, partition) = if node.join("partition").exists() {
        (node.parent()?.to_path_buf(), Some(file_name(&node)))
    } else {
        (node, None)
    };
    let queue = disk.join("queue");
    let mut backing: Vec<String> = fs::read_dir(disk.join("slaves"))
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    backing.sort();
    let scheduler = read_trimmed(queue.join("scheduler")).map(|s| bracketed(&s).unwrap_or(s));
    Some(BlockDevice {
        dev: format!("{major}:{minor}"),
        name: file_name(&disk),
        partition,
        backing,
        rotational: read_u64(queue.join("rotational")).map(|r| r != 0),
        read_ahead_kb: read_u64(queue.join("read_ahead_kb")),
        scheduler,
        logical_block_size: read_u64(queue.join("logical_block_size")),
        physical_block_size: read_u64(queue.join("physical_block_size")),
        max_sectors_kb: read_u64(queue.join("max_sectors_kb")),
        nr_requests: read_u64(queue.join("nr_requests")),
        model: read_trimmed(disk.join("device/model")),
    })
}

/// The device number of `source` when it is a block device node (`/dev/sda2`).
pub(super) fn device_node_rdev(source: &str) -> Option<u64> {
    if !source.starts_with('/') {
        return None;
    }
    let metadata = fs::metadata(source).ok()?;
    metadata
        .file_type()
        .is_block_device()
        .then(|| metadata.rdev())
}

pub(super) fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}
