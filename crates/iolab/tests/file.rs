//! The `iolab_lab::file` abstractions against models, and on bad input.
//!
//! - Property tests run random operations on [`AppendFile`], [`SequentialFile`] and
//!   [`RandomAccessFile`] next to a model (a `Vec<u8>` and a cursor) and compare after
//!   every step: the bytes, the buffered/written split, and for `AppendFile` the number of
//!   write system calls (from `/proc/thread-self/io`), which checks "an append that fits
//!   makes none; one that does not makes exactly one `writev`".
//! - Bad input: a directory, an existing file, a missing one, no permission (a child
//!   process running as `nobody` when the tests run as root), and a full disk (a 1 MiB
//!   tmpfs mounted by the test; skipped with a note when mounting is not allowed).
//!
//! The crash-safety test is in `tests/append_crash.rs`.

use iolab_testkit as common;

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::{SmallFs, is_root, run_as_nobody};
use iolab::{Error, ErrorKind};
use iolab_lab::file::{
    AppendFile, AppendOptions, Backing, Creation, MapLimiter, RandomAccessFile,
    RandomAccessOptions, SequentialFile,
};
use proptest::collection::vec;
use proptest::prelude::*;

fn proptest_config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
        )),
        ..ProptestConfig::default()
    }
}

/// Write-family system calls made by this thread so far, if the kernel counts them.
fn write_calls() -> Option<u64> {
    let text = fs::read_to_string("/proc/thread-self/io").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("syscw:"))
        .and_then(|v| v.trim().parse().ok())
}

// ------------------------------------------------------------------------------------------
// AppendFile
// ------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum AppendOp {
    Append(Vec<u8>),
    Flush,
    Sync,
}

fn append_ops() -> impl Strategy<Value = Vec<AppendOp>> {
    let op = prop_oneof![
        // Mostly small records, some larger than any small buffer, a few empty.
        20 => vec(any::<u8>(), 0..40).prop_map(AppendOp::Append),
        4 => vec(any::<u8>(), 0..3000).prop_map(AppendOp::Append),
        1 => vec(any::<u8>(), 60_000..140_000).prop_map(AppendOp::Append),
        3 => Just(AppendOp::Flush),
        // fdatasync takes milliseconds: rare.
        1 => prop_oneof![9 => Just(AppendOp::Flush), 1 => Just(AppendOp::Sync)],
    ];
    vec(op, 0..60)
}

fn buffer_sizes() -> impl Strategy<Value = usize> {
    prop_oneof![Just(0usize), 1usize..64, 64usize..4096, Just(64 << 10)]
}

/// Runs `ops` on a fresh file and checks it against the model after every step.
fn check_append(ops: &[AppendOp], buffer: usize) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log");
    let mut file = AppendOptions::new()
        .buffer_size(buffer)
        .open(&path)
        .unwrap();
    prop_assert_eq!(file.buffer_size(), buffer);
    let mut model: Vec<u8> = Vec::new();
    for (step, op) in ops.iter().enumerate() {
        let buffered_before = file.buffered_len();
        let calls_before = write_calls();
        match op {
            AppendOp::Append(data) => {
                file.append(data).unwrap();
                model.extend_from_slice(data);
            }
            AppendOp::Flush => file.flush().unwrap(),
            AppendOp::Sync => file.sync().unwrap(),
        }
        let calls = write_calls().zip(calls_before).map(|(a, b)| a - b);
        // A regular file takes every byte in one call, so the counts are exact.
        let expected_calls = match op {
            AppendOp::Append(data) if buffered_before + data.len() <= buffer => 0,
            AppendOp::Append(_) => 1,
            AppendOp::Flush | AppendOp::Sync => u64::from(buffered_before > 0),
        };
        if let Some(calls) = calls {
            prop_assert_eq!(calls, expected_calls, "step {}: {:?}", step, op);
        }
        let on_disk = fs::read(&path).unwrap();
        prop_assert_eq!(on_disk.len() as u64, file.written_len(), "step {}", step);
        prop_assert_eq!(
            on_disk.len() + file.buffered_len(),
            model.len(),
            "step {}",
            step
        );
        prop_assert!(
            on_disk == model[..on_disk.len()],
            "step {}: not a prefix",
            step
        );
        prop_assert!(file.buffered_len() <= buffer, "step {}", step);
        if matches!(op, AppendOp::Flush | AppendOp::Sync) {
            prop_assert_eq!(file.buffered_len(), 0);
        }
    }
    // Dropping flushes.
    drop(file);
    prop_assert!(fs::read(&path).unwrap() == model, "after drop");
    Ok(())
}

