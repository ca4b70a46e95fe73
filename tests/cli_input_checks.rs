//! Input that `edit`, `random` and `gen tree` must refuse (or describe) before they do
//! anything: a /proc file, a FIFO without a writer, a file smaller than one block, a tree of
//! no files, a tree whose files exist. Each gets one line naming the file and the cause, a
//! non-zero exit, and leaves the user's files as they were.

use iolab_testkit as common;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use assert_cmd::cargo::CommandCargoExt;

/// Long enough for any of these commands; short enough that a regression that blocks (a
/// FIFO's open) fails the test instead of hanging it.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The children's cache folder (`XDG_CACHE_HOME`): this file's own, so no test reads or
/// writes the user's machine profile.
const CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache-cli_input_checks");

fn iolab() -> Command {
    let mut cmd = Command::cargo_bin("iolab").unwrap();
    cmd.env("XDG_CACHE_HOME", CACHE);
    cmd
}

/// Runs `cmd` under [`TIMEOUT`]; panics if it does not finish in time.
fn run(cmd: Command) -> Output {
    common::run_within(cmd, TIMEOUT)
}

/// Asserts one error line `iolab: <path>: …<expected>…`, nothing on stdout, exit 1.
fn assert_one_line_error(o: &Output, path: &Path, expected: &str) {
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!("iolab: {}: ", path.display())),
        "{stderr}"
    );
    assert!(stderr.contains(expected), "{stderr}");
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo has no memory effects.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

#[test]
fn edit_refuses_a_proc_file_before_opening_it_for_writing() {
    let status = Path::new("/proc/self/status");
    if !status.exists() {
        return common::skip("no /proc");
    }
    for strategy in ["mmap", "std-whole", "std-stream"] {
        for args in [
            &["edit", "truncate-first-line", "-s", strategy][..],
            &[
                "edit", "replace", "--from", "a", "--to", "b", "-s", strategy,
            ][..],
            &["edit", "replace", "--from", "a", "--to", "b", "--no-sync"][..],
        ] {
            let mut cmd = iolab();
            cmd.args(args).arg(status);
            let o = run(cmd);
            assert_one_line_error(&o, status, "its size is not real");
        }
    }
}

#[test]
fn edit_never_opens_a_proc_file_for_writing() {
    // strace shows every open; without it the test above still checks the refusal.
    let traced = Command::new("strace").arg("-V").output();
    if !traced.is_ok_and(|o| o.status.success()) {
        return common::skip("no strace");
    }
    let bin = env!("CARGO_BIN_EXE_iolab");
    for strategy in ["mmap", "std-whole", "std-stream"] {
        let mut cmd = Command::new("strace");
        cmd.args(["-f", "-e", "trace=open,openat,write,pwrite64,ftruncate"])
            .arg(bin)
            .args([
                "edit",
                "truncate-first-line",
                "-s",
                strategy,
                "/proc/self/status",
            ]);
        let o = run(cmd);
        if o.status.code() != Some(1) {
            // strace itself could not trace (no ptrace in this container).
            return common::skip(String::from_utf8_lossy(&o.stderr).trim().to_string());
        }
        let trace = String::from_utf8_lossy(&o.stderr);
        let opens: Vec<&str> = trace
            .lines()
            .filter(|l| l.contains("/proc/self/status"))
            .collect();
        assert!(!opens.is_empty(), "{trace}");
        for line in opens {
            assert!(
                !line.contains("O_RDWR") && !line.contains("O_WRONLY"),
                "{strategy}: {line}"
            );
        }
        assert!(!trace.contains("ftruncate("), "{strategy}: {trace}");
        assert!(!trace.contains("pwrite64("), "{strategy}: {trace}");
    }
}

#[test]
fn edit_replace_with_the_same_byte_says_so_and_changes_nothing() {
    let dir = common::scratch();
    let path = dir.path().join("c.csv");
    fs::write(&path, "a,b,c\n").unwrap();
    let mut cmd = iolab();
    cmd.args(["edit", "replace", "--from", ",", "--to", ","])
        .arg(&path);
    let o = run(cmd);
    assert!(o.status.success(), "{o:?}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        stdout,
        format!(
            "{}: --from and --to are the same byte (','); left unchanged\n",
            path.display()
        )
    );
    assert_eq!(fs::read(&path).unwrap(), b"a,b,c\n");
}

#[test]
fn random_on_a_file_smaller_than_a_block_reports_the_real_read_size() {
    let dir = common::scratch();
    let path = dir.path().join("small");
    fs::write(&path, vec![b'x'; 1000]).unwrap();
    let mut cmd = iolab();
    cmd.args(["random", "-m", "pread", "--reads", "50"])
        .arg(&path);
    let o = run(cmd);
    assert!(o.status.success(), "{o:?}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("1000 B reads (the whole file: smaller than one 4.00 KiB block)"),
        "{stdout}"
    );
    let mut cmd = iolab();
    cmd.args(["random", "-m", "pread", "--reads", "50", "--json"])
        .arg(&path);
    let o = run(cmd);
    assert!(o.status.success(), "{o:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["block_bytes"], 4096);
    assert_eq!(v["bytes_per_read"], 1000.0);
    assert_eq!(fs::read(&path).unwrap(), vec![b'x'; 1000]);
}

#[test]
fn random_refuses_a_fifo_without_waiting_for_a_writer() {
    let dir = common::scratch();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    for method in ["pread", "mmap", "pread-direct"] {
        for verbose in [false, true] {
            let mut cmd = iolab();
            cmd.args(["random", "-m", method]);
            if verbose {
                cmd.arg("--verbose");
            }
            cmd.arg(&fifo);
            let o = run(cmd);
            assert_one_line_error(&o, &fifo, "is a FIFO, not a regular file");
        }
    }
}

#[test]
fn gen_tree_refuses_no_files_and_names_the_file_that_exists() {
    let dir = common::scratch();
    let out = dir.path().join("t0");
    let mut cmd = iolab();
    cmd.args(["gen", "tree", "--files", "0", "--out"]).arg(&out);
    let o = run(cmd);
    assert_one_line_error(&o, &out, "a tree needs at least 1 file");
    assert!(!out.exists());

    let out = dir.path().join("t1");
    let mut cmd = iolab();
    cmd.args(["gen", "tree", "--files", "3", "--out"]).arg(&out);
    assert!(run(cmd).status.success());
    let first = out.join("d000/d000/f000000.txt");
    let before = fs::read(&first).unwrap();
    let mut cmd = iolab();
    cmd.args(["gen", "tree", "--files", "3", "--out"]).arg(&out);
    let o = run(cmd);
    assert_one_line_error(&o, &first, "already exists (use --force to replace it)");
    assert_eq!(fs::read(&first).unwrap(), before);
}
