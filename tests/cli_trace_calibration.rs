//! `iolab trace` interrupted while its calibration runs (after the command has ended): it
//! exits with the command's status, still prints the summary and writes the JSON, which
//! says the calibration was interrupted, and leaves no scratch file of the calibration in
//! the command's folder nor in the temporary folder. Each backend that cannot trace here
//! is skipped with the reason.

use iolab_testkit as common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;

/// How long after the command has ended the signal is sent: past the reading of the
/// trace, well within the calibration (its syncs take at least 0.3 s).
const INTO_THE_CALIBRATION: Duration = Duration::from_millis(150);

/// The children's cache folder (`XDG_CACHE_HOME`): this file's own, so no test reads or
/// writes the user's machine profile.
const CACHE: &str = concat!(
    env!("CARGO_TARGET_TMPDIR"),
    "/xdg-cache-cli_trace_calibration"
);

fn iolab() -> Command {
    let mut cmd = Command::cargo_bin("iolab").unwrap();
    cmd.env("XDG_CACHE_HOME", CACHE);
    cmd
}

/// The backends that can trace here; prints the skip line for the others.
fn backends() -> Vec<&'static str> {
    ["bpf", "ptrace"]
        .into_iter()
        .filter(|b| {
            let out = iolab()
                .args(["trace", "--no-calibrate", "--backend", b, "--", "true"])
                .output()
                .unwrap();
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

/// A command with a `sync-per-record` finding, whose calibration syncs in `dir`.
struct Case {
    /// The command's words.
    words: Vec<OsString>,
    /// Whether it has done all its work (its output is complete).
    done: Box<dyn Fn() -> bool>,
    /// Its program's file name, to see when its process is gone.
    program: &'static str,
    /// An argument no other process has: its output's path.
    token: String,
}

/// `dd` appending 200 records of 512 bytes through `O_DSYNC`: a sync per record of a file.
fn dd_dsync(dir: &Path) -> Case {
    let out = dir.join("records");
    let of = format!("of={}", out.display());
    let words = [
        "dd",
        "if=/dev/zero",
        &of,
        "bs=512",
        "count=200",
        "oflag=dsync",
        "status=none",
    ];
    Case {
        words: words.iter().map(OsString::from).collect(),
        done: Box::new(move || std::fs::metadata(&out).is_ok_and(|m| m.len() == 200 * 512)),
        program: "dd",
        token: of,
    }
}

/// Python making 150 files in `dir`, the folder synced after each: a sync per record of a
/// folder, whose calibration makes (and removes) named files in it.
fn python_folder_syncs(dir: &Path) -> Option<Case> {
    let python = "/usr/bin/python3";
    if !Path::new(python).is_file() {
        common::skip("python3 is not installed");
        return None;
    }
    let code = "import os, sys\nd = sys.argv[1]\nfolder = os.open(d, os.O_RDONLY)\nfor i in range(150):\n    f = os.open(os.path.join(d, 'r%03d' % i), os.O_WRONLY | os.O_CREAT)\n    os.write(f, b'record\\n')\n    os.close(f)\n    os.fsync(folder)\n";
    let last = dir.join("r149");
    let token = dir.display().to_string();
    Some(Case {
        words: vec![
            python.into(),
            "-c".into(),
            code.into(),
            token.clone().into(),
        ],
        done: Box::new(move || std::fs::metadata(&last).is_ok_and(|m| m.len() == 7)),
        program: "python3",
        token,
    })
}

/// Whether a process of `program` with the argument `token` runs (not iolab, whose own
/// arguments hold the command's).
fn running(program: &str, token: &str) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|e| {
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            return false;
        };
        let words: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        let name = words
            .first()
            .map(|w| Path::new(std::str::from_utf8(w).unwrap_or("")).file_name());
        name == Some(Some(std::ffi::OsStr::new(program))) && words.contains(&token.as_bytes())
    })
}

/// The calibration's scratch files and folders in `dir`: `.iolab-trace-*` and
/// `iolab-trace-*`; in a folder others share (the temporary folder), only those named
/// after `pid` (every scratch name holds the process id of the iolab that made it).
fn scratch_left(dir: &Path, pid: Option<u32>) -> Vec<PathBuf> {
    let mut left: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let ours = pid.is_none_or(|pid| name.split('-').any(|w| w == pid.to_string()));
            (name.starts_with(".iolab-trace-") || name.starts_with("iolab-trace-")) && ours
        })
        .map(|e| e.path())
        .collect();
    left.sort();
    left
}

#[test]
fn ctrl_c_during_the_calibration_keeps_the_report_and_leaves_no_file() {
    for backend in backends() {
        let dir = common::scratch();
        let mut cases = vec![dd_dsync(dir.path())];
        cases.extend(python_folder_syncs(dir.path()));
        for case in cases {
            let what = format!("{backend}: {}", case.program);
            let json = dir.path().join("trace.json");
            // In the scratch folder: no `iolab-results` there, so the calibration runs.
            let mut cmd = iolab();
            cmd.args(["trace", "--backend", backend, "--json"])
                .arg(&json)
                .arg("--")
                .args(&case.words)
                .current_dir(dir.path())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            // SIGINT caught, even when this test runs as a background job that ignores it.
            common::start_with_signals(&mut cmd, false);
            let mut child = cmd.spawn().unwrap();
            let deadline = Instant::now() + Duration::from_secs(60);
            while !(case.done)() || running(case.program, &case.token) {
                assert!(Instant::now() < deadline, "{what}: the command did not end");
                if let Some(status) = child.try_wait().unwrap() {
                    panic!("{what}: iolab ended before the signal: {status}");
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            std::thread::sleep(INTO_THE_CALIBRATION);
            assert!(
                child.try_wait().unwrap().is_none(),
                "{what}: iolab ended before the signal (no calibration?)"
            );
            // SAFETY: signals our own child, iolab alone.
            unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            let pid = child.id();
            let out = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{what}: {stderr}");
            assert!(stderr.starts_with("iolab trace: "), "{what}: {stderr}");
            assert!(stderr.contains("sync-per-record"), "{what}: {stderr}");
            assert!(
                stderr.contains("note: the calibration was interrupted (signal 2)"),
                "{what}: {stderr}"
            );
            let text = std::fs::read_to_string(&json).unwrap();
            let v: serde_json::Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{what}: the JSON: {e}: {text}"));
            assert_eq!(v["exit_code"].as_i64(), Some(0), "{what}");
            assert_eq!(v["costs"]["interrupted_by"].as_i64(), Some(2), "{what}");
            assert!(
                v["notes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|n| n.as_str().unwrap().contains("calibration was interrupted")),
                "{what}: {}",
                v["notes"]
            );
            assert_eq!(scratch_left(dir.path(), None), [] as [PathBuf; 0], "{what}");
            assert_eq!(
                scratch_left(&std::env::temp_dir(), Some(pid)),
                [] as [PathBuf; 0],
                "{what}"
            );
        }
    }
}
