//! A machine profile is followed only when this user, this iolab and this machine wrote it
//! (issue 48): in a child of this test binary with a cache folder (`XDG_CACHE_HOME`) of its
//! own, a profile saved here is followed, and the same profile owned by another user, or
//! recording another writer's uid, iolab version, format or machine, or no writer at all,
//! is ignored with the reason in `load_checked` and in the defaults' `why()` strings
//! (`RandomAccessFile`, `AppendFile`).

use iolab_lab::profile::Record as _;
use iolab_testkit as common;

use std::path::Path;

use iolab::{AppendFile, RandomAccessFile};
use iolab_lab::profile::{self, RandomWinner};

/// Set (to a cache folder) for [`provenance_child`].
const CHILD_ENV: &str = "IOLAB_PROFILE_PROVENANCE_CACHE";

/// The profile's file in the child's cache folder.
fn profile_path(cache: &Path) -> std::path::PathBuf {
    cache.join("iolab").join(profile::FILE_NAME)
}

/// Rewrites the saved profile with `change` applied to its JSON.
fn rewrite(cache: &Path, saved: &serde_json::Value, change: impl FnOnce(&mut serde_json::Value)) {
    let mut profile = saved.clone();
    change(&mut profile);
    std::fs::write(profile_path(cache), profile.to_string()).unwrap();
}

/// Why `load_checked` refuses the profile now, checked to reach the `why()` of a
/// `RandomAccessFile` (where its backing started) and of an `AppendFile` (its buffer).
fn refused(dir: &Path) -> String {
    let why = profile::load_checked().expect_err("a foreign profile must be ignored");
    assert!(why.ends_with(": ignored"), "{why}");
    let table = RandomAccessFile::open(dir.join("table")).unwrap();
    assert!(table.why().contains(&why), "{}", table.why());
    let choice = iolab_lab::file::random_access::starting_choice(&table);
    assert!(
        choice.unwrap().reason.contains("no measurements"),
        "{choice:?}"
    );
    static LOGS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = LOGS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let log = AppendFile::create(dir.join(format!("log-{n}"))).unwrap();
    assert!(log.why().contains(&why), "{}", log.why());
    why
}

/// The child half: a profile saved here, then edited as if someone else had written it.
#[test]
fn provenance_child() {
    let Some(cache) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let cache = Path::new(&cache);
    std::fs::write(cache.join("table"), vec![5u8; 1 << 20]).unwrap();
    let winner = RandomWinner {
        size_class: "warm".into(),
        method: "mmap".into(),
        iops: 1.0,
    };
    profile::save(|p| p.record_random(profile::MIN_BYTES, vec![winner])).unwrap();
    // Saved here: followed.
    let profile = profile::load_checked().unwrap();
    assert_eq!(
        profile.written_by,
        Some(profile::Provenance::here()),
        "{profile:?}"
    );
    let table = RandomAccessFile::open(cache.join("table")).unwrap();
    assert!(
        table
            .why()
            .contains("the warm winner measured by `iolab bench random`"),
        "{}",
        table.why()
    );
    let path = profile_path(cache);
    let saved: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let here = profile::Provenance::here();

    rewrite(cache, &saved, |p| {
        p["written_by"]["version"] = "0.0.9".into()
    });
    assert_eq!(
        refused(cache),
        format!(
            "the profile in {} was written by iolab 0.0.9, this is {}: ignored",
            path.display(),
            here.version
        )
    );
    rewrite(cache, &saved, |p| p["written_by"]["schema"] = 999.into());
    assert!(refused(cache).contains("has format 999"));
    rewrite(cache, &saved, |p| {
        p["written_by"]["machine_id"] = "0123456789abcdef".into()
    });
    assert!(refused(cache).contains("written on another machine (machine-id 01234567…"));
    let other_uid = if here.uid == 0 { 65534 } else { 0 };
    rewrite(cache, &saved, |p| p["written_by"]["uid"] = other_uid.into());
    assert!(refused(cache).contains(&format!("was written by uid {other_uid}, this process")));
    rewrite(cache, &saved, |p| {
        p.as_object_mut().unwrap().remove("written_by");
    });
    assert!(refused(cache).contains("does not record who wrote it"));

    // The file itself owned by another user (another user's `sudo iolab bench` wrote it
    // into this user's cache folder): only root can give a file away.
    rewrite(cache, &saved, |_| {});
    assert!(profile::load_checked().is_ok());
    if here.uid != 0 {
        common::skip("not root: cannot give the profile to another user");
        return;
    }
    std::os::unix::fs::chown(&path, Some(65534), None).unwrap();
    assert_eq!(
        refused(cache),
        format!(
            "the profile in {} belongs to uid 65534, this process runs as uid 0: ignored",
            path.display()
        )
    );
}

#[test]
fn a_profile_of_another_user_version_or_machine_is_ignored_with_the_reason() {
    let cache = common::scratch();
    common::run_child_with_cache("provenance_child", CHILD_ENV, cache.path());
}