proptest! {
    #![proptest_config(proptest_config(128))]

    #[test]
    fn append_file_matches_a_vec(ops in append_ops(), buffer in buffer_sizes()) {
        check_append(&ops, buffer)?;
    }
}

#[test]
fn append_file_reopens_and_continues_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log");
    let mut a = AppendFile::create(&path).unwrap();
    a.append(b"one ").unwrap();
    a.close().unwrap();
    let mut b = AppendFile::open(&path).unwrap();
    b.append(b"two ").unwrap();
    b.flush().unwrap();
    let mut c = AppendOptions::new()
        .creation(Creation::NewOrExisting)
        .open(&path)
        .unwrap();
    c.append(b"three").unwrap();
    drop(c);
    drop(b);
    assert_eq!(fs::read(&path).unwrap(), b"one two three");
    let fresh = dir.path().join("fresh");
    AppendOptions::new()
        .creation(Creation::NewOrExisting)
        .open(&fresh)
        .unwrap()
        .close()
        .unwrap();
    assert_eq!(fs::read(&fresh).unwrap(), b"");
}

#[test]
fn an_append_larger_than_the_buffer_goes_out_with_the_buffer_in_one_writev() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log");
    let mut file = AppendOptions::new().buffer_size(16).open(&path).unwrap();
    file.append(b"head").unwrap();
    let before = write_calls();
    file.append(&[7u8; 100]).unwrap();
    if let Some((after, before)) = write_calls().zip(before) {
        assert_eq!(after - before, 1, "buffer and data in one call");
    }
    assert_eq!(file.buffered_len(), 0);
    assert_eq!(file.written_len(), 104);
    let mut expected = b"head".to_vec();
    expected.extend([7u8; 100]);
    assert_eq!(fs::read(&path).unwrap(), expected);
}

// ------------------------------------------------------------------------------------------
// SequentialFile
// ------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum ReadOp {
    Read(usize),
    ReadFull(usize),
    Skip(u64),
}

fn read_ops() -> impl Strategy<Value = Vec<ReadOp>> {
    let op = prop_oneof![
        4 => (0usize..200).prop_map(ReadOp::Read),
        2 => (0usize..100_000).prop_map(ReadOp::Read),
        4 => (0usize..200).prop_map(ReadOp::ReadFull),
        1 => (0usize..150_000).prop_map(ReadOp::ReadFull),
        3 => (0u64..300).prop_map(ReadOp::Skip),
        1 => (0u64..200_000).prop_map(ReadOp::Skip),
    ];
    vec(op, 0..40)
}

fn contents() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![vec(any::<u8>(), 0..300), vec(any::<u8>(), 0..200_000),]
}

fn capacities() -> impl Strategy<Value = usize> {
    prop_oneof![1usize..32, 32usize..5000, Just(64 << 10)]
}

/// Runs `ops` on `file` and checks every answer against `model` and a cursor. Reads may be
/// short (a pipe), but never wrong, and 0 only at the end.
fn check_sequential(
    mut file: SequentialFile,
    model: &[u8],
    ops: &[ReadOp],
) -> Result<(), TestCaseError> {
    let mut at = 0usize;
    for (step, op) in ops.iter().enumerate() {
        let left = model.len() - at;
        match *op {
            ReadOp::Read(n) => {
                let mut buf = vec![0u8; n];
                let got = file.read(&mut buf).unwrap();
                prop_assert!(got <= n.min(left), "step {}", step);
                prop_assert!(
                    got > 0 || n == 0 || left == 0,
                    "step {}: 0 before the end",
                    step
                );
                prop_assert!(buf[..got] == model[at..at + got], "step {}", step);
                at += got;
            }
            ReadOp::ReadFull(n) => {
                let mut buf = vec![0u8; n];
                let got = file.read_full(&mut buf).unwrap();
                prop_assert_eq!(got, n.min(left), "step {}", step);
                prop_assert!(buf[..got] == model[at..at + got], "step {}", step);
                at += got;
            }
            ReadOp::Skip(n) => {
                let skipped = file.skip(n).unwrap();
                prop_assert_eq!(skipped, n.min(left as u64), "step {}", step);
                at += skipped as usize;
            }
        }
    }
    // The rest reads back exactly.
    let mut rest = Vec::new();
    io::Read::read_to_end(&mut file, &mut rest).unwrap();
    prop_assert!(rest == model[at..], "the rest");
    Ok(())
}

