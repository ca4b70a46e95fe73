//! `RandomAccessFile::open`'s measured backing: in children of this test binary with a
//! cache folder (`XDG_CACHE_HOME`) of their own, a map started from a machine profile that
//! turns a truncation into `FileShrank` naming the file, a profile naming a map that does
//! not spare a warm file the call's own trial (issue 48), and without a profile a file in
//! the page cache and one on the device both timed among the backings; in this process,
//! every backing (`O_DIRECT` at unaligned offsets included) and the measured one read the
//! file's bytes, from two threads while the trials switch backings.

use iolab_lab::profile::Record as _;
use iolab_testkit as common;

use std::fs::{self, File};
use std::path::Path;

use iolab::Error;
use iolab_lab::file::random_access::starting_choice;
use iolab_lab::file::{Backing, RandomAccessFile, RandomAccessOptions};

/// Saves a profile (of this user, version and machine) whose warm winner is a plain map.
fn save_plain_map_as_warm_winner() {
    let winner = iolab_lab::profile::RandomWinner {
        size_class: "warm".to_string(),
        method: "mmap".to_string(),
        iops: 1.0,
    };
    iolab_lab::profile::save(|p| p.record_random(iolab_lab::profile::MIN_BYTES, vec![winner]))
        .unwrap();
}

/// Set (to a cache folder) for the re-executed child of
/// [`a_guarded_map_chosen_by_open_turns_a_truncation_into_file_shrank`].
const SHRINK_CHILD_ENV: &str = "IOLAB_FILE_SHRINK_CACHE";

/// The child half: with a tuning file that names a map the warm winner (in its own
/// `XDG_CACHE_HOME`), `RandomAccessFile::open` maps the file; truncated by another handle,
/// a read of a lost page must be `FileShrank` naming the file's path, not a `SIGBUS` that
/// kills the process.
#[test]
fn shrink_child() {
    let Some(cache) = std::env::var_os(SHRINK_CHILD_ENV) else {
        return;
    };
    // A plain map's win (it ties MADV_RANDOM warm) starts a map advised MADV_RANDOM: read
    // ahead, a trial's turns on a file not in memory faulted in megabytes each (a default
    // run at 16:52 UTC, 26 Nov: 0.02x cold).
    save_plain_map_as_warm_winner();
    let path = Path::new(&cache).join("table");
    fs::write(&path, vec![7u8; 1 << 20]).unwrap();
    let f = RandomAccessFile::open(&path).unwrap();
    assert_eq!(f.backing(), Backing::Mmap, "{:?}", starting_choice(&f));
    assert_eq!(starting_choice(&f).unwrap().method, "mmap-random");
    let mut scratch = [0u8; 4096];
    assert_eq!(f.read(8192, &mut scratch).unwrap(), &[7u8; 4096][..]);
    File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    // The first trial's reads take turns (pread, then the map): `pread` finds the file
    // empty, the map's turn a lost page. The error names the file (the front page's
    // promise), its cause the lost page.
    for _ in 0..4 {
        match f.read(512 << 10, &mut scratch) {
            Ok(bytes) => assert!(bytes.is_empty(), "{} bytes", bytes.len()),
            Err(e) if matches!(e.cause(), Error::FileShrank) => {
                assert_eq!(e.path(), Some(path.as_path()), "{e}");
                assert_eq!(e.kind(), iolab::ErrorKind::Changed, "{e}");
                assert!(
                    e.to_string().starts_with(&format!("{}: ", path.display())),
                    "{e}"
                );
                return;
            }
            Err(e) => panic!("a read of a truncated map gave {e}"),
        }
    }
    panic!(
        "no read of the truncated file went through the map: {}",
        f.why()
    );
}

#[test]
fn a_guarded_map_chosen_by_open_turns_a_truncation_into_file_shrank() {
    let cache = tempfile::tempdir().unwrap();
    run_child("shrink_child", SHRINK_CHILD_ENV, cache.path());
}

