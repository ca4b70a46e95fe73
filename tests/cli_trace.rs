//! `iolab trace` end to end: the command's output byte for byte as untraced, its exit
//! status, one-line errors (no command, not found, not permitted, bad results), Ctrl-C and
//! `kill`, the JSON's documented keys, the summary's length and width, and the eBPF
//! backend without tracefs. Each backend that cannot trace here is skipped with the reason.

use iolab_testkit as common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;

/// The tests run one at a time: one of them unmounts tracefs.
static TRACEFS: Mutex<()> = Mutex::new(());

fn shared() -> MutexGuard<'static, ()> {
    TRACEFS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The children's cache folder (`XDG_CACHE_HOME`): this file's own, so no test reads or
/// writes the user's machine profile.
const CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache-cli_trace");

fn iolab() -> Command {
    let mut cmd = Command::cargo_bin("iolab").unwrap();
    cmd.env("XDG_CACHE_HOME", CACHE);
    cmd
}

fn trace(backend: &str) -> Command {
    let mut c = iolab();
    c.args(["trace", "--no-calibrate", "--backend", backend]);
    c
}

/// The backends that can trace here; prints the skip line for the others.
fn backends() -> Vec<&'static str> {
    common::trace::cli_backends(trace)
}

fn python() -> Option<&'static str> {
    let p = "/usr/bin/python3";
    if Path::new(p).is_file() {
        Some(p)
    } else {
        common::skip("python3 is not installed");
        None
    }
}