proptest! {
    #![proptest_config(proptest_config(128))]

    #[test]
    fn sequential_file_matches_a_cursor_over_a_vec(
        content in contents(),
        ops in read_ops(),
        capacity in capacities(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        fs::write(&path, &content).unwrap();
        let file = SequentialFile::with_capacity(&path, capacity).unwrap();
        check_sequential(file, &content, &ops)?;
    }

    #[test]
    fn sequential_file_reads_and_skips_a_pipe(
        content in contents(),
        ops in read_ops(),
        capacity in capacities(),
    ) {
        let (reader, mut writer) = io::pipe().unwrap();
        let feed = content.clone();
        let feeder = std::thread::spawn(move || {
            // Small pieces, so the reader sees short reads.
            for piece in feed.chunks(777) {
                if writer.write_all(piece).is_err() {
                    return; // the reader stopped early
                }
            }
        });
        let file = SequentialFile::from_file(File::from(std::os::fd::OwnedFd::from(reader)), capacity)
            .unwrap();
        check_sequential(file, &content, &ops)?;
        feeder.join().unwrap();
    }
}

// ------------------------------------------------------------------------------------------
// RandomAccessFile
// ------------------------------------------------------------------------------------------

fn reads() -> impl Strategy<Value = Vec<(u64, usize)>> {
    vec(
        (0u64..210_000, prop_oneof![0usize..100, 0usize..20_000]),
        0..30,
    )
}

/// A limiter of its own, so the cap test below cannot be disturbed by these tests.
static PROPTEST_MAPS: MapLimiter = MapLimiter::new(usize::MAX);

proptest! {
    #![proptest_config(proptest_config(128))]

    #[test]
    fn random_access_file_matches_slices_of_a_vec(
        content in contents(),
        reads in reads(),
        mapped in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        fs::write(&path, &content).unwrap();
        // SAFETY: the file is private to this test and not changed while it is open.
        // Without a map, pread asked for: the default follows this machine's profile.
        let options = unsafe {
            RandomAccessOptions::new()
                .limiter(&PROPTEST_MAPS)
                .mmap(mapped)
                .backing(Backing::Pread)
        };
        let file = options.open(&path).unwrap();
        let expect_map = mapped && !content.is_empty();
        prop_assert_eq!(file.backing() == Backing::Mmap, expect_map);
        prop_assert_eq!(file.len(), content.len() as u64);
        for (offset, len) in reads {
            let start = (offset as usize).min(content.len());
            let end = (start + len).min(content.len());
            let mut scratch = vec![0u8; len];
            let got = file.read(offset, &mut scratch).unwrap();
            prop_assert!(got == &content[start..end], "read({}, {})", offset, len);
            let mut copy = vec![0u8; len];
            let n = file.read_at(offset, &mut copy).unwrap();
            prop_assert!(copy[..n] == content[start..end], "read_at({}, {})", offset, len);
        }
    }
}

#[test]
fn the_types_can_move_between_threads_and_random_access_can_be_shared() {
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync>() {}
    send::<AppendFile>();
    send::<SequentialFile>();
    send_sync::<RandomAccessFile>();
}

#[test]
fn live_maps_are_capped_and_the_rest_use_pread() {
    static TWO_MAPS: MapLimiter = MapLimiter::new(2);
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<PathBuf> = (0..3)
        .map(|i| {
            let p = dir.path().join(format!("f{i}"));
            fs::write(&p, format!("file {i}")).unwrap();
            p
        })
        .collect();
    // SAFETY: the files are private to this test and not changed while open.
    let options = unsafe { RandomAccessOptions::new().limiter(&TWO_MAPS).mmap(true) };
    let a = options.open(&paths[0]).unwrap();
    let b = options.open(&paths[1]).unwrap();
    let c = options.open(&paths[2]).unwrap();
    assert_eq!(
        [a.backing(), b.backing(), c.backing()],
        [Backing::Mmap, Backing::Mmap, Backing::Pread]
    );
    assert_eq!(TWO_MAPS.live(), 2);
    // Every backing reads the same.
    let mut buf = [0u8; 16];
    assert_eq!(c.read(0, &mut buf).unwrap(), b"file 2");
    drop(a);
    assert_eq!(TWO_MAPS.live(), 1);
    let d = options.open(&paths[0]).unwrap();
    assert_eq!(d.backing(), Backing::Mmap);
    assert_eq!(d.read(5, &mut buf).unwrap(), b"0");
    drop((b, c, d));
    assert_eq!(TWO_MAPS.live(), 0);
    // The global limiter is LevelDB's: 1000 maps on 64-bit targets.
    assert_eq!(MapLimiter::global().max(), 1000);
}

#[test]
fn pread_sees_appended_bytes_a_map_does_not() {
    static MAPS: MapLimiter = MapLimiter::new(4);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("growing");
    fs::write(&path, b"abc").unwrap();
    // Asked for explicitly: `RandomAccessFile::open` may choose a map on this machine.
    let plain = RandomAccessOptions::new()
        .backing(Backing::Pread)
        .open(&path)
        .unwrap();
    // SAFETY: the file is only appended to (never truncated or rewritten) while mapped.
    let mapped = unsafe { RandomAccessOptions::new().limiter(&MAPS).mmap(true) }
        .open(&path)
        .unwrap();
    let mut log = AppendFile::open(&path).unwrap();
    log.append(b"def").unwrap();
    log.flush().unwrap();
    let mut buf = [0u8; 8];
    assert_eq!(plain.read_at(0, &mut buf).unwrap(), 6);
    assert_eq!(mapped.read_at(0, &mut buf).unwrap(), 3);
}

// ------------------------------------------------------------------------------------------
// Bad input
// ------------------------------------------------------------------------------------------

#[test]
fn a_directory_is_refused_by_all_three() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert!(matches!(
        AppendFile::create(d).map_err(|e| e.kind()),
        Err(ErrorKind::IsDirectory)
    ));
    assert!(matches!(
        AppendFile::open(d).map_err(|e| e.kind()),
        Err(ErrorKind::IsDirectory)
    ));
    assert!(matches!(
        AppendOptions::new()
            .creation(Creation::NewOrExisting)
            .open(d)
            .map_err(|e| e.kind()),
        Err(ErrorKind::IsDirectory)
    ));
    assert!(matches!(
        SequentialFile::open(d).map_err(|e| e.kind()),
        Err(ErrorKind::IsDirectory)
    ));
    assert!(matches!(
        RandomAccessFile::open(d).map_err(|e| e.kind()),
        Err(ErrorKind::IsDirectory)
    ));
    assert_eq!(
        AppendFile::create(d).unwrap_err().to_string(),
        format!("{}: is a directory", d.display())
    );
}