use common::run_child_with_cache as run_child;

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
    iolab_lab::cache::warm(&path).unwrap();
    let f = RandomAccessFile::open(&path).unwrap();
    let choice = starting_choice(&f).unwrap();
    assert_eq!(choice.method, "mmap-random", "{choice:?}");
    assert_eq!(f.backing(), Backing::Mmap, "{choice:?}");
    assert!(
        choice.reason.contains("100% in the page cache"),
        "{choice:?}"
    );
    let mut scratch = [0u8; 4096];
    assert_eq!(f.read(8192, &mut scratch).unwrap(), &[7u8; 4096][..]);
    drop(f);
    iolab_lab::cache::evict(&path, false).unwrap();
    if iolab_lab::cache::residency_of(&path).unwrap() > 0.1 {
        common::skip("the scratch file system keeps the file cached (tmpfs?)");
        return;
    }
    let f = RandomAccessFile::open(&path).unwrap();
    let choice = starting_choice(&f).unwrap();
    assert_eq!(choice.method, "pread", "{choice:?}");
    assert_eq!(f.backing(), Backing::Pread, "{choice:?}");
    assert!(choice.reason.contains("no measurements"), "{choice:?}");
    // The reads of the first trial take turns, each timed; then the fastest serves.
    for block in 0..iolab_lab::file::measured::TRIAL_READS as u64 {
        assert_eq!(
            f.read(block * 4096, &mut scratch).unwrap(),
            &[7u8; 4096][..]
        );
    }
    let why = f.why();
    assert!(
        why.starts_with("trial 1: ") && why.contains("timed pread"),
        "{why}"
    );
    assert!(
        why.contains("mmap-random") && why.contains(" serves"),
        "{why}"
    );
}

/// Reads `reads` blocks of 4 KiB of `f` (`len` bytes of `byte`) 1 MiB + 4 KiB apart (so
/// that a map's turns touch pages not touched before) and returns `why()`.
fn read_blocks(f: &RandomAccessFile, len: u64, byte: u8, reads: u64) -> String {
    let mut scratch = [0u8; 4096];
    for i in 0..reads {
        let offset = (i * ((1 << 20) + 4096)) % (len - 4096);
        assert_eq!(f.read(offset, &mut scratch).unwrap(), &[byte; 4096][..]);
    }
    f.why()
}

/// The child half of the warm case: a file in the page cache is trialed like any other;
/// its first reads take turns between `pread` and the map, each timed.
#[test]
fn warm_child() {
    let Some(cache) = std::env::var_os(WARM_CHILD_ENV) else {
        return;
    };
    let path = Path::new(&cache).join("warm-table");
    fs::write(&path, vec![9u8; 16 << 20]).unwrap();
    iolab_lab::cache::warm(&path).unwrap();
    let f = RandomAccessFile::open(&path).unwrap();
    let reads = u64::from(iolab_lab::file::measured::TRIAL_READS);
    let why = read_blocks(&f, 16 << 20, 9, reads);
    assert!(
        why.starts_with("trial 1: 100% in the page cache; timed pread "),
        "{why}"
    );
    assert!(
        why.contains("mmap-random") && why.contains(" serves"),
        "{why}"
    );
}

/// Set (to a cache folder with no profile) for [`warm_child`].
const WARM_CHILD_ENV: &str = "IOLAB_FILE_WARM_CACHE";

#[test]
fn without_a_profile_a_cached_file_is_timed_at_its_first_reads() {
    let cache = common::scratch();
    run_child("warm_child", WARM_CHILD_ENV, cache.path());
}

/// Set (to a cache folder) for [`profile_child`].
const PROFILE_CHILD_ENV: &str = "IOLAB_FILE_PROFILE_CACHE";