fn run_with_input(mut cmd: Command, input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

#[test]
fn no_command_is_one_line_and_exit_2() {
    for args in [
        &["trace"][..],
        &["trace", "--"],
        &["trace", "--backend", "ptrace"],
    ] {
        let out = iolab().args(args).output().unwrap();
        common::assert_one_line_error(&out, 2, &["no command to trace"]);
    }
}

#[test]
fn a_missing_command_exits_127_and_one_that_cannot_run_126() {
    let _g = shared();
    let out = iolab()
        .args(["trace", "--", "iolab-no-such-command-x"])
        .output()
        .unwrap();
    common::assert_one_line_error(&out, 127, &["iolab-no-such-command-x: command not found"]);
    let dir = common::scratch();
    let text = dir.path().join("not-a-program");
    std::fs::write(&text, "hello").unwrap();
    let out = iolab().arg("trace").arg("--").arg(&text).output().unwrap();
    common::assert_one_line_error(&out, 126, &["cannot execute", "Permission denied"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("os error"));
}

#[test]
fn the_commands_output_is_byte_for_byte_its_own() {
    let _g = shared();
    let dir = common::scratch();
    let binary: Vec<u8> = (0..300_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let file = dir.path().join("binary");
    std::fs::write(&file, &binary).unwrap();
    let mut commands: Vec<Vec<String>> = vec![
        vec!["seq".into(), "1".into(), "30000".into()],
        vec![
            "sh".into(),
            "-c".into(),
            "echo out; echo err >&2; printf 'a\\0b\\377'; echo more; exit 3".into(),
        ],
        vec!["cat".into(), file.display().to_string()],
        vec!["cat".into()],
        vec![
            "dd".into(),
            "bs=7".into(),
            "count=100".into(),
            "status=none".into(),
        ],
    ];
    if let Some(p) = python() {
        commands.push(vec![
            p.into(),
            "-u".into(),
            "-c".into(),
            "import sys\nfor i in range(2000): print(i, 'x' * (i % 50))\nsys.stderr.write('bye\\n')".into(),
        ]);
    }
    let input: Vec<u8> = binary.iter().rev().copied().collect();
    for backend in backends() {
        for words in &commands {
            let mut untraced = Command::new(&words[0]);
            untraced.args(&words[1..]);
            let want = run_with_input(untraced, &input);
            let mut traced = trace(backend);
            traced.arg("--").args(words);
            let got = run_with_input(traced, &input);
            assert_eq!(got.status.code(), want.status.code(), "{backend} {words:?}");
            assert!(
                got.stdout == want.stdout,
                "{backend} {words:?}: stdout differs"
            );
            assert!(
                got.stderr.starts_with(&want.stderr),
                "{backend} {words:?}: stderr does not start with the command's"
            );
            let ours = String::from_utf8_lossy(&got.stderr[want.stderr.len()..]).into_owned();
            assert!(
                ours.starts_with("iolab trace: "),
                "{backend} {words:?}: {ours}"
            );
        }
    }
}

#[test]
fn exits_with_the_commands_status_and_128_plus_the_signal() {
    let _g = shared();
    for backend in backends() {
        let out = trace(backend)
            .args(["--", "sh", "-c", "exit 5"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(5), "{backend}");
        let out = trace(backend)
            .args(["--", "sh", "-c", "kill -KILL $$"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(137), "{backend}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("killed by signal 9 (exit 137)"), "{stderr}");
        assert!(
            stderr.contains("\nseen: "),
            "the summary is printed: {stderr}"
        );
    }
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_json_has_the_documented_keys_and_the_summary_fits_a_terminal() {
    let _g = shared();
    let dir = common::scratch();
    let out_file = dir.path().join("out");
    let report = dir.path().join("trace.json");
    for backend in backends() {
        let out = iolab()
            .args(["trace", "-v", "--backend", backend, "--json"])
            .arg(&report)
            .args([
                "--",
                "dd",
                "if=/dev/zero",
                "bs=32",
                "count=4000",
                "status=none",
            ])
            .arg(format!("of={}", out_file.display()))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        // The summary fits; `-v` adds the processes after it.
        let summary = stderr.split("\nprocesses (").next().unwrap();
        assert!(summary.lines().count() <= 40, "{stderr}");
        assert!(
            stderr.contains("processes (calls, bytes and time"),
            "{stderr}"
        );
        let v = json(&report);
        // Shown when its saving is 2% of the run or more: on a loaded machine (under ptrace
        // each stop waits for the tracer) the run's wall time grows and the same saving can
        // fall under; the summary then counts it among the hidden ones.
        if v["findings"][0]["shown"] == true {
            assert!(stderr.contains("  by: pid "), "{stderr}");
            assert!(stderr.contains("1. small-writes: "), "{stderr}");
            assert!(stderr.contains("basis: "), "{stderr}");
        } else {
            assert!(
                stderr.contains("1 finding that would save under 2% of the run each"),
                "{stderr}"
            );
        }
        for key in [
            "command",
            "exit_code",
            "wall_s",
            "backend",
            "targets",
            "findings",
        ] {
            assert!(v.get(key).is_some(), "{key}: {v}");
        }
        assert_eq!(v["backend"], backend);
        assert_eq!(v["exit_code"], 0);
        assert_eq!(v["command"][0], "dd");
        check_dd_json(&v, &out_file);
    }
}

/// The JSON of `dd` writing 4 000 records of 32 B to `out_file`: its target and its one
/// finding, with the documented keys and exact counts.
fn check_dd_json(v: &serde_json::Value, out_file: &Path) {
    let t = v["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["path"] == out_file.canonicalize().unwrap().display().to_string())
        .unwrap_or_else(|| panic!("no target for the output: {v}"));
    has_keys(
        t,
        &[
            "kind",
            "path",
            "reads",
            "read_bytes",
            "writes",
            "write_bytes",
            "syncs",
        ],
    );
    assert_eq!(t["kind"], "file");
    assert_eq!(t["writes"], 4000);
    assert_eq!(t["write_bytes"], 128_000);
    assert_eq!(t["write_sizes"]["32"], 4000);
    let f = &v["findings"][0];
    has_keys(
        f,
        &[
            "kind",
            "path",
            "calls",
            "bytes",
            "measured_s",
            "estimated_s",
            "estimated_fixed_s",
            "saving_s",
            "share",
            "shown",
            "basis",
            "warnings",
            "cli",
            "library",
        ],
    );
    assert_eq!(f["kind"], "small-writes");
    assert_eq!(v["schema_version"], 3);
    // Which process: dd, with its arguments, in the finding and the run's list.
    let p = &f["processes"][0];
    assert_eq!(p["args"][0], "dd", "{f}");
    assert!(p["exe"].as_str().unwrap().ends_with("/dd"), "{p}");
    assert!(p["calls"].as_u64().unwrap() >= 4000, "{p}");
    let procs = v["processes"].as_array().unwrap();
    assert!(procs.iter().any(|q| q["pid"] == p["pid"]), "{procs:?}");
    has_keys(
        v,
        &["lookups", "failed_opens", "events_lost", "page_faults"],
    );
    assert!(f.get("stacks").is_some() && f.get("risk").is_some(), "{f}");
    // A copy loop: 4000 reads of /dev/zero and 4000 writes.
    assert_eq!(f["calls"], 8000);
    // The fix saves something (estimated_s and estimated_fixed_s are rounded: on a busy
    // machine they can print alike while the saving, printed on its own, is not 0).
    assert!(f["saving_s"].as_f64().unwrap() > 0.0, "{f}");
    assert!(f["estimated_fixed_s"].as_f64().is_some(), "{f}");
    assert!(f["measured_s"].as_f64().unwrap() > 0.0, "{f}");
    // Shown or not: above, as the summary says.
    assert!(f["shown"].is_boolean(), "{f}");
}

/// Asserts that the JSON object `v` has each of `keys`.
fn has_keys(v: &serde_json::Value, keys: &[&str]) {
    for key in keys {
        assert!(v.get(key).is_some(), "{key}: {v}");
    }
}

/// Starts `iolab trace -- sh -c 'touch MARK; exec sleep 30'` in a process group of its
/// own, with Ctrl-C's signals at their default actions or ignored (as a background job of
/// a script has them), and waits until the command runs.
fn start_sleeper(backend: &str, dir: &Path, ignore: bool) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    let mark = dir.join("running");
    let mut cmd = trace(backend);
    cmd.arg("--json")
        .arg(dir.join("trace.json"))
        .args(["--", "sh", "-c"])
        .arg(format!("touch {}; exec sleep 30", mark.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    common::start_with_signals(&mut cmd, ignore);
    let child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !mark.exists() {
        assert!(Instant::now() < deadline, "the command did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// Every line iolab prints fits in 120 columns, with `-v` too, when a command writes in
/// many small writes to a path longer than a line (issue 49): the finding's texts are
/// wrapped, and a path too long for any line is shortened in the middle (the JSON has it
/// whole). The backend says why on one short line; `-v` adds its mechanism and reason.
#[test]
fn every_line_of_the_summary_fits_in_120_columns() {
    let _g = shared();
    let dir = common::scratch();
    let deep = dir
        .path()
        .join("a-rather-long-folder-name-for-the-column-test")
        .join("another-quite-long-subfolder-name-in-the-same-test")
        .join("and-a-third-one-so-that-the-path-passes-the-limit");
    std::fs::create_dir_all(&deep).unwrap();
    let out_file = deep.join("output-file-with-a-long-name.bin");
    assert!(out_file.as_os_str().len() > 160);
    for backend in backends() {
        for verbose in [false, true] {
            let mut c = iolab();
            c.args(["trace", "--backend", backend]);
            if verbose {
                c.arg("--verbose");
            }
            let out = c
                .args([
                    "--",
                    "dd",
                    "if=/dev/zero",
                    "bs=16",
                    "count=5000",
                    "status=none",
                ])
                .arg(format!("of={}", out_file.display()))
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            for (name, text) in [
                ("stdout", String::from_utf8_lossy(&out.stdout)),
                ("stderr", stderr.clone()),
            ] {
                for line in text.lines() {
                    let columns = line.chars().count();
                    assert!(
                        columns <= 120,
                        "{backend} {name}: {columns} columns: {line}\n{text}"
                    );
                }
            }
            assert!(stderr.contains("\nseen: "), "{stderr}");
            // Named in the targets table (shortened in the middle: its end is kept),
            // whether its finding is shown or not (that depends on the run's time).
            assert!(stderr.contains("-with-a-long-name.bin"), "{stderr}");
            let line = stderr.lines().find(|l| l.starts_with("backend: ")).unwrap();
            assert!(line.starts_with(&format!("backend: {backend} (")), "{line}");
            assert!(line.contains("ready in "), "{line}");
            assert_eq!(stderr.contains("\n  how: "), verbose, "{stderr}");
            assert_eq!(stderr.contains("\n  why: "), verbose, "{stderr}");
        }
    }
}

#[test]
fn ctrl_c_and_kill_reach_the_command_and_the_summary_is_still_made() {
    let _g = shared();
    for backend in backends() {
        // Ctrl-C: the terminal signals the whole foreground process group.
        let dir = common::scratch();
        let child = start_sleeper(backend, dir.path(), false);
        // SAFETY: signals the process group of our own child.
        unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(130), "{backend}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("interrupted (signal 2)"), "{stderr}");
        assert!(stderr.contains("killed by signal 2 (exit 130)"), "{stderr}");
        let v = json(&dir.path().join("trace.json"));
        assert_eq!(
            (v["exit_code"].as_i64(), v["signal"].as_i64()),
            (Some(130), Some(2))
        );

        // A kill of the tracer alone is passed on to the command.
        let dir = common::scratch();
        let child = start_sleeper(backend, dir.path(), false);
        // SAFETY: signals our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(143), "{backend}: {out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("seen: "));
    }
}

/// A caller that ignores Ctrl-C (a background job of a script): iolab and the command keep
/// ignoring it, as the command would untraced; a kill of the tracer still reaches the
/// command.
#[test]
fn a_ctrl_c_the_caller_ignores_reaches_neither_iolab_nor_the_command() {
    let _g = shared();
    for backend in backends() {
        let dir = common::scratch();
        let child = start_sleeper(backend, dir.path(), true);
        let pid = child.id() as i32;
        // SAFETY: signals the process group of our own child, then the child. Both ignore
        // the SIGINT: the command dies of the SIGTERM, forwarded.
        unsafe {
            libc::kill(-pid, libc::SIGINT);
            libc::kill(pid, libc::SIGTERM);
        }
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(143), "{backend}: {stderr}");
        assert!(stderr.contains("interrupted (signal 15)"), "{stderr}");
        assert!(
            stderr.contains("killed by signal 15 (exit 143)"),
            "{stderr}"
        );
    }
}

/// Makes `cmd` run under a seccomp filter that fails `ptrace` with `EPERM`, as a
/// container's policy does.
fn forbid_ptrace(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    #[cfg(target_arch = "x86_64")]
    const ARCH: u32 = 0xC000_003E;
    #[cfg(target_arch = "aarch64")]
    const ARCH: u32 = 0xC000_00B7;
    let ld = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    let jeq = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
    let ret = (libc::BPF_RET | libc::BPF_K) as u16;
    let f = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    let prog = [
        f(ld, 0, 0, 4),
        f(jeq, 0, 2, ARCH),
        f(ld, 0, 0, 0),
        f(jeq, 0, 1, libc::SYS_ptrace as u32),
        f(ret, 0, 0, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
        f(ret, 0, 0, libc::SECCOMP_RET_ALLOW),
    ];
    // SAFETY: the closure runs in the child before exec and only makes the
    // async-signal-safe system calls prctl and seccomp on data prepared before the fork.
    unsafe {
        cmd.pre_exec(move || {
            let fprog = libc::sock_fprog {
                len: prog.len() as u16,
                filter: prog.as_ptr().cast_mut(),
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::syscall(libc::SYS_seccomp, libc::SECCOMP_SET_MODE_FILTER, 0, &fprog) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[test]
fn ptrace_forbidden_is_one_line_and_the_command_never_runs() {
    let _g = shared();
    let dir = common::scratch();
    let mark = dir.path().join("ran");
    let mut cmd = trace("ptrace");
    cmd.args(["--", "sh", "-c"])
        .arg(format!("touch {}", mark.display()));
    forbid_ptrace(&mut cmd);
    let out = cmd.output().unwrap();
    common::assert_one_line_error(
        &out,
        1,
        &[
            "cannot trace: ptrace(PTRACE_SEIZE) of the command was refused",
            "seccomp",
        ],
    );
    assert!(!mark.exists(), "the command ran untraced");
}

#[test]
fn as_an_ordinary_user_ptrace_runs_and_bpf_says_how_to_allow_it() {
    let _g = shared();
    if !common::is_root() {
        common::skip("needs root to run iolab as nobody");
        return;
    }
    let exe = match common::nobody_exe(&assert_cmd::cargo::cargo_bin("iolab"), &["--version"]) {
        Ok(exe) => exe,
        Err(reason) => {
            common::skip(reason);
            return;
        }
    };
    let as_nobody = |args: &[&str]| {
        let mut c = exe.command();
        c.args(args);
        common::run_as_nobody(&mut c);
        c
    };
    let out = as_nobody(&["trace", "--no-calibrate", "--", "true"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("backend: ptrace"), "{stderr}");
    assert!(stderr.contains("needs root or CAP_BPF"), "{stderr}");
    let out = as_nobody(&["trace", "--backend", "bpf", "--", "true"])
        .output()
        .unwrap();
    common::assert_one_line_error(&out, 1, &["backend bpf is not available", "CAP_BPF"]);
    // Neither allowed: both causes, one line.
    let mut c = as_nobody(&["trace", "--", "true"]);
    forbid_ptrace(&mut c);
    let out = c.output().unwrap();
    common::assert_one_line_error(&out, 1, &["cannot trace: bpf: ", "; ptrace: "]);
}

#[test]
fn unreadable_results_and_json_paths_are_refused_before_the_command_runs() {
    let _g = shared();
    let dir = common::scratch();
    let mark = dir.path().join("ran");
    let touch = format!("touch {}", mark.display());
    let out = iolab()
        .args(["trace", "--results", "/nonexistent/iolab-results"])
        .args(["--", "sh", "-c", &touch])
        .output()
        .unwrap();
    common::assert_one_line_error(&out, 1, &["/nonexistent/iolab-results"]);
    let out = iolab()
        .args(["trace", "--json", "/nonexistent/dir/trace.json"])
        .args(["--", "sh", "-c", &touch])
        .output()
        .unwrap();
    common::assert_one_line_error(&out, 1, &["cannot create /nonexistent/dir/trace.json"]);
    assert!(!mark.exists(), "the command ran");
}

/// The eBPF backend attaches to raw tracepoints: it needs no tracefs (nor bpftrace), so it
/// traces with tracefs unmounted (it is mounted again afterwards if it was).
#[test]
fn the_bpf_backend_needs_no_tracefs() {
    let _alone = shared();
    if !backends().contains(&"bpf") {
        return;
    }
    let tracefs = Path::new("/sys/kernel/tracing");
    let was_mounted = tracefs.join("events").is_dir();
    if was_mounted {
        let out = Command::new("umount").arg(tracefs).output().unwrap();
        if !out.status.success() {
            common::skip(format!(
                "cannot unmount tracefs to trace without it: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
            return;
        }
    }
    let out = trace("bpf")
        .args(["--", "dd", "if=/dev/zero", "of=/dev/null", "count=10"])
        .output()
        .unwrap();
    if was_mounted {
        let _ = Command::new("mount")
            .args(["-t", "tracefs", "nodev"])
            .arg(tracefs)
            .output();
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("backend: bpf"), "{stderr}");
    assert!(stderr.contains("/dev/zero"), "{stderr}");
    assert!(!tracefs.join("events").is_dir() || was_mounted);
}

#[test]
fn io_uring_enters_are_counted_on_the_ring() {
    let _g = shared();
    let dir = common::scratch();
    let blocks = dir.path().join("blocks.bin");
    let out = iolab()
        .args(["gen", "blocks", "--size", "4000000", "--out"])
        .arg(&blocks)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let report = dir.path().join("trace.json");
    for backend in backends() {
        let out = trace(backend)
            .arg("--json")
            .arg(&report)
            .arg("--")
            .arg(assert_cmd::cargo::cargo_bin("iolab"))
            .args([
                "random",
                "--method",
                "uring",
                "--queue-depth",
                "8",
                "--reads",
                "2000",
            ])
            .arg(&blocks)
            .output()
            .unwrap();
        if !out.status.success() {
            common::skip(format!(
                "iolab random --method uring cannot run here: {}",
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .next()
                    .unwrap_or("")
            ));
            return;
        }
        let v = json(&report);
        let ring = v["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["ring_enters"].as_u64() > Some(0))
            .unwrap_or_else(|| panic!("{backend}: no ring: {v}"));
        assert_eq!(ring["path"], "anon_inode:[io_uring]", "{backend}");
        assert!(
            ring["ring_submissions"].as_u64().unwrap() >= 2000,
            "{backend}: {ring}"
        );
    }
}

#[test]
fn log_streams_every_call_with_the_ptrace_backend() {
    let _g = shared();
    let dir = common::scratch();
    let log = dir.path().join("calls.log");
    let out = iolab()
        .args(["trace", "--no-calibrate", "--log"])
        .arg(&log)
        .args([
            "--",
            "dd",
            "if=/dev/zero",
            "of=/dev/null",
            "bs=1k",
            "count=50",
            "status=none",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("cannot trace") {
        common::skip(format!("ptrace cannot trace here: {stderr}"));
        return;
    }
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("backend: ptrace"), "{stderr}");
    let text = std::fs::read_to_string(&log).unwrap();
    let writes = text
        .lines()
        .filter(|l| l.contains(" write(1) = 1024 "))
        .count();
    assert_eq!(writes, 50, "{text}");
    let out = iolab()
        .args(["trace", "--backend", "bpf", "--log"])
        .arg(&log)
        .args(["--", "true"])
        .output()
        .unwrap();
    common::assert_one_line_error(&out, 1, &["--log"]);
}

#[test]
fn a_closed_standard_output_stays_closed_for_the_command() {
    use std::os::unix::process::CommandExt;
    let _g = shared();
    let script = "echo hi; echo \"echo said $?\" >&2";
    let close_stdout = |cmd: &mut Command| {
        // SAFETY: the closure runs in the child before exec and only calls close.
        unsafe {
            cmd.pre_exec(|| {
                libc::close(1);
                Ok(())
            });
        }
    };
    let mut untraced = Command::new("sh");
    untraced.args(["-c", script]);
    close_stdout(&mut untraced);
    let want = untraced.output().unwrap();
    assert!(
        !String::from_utf8_lossy(&want.stderr).contains("echo said 0"),
        "sh writes to a closed stdout without an error here: {want:?}"
    );
    for backend in backends() {
        let mut traced = trace(backend);
        traced.args(["--", "sh", "-c", script]);
        close_stdout(&mut traced);
        let got = traced.output().unwrap();
        assert_eq!(got.status.code(), want.status.code(), "{backend}");
        assert!(
            got.stderr.starts_with(&want.stderr),
            "{backend}: {}",
            String::from_utf8_lossy(&got.stderr)
        );
    }
}
