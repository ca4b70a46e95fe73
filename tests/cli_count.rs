//! End-to-end tests of `iolab count` and `iolab methods`: the binary is run as a user would
//! run it, and its counts are compared with the system's `wc -l` on the same files.
//!
//! Linux only (FIFOs, /proc, seccomp, io_uring). Tests that need a facility the machine
//! lacks (an unprivileged user, seccomp) print a note and skip instead of failing.

use common::{is_root, run_as_nobody};
use iolab_testkit as common;

use std::collections::BTreeSet;
use std::ffi::CString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Output, Stdio};
use std::thread;
use std::time::Duration;

use assert_cmd::Command;
use predicates::prelude::*;
use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_iolab");
const WC: &str = "/usr/bin/wc";

/// Every method `iolab methods count` must list, in any order.
const METHOD_NAMES: [&str; 14] = [
    "bufread-lines",
    "bufread-chunks",
    "direct",
    "mmap",
    "mmap-avx2",
    "mmap-avx512",
    "readv",
    "uring",
    "uring-readv",
    "mmap-parallel",
    "pread-parallel",
    "uring-direct",
    "stream",
    "auto",
];

/// Methods that need a regular file with a real size; they refuse pipes and /proc files.
const SIZED_METHODS: [&str; 9] = [
    "direct",
    "mmap",
    "mmap-avx2",
    "mmap-avx512",
    "uring",
    "uring-readv",
    "mmap-parallel",
    "pread-parallel",
    "uring-direct",
];

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn iolab() -> Command {
    Command::new(BIN)
}

fn iolab_std() -> StdCommand {
    StdCommand::new(BIN)
}

fn stdout_of(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// One row of `iolab methods count`.
#[derive(Debug)]
struct MethodRow {
    name: String,
    /// `None` when available, else the reason given after `unavailable:`.
    unavailable: Option<String>,
}

/// Parses `iolab methods count` output, checking each line's shape on the way.
fn parse_methods(stdout: &str) -> Vec<MethodRow> {
    stdout
        .lines()
        .map(|line| {
            let name = line
                .split_whitespace()
                .next()
                .unwrap_or_else(|| panic!("empty line in methods output: {stdout:?}"));
            let rest = line[name.len()..].trim_start();
            let unavailable = if rest == "available" {
                None
            } else if let Some(reason) = rest.strip_prefix("unavailable:") {
                let reason = reason.trim();
                assert!(!reason.is_empty(), "no reason given on line {line:?}");
                Some(reason.to_string())
            } else {
                panic!("line {line:?} is neither `available` nor `unavailable: <reason>`");
            };
            MethodRow {
                name: name.to_string(),
                unavailable,
            }
        })
        .collect()
}

fn run_methods(mut cmd: StdCommand) -> Vec<MethodRow> {
    let output = cmd.args(["methods", "count"]).output().expect("run iolab");
    assert!(output.status.success(), "iolab methods count: {output:?}");
    parse_methods(&stdout_of(&output))
}

/// The methods this machine can run, as `iolab methods count` reports them; the others
/// are named in a `skipped:` line.
fn available_methods() -> Vec<String> {
    let (available, unavailable): (Vec<_>, Vec<_>) = run_methods(iolab_std())
        .into_iter()
        .partition(|row| row.unavailable.is_none());
    for row in unavailable {
        common::skip_once(format!(
            "{} is unavailable here: {}",
            row.name,
            row.unavailable.unwrap_or_default()
        ));
    }
    available.into_iter().map(|row| row.name).collect()
}

/// The per-file counts of the real `wc -l` on `paths` (the `total` line is dropped),
/// checking that wc names the files as given.
fn wc_counts(paths: &[&Path]) -> Vec<u64> {
    let output = StdCommand::new(WC)
        .arg("-l")
        .args(paths)
        .output()
        .expect("run wc");
    assert!(output.status.success(), "wc -l failed: {output:?}");
    let stdout = stdout_of(&output);
    let counts: Vec<u64> = stdout
        .lines()
        .take(paths.len())
        .zip(paths)
        .map(|(line, path)| {
            // wc pads counts to a common width when given several files.
            let (count, name) = line
                .trim_start()
                .split_once(' ')
                .unwrap_or_else(|| panic!("unexpected wc line {line:?}"));
            assert_eq!(name, path.display().to_string(), "wc line {line:?}");
            count.parse().expect("wc count is a number")
        })
        .collect();
    assert_eq!(counts.len(), paths.len(), "wc output {stdout:?}");
    counts
}

fn wc_count(path: &Path) -> u64 {
    wc_counts(&[path])[0]
}

/// `wc -l`'s output for `rows` (count, name) from `operands`, the names on the command
/// line: the column is as wide as the digits of the operands' regular sizes summed, at
/// least 7 if one of them exists but is not regular; 1 for a single operand. As GNU `wc`,
/// an operand that is there but cannot be read still counts by its `stat`, and one that
/// does not exist adds nothing.
fn expected_stdout<P: AsRef<Path>>(rows: &[(u64, String)], operands: &[P]) -> String {
    let width = if operands.len() > 1 {
        let found: Vec<fs::Metadata> = operands
            .iter()
            .filter_map(|p| fs::metadata(p).ok())
            .collect();
        let total: u64 = found.iter().filter(|m| m.is_file()).map(|m| m.len()).sum();
        let minimum = if found.iter().any(|m| !m.is_file()) {
            7
        } else {
            1
        };
        total.to_string().len().max(minimum)
    } else {
        1
    };
    let mut out = String::new();
    for (count, label) in rows {
        out.push_str(&format!("{count:>width$} {label}\n"));
    }
    if operands.len() > 1 {
        let total: u64 = rows.iter().map(|(count, _)| count).sum();
        out.push_str(&format!("{total:>width$} total\n"));
    }
    out
}

/// Checks that stderr is exactly one `iolab: …` line containing every one of `needles`,
/// with no trace of a panic.
fn assert_one_error_line(stderr: &str, needles: &[&str]) {
    assert!(
        stderr.ends_with('\n') && stderr.lines().count() == 1,
        "stderr should be exactly one line, got {stderr:?}"
    );
    assert!(stderr.starts_with("iolab: "), "stderr {stderr:?}");
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "stderr {stderr:?} lacks {needle:?}"
        );
    }
    assert_no_panic(stderr);
}