#[test]
fn existing_and_missing_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("there");
    fs::write(&path, b"keep me").unwrap();
    let e = AppendFile::create(&path).unwrap_err();
    assert!(matches!(e.cause(), Error::Exists), "{e:?}");
    assert!(e.cause().to_string().contains("already exists"), "{e}");
    assert_eq!(
        fs::read(&path).unwrap(),
        b"keep me",
        "create never truncates"
    );

    let missing = dir.path().join("missing");
    for e in [
        AppendFile::open(&missing).unwrap_err(),
        SequentialFile::open(&missing).unwrap_err(),
        RandomAccessFile::open(&missing).unwrap_err(),
    ] {
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT), "{e:?}");
        assert_eq!(io::Error::from(e).kind(), io::ErrorKind::NotFound);
    }
    let no_dir = dir.path().join("no/such/dir/file");
    let e = AppendFile::create(&no_dir).unwrap_err();
    assert!(e.cause().to_string().starts_with("cannot create: "), "{e}");
}

/// Set for the re-executed test binary that checks permissions as `nobody`.
const PERMISSION_CHILD_ENV: &str = "IOLAB_TEST_PERMISSION_DIR";

/// The checks of [`permission_denied_is_a_typed_error`], run by a user who owns none of
/// the files in `dir`.
fn check_permissions(dir: &Path) {
    let e = AppendFile::create(dir.join("locked/new")).unwrap_err();
    assert!(matches!(e.cause(), Error::PermissionDenied { .. }), "{e:?}");
    assert!(e.cause().to_string().contains("permission denied"), "{e}");
    let e = AppendFile::open(dir.join("read-only")).unwrap_err();
    assert!(matches!(e.cause(), Error::PermissionDenied { .. }), "{e:?}");
    let e = SequentialFile::open(dir.join("secret")).unwrap_err();
    assert!(matches!(e.cause(), Error::PermissionDenied { .. }), "{e:?}");
    let e = RandomAccessFile::open(dir.join("secret")).unwrap_err();
    assert_eq!(io::Error::from(e).kind(), io::ErrorKind::PermissionDenied);
}

