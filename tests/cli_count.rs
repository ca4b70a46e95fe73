//! End-to-end tests of `iolab count` and `iolab methods`: the binary is run as a user would
//! run it, and its counts are compared with the system's `wc -l` on the same files.
//!
//! Linux only (FIFOs, /proc, seccomp, io_uring). Tests that need a facility the machine
//! lacks (an unprivileged user, seccomp) print a note and skip instead of failing.

use iolab_testkit::corpus::text;
use iolab_testkit::count::*;
use iolab_testkit::{
    self as common, assert_error_line, assert_no_panic, is_root, run_as_nobody, stderr_of,
    stdout_of,
};

use assert_cmd::Command;
use predicates::prelude::*;
use std::collections::BTreeSet;
use std::ffi::CString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;
use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_iolab");

/// The children's cache folder (`XDG_CACHE_HOME`): this file's own, so no test reads or
/// writes the user's machine profile.
const CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache-cli_count");

fn iolab() -> Command {
    Command::from_std(common::child(BIN, CACHE))
}

fn iolab_std() -> StdCommand {
    common::child(BIN, CACHE)
}

#[test]
fn every_available_method_counts_like_wc() {
    let dir = TempDir::new().unwrap();
    let texts = text_fixtures(dir.path());
    let binary = binary_fixture(dir.path());
    let methods = available_methods(iolab_std());
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
    assert_error_line(
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
    assert_error_line(
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
    for method in available_methods(iolab_std()) {
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
    for method in available_methods(iolab_std()) {
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
    for method in available_methods(iolab_std()) {
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
        assert_error_line(&stderr_of(&output), &all);
    }
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
    for method in available_methods(iolab_std()) {
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
        assert_error_line(&stderr_of(&output), &[&path_label(&sub), "is a directory"]);
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
    assert!(
        stderr.contains("unknown method `foo`; one of: "),
        "{stderr:?}"
    );
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
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let fifo = fifo.to_path_buf();
        let content = content.to_vec();
        let done = Arc::clone(&done);
        thread::spawn(move || {
            // Blocks until a reader opens the FIFO. A write that fails (EPIPE; SIGPIPE is
            // ignored in Rust) means the reader went away: iolab refused the FIFO, or the
            // open met a reader that was passing (a FIFO's blocked writer wakes when any
            // reader opens, even one that closes at once, and then has none). Until iolab
            // has exited, open again, so that iolab's own open is never left waiting.
            while !done.load(Ordering::SeqCst) {
                let Ok(mut w) = OpenOptions::new().write(true).open(&fifo) else {
                    return;
                };
                if w.write_all(&content).is_ok() {
                    return;
                }
                drop(w);
                thread::sleep(Duration::from_millis(1));
            }
        })
    };
    let output = cmd.output().unwrap();
    done.store(true, Ordering::SeqCst);
    // Should the writer be waiting for a reader, release it with a reader of our own.
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
    let content = text(1 << 20, 60, 7);
    let lines = content.iter().filter(|&&b| b == b'\n').count();
    let available = available_methods(iolab_std());

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
        assert_error_line(
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
        for method in available_methods(iolab_std()) {
            if !SIZED_METHODS.contains(&method.as_str()) {
                continue;
            }
            let output = iolab_std()
                .args(["count", "--method", &method, file])
                .output()
                .unwrap();
            assert_eq!(output.status.code(), Some(1), "{method}: {output:?}");
            assert_eq!(stdout_of(&output), "", "{method} printed a count");
            assert_error_line(&stderr_of(&output), &[file, "/proc", &method]);
        }
    }
}
