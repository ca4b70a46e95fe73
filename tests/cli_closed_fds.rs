//! A standard descriptor closed by the caller (`<&-`, `>&-`) is an error, as it is for
//! `wc -l`, not an empty input or output: Rust's runtime opens `/dev/null` in its place
//! before `main`, and iolab notes the closed ones before that. A `/dev/null` the caller
//! chose, even read-write as Python's `subprocess.DEVNULL` opens it, is no error.

use iolab_testkit as common;

use std::os::unix::process::CommandExt;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// Runs iolab with `args`, descriptor `fd` closed in the child.
fn with_closed(fd: libc::c_int, args: &[&str]) -> Output {
    with_child_setup(args, move || {
        // SAFETY: `close` is async-signal-safe and touches only the child's table.
        unsafe { libc::close(fd) };
    })
}

/// Runs iolab with `args` after `setup` in the child (between fork and exec, so `setup`
/// may only make async-signal-safe calls and must not allocate).
fn with_child_setup(args: &[&str], setup: impl Fn() + Send + Sync + 'static) -> Output {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("iolab"));
    // A private working folder: nothing is left in the crate if a command runs after all.
    let cwd = common::scratch();
    cmd.args(args)
        .stdin(Stdio::null())
        .current_dir(cwd.path())
        .env("XDG_CACHE_HOME", cwd.path().join("cache"));
    // SAFETY: `setup` makes only async-signal-safe calls and allocates nothing, as its
    // callers promise.
    unsafe {
        cmd.pre_exec(move || {
            setup();
            Ok(())
        });
    }
    let out = common::run_within(cmd, Duration::from_secs(60));
    drop(cwd);
    out
}

/// A scratch folder with a file of two lines; the file's path.
fn two_lines() -> (tempfile::TempDir, String) {
    let dir = common::scratch();
    let file = dir.path().join("two");
    std::fs::write(&file, b"a\nb\n").unwrap();
    let path = file.to_str().unwrap().to_string();
    (dir, path)
}

#[test]
fn results_into_a_closed_stdout_fail_with_one_line() {
    let (_dir, file) = two_lines();
    let file = file.as_str();
    for args in [
        &["count", file][..],
        &["methods"],
        &["methods", "count"],
        &["sysinfo"],
        &["write", "-m", "raw-fd", "--bytes", "1K"],
        &["bench", "--quick", "count"],
        &["random", "-m", "pread", "--reads", "10", file],
        &["gen", "lines", "--size", "1K", "--out", "-"],
    ] {
        let out = with_closed(1, args);
        common::assert_one_line_error(&out, 1, &["standard output is closed"]);
    }
    // The edit is refused before the file is touched, not reported after it.
    let csv = format!("{file}.csv");
    std::fs::write(&csv, b"a,b\n").unwrap();
    let out = with_closed(1, &["edit", "replace", "--from", ",", "--to", ";", &csv]);
    common::assert_one_line_error(&out, 1, &["standard output is closed"]);
    assert_eq!(std::fs::read(&csv).unwrap(), b"a,b\n");
}

#[test]
fn counting_a_closed_stdin_is_an_error_for_that_operand_only() {
    let (_dir, file) = two_lines();
    let file = file.as_str();

    let out = with_closed(0, &["count"]);
    common::assert_one_line_error(&out, 1, &["standard input", "Bad file descriptor"]);
    assert!(
        out.stdout.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&out.stdout)
    );

    // The other operands are still counted, and the total is theirs.
    let out = with_closed(0, &["count", file, "-"]);
    common::assert_one_line_error(&out, 1, &["-: ", "Bad file descriptor"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("2 {file}")), "{stdout}");
    assert!(stdout.contains("2 total"), "{stdout}");

    let out = with_closed(0, &["count", "--files0-from", "-"]);
    common::assert_one_line_error(&out, 1, &["file list", "file descriptor 0 is closed"]);

    let out = with_closed(0, &["drain"]);
    common::assert_one_line_error(&out, 1, &["standard input is closed"]);
}

#[test]
fn a_redirected_dev_null_is_not_a_closed_descriptor() {
    let (_dir, file) = two_lines();
    let out = Command::new(assert_cmd::cargo::cargo_bin("iolab"))
        .args(["count", &file, "-"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = with_closed(2, &["count", &file]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("2 "));

    // `/dev/null` opened read-write on descriptors 0 and 1, as Python's
    // `subprocess.DEVNULL` does: the same `/dev/null` Rust's runtime puts on a closed one.
    for args in [
        &["count", file.as_str(), "-"][..],
        &["write", "-m", "raw-fd", "--bytes", "1K"],
    ] {
        let out = with_child_setup(args, || {
            // SAFETY: `open` and `dup2` are async-signal-safe; the path is a static C string.
            unsafe {
                let fd = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
                libc::dup2(fd, 0);
                libc::dup2(fd, 1);
            }
        });
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
