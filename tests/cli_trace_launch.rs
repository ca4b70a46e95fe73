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
    ["bpf", "ptrace"]
        .into_iter()
        .filter(|b| {
            let out = trace(b).args(["--", "true"]).output().unwrap();
            if !out.status.success() {
                common::skip(format!(
                    "the {b} backend cannot trace here: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
            out.status.success()
        })
        .collect()
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
/// Python parent that ignored `SIGHUP` and blocked `SIGUSR1` sees them, traced (`prefix`
/// is iolab's words before the command) or not.
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
    // SIGHUP (bit 0) ignored, SIGUSR1 (bit 9) blocked, as the parent left them.
    assert!(mask("SigIgn:") & 1 != 0, "{want}");
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