fn assert_no_panic(stderr: &str) {
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "the binary panicked: {stderr:?}"
    );
}

/// `direct` is listed as available when the kernel has O_DIRECT, yet a file system may
/// still refuse it for a file (tmpfs before Linux 6.6, some FUSE). That is documented
/// behaviour, not a bug: such a run is skipped with a note.
fn refused_per_file(method: &str, output: &Output) -> bool {
    let stderr = stderr_of(output);
    if method == "direct"
        && output.status.code() == Some(1)
        && stderr.contains("method 'direct' is unavailable")
    {
        common::skip_once(format!("direct: {}", stderr.trim_end()));
        return true;
    }
    false
}

/// A small deterministic generator (xorshift64*), so failures can be reproduced.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

/// Text of exactly `len` bytes: ASCII lines of random length (so it may end mid-line).
fn text_of_len(rng: &mut Rng, len: usize) -> Vec<u8> {
    let mut text = Vec::with_capacity(len + 200);
    while text.len() < len {
        let line_len = (rng.next() % 120) as usize;
        text.extend((0..line_len).map(|_| b'a' + (rng.next() % 26) as u8));
        text.push(b'\n');
    }
    text.truncate(len);
    text
}

/// The text fixtures (valid UTF-8): the edge cases of `wc -l`, and big files that take
/// the multi-buffer and mmap paths.
fn text_fixtures(dir: &Path) -> Vec<PathBuf> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("no-trailing-newline", b"one\ntwo\nthree".to_vec()),
        ("only-newlines", b"\n\n\n\n\n\n\n".to_vec()),
        ("crlf", b"a\r\nb\r\n\r\nlast\r\n".to_vec()),
        // 3 MiB: over auto's mmap threshold, several buffers for every reader.
        ("three-mib", text_of_len(&mut rng, 3 << 20)),
        // Not a multiple of any block size, so `direct` ends on an unaligned tail.
        ("three-mib-odd", text_of_len(&mut rng, (3 << 20) + 4097)),
    ];
    files
        .into_iter()
        .map(|(name, bytes)| {
            let path = dir.join(name);
            fs::write(&path, bytes).expect("write fixture");
            path
        })
        .collect()
}

/// Random bytes, certainly not UTF-8 (and with newlines among them).
fn binary_fixture(dir: &Path) -> PathBuf {
    let mut bytes = b"fine first line\n\xff\xfe".to_vec();
    bytes.extend(Rng(42).bytes(256 * 1024));
    let path = dir.join("random-bytes");
    fs::write(&path, bytes).expect("write fixture");
    path
}

fn path_label(path: &Path) -> String {
    path.display().to_string()
}

// ---------------------------------------------------------------------------------------
// 1. Counts and output format, for every available method
// ---------------------------------------------------------------------------------------

