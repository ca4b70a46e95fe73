//! `iolab::AppendFile` as a program meets it: through `std::io::Write`; failing — a full
//! device (`/dev/full`), a full file system, no inode left, a read-only file system, a
//! folder that cannot be synced — with the path named in every error and no file made or
//! grown by a create or an open that fails; and two processes (this binary re-executed)
//! appending to one file at once, every record of both found whole, once.
//!
//! Records that a buffer boundary splits can be torn by the other appender's write (as
//! *Two appenders* on `AppendFile` says; 100-byte records through 512-byte buffers were,
//! the first time this was tried): the two-appender tests use the cases that are
//! documented to stay whole.
//!
//! Mounting the small tmpfs needs root; without it those tests print a skip line. The
//! model-based tests of the buffer are in `tests/file.rs`, crashes in `tests/append_crash.rs`.

use iolab_testkit as common;

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{SmallFs, is_root, run_as_nobody};
use iolab::{AppendFile, AppendOptions, Creation, Error, ErrorKind};

#[test]
fn writeln_appends_and_flush_flushes() {
    let dir = common::scratch();
    let path = dir.path().join("events.log");
    // A small buffer: most lines go out as it fills, the rest with the flush.
    let mut log = AppendOptions::new().buffer_size(64).open(&path).unwrap();
    for i in 0..100 {
        writeln!(log, "event {i}").unwrap();
    }
    assert!(log.buffered_len() > 0);
    Write::flush(&mut log).unwrap();
    assert_eq!(log.buffered_len(), 0);
    let want: String = (0..100).map(|i| format!("event {i}\n")).collect();
    assert_eq!(fs::read_to_string(&path).unwrap(), want);
    log.close().unwrap();
}

/// The iolab error inside an `io::Error` from `AppendFile`'s `Write`.
fn inner(e: &io::Error) -> &Error {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<Error>())
        .unwrap_or_else(|| panic!("no iolab error inside {e:?}"))
}

/// `/dev/full` refuses every write with `ENOSPC`.
#[test]
fn a_full_device_is_named_in_every_error_and_a_refused_write_keeps_none_of_its_bytes() {
    let path = Path::new("/dev/full");
    if !path.exists() {
        return common::skip("no /dev/full");
    }
    let mut f = AppendOptions::new()
        .creation(Creation::Existing)
        .buffer_size(16)
        .open(path)
        .unwrap();
    f.append(b"0123456789").unwrap(); // fits: held
    // At least a buffer's worth: buffer and data in one writev, which /dev/full refuses.
    let e = f.write(b"abcdefghijklmnopqrst").unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::StorageFull);
    assert_eq!(
        f.buffered_len(),
        10,
        "the earlier append stays held; the refused write's bytes are given back"
    );
    let e = inner(&e);
    assert_eq!(e.path(), Some(path));
    assert!(
        e.to_string().ends_with(
            "cannot append: no space left on the device; 10 bytes are still buffered \
             (free some space, then call flush again)"
        ),
        "{e}"
    );

    let e = f.flush().unwrap_err();
    assert_eq!(e.path(), Some(path));
    assert!(
        matches!(e.cause(), Error::NoSpace { pending: 10, .. }),
        "{e:?}"
    );
    // `append` (unlike `write`) holds what it was given, behind the refused bytes.
    let e = f.append(&[b'x'; 16]).unwrap_err();
    assert_eq!(e.path(), Some(path));
    assert_eq!(f.buffered_len(), 26);
    let e = f.sync().unwrap_err();
    assert_eq!((e.path(), e.kind()), (Some(path), ErrorKind::NoSpace));

    // Closing cannot keep them: the error says they are lost, and not to flush again.
    let e = f.close().unwrap_err();
    assert_eq!((e.path(), e.kind()), (Some(path), ErrorKind::NoSpace));
    assert!(
        e.is_no_space() && e.raw_os_error() == Some(libc::ENOSPC),
        "{e:?}"
    );
    let message = e.to_string();
    assert!(
        message.contains("which are lost") && !message.contains("flush"),
        "{message}"
    );
}

#[test]
fn a_full_file_system_is_named_in_the_errors_of_append_flush_and_close() {
    let small = match SmallFs::mount("1m") {
        Ok(small) => small,
        Err(reason) => return common::skip(reason),
    };
    let path = small.path().join("log");
    let mut log = AppendFile::create(&path).unwrap();
    let record = [b'r'; 100];
    let e = (0..100_000)
        .find_map(|_| log.append(&record).err())
        .expect("a 1 MiB file system fills up");
    assert_eq!(e.path(), Some(path.as_path()));
    assert_eq!(e.kind(), ErrorKind::NoSpace);
    let message = e.to_string();
    assert!(
        message.starts_with(&format!(
            "{}: cannot append: no space left on the device; ",
            path.display()
        )) && message.ends_with("(free some space, then call flush again)"),
        "{message}"
    );
    let e = log.flush().unwrap_err();
    assert_eq!(
        (e.path(), e.kind()),
        (Some(path.as_path()), ErrorKind::NoSpace)
    );
    let e = log.close().unwrap_err();
    assert_eq!(
        (e.path(), e.kind()),
        (Some(path.as_path()), ErrorKind::NoSpace)
    );
}

