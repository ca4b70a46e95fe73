//! `RandomAccessFile::open`'s choice of backing, in children of this test binary with a
//! cache folder (`XDG_CACHE_HOME`) of their own: a map chosen from a machine profile that
//! turns a truncation into `FileShrank`, and the rule without a profile (a file in the page
//! cache mapped, one on the device read with `pread`).

use iolab_testkit as common;

use std::fs::{self, File};
use std::path::Path;

use iolab::Error;
use iolab::lab::file::{Backing, RandomAccessFile};

/// Set (to a cache folder) for the re-executed child of
/// [`a_guarded_map_chosen_by_open_turns_a_truncation_into_file_shrank`].
const SHRINK_CHILD_ENV: &str = "IOLAB_FILE_SHRINK_CACHE";

/// The child half: with a tuning file that names a map the warm winner (in its own
/// `XDG_CACHE_HOME`), `RandomAccessFile::open` maps the file; truncated by another handle,
/// a read of a lost page must be `FileShrank`, not a `SIGBUS` that kills the process.
#[test]
fn shrink_child() {
    let Some(cache) = std::env::var_os(SHRINK_CHILD_ENV) else {
        return;
    };
    let winner = iolab::lab::read::tuning::RandomWinner {
        size_class: "warm".to_string(),
        method: "mmap-random".to_string(),
        iops: 1.0,
    };
    iolab::lab::read::tuning::save_random(iolab::lab::read::tuning::MIN_BYTES, vec![winner])
        .unwrap();
    let path = Path::new(&cache).join("table");
    fs::write(&path, vec![7u8; 1 << 20]).unwrap();
    let f = RandomAccessFile::open(&path).unwrap();
    assert_eq!(f.backing(), Backing::Mmap, "{:?}", f.choice());
    let mut scratch = [0u8; 4096];
    assert_eq!(f.read(8192, &mut scratch).unwrap(), &[7u8; 4096][..]);
    File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    match f.read(512 << 10, &mut scratch) {
        Err(Error::FileShrank) => {}
        other => panic!("a read of a truncated map gave {other:?}"),
    }
}

#[test]
fn a_guarded_map_chosen_by_open_turns_a_truncation_into_file_shrank() {
    let cache = tempfile::tempdir().unwrap();
    run_child("shrink_child", SHRINK_CHILD_ENV, cache.path());
}

/// Runs this test binary's test `name` alone, with `env` and `XDG_CACHE_HOME` set to
/// `cache` (a machine profile of its own, or none), and checks that it passed; its stderr
/// (skip lines) is passed on.
fn run_child(name: &str, env: &str, cache: &Path) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(common::child_test_args(name))
        .env(env, cache)
        .env("XDG_CACHE_HOME", cache)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{name} failed or did not run ({}):\n{stdout}\n{stderr}",
        out.status
    );
    eprint!("{stderr}");
}

/// Set (to a cache folder with no profile) for the re-executed child of
/// [`without_a_profile_a_file_in_memory_is_mapped_and_one_on_the_device_is_preaded`].
const RULE_CHILD_ENV: &str = "IOLAB_FILE_RULE_CACHE";

/// The child half: no machine profile (its own empty `XDG_CACHE_HOME`), so
/// `RandomAccessFile::open` takes the rule, which asks the page cache.
#[test]
fn rule_child() {
    let Some(cache) = std::env::var_os(RULE_CHILD_ENV) else {
        return;
    };
    let path = Path::new(&cache).join("table");
    fs::write(&path, vec![7u8; 4 << 20]).unwrap();
    iolab::lab::cache::warm(&path).unwrap();
    let f = RandomAccessFile::open(&path).unwrap();
    let choice = f.choice().unwrap();
    assert_eq!(choice.method, "mmap-random", "{choice:?}");
    assert_eq!(f.backing(), Backing::Mmap, "{choice:?}");
    assert!(
        choice.reason.contains("100% in the page cache"),
        "{choice:?}"
    );
    let mut scratch = [0u8; 4096];
    assert_eq!(f.read(8192, &mut scratch).unwrap(), &[7u8; 4096][..]);
    drop(f);
    iolab::lab::cache::evict(&path, false).unwrap();
    if iolab::lab::cache::residency_of(&path).unwrap() > 0.1 {
        common::skip("the scratch file system keeps the file cached (tmpfs?)");
        return;
    }
    let f = RandomAccessFile::open(&path).unwrap();
    let choice = f.choice().unwrap();
    assert_eq!(choice.method, "pread", "{choice:?}");
    assert_eq!(f.backing(), Backing::Pread, "{choice:?}");
    assert!(choice.reason.contains("no measurements"), "{choice:?}");
    assert_eq!(f.read(8192, &mut scratch).unwrap(), &[7u8; 4096][..]);
}

#[test]
fn without_a_profile_a_file_in_memory_is_mapped_and_one_on_the_device_is_preaded() {
    // A folder on the scratch file system (not tmpfs where there is a choice): its file
    // can be evicted.
    let cache = common::scratch();
    run_child("rule_child", RULE_CHILD_ENV, cache.path());
}
