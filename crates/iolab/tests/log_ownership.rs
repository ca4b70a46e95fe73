//! What a `Log` owns and what it leaves alone, through the stable surface (`iolab::Log`):
//!
//! - one writer: a second opener, in this process or another, is refused with
//!   `ErrorKind::Locked` (naming the holder), or waits with `wait_for_lock` and then loses
//!   nothing of anyone's;
//! - its own files only: a text file, a binary file, a log of a newer format, a damaged
//!   header and a log written before headers are refused with every byte unchanged; an
//!   empty file is taken;
//! - failures leave things as they were: a full or read-only file system leaves no new
//!   file and no grown file, and every error names the path;
//! - a log of 10 GiB is read back by `Log::records` in constant memory.

use iolab_testkit as common;

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use iolab::{ErrorKind, Log, LogOptions, LogPolicy};
use iolab_lab::durable::LOG_HEADER_LEN;

/// Every policy, with the small preallocation chunk the tests use.
fn options(policy: LogPolicy) -> LogOptions {
    LogOptions::new().policy(policy).prealloc_chunk(64 << 10)
}

/// The policies that can run in `dir`.
fn policies(dir: &Path) -> Vec<LogPolicy> {
    LogPolicy::ALL
        .into_iter()
        .filter(|p| p.availability_for(dir).is_ok())
        .collect()
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn records(path: &Path) -> Vec<Vec<u8>> {
    Log::records(path)
        .unwrap()
        .collect::<iolab::Result<_>>()
        .unwrap()
}

// ------------------------------------------------------------------------------------------
// One writer
// ------------------------------------------------------------------------------------------

#[test]
fn a_second_log_in_this_process_is_refused_then_waits() {
    let dir = common::scratch();
    for policy in policies(dir.path()) {
        let path = dir.path().join(format!("one-{policy}"));
        let first = options(policy).open(&path).unwrap();
        first.append_durable(b"first").unwrap();
        let e = options(policy).open(&path).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Locked, "{policy}: {e}");
        assert_eq!(e.path(), Some(path.as_path()), "{policy}: {e}");
        let me = format!("by process {}", std::process::id());
        assert!(e.to_string().contains(&me), "{policy}: {e}");
        assert_eq!(records(&path), vec![b"first".to_vec()], "{policy}");

        // A waiting opener gets the log once the first is dropped, and loses nothing.
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let log = options(policy).wait_for_lock(true).open(&path).unwrap();
                for i in 0..100u32 {
                    log.append_durable(format!("second {i}").as_bytes())
                        .unwrap();
                }
            });
            for i in 0..100u32 {
                first
                    .append_durable(format!("first {i}").as_bytes())
                    .unwrap();
            }
            drop(first);
            waiter.join().unwrap();
        });
        let got = records(&path);
        assert_eq!(got.len(), 201, "{policy}");
        for who in ["first", "second"] {
            let mine: Vec<&Vec<u8>> = got
                .iter()
                .filter(|r| r.starts_with(format!("{who} ").as_bytes()))
                .collect();
            let want: Vec<Vec<u8>> = (0..100)
                .map(|i| format!("{who} {i}").into_bytes())
                .collect();
            assert_eq!(mine.len(), 100, "{policy}: {who}");
            assert!(mine.iter().zip(&want).all(|(a, b)| *a == b), "{policy}");
        }
    }
}

/// Set for the re-executed child of
/// [`a_second_process_is_refused_and_waiting_writers_lose_nothing`]: `PATH TAG MODE`, MODE
/// `hold` (open, say `ready`, wait for standard input to close, then append) or `wait`
/// (open with `wait_for_lock`, then append).
const WRITER_CHILD_ENV: &str = "IOLAB_LOG_OWNERSHIP_WRITER";
/// Records each child appends.
const PER_WRITER: u32 = 500;

#[test]
fn log_writer_child() {
    let Some(spec) = std::env::var_os(WRITER_CHILD_ENV) else {
        return;
    };
    let spec = spec.to_string_lossy().into_owned();
    let mut parts = spec.splitn(3, '\n');
    let (path, tag, mode) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    let log = LogOptions::new()
        .policy(LogPolicy::Fdatasync)
        .wait_for_lock(mode == "wait")
        .open(path)
        .unwrap();
    if mode == "hold" {
        println!("ready");
        std::io::stdout().flush().unwrap();
        let mut rest = String::new();
        while std::io::stdin().read_line(&mut rest).unwrap() > 0 {}
    }
    for i in 0..PER_WRITER {
        log.append_durable(format!("{tag} {i}").as_bytes()).unwrap();
    }
    println!("acknowledged {PER_WRITER}");
}