#[test]
fn a_create_refused_for_want_of_an_inode_names_the_path_and_makes_nothing() {
    // tmpfs counts its root folder: one inode in all leaves none for a file.
    let small = match SmallFs::mount_with("size=1m,nr_inodes=1") {
        Ok(small) => small,
        Err(reason) => return common::skip(reason),
    };
    let path = small.path().join("new.log");
    for creation in [Creation::New, Creation::NewOrExisting] {
        let e = AppendOptions::new()
            .creation(creation)
            .open(&path)
            .unwrap_err();
        assert_eq!(e.path(), Some(path.as_path()), "{creation:?}");
        assert_eq!(e.kind(), ErrorKind::NoSpace, "{creation:?}: {e:?}");
        let message = e.to_string();
        // Nothing is buffered: the advice is to make room, not to flush.
        assert!(
            message.contains("cannot create: no space left on the device (free some space first)"),
            "{message}"
        );
    }
    assert!(common::names_in(small.path()).is_empty());
}

#[test]
fn on_a_read_only_file_system_create_and_open_fail_and_change_nothing() {
    let small = match SmallFs::mount("1m") {
        Ok(small) => small,
        Err(reason) => return common::skip(reason),
    };
    let old = small.path().join("old.log");
    fs::write(&old, b"before").unwrap();
    if let Err(reason) = small.remount_read_only() {
        return common::skip(reason);
    }
    let new = small.path().join("new.log");
    for creation in [Creation::New, Creation::NewOrExisting] {
        let e = AppendOptions::new()
            .creation(creation)
            .open(&new)
            .unwrap_err();
        assert_eq!(e.path(), Some(new.as_path()), "{creation:?}");
        assert_eq!(e.raw_os_error(), Some(libc::EROFS), "{creation:?}: {e:?}");
    }
    for creation in [Creation::Existing, Creation::NewOrExisting] {
        let e = AppendOptions::new()
            .creation(creation)
            .open(&old)
            .unwrap_err();
        assert_eq!(e.path(), Some(old.as_path()), "{creation:?}");
        assert_eq!(e.raw_os_error(), Some(libc::EROFS), "{creation:?}: {e:?}");
    }
    assert_eq!(common::names_in(small.path()), ["old.log"]);
    assert_eq!(fs::read(&old).unwrap(), b"before");
}

/// Set (to a folder this user may write and enter but not read) for the re-executed child
/// of [`a_create_whose_folder_cannot_be_synced_leaves_no_file`].
const UNREADABLE_DIR_ENV: &str = "IOLAB_TEST_UNREADABLE_DIR";

/// Creating in a folder that can be written but not read: the file is made, the folder
/// cannot be opened to sync it, and the create removes its file again.
fn check_unreadable_dir(dir: &Path) {
    let path = dir.join("new.log");
    let e = AppendFile::create(&path).unwrap_err();
    assert_eq!(e.path(), Some(path.as_path()));
    assert_eq!(e.kind(), ErrorKind::PermissionDenied, "{e:?}");
    assert!(
        e.to_string()
            .contains("cannot open its directory to sync it: permission denied"),
        "{e}"
    );
    assert!(!path.exists(), "the failed create left its file behind");
}

/// The half of [`a_create_whose_folder_cannot_be_synced_leaves_no_file`] run as `nobody`:
/// does nothing unless the parent test re-executed this binary for it.
#[test]
fn unreadable_dir_child() {
    if let Some(dir) = std::env::var_os(UNREADABLE_DIR_ENV) {
        check_unreadable_dir(Path::new(&dir));
    }
}

#[test]
fn a_create_whose_folder_cannot_be_synced_leaves_no_file() {
    let root = common::public_scratch();
    let dir = root.path().join("drop-box");
    fs::create_dir(&dir).unwrap();
    let mode = |bits| fs::set_permissions(&dir, fs::Permissions::from_mode(bits)).unwrap();
    if !is_root() {
        mode(0o300); // write and enter, not read
        check_unreadable_dir(&dir);
        mode(0o700);
        return;
    }
    // Root reads every folder: the child runs as nobody, for whom the folder is
    // write-and-enter only.
    mode(0o733);
    let exe = match common::nobody_exe(&std::env::current_exe().unwrap(), &["--list"]) {
        Ok(exe) => exe,
        Err(reason) => return common::skip(reason),
    };
    let mut cmd = exe.command();
    cmd.args(common::child_test_args("unreadable_dir_child"))
        .env(UNREADABLE_DIR_ENV, &dir);
    run_as_nobody(&mut cmd);
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "the nobody child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(common::names_in(&dir).is_empty());
}

