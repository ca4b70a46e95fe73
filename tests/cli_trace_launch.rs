//! `iolab trace` as the shell sees it: the command starts with the signal dispositions
//! and mask it would have untraced, and iolab exits with the command's status whatever
//! happens to its own output. Each backend that cannot trace here is skipped with the
//! reason.

use iolab_testkit as common;

use std::path::Path;
use std::process::{Command, Output};

use assert_cmd::cargo::CommandCargoExt;

fn iolab_path() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("iolab")
}

fn trace(backend: &str) -> Command {
    let mut c = Command::cargo_bin("iolab").unwrap();
    c.args(["trace", "--no-calibrate", "--backend", backend]);
    c
}

/// The backends that can trace here; prints the skip line for the others.
fn backends() -> Vec<&'static str> {
    common::trace::cli_backends(trace)
}

/// `sh -c SCRIPT` with `$IOLAB` naming the binary.
fn shell(script: &str) -> Output {
    Command::new("sh")
        .args(["-c", script])
        .env("IOLAB", iolab_path())
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_pipeline_closed_early_ends_quietly_as_untraced() {
    for backend in backends() {
        // Untraced, `yes` dies of SIGPIPE without a word; with SIGPIPE ignored it would
        // print "Broken pipe".
        let out = trace(backend)
            .args(["--", "sh", "-c", "yes | head -1"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{backend}: {}", stderr(&out));
        assert_eq!(out.stdout, b"y\n", "{backend}");
        let err = stderr(&out);
        assert!(err.starts_with("iolab trace: "), "{backend}: {err}");
        assert!(!err.contains("Broken pipe"), "{backend}: {err}");
    }
}

#[test]
fn a_command_killed_by_sigpipe_makes_iolab_exit_141() {
    for backend in backends() {
        // POSIX sh has no PIPESTATUS: bash tells iolab's own status in a pipeline.
        let out = Command::new("bash")
            .args([
                "-c",
                &format!(
                    "\"$IOLAB\" trace --no-calibrate --backend {backend} -- seq 1000000 \
                     2>/dev/null | head -1 >/dev/null; exit ${{PIPESTATUS[0]}}"
                ),
            ])
            .env("IOLAB", iolab_path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(141), "{backend}: {}", stderr(&out));
    }
}

#[test]
fn a_signal_the_caller_ignored_stays_ignored_for_the_command() {
    for backend in backends() {
        let out = shell(&format!(
            "trap '' HUP; exec \"$IOLAB\" trace --no-calibrate --backend {backend} -- \
             sh -c 'kill -HUP $$; echo alive'"
        ));
        assert_eq!(out.status.code(), Some(0), "{backend}: {}", stderr(&out));
        assert_eq!(out.stdout, b"alive\n", "{backend}: {}", stderr(&out));
    }
}

/// The `SigIgn`, `SigBlk` and `SigCgt` lines of `/proc/self/status` as a command run by a
/// Python parent that ignored `SIGHUP` and `SIGCHLD` (the tracer must still wait for the
/// command) and blocked `SIGUSR1` sees them, traced (`prefix` is iolab's words before the
/// command) or not.
fn signal_lines(prefix: &[&str]) -> String {
    let Some(python) = ["/usr/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
    else {
        return String::new();
    };
    let mut argv: Vec<String> = prefix.iter().map(|s| s.to_string()).collect();
    argv.extend(["grep", "-E", "^Sig(Ign|Blk|Cgt)", "/proc/self/status"].map(String::from));
    let code = format!(
        "import os, signal\n\
         signal.signal(signal.SIGHUP, signal.SIG_IGN)\n\
         signal.signal(signal.SIGCHLD, signal.SIG_IGN)\n\
         signal.pthread_sigmask(signal.SIG_BLOCK, {{signal.SIGUSR1}})\n\
         argv = {argv:?}\n\
         os.execvp(argv[0], argv)\n"
    );
    let out = Command::new(python).args(["-c", &code]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_command_inherits_the_callers_dispositions_and_mask() {
    if !Path::new("/usr/bin/python3").is_file() {
        common::skip("python3 is not installed");
        return;
    }
    let want = signal_lines(&[]);
    let mask = |name: &str| {
        want.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            .unwrap_or_else(|| panic!("no {name} in {want}"))
    };
    // SIGHUP (bit 0) and SIGCHLD (bit 16) ignored, SIGUSR1 (bit 9) blocked, as the parent
    // left them.
    assert!(mask("SigIgn:") & 1 != 0, "{want}");
    assert!(mask("SigIgn:") & 1 << 16 != 0, "{want}");
    assert!(mask("SigBlk:") & 1 << 9 != 0, "{want}");
    let iolab = iolab_path();
    for backend in backends() {
        let got = signal_lines(&[
            iolab.to_str().unwrap(),
            "trace",
            "--no-calibrate",
            "--backend",
            backend,
            "--",
        ]);
        assert_eq!(got, want, "{backend}");
    }
}

/// An executable file `name` in `dir` holding `text`.
fn script(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn a_script_whose_interpreter_is_missing_is_a_bad_interpreter_not_a_missing_command() {
    let dir = common::scratch();
    let mark = dir.path().join("ran");
    let s = script(
        dir.path(),
        "s",
        &format!("#!/nonexistent/sh -e\ntouch {}\n", mark.display()),
    );
    for backend in backends() {
        let out = trace(backend).arg("--").arg(&s).output().unwrap();
        common::assert_one_line_error(
            &out,
            126,
            &[&format!(
                "{}: bad interpreter: /nonexistent/sh: No such file or directory",
                s.display()
            )],
        );
        assert!(!mark.exists(), "{backend}: something ran");
    }
}

#[test]
fn a_script_without_shebang_runs_with_bin_sh_as_execvp_does() {
    let dir = common::scratch();
    let s = script(
        dir.path(),
        "plain",
        "echo \"from the script: $1\"\nexit 4\n",
    );
    let untraced = Command::new("env").arg(&s).arg("x").output().unwrap();
    assert_eq!(untraced.stdout, b"from the script: x\n");
    for backend in backends() {
        let out = trace(backend).arg("--").arg(&s).arg("x").output().unwrap();
        assert_eq!(out.status.code(), Some(4), "{backend}: {}", stderr(&out));
        assert_eq!(out.stdout, untraced.stdout, "{backend}");
    }
}

// --- iolab's own output: the JSON and the summary never cost the command's status ---

fn json_of(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn json_file(path: &Path) -> serde_json::Value {
    json_of(&std::fs::read_to_string(path).unwrap())
}

/// Runs `cmd` with its stderr being a pipe whose reader has already gone.
fn with_stderr_reader_gone(cmd: &mut Command) -> Output {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: closes the read end just made, owned by nothing else.
    unsafe { libc::close(fds[0]) };
    // SAFETY: the write end was just made and is owned by nothing else.
    let write_end = unsafe { std::fs::File::from_raw_fd(fds[1]) };
    cmd.stderr(write_end).output().unwrap()
}

#[test]
fn a_stderr_closed_or_gone_does_not_change_the_status_and_the_json_holds_this_run() {
    use std::os::unix::process::CommandExt;
    let dir = common::scratch();
    let report = dir.path().join("trace.json");
    for backend in backends() {
        std::fs::write(&report, "{\"previous\": true}\n").unwrap();
        // A reader that went away: the summary's write fails with EPIPE.
        let out = with_stderr_reader_gone(trace(backend).arg("--json").arg(&report).args([
            "--",
            "sh",
            "-c",
            "echo out; exit 3",
        ]));
        assert_eq!(out.status.code(), Some(3), "{backend}");
        assert_eq!(out.stdout, b"out\n", "{backend}");
        let v = json_file(&report);
        assert_eq!(v["exit_code"], 3, "{backend}: {v}");
        assert_eq!(v["command"][0], "sh", "{backend}");

        // Closed when iolab started (2>&-).
        std::fs::write(&report, "{\"previous\": true}\n").unwrap();
        let mut cmd = trace(backend);
        cmd.arg("--json")
            .arg(&report)
            .args(["--", "sh", "-c", "echo out; exit 4"]);
        // SAFETY: the closure runs in the child before exec and only calls close.
        unsafe {
            cmd.pre_exec(|| {
                libc::close(2);
                Ok(())
            });
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(4), "{backend}");
        assert_eq!(json_file(&report)["exit_code"], 4, "{backend}");

        // `2>&1 | head -2`: the command dies of SIGPIPE, and so would iolab's summary.
        std::fs::write(&report, "{\"previous\": true}\n").unwrap();
        let out = Command::new("bash")
            .args([
                "-c",
                &format!(
                    "\"$IOLAB\" trace --no-calibrate --backend {backend} --json \"$REPORT\" \
                     -- seq 1000000 2>&1 | head -2 >/dev/null; exit ${{PIPESTATUS[0]}}"
                ),
            ])
            .env("IOLAB", iolab_path())
            .env("REPORT", &report)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(141), "{backend}: {}", stderr(&out));
        let v = json_file(&report);
        assert_eq!(
            (v["exit_code"].as_i64(), v["signal"].as_i64()),
            (Some(141), Some(13))
        );
    }
}

#[test]
fn json_to_stdout_comes_after_the_commands_output() {
    for backend in backends() {
        for arg in ["-", "/dev/stdout"] {
            let out = trace(backend)
                .args(["--json", arg, "--", "sh", "-c", "echo hello; exit 2"])
                .output()
                .unwrap();
            assert_eq!(
                out.status.code(),
                Some(2),
                "{backend} {arg}: {}",
                stderr(&out)
            );
            let text = String::from_utf8(out.stdout).unwrap();
            let rest = text
                .strip_prefix("hello\n")
                .unwrap_or_else(|| panic!("{backend} {arg}: {text}"));
            assert_eq!(json_of(rest)["exit_code"], 2, "{backend} {arg}");
        }
    }
    // Into a file: after the command's output, not over it.
    let dir = common::scratch();
    let stdout = dir.path().join("stdout");
    let out = trace("ptrace")
        .args(["--json", "/dev/stdout", "--", "echo", "hello"])
        .stdout(std::fs::File::create(&stdout).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&stdout).unwrap();
    assert_eq!(
        json_of(text.strip_prefix("hello\n").unwrap())["exit_code"],
        0
    );
    // /dev/null takes it as a stream.
    let out = trace("ptrace")
        .args(["--json", "/dev/null", "--", "true"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("iolab: "), "{}", stderr(&out));
}

/// Asserts that `--json path` is refused in one line naming it and `needles`, exit 1,
/// before the command ran.
fn assert_refused(mut iolab: Command, path: &Path, needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("ran");
    let out = iolab
        .arg("--json")
        .arg(path)
        .args(["--", "sh", "-c"])
        .arg(format!("touch {}", mark.display()))
        .output()
        .unwrap();
    let mut all = vec![path.to_str().unwrap()];
    all.extend(needles);
    common::assert_one_line_error(&out, 1, &all);
    assert!(!mark.exists(), "{}: the command ran", path.display());
}

#[test]
fn a_json_path_that_cannot_be_written_is_refused_before_the_command_runs() {
    let dir = common::scratch();
    let cases: Vec<(std::path::PathBuf, &[&str])> = vec![
        ("/dev/full".into(), &["No space left on device"]),
        ("/proc/iolab-trace.json".into(), &["procfs"]),
        ("/proc/self/status".into(), &["procfs"]),
        ("/sys/iolab-trace.json".into(), &["sysfs"]),
        (dir.path().to_path_buf(), &["is a directory"]),
        (
            dir.path().join("no-such-folder/trace.json"),
            &["No such file or directory"],
        ),
    ];
    for (path, needles) in &cases {
        assert_refused(trace("ptrace"), path, needles);
    }
}

#[test]
fn a_json_path_on_a_read_only_file_system_is_refused_before_the_command_runs() {
    let fs = match common::SmallFs::mount("1m") {
        Ok(fs) => fs,
        Err(reason) => {
            common::skip(reason);
            return;
        }
    };
    let out = Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(fs.path())
        .output()
        .unwrap();
    if !out.status.success() {
        common::skip(format!("cannot remount read-only: {}", stderr(&out)));
        return;
    }
    assert_refused(
        trace("ptrace"),
        &fs.path().join("trace.json"),
        &["Read-only file system"],
    );
}

#[test]
fn a_json_path_without_permission_is_refused_before_the_command_runs() {
    if !common::is_root() {
        common::skip("needs root to run iolab as nobody");
        return;
    }
    let exe = match common::nobody_exe(&iolab_path(), &["--version"]) {
        Ok(exe) => exe,
        Err(reason) => {
            common::skip(reason);
            return;
        }
    };
    // A folder nobody may enter but not write, and a file there nobody may not write.
    let dir = common::public_scratch();
    let file = dir.path().join("trace.json");
    std::fs::write(&file, "{}").unwrap();
    for path in [dir.path().join("new.json"), file] {
        let mut cmd = exe.command();
        cmd.args(["trace", "--no-calibrate", "--backend", "ptrace"]);
        common::run_as_nobody(&mut cmd);
        // The marker goes where nobody may write.
        let marks = tempfile::tempdir().unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(marks.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let mark = marks.path().join("ran");
        let out = cmd
            .arg("--json")
            .arg(&path)
            .args(["--", "sh", "-c"])
            .arg(format!("touch {}", mark.display()))
            .output()
            .unwrap();
        common::assert_one_line_error(&out, 1, &[path.to_str().unwrap(), "Permission denied"]);
        assert!(!mark.exists(), "{}: the command ran", path.display());
    }
}

#[test]
fn a_json_write_that_fails_after_the_run_keeps_the_previous_file_and_the_status() {
    let fs = match common::SmallFs::mount("256k") {
        Ok(fs) => fs,
        Err(reason) => {
            common::skip(reason);
            return;
        }
    };
    let report = fs.path().join("trace.json");
    std::fs::write(&report, "{\"previous\": true}\n").unwrap();
    // The command fills the disk, then the JSON cannot be written.
    let fill = format!(
        "cat /dev/zero > {}/fill 2>/dev/null; exit 3",
        fs.path().display()
    );
    let out = trace("ptrace")
        .arg("--json")
        .arg(&report)
        .args(["--", "sh", "-c", &fill])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("iolab: "))
        .unwrap_or_else(|| panic!("no error line: {err}"));
    assert!(
        line.to_lowercase().contains("no space left") && line.contains("previous run"),
        "{line}"
    );
    assert!(
        err.contains("iolab trace: "),
        "the summary is still printed: {err}"
    );
    assert_eq!(json_file(&report)["previous"], true);
    assert_eq!(
        common::names_in(fs.path()),
        ["fill", "trace.json"],
        "no temporary file left"
    );
}

#[test]
fn a_regular_json_file_is_replaced_whole_with_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = common::scratch();
    let report = dir.path().join("trace.json");
    std::fs::write(&report, "x".repeat(100_000)).unwrap();
    std::fs::set_permissions(&report, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = trace("ptrace")
        .arg("--json")
        .arg(&report)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json_file(&report)["exit_code"], 0);
    let mode = std::fs::metadata(&report).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
    assert_eq!(common::names_in(dir.path()), ["trace.json"]);
}

// --- what the command leaves running ---

#[test]
fn iolab_returns_when_the_command_ends_and_its_background_children_run_on_unharmed() {
    use std::time::{Duration, Instant};
    for backend in backends() {
        let dir = common::scratch();
        let mark = dir.path().join("marker");
        let log = dir.path().join("calls.log");
        let mut cmd = trace(backend);
        if backend == "ptrace" {
            cmd.arg("--log").arg(&log);
        }
        // The child's output goes elsewhere, so that only iolab's pipes are waited for.
        let script = format!(
            "(sleep 2; echo done > {}) >/dev/null 2>&1 & echo started",
            mark.display()
        );
        let t = Instant::now();
        let out = cmd.args(["--", "sh", "-c", &script]).output().unwrap();
        let took = t.elapsed();
        assert!(out.status.success(), "{backend}: {}", stderr(&out));
        assert_eq!(out.stdout, b"started\n", "{backend}");
        // The marker comes two seconds after the command started (bpf's start-up comes
        // before that, and is no wait for the child).
        assert!(
            !mark.exists(),
            "{backend}: iolab waited for the child ({took:?})"
        );
        if backend == "ptrace" {
            // The subshell, and its sleep once forked.
            let err = stderr(&out);
            assert!(
                err.contains("it started was still running")
                    || err.contains("it started were still running"),
                "{err}"
            );
        }
        // The child's calls are still served: its write lands.
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::fs::read_to_string(&mark).ok().as_deref() != Some("done\n") {
            assert!(Instant::now() < deadline, "{backend}: no marker");
            std::thread::sleep(Duration::from_millis(20));
        }
        if backend == "ptrace" {
            // And logged, once the tracer has seen its last tracee end.
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                if text.contains(" write(1) = 5 ") && text.contains(&mark.display().to_string()) {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "the child's write is not in the log: {text}"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

#[test]
fn a_command_that_leaves_a_sleep_running_returns_at_once() {
    use std::time::{Duration, Instant};
    for backend in backends() {
        let t = Instant::now();
        let out = trace(backend)
            .args(["--", "sh", "-c", "sleep 5 >/dev/null 2>&1 & echo started"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{backend}: {}", stderr(&out));
        assert!(
            t.elapsed() < Duration::from_secs(2),
            "{backend}: {:?}",
            t.elapsed()
        );
    }
}
