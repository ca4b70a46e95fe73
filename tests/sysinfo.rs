//! `iolab_lab::sysinfo` and `iolab sysinfo`: plausible values on this machine, JSON that
//! round-trips, the CLI's JSON keys and its one-line error.
//!
//! Only what holds on every Linux machine is asserted, not this machine's figures.

use iolab_testkit as common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use iolab_lab::sysinfo::{self, SysInfo};

fn iolab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
}

/// The file system type `/proc/mounts` gives for the mount containing `path`
/// (longest mount point; the last of stacked mounts), independently of the library.
fn proc_mounts_type(path: &Path) -> Option<String> {
    let path = fs::canonicalize(path).ok()?;
    let mounts = fs::read_to_string("/proc/mounts").ok()?;
    let mut best: Option<(usize, String)> = None;
    for line in mounts.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let [_, point, fs_type, ..] = fields[..] else {
            continue;
        };
        let point = PathBuf::from(point.replace("\\040", " "));
        if path.starts_with(&point) {
            let depth = point.components().count();
            if best.as_ref().is_none_or(|(d, _)| depth >= *d) {
                best = Some((depth, fs_type.to_string()));
            }
        }
    }
    best.map(|(_, fs_type)| fs_type)
}

#[test]
fn collect_gives_plausible_values() {
    let dir = common::scratch();
    let info = sysinfo::collect(dir.path());

    assert_eq!(info.iolab_version, env!("CARGO_PKG_VERSION"));
    assert!(info.collected_at_unix > 1_600_000_000);
    assert!(info.collected_at.ends_with('Z') && info.collected_at.len() == 20);

    let cpu = &info.cpu;
    assert!(cpu.available_parallelism.is_some_and(|n| n >= 1));
    assert!(cpu.online.is_some_and(|n| n >= 1));
    assert!(
        ["scalar", "avx2", "avx512"].contains(&cpu.kernel.as_str()),
        "{}",
        cpu.kernel
    );
    #[cfg(target_arch = "x86_64")]
    assert!(
        cpu.simd.iter().any(|f| f == "sse2"),
        "x86-64 always has SSE2"
    );
    if cpu.kernel == "avx2" {
        assert!(cpu.simd.iter().any(|f| f == "avx2"));
    }
    let l1d = cpu.l1d_bytes.expect("L1d size from sysfs");
    assert!((4 << 10..=4 << 20).contains(&l1d), "L1d {l1d}");
    assert!(cpu.caches.iter().all(|c| c.size_bytes > 0 && c.level >= 1));

    let memory = &info.memory;
    let total = memory.total_bytes.expect("MemTotal");
    assert!(total > 0);
    assert!(memory.available_bytes.is_some_and(|a| a <= total));
    #[cfg(target_arch = "x86_64")]
    assert_eq!(memory.page_size, Some(4096));

    let os = &info.os;
    assert_eq!(os.sysname.as_deref(), Some("Linux"));
    assert!(os.release.is_some() && os.machine.is_some());
    assert_eq!(os.io_uring.available, os.io_uring.reason.is_none());
    assert!(os.pipe_default_bytes.is_some_and(|n| n >= 4096));

    let storage = &info.storage;
    let canonical = fs::canonicalize(dir.path()).unwrap();
    assert_eq!(Path::new(&storage.path), canonical);
    assert!(storage.fs_type.is_some());
    assert!(
        storage
            .fs_magic
            .as_deref()
            .is_some_and(|m| m.starts_with("0x"))
    );
    assert!(storage.mount.is_some());
    let (free, total) = (storage.free_bytes.unwrap(), storage.total_bytes.unwrap());
    assert!(free <= total && storage.available_bytes.unwrap() <= free);
    assert!(storage.block_size.is_some_and(|b| b >= 512));
    if storage.direct_io.supported == Some(true) {
        let (memory, offset) = (
            storage.direct_io.memory_align.unwrap(),
            storage.direct_io.offset_align.unwrap(),
        );
        assert!(memory.is_power_of_two() && offset.is_power_of_two());
    } else {
        assert!(storage.direct_io.note.is_some());
    }
    if let Some(device) = &storage.device {
        assert!(!device.name.is_empty());
        assert!(device.logical_block_size.is_some_and(|b| b >= 512));
    }

    // The O_DIRECT probe file is gone again.
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);

    let summary = info.summary_lines();
    assert!((6..=10).contains(&summary.len()), "{summary:#?}");
    assert!(
        summary
            .iter()
            .all(|line| !line.is_empty() && !line.contains('\n'))
    );
}