/// Records each of the two appenders appends.
const TWO_APPENDERS_RECORDS: u64 = 40_000;

/// Set for the re-executed children of the two-appenders tests: `DIR ID MODE`, the folder
/// holding `shared.log` and the hand-over files, the appender (`a` or `b`) and the mode
/// (`fixed`: 64-byte records through a 4 KiB buffer; `unbuffered`: records of many lengths
/// with `buffer_size(0)`).
const APPENDER_ENV: &str = "IOLAB_TEST_APPENDER";

/// Record `i` of appender `id`: `id i ` then filler, one line. `fixed` records are 64 bytes
/// (a divisor of the 4 KiB buffer); the others 12 to 311 bytes.
fn appender_record(id: &str, i: u64, mode: &str) -> Vec<u8> {
    let mut r = format!("{id} {i:08} ").into_bytes();
    let len = match mode {
        "fixed" => 64,
        _ => r.len() + 1 + (i * 37 % 300) as usize,
    };
    r.resize(len - 1, b'.');
    r.push(b'\n');
    r
}

/// Waits for `path` to exist (the other appender's hand-over).
fn wait_for(path: &Path) {
    for _ in 0..60_000 {
        if path.exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    panic!("{} never appeared", path.display());
}

/// One appender: half its records, a flush and a hand-over (it waits for the other's), then
/// the rest and a close. The halves race; the hand-over puts both first halves in the file
/// before either second half, so the writer changes at least twice whatever the schedule
/// (without it, one process could finish before the other starts).
#[test]
fn two_appenders_child() {
    let Some(spec) = std::env::var_os(APPENDER_ENV) else {
        return;
    };
    let spec = spec.into_string().unwrap();
    let [dir, id, mode] = spec.splitn(3, ' ').collect::<Vec<_>>()[..] else {
        panic!("bad {APPENDER_ENV}: {spec}");
    };
    let (dir, other) = (Path::new(dir), if id == "a" { "b" } else { "a" });
    let buffer = if mode == "fixed" { 4096 } else { 0 };
    let mut log = AppendOptions::new()
        .creation(Creation::Existing)
        .buffer_size(buffer)
        .open(dir.join("shared.log"))
        .unwrap();
    for i in 0..TWO_APPENDERS_RECORDS {
        if i == TWO_APPENDERS_RECORDS / 2 {
            log.flush().unwrap();
            fs::write(dir.join(format!("{id}-half")), b"").unwrap();
            wait_for(&dir.join(format!("{other}-half")));
        }
        log.append(&appender_record(id, i, mode)).unwrap();
    }
    log.close().unwrap();
}

/// Runs two appender processes on one file in `mode` and checks that every record of both
/// is in it, whole, once, and that their writes interleaved.
fn two_appenders(mode: &str) {
    let dir = common::scratch();
    let shared = dir.path().join("shared.log");
    fs::write(&shared, b"").unwrap();
    // Both started before either is waited for: each waits for the other's hand-over.
    let children = ["a", "b"].map(|id| {
        std::process::Command::new(std::env::current_exe().unwrap())
            .args(common::child_test_args("two_appenders_child"))
            .env(
                APPENDER_ENV,
                format!("{} {id} {mode}", dir.path().display()),
            )
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    });
    for child in children {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "an appender failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = fs::read(&shared).unwrap();
    let mut seen = std::collections::HashSet::new();
    let mut switches = 0;
    let mut last = None;
    for line in text.split_inclusive(|&b| b == b'\n') {
        let head = std::str::from_utf8(&line[..line.len().min(10)]).unwrap_or("");
        let (id, i) = head
            .split_once(' ')
            .and_then(|(id, i)| Some((id.to_string(), i.parse::<u64>().ok()?)))
            .unwrap_or_else(|| panic!("not a record: {:?}", String::from_utf8_lossy(line)));
        assert_eq!(
            line,
            &appender_record(&id, i, mode)[..],
            "a torn record ({id} {i})"
        );
        assert!(seen.insert((id.clone(), i)), "{id} {i} twice");
        switches += usize::from(last.is_some_and(|l| l != id));
        last = Some(id);
    }
    assert_eq!(seen.len() as u64, 2 * TWO_APPENDERS_RECORDS, "records lost");
    // Both first halves before either second half: the writer changes at least once in
    // each part.
    assert!(switches >= 2, "{switches} changes of writer");
    eprintln!("two appenders ({mode}): {switches} changes of writer");
}

#[test]
fn two_processes_appending_64_byte_records_through_4_kib_buffers_lose_and_tear_nothing() {
    two_appenders("fixed");
}

#[test]
fn two_unbuffered_processes_appending_records_of_any_length_lose_and_tear_nothing() {
    two_appenders("unbuffered");
}