fn writer(path: &Path, tag: &str, mode: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(common::child_test_args("log_writer_child"))
        .env(
            WRITER_CHILD_ENV,
            format!("{}\n{tag}\n{mode}", path.display()),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(child: Child, tag: &str) {
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(&format!("acknowledged {PER_WRITER}")),
        "writer {tag}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_second_process_is_refused_and_waiting_writers_lose_nothing() {
    let dir = common::scratch();
    let path = dir.path().join("shared.log");
    let mut holder = writer(&path, "a", "hold");
    let mut lines = BufReader::new(holder.stdout.take().unwrap()).lines();
    assert!(
        // libtest's `test NAME ... ` comes first on the line.
        lines.any(|l| l.unwrap().ends_with("ready")),
        "the holding writer never opened the log"
    );
    // Another process holds it: refused at once, naming that process, nothing changed.
    let before = fs::read(&path).unwrap();
    let e = Log::open(&path).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Locked, "{e}");
    assert!(
        e.to_string()
            .contains(&format!("by process {}", holder.id())),
        "{e}"
    );
    assert_eq!(fs::read(&path).unwrap(), before);

    // Two more writers wait for it; then the holder appends and ends, and they follow.
    let waiters = [writer(&path, "b", "wait"), writer(&path, "c", "wait")];
    std::thread::sleep(std::time::Duration::from_millis(100));
    drop(holder.stdin.take());
    let holder_out = std::thread::spawn(move || lines.map(|l| l.unwrap()).collect::<Vec<_>>());
    let status = holder.wait().unwrap();
    let said = holder_out.join().unwrap();
    assert!(
        status.success()
            && said
                .iter()
                .any(|l| l == &format!("acknowledged {PER_WRITER}")),
        "writer a: {said:?}"
    );
    for (child, tag) in waiters.into_iter().zip(["b", "c"]) {
        finish(child, tag);
    }
    let got = records(&path);
    assert_eq!(got.len(), 3 * PER_WRITER as usize);
    for tag in ["a", "b", "c"] {
        let mine: Vec<&Vec<u8>> = got
            .iter()
            .filter(|r| r.starts_with(format!("{tag} ").as_bytes()))
            .collect();
        assert_eq!(mine.len(), PER_WRITER as usize, "writer {tag}");
        for (i, r) in mine.iter().enumerate() {
            assert_eq!(**r, format!("{tag} {i}").into_bytes(), "writer {tag}");
        }
    }
}

// ------------------------------------------------------------------------------------------
// Its own files only
// ------------------------------------------------------------------------------------------

/// A log of three records made by this iolab (fdatasync: no zeros after it).
fn real_log(dir: &Path) -> Vec<u8> {
    let path = dir.join("model.log");
    let log = options(LogPolicy::Fdatasync).open(&path).unwrap();
    for r in [&b"one"[..], b"two", b"three"] {
        log.append_durable(r).unwrap();
    }
    drop(log);
    let bytes = fs::read(&path).unwrap();
    fs::remove_file(&path).unwrap();
    bytes
}

#[test]
fn a_file_that_is_not_a_log_is_refused_and_left_as_it_was() {
    let dir = common::scratch();
    let log = real_log(dir.path());
    assert_eq!(log[0], 0x89, "a log starts with its header's magic");
    let mut newer = log.clone();
    newer[8..10].copy_from_slice(&2u16.to_le_bytes());
    let crc = crc32(&newer[..12]);
    newer[12..16].copy_from_slice(&crc.to_le_bytes());
    let mut damaged = log.clone();
    damaged[9] ^= 0x40;
    let headerless = log[LOG_HEADER_LEN as usize..].to_vec();
    let binary: Vec<u8> = (0..70_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let cases: [(&str, Vec<u8>, &str); 6] = [
        ("text", b"precious data\n".to_vec(), "not an iolab log"),
        ("binary", binary, "not an iolab log"),
        ("newer", newer, "format 2"),
        ("damaged", damaged, "damaged"),
        ("headerless", headerless.clone(), "before log headers"),
        ("zeros", vec![0; 8192], "not an iolab log"),
    ];
    for policy in policies(dir.path()) {
        for (name, bytes, why) in &cases {
            let path = dir.path().join(name);
            fs::write(&path, bytes).unwrap();
            let before = names(dir.path());
            let e = options(policy).open(&path).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::NotALog, "{policy} {name}: {e}");
            let text = e.to_string();
            assert!(
                text.starts_with(&path.display().to_string()) && text.contains(why),
                "{policy} {name}: {text}"
            );
            assert!(text.contains("nothing in it was changed"), "{text}");
            assert_eq!(&fs::read(&path).unwrap(), bytes, "{policy} {name}: changed");
            assert_eq!(names(dir.path()), before, "{policy} {name}: a file left");
            fs::remove_file(&path).unwrap();
        }
    }
    // A log from before headers stays readable.
    let old = dir.path().join("old.log");
    fs::write(&old, &headerless).unwrap();
    let reader = Log::records(&old).unwrap();
    assert_eq!(reader.format(), 0);
    let got: Vec<Vec<u8>> = reader.collect::<iolab::Result<_>>().unwrap();
    assert_eq!(got, [&b"one"[..], b"two", b"three"].map(<[u8]>::to_vec));
    // Readers refuse what open refuses, except the old format.
    let text = dir.path().join("text");
    fs::write(&text, "precious data\n").unwrap();
    assert_eq!(Log::records(&text).unwrap_err().kind(), ErrorKind::NotALog);
}

/// CRC-32 (IEEE), bit by bit: the header's checksum, computed here without the library.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[test]
fn an_empty_file_or_an_unfinished_header_is_taken_as_a_new_log() {
    let dir = common::scratch();
    for policy in policies(dir.path()) {
        for (name, start) in [
            ("empty", vec![]),
            ("zeros", vec![0u8; 16]),
            ("cut", vec![0x89, b'i']),
        ] {
            let path = dir.path().join(format!("{name}-{policy}"));
            fs::write(&path, &start).unwrap();
            let log = options(policy).open(&path).unwrap();
            log.append_durable(b"kept").unwrap();
            drop(log);
            assert_eq!(records(&path), vec![b"kept".to_vec()], "{policy} {name}");
            assert_eq!(fs::read(&path).unwrap()[0], 0x89, "{policy} {name}");
        }
    }
}

// ------------------------------------------------------------------------------------------
// Failures leave things as they were
// ------------------------------------------------------------------------------------------

#[test]
fn on_a_full_disk_a_failed_open_leaves_nothing_and_errors_name_the_path() {
    let disk = match common::SmallFs::mount("1m") {
        Ok(d) => d,
        Err(reason) => return common::skip(reason),
    };
    let dir = disk.path();
    // The preallocating policies (the default among them) cannot zero 64 MiB here.
    for policy in [LogPolicy::Prealloc, LogPolicy::DirectDsync] {
        if policy.availability_for(dir).is_err() {
            continue;
        }
        let path = dir.join(format!("new-{policy}"));
        let e = LogOptions::new().policy(policy).open(&path).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NoSpace, "{policy}: {e}");
        assert_eq!(e.path(), Some(path.as_path()), "{policy}: {e}");
        assert!(
            !e.to_string().contains("flush"),
            "{policy}: advice for a call a log lacks: {e}"
        );
        assert!(names(dir).is_empty(), "{policy}: left {:?}", names(dir));
    }
    let e = Log::open(dir.join("default")).unwrap_err();
    assert!(e.is_no_space(), "{e}");
    assert!(names(dir).is_empty(), "default: left {:?}", names(dir));

    // A growing log fills the disk: the append's error names the path.
    let path = dir.join("grows");
    let log = options(LogPolicy::Fdatasync).open(&path).unwrap();
    let mut acked = 0;
    let e = loop {
        match log.append_durable(&[7u8; 4000]) {
            Ok(_) => acked += 1,
            Err(e) => break e,
        }
    };
    assert!(e.is_no_space(), "{e}");
    assert_eq!(e.path(), Some(path.as_path()), "{e}");
    drop(log);
    // Reopened to preallocate on a full disk: refused, and the log as it was.
    let before = fs::read(&path).unwrap();
    let e = LogOptions::new()
        .policy(LogPolicy::Prealloc)
        .open(&path)
        .unwrap_err();
    assert!(e.is_no_space(), "{e}");
    assert_eq!(e.path(), Some(path.as_path()), "{e}");
    let after = fs::read(&path).unwrap();
    assert_eq!(after.len(), before.len(), "the log grew");
    assert_eq!(records(&path).len(), acked);
}

