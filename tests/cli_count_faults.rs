//! End-to-end tests of `iolab count` under faults and at the edges: facilities refused by
//! the system (io_uring and O_DIRECT under seccomp), a closed stdout, and the corner cases
//! `wc -l` answers in its own way.

use iolab_testkit::count::*;
use iolab_testkit::{self as common, assert_error_line, assert_no_panic, stderr_of, stdout_of};

use assert_cmd::Command;
use std::fs::{self, File};
use std::io::{self};
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Output, Stdio};
use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_iolab");

/// The children's cache folder (`XDG_CACHE_HOME`): this file's own, so no test reads or
/// writes the user's machine profile.
const CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache-cli_count_faults");

fn iolab() -> Command {
    Command::from_std(common::child(BIN, CACHE))
}

fn iolab_std() -> StdCommand {
    common::child(BIN, CACHE)
}

// ---------------------------------------------------------------------------------------
// 6. Facilities refused by the system: io_uring and O_DIRECT under seccomp
// ---------------------------------------------------------------------------------------

#[cfg(target_arch = "x86_64")]
#[test]
fn io_uring_refused_by_seccomp() {
    let dir = TempDir::new().unwrap();
    let [file, _] = two_good_files(dir.path());

    let mut cmd = iolab_std();
    cmd.args(["methods", "count"]);
    let Some(output) = common::seccomp::output_under(cmd, common::seccomp::deny_io_uring_setup())
    else {
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
        let output =
            common::seccomp::output_under(cmd, common::seccomp::deny_io_uring_setup()).unwrap();
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        assert_eq!(stdout_of(&output), "");
        assert_error_line(
            &stderr_of(&output),
            &[&path_label(&file), method, "unavailable"],
        );
    }

    // auto never picks io_uring, so it is unaffected.
    let mut cmd = iolab_std();
    cmd.args(["count", "--method", "auto"]).arg(&file);
    let output =
        common::seccomp::output_under(cmd, common::seccomp::deny_io_uring_setup()).unwrap();
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
    let Some(output) = common::seccomp::output_under(cmd, common::seccomp::refuse_o_direct())
    else {
        return;
    };
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(stdout_of(&output), "");
    assert_error_line(
        &stderr_of(&output),
        &[&path_label(&file), "'direct' is unavailable", "O_DIRECT"],
    );

    // Other methods open without O_DIRECT and still work under the same filter.
    for method in ["auto", "mmap", "bufread-chunks"] {
        let mut cmd = iolab_std();
        cmd.args(["count", "--method", method]).arg(&file);
        let output =
            common::seccomp::output_under(cmd, common::seccomp::refuse_o_direct()).unwrap();
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
    assert_error_line(&stderr_of(&output), &["'no'$'\\n''such'", "No such file"]);
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