#[test]
fn missing_data_dir_is_noted_not_fatal() {
    let info = sysinfo::collect(Path::new("/nonexistent/iolab-sysinfo"));
    assert!(info.storage.fs_type.is_none());
    assert!(info.notes.iter().any(|n| n.starts_with("storage:")));
    assert!(info.memory.total_bytes.is_some());
}

#[test]
fn json_round_trips() {
    let dir = common::scratch();
    let info = sysinfo::collect(dir.path());
    let json = serde_json::to_string(&info).unwrap();
    let back: SysInfo = serde_json::from_str(&json).unwrap();
    assert_eq!(serde_json::to_string(&back).unwrap(), json);
}

#[test]
fn tmpfs_is_recognized() {
    let dir = common::scratch();
    let scratch_type = proc_mounts_type(dir.path());
    assert_eq!(
        sysinfo::is_tmpfs(dir.path()),
        scratch_type.as_deref() == Some("tmpfs")
    );
    if scratch_type.as_deref() == Some("ext4") {
        assert!(!sysinfo::is_tmpfs(dir.path()));
        assert_eq!(sysinfo::fs_type_name(dir.path()).as_deref(), Some("ext4"));
    }
    let shm = Path::new("/dev/shm");
    if proc_mounts_type(shm).as_deref() == Some("tmpfs") {
        assert!(sysinfo::is_tmpfs(shm));
        assert_eq!(sysinfo::fs_type_name(shm).as_deref(), Some("tmpfs"));
        assert!(sysinfo::collect(shm).storage.is_tmpfs);
    }
    assert!(!sysinfo::is_tmpfs(Path::new("/nonexistent")));
    assert_eq!(sysinfo::fs_type_name(Path::new("/nonexistent")), None);
}

#[test]
fn cli_json_has_the_expected_keys() {
    let dir = common::scratch();
    let output = iolab()
        .args(["sysinfo", "--json", "--data"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    for key in [
        "iolab_version",
        "collected_at",
        "hostname",
        "cpu",
        "memory",
        "os",
        "storage",
        "notes",
    ] {
        assert!(json.get(key).is_some(), "missing key {key}");
    }
    assert!(json["cpu"]["l1d_bytes"].is_u64());
    assert!(json["cpu"]["simd"].is_array());
    assert!(json["memory"]["total_bytes"].is_u64());
    assert!(json["os"]["io_uring"]["available"].is_boolean());
    assert!(json["storage"]["is_tmpfs"].is_boolean());
    assert!(json["storage"]["direct_io"].is_object());
    let canonical = fs::canonicalize(dir.path()).unwrap();
    assert_eq!(json["storage"]["path"], canonical.to_str().unwrap());
}

#[test]
fn cli_report_is_aligned_key_value_lines() {
    let dir = common::scratch();
    let output = iolab()
        .arg("sysinfo")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    let columns: Vec<usize> = text
        .lines()
        .map(|line| {
            let colon = line.find(": ").expect("key: value");
            colon + 2 + line[colon + 2..].len() - line[colon + 2..].trim_start().len()
        })
        .collect();
    assert!(columns.len() > 10);
    assert!(columns.windows(2).all(|w| w[0] == w[1]), "{text}");
    assert!(text.contains("data dir:"));
}

#[test]
fn cli_missing_data_dir_is_one_error_line() {
    let output = iolab()
        .args(["sysinfo", "--data", "/nonexistent/iolab-sysinfo"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("iolab: /nonexistent/iolab-sysinfo: "),
        "{stderr}"
    );
    assert!(!stderr.contains("os error"), "{stderr}");
}