/// The child half: a profile of this user, version and machine names a plain map the warm
/// winner; on a warm file the map starts, but the first reads are the call's own trial,
/// and `why()` says what it measured and where it started.
#[test]
fn profile_child() {
    let Some(cache) = std::env::var_os(PROFILE_CHILD_ENV) else {
        return;
    };
    save_plain_map_as_warm_winner();
    let path = Path::new(&cache).join("table");
    fs::write(&path, vec![3u8; 16 << 20]).unwrap();
    iolab_lab::cache::warm(&path).unwrap();
    let f = RandomAccessFile::open(&path).unwrap();
    assert_eq!(f.backing(), Backing::Mmap, "{:?}", f.why());
    assert!(f.why().contains("until the first turns end"), "{}", f.why());
    let reads = u64::from(iolab_lab::file::measured::TRIAL_READS);
    let why = read_blocks(&f, 16 << 20, 3, reads);
    assert!(why.starts_with("trial 1: "), "{why}");
    assert!(
        why.contains("timed pread ") && why.contains("mmap-random "),
        "{why}"
    );
    assert!(
        why.contains("(it started from: ")
            && why.contains("the warm winner measured by `iolab bench random`"),
        "{why}"
    );
    // The map's turns touched pages of a fresh map: faults, counted when the kernel lets
    // a thread count its own (getrusage), and the estimate says what they would cost.
    if why.contains("the map: ") {
        assert!(
            why.contains("turns faulted") && why.contains("a fault maps"),
            "{why}"
        );
    } else {
        common::skip(format!("no fault counted in the map's turns: {why}"));
    }
}

#[test]
fn a_profile_naming_a_map_does_not_spare_a_warm_file_the_calls_own_trial() {
    let cache = common::scratch();
    run_child("profile_child", PROFILE_CHILD_ENV, cache.path());
}

/// A file of `len` bytes whose every byte differs from its neighbours'.
fn numbered(dir: &Path, len: usize) -> (std::path::PathBuf, Vec<u8>) {
    let content: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
    let path = dir.join("numbered");
    fs::write(&path, &content).unwrap();
    (path, content)
}

/// Reads at unaligned offsets and lengths, across the end, compared with `content`.
fn check_reads(f: &RandomAccessFile, content: &[u8], seed: u64) {
    let mut x = seed | 1;
    for _ in 0..600 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let offset = x % (content.len() as u64 + 100);
        let len = 1 + (x >> 40) as usize % 9000;
        let mut buf = vec![0u8; len];
        let n = f.read_at(offset, &mut buf).unwrap();
        let start = (offset as usize).min(content.len());
        let end = (start + len).min(content.len());
        assert_eq!(&buf[..n], &content[start..end], "read_at({offset}, {len})");
    }
}

#[test]
fn every_backing_reads_the_files_bytes_at_any_offset_and_length() {
    let dir = common::scratch();
    let (path, content) = numbered(dir.path(), (3 << 20) + 123);
    for backing in [Backing::Pread, Backing::Mmap, Backing::Direct] {
        let f = match RandomAccessOptions::new().backing(backing).open(&path) {
            Ok(f) => f,
            Err(e) if backing == Backing::Direct => {
                common::skip(format!("no O_DIRECT on the scratch file system: {e}"));
                continue;
            }
            Err(e) => panic!("{backing:?}: {e}"),
        };
        assert_eq!(f.backing(), backing);
        assert!(f.why().contains("as the options asked"), "{}", f.why());
        check_reads(&f, &content, 0x9e37_79b9);
    }
}

#[test]
fn the_measured_backing_reads_the_files_bytes_from_two_threads_while_it_switches() {
    let dir = common::scratch();
    let (path, content) = numbered(dir.path(), (2 << 20) + 77);
    // Out of the page cache, so that O_DIRECT is offered too.
    iolab_lab::cache::evict(&path, false).unwrap();
    let f = RandomAccessFile::open(&path).unwrap();
    std::thread::scope(|s| {
        for seed in [1u64, 2] {
            let (f, content) = (&f, &content);
            s.spawn(move || check_reads(f, content, seed * 0x2545_f491));
        }
    });
    // Every trial times the backings, cached or not.
    let why = f.why();
    assert!(why.starts_with("trial "), "{why}");
    assert!(why.contains("timed pread"), "{why}");
}

#[test]
fn without_a_profile_a_file_in_memory_is_mapped_and_one_on_the_device_is_preaded() {
    // A folder on the scratch file system (not tmpfs where there is a choice): its file
    // can be evicted.
    let cache = common::scratch();
    run_child("rule_child", RULE_CHILD_ENV, cache.path());
}