#[test]
fn every_available_method_counts_like_wc() {
    let dir = TempDir::new().unwrap();
    let texts = text_fixtures(dir.path());
    let binary = binary_fixture(dir.path());
    let methods = available_methods();
    assert!(
        methods.iter().any(|m| m == "auto"),
        "auto is always available"
    );

    for method in &methods {
        // bufread-lines refuses invalid UTF-8 (tested below); every other method counts
        // any bytes.
        let mut files: Vec<&Path> = texts.iter().map(PathBuf::as_path).collect();
        if method != "bufread-lines" {
            files.push(&binary);
        }
        let want = wc_counts(&files);

        // One file per run: `<count> <file>` and nothing else.
        let mut refused = false;
        for (path, count) in files.iter().zip(&want) {
            let output = iolab_std()
                .args(["count", "--method", method])
                .arg(path)
                .output()
                .unwrap();
            if refused_per_file(method, &output) {
                refused = true;
                break;
            }
            assert!(
                output.status.success(),
                "{method} on {}: {output:?}",
                path.display()
            );
            assert_eq!(
                stdout_of(&output),
                format!("{count} {}\n", path.display()),
                "method {method}"
            );
            assert_eq!(stderr_of(&output), "", "method {method}");
        }
        if refused {
            continue;
        }

        // All files in one run: one line each, then `<total> total`.
        let rows: Vec<(u64, String)> = want
            .iter()
            .zip(&files)
            .map(|(&count, path)| (count, path_label(path)))
            .collect();
        iolab()
            .args(["count", "--method", method])
            .args(&files)
            .assert()
            .success()
            .stdout(expected_stdout(&rows, &files))
            .stderr("");
    }
}

#[test]
fn bufread_lines_refuses_invalid_utf8_and_goes_on() {
    let dir = TempDir::new().unwrap();
    let binary = binary_fixture(dir.path());
    let good = dir.path().join("good");
    fs::write(&good, "a\nb\n").unwrap();

    // Alone: exit 1, one line naming the file and the cause, nothing on stdout.
    let output = iolab_std()
        .args(["count", "--method", "bufread-lines"])
        .arg(&binary)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(stdout_of(&output), "");
    assert_one_error_line(
        &stderr_of(&output),
        &[&path_label(&binary), "invalid UTF-8"],
    );

    // Between good files: those are still counted, with a total.
    let output = iolab_std()
        .args(["count", "--method", "bufread-lines"])
        .arg(&good)
        .arg(&binary)
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let rows = [(2, path_label(&good)), (2, path_label(&good))];
    assert_eq!(
        stdout_of(&output),
        expected_stdout(&rows, &[&good, &binary, &good])
    );
    assert_one_error_line(
        &stderr_of(&output),
        &[&path_label(&binary), "invalid UTF-8"],
    );
}

#[test]
fn dash_and_no_file_read_stdin() {
    let dir = TempDir::new().unwrap();
    let texts = text_fixtures(dir.path());
    let binary = binary_fixture(dir.path());

    // From a pipe, with the default method and the streaming ones.
    for path in texts.iter().chain([&binary]) {
        let count = wc_count(path);
        let bytes = fs::read(path).unwrap();
        let want = format!("{count} -\n");
        iolab()
            .args(["count", "-"])
            .write_stdin(bytes.clone())
            .assert()
            .success()
            .stdout(want.clone());
        // No operand at all: the count alone, as `wc -l < FILE` prints it.
        iolab()
            .arg("count")
            .write_stdin(bytes.clone())
            .assert()
            .success()
            .stdout(format!("{count}\n"));
        for method in ["bufread-chunks", "readv"] {
            iolab()
                .args(["count", "--method", method, "-"])
                .write_stdin(bytes.clone())
                .assert()
                .success()
                .stdout(want.clone());
        }
    }

    // From a regular file on stdin (`iolab count - < FILE`), with every method.
    for method in available_methods() {
        for path in &texts {
            let count = wc_count(path);
            let output = iolab_std()
                .args(["count", "--method", &method, "-"])
                .stdin(File::open(path).unwrap())
                .output()
                .unwrap();
            if refused_per_file(&method, &output) {
                break;
            }
            assert!(output.status.success(), "{method}: {output:?}");
            assert_eq!(stdout_of(&output), format!("{count} -\n"), "{method}");
        }
    }
}

/// `wc -l` counts standard input from its current position. When stdin is a regular file
/// that was partly read already (`{ read first; iolab count; } < FILE`), the methods that
/// read by offset (mmap family, direct, uring, uring-readv, and so `auto` on big files)
/// must start at that position too, not at offset 0.
#[test]
fn stdin_counts_from_its_current_offset() {
    let dir = TempDir::new().unwrap();
    let texts = text_fixtures(dir.path());
    let big = &texts[4];
    let skip = 1000u64;
    // Same file description for both programs, positioned after `skip` bytes.
    let run = |program: &str, args: &[&str]| {
        let mut file = File::open(big).unwrap();
        io::Seek::seek(&mut file, io::SeekFrom::Start(skip)).unwrap();
        StdCommand::new(program)
            .args(args)
            .stdin(file)
            .output()
            .unwrap()
    };
    // With no operand both print the count alone.
    let want = stdout_of(&run(WC, &["-l"]));
    assert!(!want.contains(' '), "{want:?}");
    for method in available_methods() {
        let output = run(BIN, &["count", "--method", &method]);
        if refused_per_file(&method, &output) {
            continue;
        }
        assert_eq!(stdout_of(&output), want, "{method}");
    }
}

