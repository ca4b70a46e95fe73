//! What a `Log` refuses to do: go on after a write or sync that did not finish, zero a file
//! that is not a regular one, acknowledge records whose name was never synced.
//!
//! - Without group commit, a write or sync whose [`LogObserver`] panicked must fail the log,
//!   as it does with group commit: the next append must not write over the unfinished
//!   batch and be acknowledged.
//! - A log on something that is not a regular file (a block device, whose `st_size` is 0)
//!   must not be zeroed on reopen.

use iolab_testkit as common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use iolab_lab::durable::{LogObserver, LogOptions, LogPolicy, read_records};

/// Panics the first time the bytes of a batch are reported written (after the `pwrite`,
/// before the sync, for the policies with a separate sync).
#[derive(Default)]
struct PanicOnceWritten {
    fired: AtomicBool,
}

impl LogObserver for PanicOnceWritten {
    fn written(&self, _end: u64) {
        if !self.fired.swap(true, Ordering::SeqCst) {
            panic!("observer panics (on purpose)");
        }
    }
}

#[test]
fn without_group_commit_a_panicked_write_fails_the_log() {
    let dir = common::scratch();
    for policy in [LogPolicy::Fdatasync, LogPolicy::Dsync, LogPolicy::Prealloc] {
        let path = dir.path().join(policy.name());
        let log = LogOptions::new()
            .policy(policy)
            .group_commit(false)
            .prealloc_chunk(64 << 10)
            .observer(Arc::new(PanicOnceWritten::default()))
            .open(&path)
            .unwrap();
        let first = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            log.append_durable(&[0xAA; 100])
        }));
        assert!(
            first.is_err(),
            "{policy}: the observer's panic reached its caller"
        );
        // The panicked record's bytes may be in the file, unsynced: nothing after it may
        // be acknowledged until the log is reopened (and recovery decides where it ends).
        let after = log.append_durable(b"later");
        assert!(
            after.is_err(),
            "{policy}: acknowledged {after:?} after a write whose sync never ran"
        );
        let e = after.unwrap_err();
        assert!(
            e.to_string().contains("open the file again"),
            "{policy}: {e}"
        );
        drop(log);
        // Reopening recovers and goes on.
        let log = LogOptions::new()
            .policy(policy)
            .group_commit(false)
            .prealloc_chunk(64 << 10)
            .open(&path)
            .unwrap();
        let end = log.durable_end();
        log.append_durable(b"after reopen").unwrap();
        drop(log);
        let got = read_records(&path).unwrap();
        assert_eq!(got.records.last().unwrap(), b"after reopen", "{policy}");
        assert!(got.end > end, "{policy}");
    }
}

/// A loop device over a file of `size` bytes, detached when dropped.
struct Loop {
    dev: PathBuf,
    _dir: tempfile::TempDir,
}

impl Loop {
    fn attach(size: u64) -> Result<Loop, String> {
        if !common::is_root() {
            return Err("a loop device needs root".to_string());
        }
        let dir = common::scratch();
        let img = dir.path().join("disk.img");
        std::fs::File::create(&img)
            .and_then(|f| f.set_len(size))
            .map_err(|e| e.to_string())?;
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&img)
            .output()
            .map_err(|e| format!("cannot run losetup: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "cannot attach a loop device: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let dev = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        Ok(Loop { dev, _dir: dir })
    }

    fn path(&self) -> &Path {
        &self.dev
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

#[test]
fn a_log_on_a_block_device_is_refused_and_left_untouched() {
    let disk = match Loop::attach(4 << 20) {
        Ok(d) => d,
        Err(reason) => return common::skip(reason),
    };
    for policy in [LogPolicy::Prealloc, LogPolicy::Fdatasync] {
        let options = || {
            LogOptions::new()
                .policy(policy)
                .group_commit(false)
                .prealloc_chunk(64 << 10)
        };
        // Something of the device's own at its start, which a log must never touch.
        std::fs::write(disk.path(), [0x5A; 4096]).unwrap();
        let e = options()
            .open(disk.path())
            .expect_err("a block device was opened as a log");
        assert!(e.to_string().contains("regular file"), "{policy}: {e}");
        let mut start = [0u8; 4096];
        use std::io::Read;
        std::fs::File::open(disk.path())
            .unwrap()
            .read_exact(&mut start)
            .unwrap();
        assert_eq!(start, [0x5A; 4096], "{policy}: the device was written");
    }
}

/// Set (to the log's path) for the re-executed child of
/// [`an_existing_log_whose_name_was_never_synced_gets_its_directory_synced`].
const DIR_SYNC_CHILD_ENV: &str = "IOLAB_DURABLE_REVIEW_DIR_SYNC_LOG";

/// The child half: opens the log named by [`DIR_SYNC_CHILD_ENV`] and appends one record.
#[test]
fn dir_sync_child() {
    let Some(path) = std::env::var_os(DIR_SYNC_CHILD_ENV) else {
        return;
    };
    let log = LogOptions::new()
        .policy(LogPolicy::Fdatasync)
        .open(Path::new(&path))
        .unwrap();
    log.append_durable(b"acknowledged").unwrap();
}

/// A log file that exists but whose name may not be durable (created by a process killed
/// before it synced the directory, or by a first `open` whose directory sync failed):
/// before the first acknowledgement the directory must be synced, or a power loss can
/// take the file and the acknowledged record with it. Watched with `strace -y`, which
/// names each descriptor synced.
#[test]
fn an_existing_log_whose_name_was_never_synced_gets_its_directory_synced() {
    let dir = common::scratch();
    let path = dir.path().join("log");
    // Created, never synced: as a killed creator leaves it.
    std::fs::File::create(&path).unwrap();
    let Some(trace) =
        common::trace_syncs_of_child("dir_sync_child", DIR_SYNC_CHILD_ENV, path.as_os_str())
    else {
        return;
    };
    assert!(
        common::trace_syncs_dir(&trace, dir.path()),
        "the log's directory was never synced:\n{trace}"
    );
    assert!(
        trace.lines().any(|l| l.contains("fdatasync(")),
        "the append was not traced:\n{trace}"
    );
}