#[test]
fn on_a_read_only_file_system_nothing_is_made_or_changed() {
    let disk = match common::SmallFs::mount("4m") {
        Ok(d) => d,
        Err(reason) => return common::skip(reason),
    };
    let dir = disk.path();
    let path = dir.join("kept.log");
    let log = options(LogPolicy::Fdatasync).open(&path).unwrap();
    log.append_durable(b"kept").unwrap();
    drop(log);
    let before = fs::read(&path).unwrap();
    let remount = Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(dir)
        .status();
    if !remount.is_ok_and(|s| s.success()) {
        return common::skip("cannot remount a tmpfs read-only");
    }
    for target in [path.clone(), dir.join("new.log")] {
        let e = Log::open(&target).unwrap_err();
        assert_eq!(e.path(), Some(target.as_path()), "{e}");
        assert_eq!(e.raw_os_error(), Some(libc::EROFS), "{e}");
    }
    assert_eq!(names(dir), ["kept.log"]);
    assert_eq!(fs::read(&path).unwrap(), before);
}

// ------------------------------------------------------------------------------------------
// Reading back in constant memory
// ------------------------------------------------------------------------------------------

/// Set (to a log's path) for the re-executed child of
/// [`a_10_gib_log_is_read_back_in_constant_memory`].
const READER_CHILD_ENV: &str = "IOLAB_LOG_OWNERSHIP_READER";