// ---------------------------------------------------------------------------------------
// 2. `iolab methods count`
// ---------------------------------------------------------------------------------------

#[test]
fn methods_lists_every_method_once_with_its_availability() {
    let rows = run_methods(iolab_std());
    let names: Vec<&str> = rows.iter().map(|row| row.name.as_str()).collect();
    let set: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(
        set.len(),
        names.len(),
        "a method is listed twice: {names:?}"
    );
    assert_eq!(set, BTreeSet::from(METHOD_NAMES));
    // The portable methods run everywhere.
    for always in ["bufread-lines", "bufread-chunks", "mmap", "readv", "auto"] {
        let row = rows.iter().find(|row| row.name == always).unwrap();
        assert_eq!(row.unavailable, None, "{always} should be available");
    }

    // `count` is the default workload.
    let default = iolab().arg("methods").assert().success();
    let explicit = iolab().args(["methods", "count"]).assert().success();
    assert_eq!(default.get_output().stdout, explicit.get_output().stdout);
}

// ---------------------------------------------------------------------------------------
// 3. --help and --version
// ---------------------------------------------------------------------------------------

#[test]
fn help_and_version() {
    iolab().arg("--help").assert().success().stdout(
        predicate::str::contains("Usage: iolab")
            .and(predicate::str::contains("count"))
            .and(predicate::str::contains("methods")),
    );
    iolab().args(["count", "--help"]).assert().success().stdout(
        predicate::str::contains("Usage: iolab count")
            .and(predicate::str::contains("--method"))
            .and(predicate::str::contains("FILE")),
    );
    iolab()
        .args(["methods", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Usage: iolab methods"));

    let version = format!("iolab {}\n", env!("CARGO_PKG_VERSION"));
    iolab().arg("--version").assert().success().stdout(version);
}

// ---------------------------------------------------------------------------------------
// 4. Bad input: one line per failed file, the good files still counted
// ---------------------------------------------------------------------------------------

/// Runs `iolab count --method M good1 bad good2` for every available method and checks
/// that `bad` costs one stderr line (with `needles`) and exit code 1, nothing else.
fn check_bad_between_good(
    bad: &Path,
    needles: &[&str],
    good: [&Path; 2],
    prepare: impl Fn(&mut StdCommand),
) {
    check_bad_between_good_with(Path::new(BIN), bad, needles, good, prepare)
}

/// [`check_bad_between_good`] with another copy of the program (one `nobody` can run).
fn check_bad_between_good_with(
    program: &Path,
    bad: &Path,
    needles: &[&str],
    good: [&Path; 2],
    prepare: impl Fn(&mut StdCommand),
) {
    let want: Vec<(u64, String)> = good.iter().map(|p| (wc_count(p), path_label(p))).collect();
    for method in available_methods() {
        let mut cmd = StdCommand::new(program);
        cmd.args(["count", "--method", &method])
            .arg(good[0])
            .arg(bad)
            .arg(good[1]);
        prepare(&mut cmd);
        let output = cmd.output().unwrap();
        if refused_per_file(&method, &output) {
            continue;
        }
        assert_eq!(output.status.code(), Some(1), "{method}: {output:?}");
        assert_eq!(
            stdout_of(&output),
            expected_stdout(&want, &[good[0], bad, good[1]]),
            "{method}"
        );
        let mut all = vec![path_label(bad)];
        all.extend(needles.iter().map(|n| n.to_string()));
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        assert_one_error_line(&stderr_of(&output), &all);
    }
}

fn two_good_files(dir: &Path) -> [PathBuf; 2] {
    let a = dir.join("good-a");
    let b = dir.join("good-b");
    fs::write(&a, "1\n2\n3\n").unwrap();
    fs::write(&b, "x\ny").unwrap();
    [a, b]
}

#[test]
fn nonexistent_file_is_reported_and_others_counted() {
    let dir = TempDir::new().unwrap();
    let [a, b] = two_good_files(dir.path());
    let missing = dir.path().join("does-not-exist");
    check_bad_between_good(&missing, &["No such file or directory"], [&a, &b], |_| {});
}

#[test]
fn directory_is_reported_and_others_counted() {
    let dir = TempDir::new().unwrap();
    let [a, b] = two_good_files(dir.path());
    let sub = dir.path().join("a-directory");
    fs::create_dir(&sub).unwrap();
    // As `wc -l`: the error on stderr, and a 0 for the directory on stdout, which also
    // widens the column to 7 (a file that is there but not regular).
    let want = vec![
        (wc_count(&a), path_label(&a)),
        (0, path_label(&sub)),
        (wc_count(&b), path_label(&b)),
    ];
    for method in available_methods() {
        let output = StdCommand::new(BIN)
            .args(["count", "--method", &method])
            .args([&a, &sub, &b])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{method}: {output:?}");
        assert_eq!(
            stdout_of(&output),
            expected_stdout(&want, &[&a, &sub, &b]),
            "{method}"
        );
        assert_one_error_line(&stderr_of(&output), &[&path_label(&sub), "is a directory"]);
    }
}

#[test]
fn unreadable_file_is_reported_and_others_counted() {
    let dir = TempDir::new().unwrap();
    // The unprivileged user must reach the files; TempDir is created 0700.
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let [a, b] = two_good_files(dir.path());
    let secret = dir.path().join("secret");
    fs::write(&secret, "hidden\n").unwrap();
    fs::set_permissions(&secret, fs::Permissions::from_mode(0o000)).unwrap();

    if !is_root() {
        return check_bad_between_good(&secret, &["Permission denied"], [&a, &b], |_| {});
    }
    // Root bypasses permission checks: run a copy `nobody` can reach, as nobody.
    let exe = match common::nobody_exe(Path::new(BIN), &["--version"]) {
        Ok(exe) => exe,
        Err(reason) => return common::skip(reason),
    };
    check_bad_between_good_with(
        exe.path(),
        &secret,
        &["Permission denied"],
        [&a, &b],
        |cmd| {
            run_as_nobody(cmd);
            cmd.current_dir("/");
        },
    );
}

#[test]
fn unknown_method_lists_the_valid_ones() {
    let dir = TempDir::new().unwrap();
    let [a, _] = two_good_files(dir.path());
    let output = iolab()
        .args(["count", "--method", "foo"])
        .arg(&a)
        .assert()
        .failure()
        .stdout("")
        .get_output()
        .clone();
    let stderr = stderr_of(&output);
    assert!(stderr.contains("unknown method 'foo'"), "{stderr:?}");
    for name in METHOD_NAMES {
        assert!(stderr.contains(name), "{stderr:?} does not list {name}");
    }
    assert_no_panic(&stderr);
}

// ---------------------------------------------------------------------------------------
// 5. Files without a trustworthy size: FIFOs and /proc
// ---------------------------------------------------------------------------------------

/// Runs `cmd` (which opens the FIFO at `fifo`) while a thread writes `content` into it.
fn run_with_fifo_writer(fifo: &Path, content: &[u8], mut cmd: StdCommand) -> Output {
    let writer = {
        let fifo = fifo.to_path_buf();
        let content = content.to_vec();
        thread::spawn(move || {
            // Blocks until a reader opens the FIFO. Errors (EPIPE when iolab refuses the
            // FIFO and closes it) are expected and ignored; SIGPIPE is ignored in Rust.
            if let Ok(mut w) = OpenOptions::new().write(true).open(&fifo) {
                let _ = w.write_all(&content);
            }
        })
    };
    let output = cmd.output().unwrap();
    // Should iolab not have opened the FIFO, release the writer with a reader of our own.
    while !writer.is_finished() {
        let _reader = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(fifo);
        thread::sleep(Duration::from_millis(10));
    }
    writer.join().unwrap();
    output
}

fn make_fifo(path: &Path) {
    let c_path = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c_path` is a valid NUL-terminated string that outlives the call.
    let rc = unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) };
    assert_eq!(rc, 0, "mkfifo: {}", io::Error::last_os_error());
}

#[test]
fn fifo_is_streamed_or_refused() {
    let dir = TempDir::new().unwrap();
    let fifo = dir.path().join("fifo");
    make_fifo(&fifo);
    // More than a pipe's buffer, so the reader sees several partial reads.
    let content = text_of_len(&mut Rng(7), 1 << 20);
    let lines = content.iter().filter(|&&b| b == b'\n').count();
    let available = available_methods();

    for method in ["auto", "bufread-chunks", "readv", "bufread-lines"] {
        let mut cmd = iolab_std();
        cmd.args(["count", "--method", method]).arg(&fifo);
        let output = run_with_fifo_writer(&fifo, &content, cmd);
        assert!(output.status.success(), "{method}: {output:?}");
        assert_eq!(
            stdout_of(&output),
            format!("{lines} {}\n", fifo.display()),
            "{method}"
        );
    }

    for method in SIZED_METHODS {
        if !available.iter().any(|m| m == method) {
            continue;
        }
        let mut cmd = iolab_std();
        cmd.args(["count", "--method", method]).arg(&fifo);
        let output = run_with_fifo_writer(&fifo, &content, cmd);
        assert_eq!(output.status.code(), Some(1), "{method}: {output:?}");
        assert_eq!(stdout_of(&output), "", "{method}");
        assert_one_error_line(
            &stderr_of(&output),
            &[&path_label(&fifo), "FIFO", "needs a regular file"],
        );
    }
}

#[test]
fn proc_files_are_counted_by_auto_and_refused_by_mmap() {
    for file in ["/proc/version", "/proc/cpuinfo"] {
        let path = Path::new(file);
        if !path.exists() {
            common::skip(format!("{file} does not exist"));
            continue;
        }
        // The size is 0 but the content is not: auto must stream it.
        let want = format!("{} {file}\n", wc_count(path));
        for method in ["auto", "bufread-chunks", "readv"] {
            iolab()
                .args(["count", "--method", method, file])
                .assert()
                .success()
                .stdout(want.clone());
        }

        // mmap & co. need a real size: a clear error, never a count of 0.
        for method in available_methods() {
            if !SIZED_METHODS.contains(&method.as_str()) {
                continue;
            }
            let output = iolab_std()
                .args(["count", "--method", &method, file])
                .output()
                .unwrap();
            assert_eq!(output.status.code(), Some(1), "{method}: {output:?}");
            assert_eq!(stdout_of(&output), "", "{method} printed a count");
            assert_one_error_line(&stderr_of(&output), &[file, "/proc", &method]);
        }
    }
}

// ---------------------------------------------------------------------------------------
// 6. Facilities refused by the system: io_uring and O_DIRECT under seccomp
// ---------------------------------------------------------------------------------------

#[cfg(target_arch = "x86_64")]
mod seccomp {
    use std::io;
    use std::mem::offset_of;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Output};

    use libc::{c_ulong, seccomp_data, sock_filter, sock_fprog};

    /// `AUDIT_ARCH_X86_64` from `<linux/audit.h>` (not in the libc crate).
    const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;

    const LOAD_WORD: u32 = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
    const JUMP_EQ: u32 = libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K;
    const JUMP_SET: u32 = libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K;
    const RETURN: u32 = libc::BPF_RET | libc::BPF_K;

    fn stmt(code: u32, k: u32) -> sock_filter {
        jump(code, k, 0, 0)
    }

    fn jump(code: u32, k: u32, jt: u8, jf: u8) -> sock_filter {
        sock_filter {
            code: code as u16,
            jt,
            jf,
            k,
        }
    }

    fn ret_errno(errno: i32) -> sock_filter {
        stmt(
            RETURN,
            libc::SECCOMP_RET_ERRNO | (errno as u32 & libc::SECCOMP_RET_DATA),
        )
    }

    fn ret_allow() -> sock_filter {
        stmt(RETURN, libc::SECCOMP_RET_ALLOW)
    }

    const ARCH: u32 = offset_of!(seccomp_data, arch) as u32;
    const NR: u32 = offset_of!(seccomp_data, nr) as u32;
    /// The low 32 bits of the third argument (x86_64 is little-endian).
    const ARG2_LOW: u32 = (offset_of!(seccomp_data, args) + 2 * 8) as u32;

    /// `io_uring_setup` fails with EPERM, as under Docker's default profile.
    pub fn deny_io_uring_setup() -> Vec<sock_filter> {
        vec![
            stmt(LOAD_WORD, ARCH),
            jump(JUMP_EQ, AUDIT_ARCH_X86_64, 0, 3), // other arch: allow
            stmt(LOAD_WORD, NR),
            jump(JUMP_EQ, libc::SYS_io_uring_setup as u32, 0, 1),
            ret_errno(libc::EPERM),
            ret_allow(),
        ]
    }

    /// `openat` with `O_DIRECT` fails with EINVAL, as on a file system without O_DIRECT.
    pub fn refuse_o_direct() -> Vec<sock_filter> {
        vec![
            stmt(LOAD_WORD, ARCH),
            jump(JUMP_EQ, AUDIT_ARCH_X86_64, 0, 5), // other arch: allow
            stmt(LOAD_WORD, NR),
            jump(JUMP_EQ, libc::SYS_openat as u32, 0, 3), // not openat: allow
            stmt(LOAD_WORD, ARG2_LOW),
            jump(JUMP_SET, libc::O_DIRECT as u32, 0, 1), // no O_DIRECT: allow
            ret_errno(libc::EINVAL),
            ret_allow(),
        ]
    }

    /// Installs `filter` in the child of `cmd` just before it executes the program.
    pub fn with_filter(cmd: &mut Command, mut filter: Vec<sock_filter>) {
        // SAFETY: the closure runs in the forked child before exec and only makes two
        // prctl calls (async-signal-safe) and no allocation. The program it points to is
        // owned by the closure, so it lives until the kernel has copied it.
        unsafe {
            cmd.pre_exec(move || {
                let prog = sock_fprog {
                    len: filter.len() as u16,
                    filter: filter.as_mut_ptr(),
                };
                // Without no_new_privs an unprivileged process may not add a filter.
                if libc::prctl(
                    libc::PR_SET_NO_NEW_PRIVS,
                    1 as c_ulong,
                    0 as c_ulong,
                    0 as c_ulong,
                    0 as c_ulong,
                ) != 0
                    || libc::prctl(
                        libc::PR_SET_SECCOMP,
                        libc::SECCOMP_MODE_FILTER as c_ulong,
                        &prog as *const sock_fprog,
                    ) != 0
                {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }

    /// Runs `cmd` under `filter`, or returns `None` (with a note) when seccomp cannot be
    /// used here.
    pub fn output_under(mut cmd: Command, filter: Vec<sock_filter>) -> Option<Output> {
        with_filter(&mut cmd, filter);
        match cmd.output() {
            Ok(output) => Some(output),
            Err(e) => {
                crate::common::skip(format!("cannot install a seccomp filter here ({e})"));
                None
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn io_uring_refused_by_seccomp() {
    let dir = TempDir::new().unwrap();
    let [file, _] = two_good_files(dir.path());

    let mut cmd = iolab_std();
    cmd.args(["methods", "count"]);
    let Some(output) = seccomp::output_under(cmd, seccomp::deny_io_uring_setup()) else {
        return;
    };
    assert!(output.status.success(), "{output:?}");
    let rows = parse_methods(&stdout_of(&output));
    for name in ["uring", "uring-readv", "uring-direct"] {
        let row = rows.iter().find(|row| row.name == name).unwrap();
        let reason = row
            .unavailable
            .as_deref()
            .unwrap_or_else(|| panic!("{name} listed available under the filter"));
        assert!(
            ["EPERM", "seccomp", "io_uring"]
                .iter()
                .any(|w| reason.contains(w)),
            "{name}: reason {reason:?} does not explain"
        );
    }
    let mmap = rows.iter().find(|row| row.name == "mmap").unwrap();
    assert_eq!(mmap.unavailable, None, "mmap does not need io_uring");

    for method in ["uring", "uring-readv", "uring-direct"] {
        let mut cmd = iolab_std();
        cmd.args(["count", "--method", method]).arg(&file);
        let output = seccomp::output_under(cmd, seccomp::deny_io_uring_setup()).unwrap();
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        assert_eq!(stdout_of(&output), "");
        assert_one_error_line(
            &stderr_of(&output),
            &[&path_label(&file), method, "unavailable"],
        );
    }

    // auto never picks io_uring, so it is unaffected.
    let mut cmd = iolab_std();
    cmd.args(["count", "--method", "auto"]).arg(&file);
    let output = seccomp::output_under(cmd, seccomp::deny_io_uring_setup()).unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        stdout_of(&output),
        format!("{} {}\n", wc_count(&file), file.display())
    );
}

#[cfg(target_arch = "x86_64")]
#[test]
fn o_direct_refused_by_seccomp() {
    let dir = TempDir::new().unwrap();
    let [file, _] = two_good_files(dir.path());
    let want = format!("{} {}\n", wc_count(&file), file.display());

    // Only meaningful where direct works on this file system to begin with.
    let normal = iolab_std()
        .args(["count", "--method", "direct"])
        .arg(&file)
        .output()
        .unwrap();
    if refused_per_file("direct", &normal) {
        return;
    }
    assert_eq!(stdout_of(&normal), want);

    let mut cmd = iolab_std();
    cmd.args(["count", "--method", "direct"]).arg(&file);
    let Some(output) = seccomp::output_under(cmd, seccomp::refuse_o_direct()) else {
        return;
    };
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(stdout_of(&output), "");
    assert_one_error_line(
        &stderr_of(&output),
        &[&path_label(&file), "'direct' is unavailable", "O_DIRECT"],
    );

    // Other methods open without O_DIRECT and still work under the same filter.
    for method in ["auto", "mmap", "bufread-chunks"] {
        let mut cmd = iolab_std();
        cmd.args(["count", "--method", method]).arg(&file);
        let output = seccomp::output_under(cmd, seccomp::refuse_o_direct()).unwrap();
        assert!(output.status.success(), "{method}: {output:?}");
        assert_eq!(stdout_of(&output), want, "{method}");
    }
}

// ---------------------------------------------------------------------------------------
// 7. Standard output closed early (`iolab count … | head -c1`)
// ---------------------------------------------------------------------------------------

fn many_small_files(dir: &Path, n: usize) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let path = dir.join(format!("small-{i:03}"));
            fs::write(&path, "a\nb\n").unwrap();
            path
        })
        .collect()
}

/// The read end of a pipe is closed while iolab still writes: it must end without a
/// panic (exit 0 or 1; it is not killed either, as Rust programs ignore SIGPIPE).
fn assert_quiet_on_closed_stdout(output: &Output) {
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "exit status {:?}, stderr {:?}",
        output.status,
        stderr_of(output)
    );
    assert_no_panic(&stderr_of(output));
}

#[test]
fn closed_stdout_ends_quietly() {
    let dir = TempDir::new().unwrap();
    let files = many_small_files(dir.path(), 200);

    // As the brief's `| head -c1`: the reader goes away right after the start.
    let mut child = iolab_std()
        .arg("count")
        .args(&files)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    assert_quiet_on_closed_stdout(&child.wait_with_output().unwrap());

    // Deterministic variant: the read end is closed before iolab starts, so its very
    // first write fails with EPIPE. The CLI documents ending quietly then.
    for args in [vec!["count"], vec!["methods", "count"]] {
        let mut fds = [0; 2];
        // SAFETY: `fds` is a writable array of two ints, as pipe2 requires.
        let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
        assert_eq!(rc, 0, "pipe2: {}", io::Error::last_os_error());
        // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
        let (read_end, write_end) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        drop(read_end);
        let mut cmd = iolab_std();
        cmd.args(&args);
        if args[0] == "count" {
            cmd.args(&files);
        }
        let output = cmd.stdout(Stdio::from(write_end)).output().unwrap();
        assert_quiet_on_closed_stdout(&output);
        assert_eq!(stderr_of(&output), "", "{args:?}");
    }
}

/// Runs `wc -l ARGS` and `iolab count ARGS` (with `stdin` from a file, if given) in `dir`
/// and checks that they print the same bytes on stdout and agree on success.
fn same_as_wc(dir: &Path, args: &[&std::ffi::OsStr], stdin: Option<&Path>) {
    let run = |program: &str, first: &[&str]| {
        let mut cmd = StdCommand::new(program);
        cmd.current_dir(dir).args(first).args(args);
        if let Some(path) = stdin {
            cmd.stdin(File::open(path).unwrap());
        }
        cmd.output().unwrap()
    };
    let wc = run(WC, &["-l"]);
    let ours = run(BIN, &["count"]);
    assert_eq!(
        String::from_utf8_lossy(&ours.stdout),
        String::from_utf8_lossy(&wc.stdout),
        "{args:?}"
    );
    assert_eq!(ours.status.success(), wc.status.success(), "{args:?}");
    // Every message is one line, whatever the names hold.
    for line in stderr_of(&ours).lines() {
        assert!(line.starts_with("iolab: "), "{line:?}");
    }
}

#[test]
fn corner_cases_print_what_wc_prints() {
    use std::ffi::OsStr;
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    fs::write(d.join("small"), "a\nb\n").unwrap();
    fs::write(d.join("big"), "line\n".repeat(20_000)).unwrap();
    fs::write(d.join("n\nl"), "x\n").unwrap();
    fs::write(d.join("it's\nq"), "x\n").unwrap();
    fs::write(d.join("list"), "small\0\0big\0").unwrap();
    fs::write(d.join("list2"), "small\0big\0").unwrap();
    let os = |s: &'static str| OsStr::new(s);
    let cases: Vec<Vec<&OsStr>> = vec![
        // A name with a newline is shell-quoted, alone and among others.
        vec![os("n\nl")],
        vec![os("small"), os("n\nl"), os("it's\nq")],
        // A missing first operand does not make the column narrow.
        vec![os("missing"), os("big")],
        vec![os("missing"), os("big"), os("small")],
        // A directory widens it to 7.
        vec![os("small"), os(".")],
        // An empty name in a list is an operand: there is a total line.
        vec![os("--files0-from=list")],
        vec![os("--files0-from=list2")],
    ];
    for args in &cases {
        same_as_wc(d, args, None);
    }
    // Standard input: no operand prints no name; a list from a regular file on stdin
    // sizes the column as a list file does.
    same_as_wc(d, &[], Some(&d.join("big")));
    same_as_wc(d, &[os("-")], Some(&d.join("big")));
    same_as_wc(d, &[os("--files0-from=-")], Some(&d.join("list2")));
    // An error message names a file with a newline on one line.
    let output = iolab_std()
        .current_dir(d)
        .args(["count", "no\nsuch"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_one_error_line(&stderr_of(&output), &["'no'$'\\n''such'", "No such file"]);
}

#[test]
fn out_of_range_options_are_refused_and_auto_takes_only_the_hints_of_its_choice() {
    let dir = TempDir::new().unwrap();
    let file = dir.path().join("f");
    fs::write(&file, "a\nb\nc\n").unwrap();
    for args in [
        &["--buffer", "100G"][..],
        &["--threads", "0"],
        &["--queue-depth", "0"],
    ] {
        let output = iolab_std()
            .arg("count")
            .args(args)
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        assert_eq!(stdout_of(&output), "");
        assert_eq!(stderr_of(&output).lines().count(), 1, "{output:?}");
    }
    // Every hint with the default method: the count, never a refusal.
    for hint in [
        "sequential",
        "willneed",
        "hugepage",
        "populate",
        "readahead",
    ] {
        iolab()
            .args(["count", "--hint", hint])
            .arg(&file)
            .assert()
            .success()
            .stdout(format!("3 {}\n", file.display()));
    }
}