/// The `nobody` half of [`permission_denied_is_a_typed_error`]: does nothing unless the
/// parent test re-executed this binary for it.
#[test]
fn permission_child() {
    if let Some(dir) = std::env::var_os(PERMISSION_CHILD_ENV) {
        check_permissions(Path::new(&dir));
    }
}

#[test]
fn permission_denied_is_a_typed_error() {
    // A folder `nobody` can enter: the build folder's parents may be private.
    let root = common::public_scratch();
    let dir = root.path();
    fs::create_dir(dir.join("locked")).unwrap();
    fs::write(dir.join("read-only"), b"x").unwrap();
    fs::write(dir.join("secret"), b"x").unwrap();
    fs::set_permissions(dir.join("locked"), fs::Permissions::from_mode(0o555)).unwrap();
    fs::set_permissions(dir.join("read-only"), fs::Permissions::from_mode(0o444)).unwrap();
    fs::set_permissions(dir.join("secret"), fs::Permissions::from_mode(0o000)).unwrap();
    if !is_root() {
        check_permissions(dir);
        return;
    }
    // Root passes every permission check: re-run this binary's `permission_child` as
    // nobody, from a copy nobody can reach.
    let exe = match common::nobody_exe(&std::env::current_exe().unwrap(), &["--list"]) {
        Ok(exe) => exe,
        Err(reason) => return common::skip(reason),
    };
    let mut cmd = exe.command();
    cmd.args(common::child_test_args("permission_child"))
        .env(PERMISSION_CHILD_ENV, dir);
    run_as_nobody(&mut cmd);
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "the nobody child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Record `i` of the full-disk test: its index, then 200 bytes that depend on it.
fn disk_record(i: u64) -> Vec<u8> {
    let mut r = i.to_le_bytes().to_vec();
    r.extend((0..200u64).map(|j| (i.wrapping_mul(31) + j) as u8));
    r
}

/// Which call met the full disk.
#[derive(Debug, PartialEq, Eq)]
enum FailedIn {
    Append,
    Flush,
}

#[test]
fn a_full_disk_is_reported_from_flush_and_no_acknowledged_record_is_lost() {
    // 10 records are 2 KiB: the 64 KiB buffer never overflows, only flush writes.
    fill_the_disk(10, FailedIn::Flush);
}

#[test]
fn a_full_disk_is_reported_from_append_and_no_acknowledged_record_is_lost() {
    // 1000 records are 203 KiB: the buffer overflows (a writev from append) 3 times per flush.
    fill_the_disk(1000, FailedIn::Append);
}

/// Appends records to a file on a 1 MiB tmpfs, flushing every `flush_every`, until the
/// disk is full; checks the error, that every acknowledged byte is in the file, and that a
/// flush after space is freed completes the stream exactly.
fn fill_the_disk(flush_every: u64, expect: FailedIn) {
    let fs_ = match SmallFs::mount("1m") {
        Ok(fs_) => fs_,
        Err(reason) => return common::skip(reason),
    };
    // Space we can give back later, to check that a retry completes the stream.
    let filler = fs_.path().join("filler");
    fs::write(&filler, vec![0u8; 256 << 10]).unwrap();
    let path = fs_.path().join("log");
    let mut log = AppendFile::create(&path).unwrap();

    let mut intended: Vec<u8> = Vec::new();
    let mut acknowledged = 0usize; // bytes covered by the last successful flush
    let mut failure = None;
    for i in 0..100_000u64 {
        let record = disk_record(i);
        // An append that fails still holds its record (see AppendFile::append).
        let appended = log.append(&record);
        intended.extend_from_slice(&record);
        if let Err(e) = appended {
            failure = Some((FailedIn::Append, e));
            break;
        }
        if i % flush_every == flush_every - 1 {
            match log.flush() {
                Ok(()) => acknowledged = intended.len(),
                Err(e) => {
                    failure = Some((FailedIn::Flush, e));
                    break;
                }
            }
        }
    }
    let (failed_in, e) = failure.expect("a 1 MiB file system must fill up");
    assert_eq!(failed_in, expect);
    assert!(e.is_no_space(), "{e:?}");
    assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
    assert!(
        e.cause()
            .to_string()
            .contains("no space left on the device"),
        "{e}"
    );
    assert!(
        matches!(e.cause(), Error::NoSpace { pending, .. } if *pending == log.buffered_len() && *pending > 0)
    );

    // sync reports it too, while bytes are still pending.
    let _ = log.append(&disk_record(u64::MAX));
    intended.extend_from_slice(&disk_record(u64::MAX));
    let e = log.sync().unwrap_err();
    assert!(e.is_no_space(), "{e:?}");

    // The file holds every acknowledged byte, then at most a torn piece of the rest.
    let on_disk = read_all(&path);
    assert!(
        on_disk.len() >= acknowledged,
        "{} < {acknowledged}",
        on_disk.len()
    );
    assert_eq!(on_disk.len() as u64, log.written_len());
    assert!(
        on_disk == intended[..on_disk.len()],
        "not a prefix of the appended bytes"
    );
    assert_eq!(on_disk.len() + log.buffered_len(), intended.len());

    // With space again, flushing again completes the stream: nothing lost, nothing twice.
    fs::remove_file(&filler).unwrap();
    // An unlinked file's pages are freed when its last descriptor closes. A child that
    // another test thread is forking at this moment (for `mount`, say) holds a copy of
    // every descriptor until it execs, so the space can come back a moment later: retry
    // briefly. The assertions below still require every byte exactly once.
    let mut retried = 0;
    while let Err(e) = log.flush() {
        assert!(e.is_no_space() && retried < 40, "{e:?}");
        retried += 1;
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    log.sync().unwrap();
    assert!(read_all(&path) == intended);
    log.close().unwrap();
}

fn read_all(path: &Path) -> Vec<u8> {
    let mut file = SequentialFile::open(path).unwrap();
    let mut out = Vec::new();
    io::Read::read_to_end(&mut file, &mut out).unwrap();
    out
}

/// After a failed `fdatasync`, a second one can succeed without storing what the first
/// lost; so the handle refuses every later `flush` and `sync`. `/dev/null` refuses
/// `fdatasync` (`EINVAL`), which stands in for a device error here.
#[test]
fn after_a_failed_sync_the_append_file_refuses_to_flush_or_sync_again() {
    let path = Path::new("/dev/null");
    let mut f = AppendFile::open(path).unwrap();
    f.append(b"record").unwrap();
    let err = f.sync().expect_err("fdatasync of /dev/null succeeded");
    assert!(matches!(err.cause(), Error::SyncFailed { .. }), "{err:?}");
    assert_eq!(err.path(), Some(path));
    f.append(b"more").unwrap();
    for (what, result) in [("sync", f.sync()), ("flush", f.flush())] {
        let err = result.expect_err(what);
        assert!(
            matches!(err.cause(), Error::SyncFailedBefore { .. }),
            "{what} after a failed sync: {err:?}"
        );
        assert_eq!(err.path(), Some(path), "{what}");
        assert!(
            err.to_string()
                .starts_with("/dev/null: an earlier sync of this file failed (cannot sync: "),
            "{err}"
        );
    }
}

/// Set (to the file's path) for the re-executed child of
/// [`an_existing_file_opened_for_appending_gets_its_directory_synced`].
const DIR_SYNC_CHILD_ENV: &str = "IOLAB_FILE_DIR_SYNC_PATH";

/// The child half: opens the existing file named by [`DIR_SYNC_CHILD_ENV`], appends and
/// syncs.
#[test]
fn append_dir_sync_child() {
    let Some(path) = std::env::var_os(DIR_SYNC_CHILD_ENV) else {
        return;
    };
    let mut f = AppendFile::open(Path::new(&path)).unwrap();
    f.append(b"synced").unwrap();
    f.sync().unwrap();
}

/// A file that exists may have a name that is not durable yet (its creator was killed
/// before syncing the directory): opening it for appending syncs the directory, or a
/// power loss could take the synced bytes with the name.
#[test]
fn an_existing_file_opened_for_appending_gets_its_directory_synced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log");
    File::create(&path).unwrap();
    let Some(trace) = common::trace_syncs_of_child(
        "append_dir_sync_child",
        DIR_SYNC_CHILD_ENV,
        path.as_os_str(),
    ) else {
        return;
    };
    assert!(
        common::trace_syncs_dir(&trace, dir.path()),
        "the file's directory was never synced:\n{trace}"
    );
    assert_eq!(fs::read(&path).unwrap(), b"synced");
}