#[test]
fn log_reader_child() {
    let Some(path) = std::env::var_os(READER_CHILD_ENV) else {
        return;
    };
    let (mut count, mut bytes) = (0u64, 0u64);
    for record in Log::records(PathBuf::from(path)).unwrap() {
        count += 1;
        bytes += record.unwrap().len() as u64;
    }
    let status = fs::read_to_string("/proc/self/status").unwrap();
    let peak = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .unwrap()
        .trim();
    println!("records {count} bytes {bytes} peak {peak}");
}

/// A log of 10 GiB of 1 MiB records (zeros), written as a sparse file: the records'
/// frame headers, copied from a log the library made, with holes between them. On a tmpfs
/// where there is one (`/dev/shm`): its holes read as the zero page, where a disk file
/// system's fill the page cache (2 s here against 30 s).
#[test]
fn a_10_gib_log_is_read_back_in_constant_memory() {
    const RECORD: u64 = 1 << 20;
    let dir = tempfile::tempdir_in("/dev/shm").unwrap_or_else(|_| common::scratch());
    let path = dir.path().join("big.log");
    let log = options(LogPolicy::Fdatasync).open(&path).unwrap();
    log.append_durable(&vec![0u8; RECORD as usize]).unwrap();
    drop(log);
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let mut frame = [0u8; 8];
    file.read_exact_at(&mut frame, LOG_HEADER_LEN).unwrap();
    let step = 8 + RECORD;
    let count = (10u64 << 30) / step;
    for i in 1..count {
        file.write_all_at(&frame, LOG_HEADER_LEN + i * step)
            .unwrap();
    }
    file.set_len(LOG_HEADER_LEN + count * step).unwrap();
    drop(file);

    let out = Command::new(std::env::current_exe().unwrap())
        .args(common::child_test_args("log_reader_child"))
        .env(READER_CHILD_ENV, &path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // libtest's `test NAME ... ` comes first on the line.
    let line = stdout
        .lines()
        .find_map(|l| l.find("records ").map(|at| &l[at..]))
        .unwrap_or_else(|| panic!("{stdout}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words[1].parse::<u64>().unwrap(), count, "{line}");
    assert_eq!(words[3].parse::<u64>().unwrap(), count * RECORD, "{line}");
    assert_eq!(words[6], "kB", "{line}");
    let peak_kib: u64 = words[5].parse().unwrap();
    assert!(
        peak_kib < 16 << 10,
        "peak RSS {peak_kib} KiB reading a 10 GiB log"
    );
    fs::remove_file(&path).unwrap();
}
