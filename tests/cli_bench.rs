//! `iolab bench` end to end: a real quick run on tiny data, its files and exit code, bad
//! input, and Ctrl-C. Structure only: no timing is asserted.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;

fn iolab() -> Command {
    Command::cargo_bin("iolab").unwrap()
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_quick_run_writes_verified_rows_for_every_method_and_cache_state() {
    let dir = common::scratch();
    let (data, out) = (dir.path().join("data"), dir.path().join("out"));
    let output = iolab()
        .args(["bench", "count", "--quick", "--size", "2M", "--data"])
        .arg(&data)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("count: warm cache"), "{stdout}");
    assert!(
        stdout.contains("count: cold cache") || stderr.contains("tmpfs"),
        "{stdout}"
    );
    assert!(stdout.contains("wc -l (baseline)"), "{stdout}");
    for file in ["results.json", "results.md", "results.csv"] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
    let json = read_json(&out.join("results.json"));
    assert_eq!(json["partial"], false);
    let rows = json["rows"].as_array().unwrap();
    let methods: Vec<String> = iolab::Method::ALL
        .iter()
        .map(|m| m.name().to_string())
        .collect();
    for cache in ["warm", "cold"] {
        for m in methods.iter().map(String::as_str).chain(["wc -l"]) {
            let row = rows
                .iter()
                .find(|r| r["method"] == m && r["cache"] == cache)
                .unwrap_or_else(|| panic!("no row for {m} {cache}"));
            if row.get("unavailable").is_some() {
                assert!(
                    row.get("median_s").is_none(),
                    "unavailable rows have no timings"
                );
                continue;
            }
            assert_eq!(row["verified"], true, "{row}");
            assert_eq!(
                row["runs"].as_array().unwrap().len(),
                2,
                "--quick counts 2 runs"
            );
        }
    }
    // The data set was generated into --data with its manifest, and nothing else is left.
    let names: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.iter().any(|n| n.ends_with(".manifest.json")));
}

#[test]
fn bad_arguments_give_one_line_and_a_non_zero_exit() {
    let dir = common::scratch();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["bench".into(), "nosuchsuite".into()], "unknown suite"),
        (
            vec!["bench".into(), "--size".into(), "12X".into()],
            "invalid size",
        ),
        (vec!["bench".into(), "--runs".into(), "0".into()], "runs"),
        (
            vec![
                "bench".into(),
                "--methods".into(),
                "mmap,nope".into(),
                "--quick".into(),
            ],
            "unknown method 'nope'",
        ),
        (
            vec![
                "bench".into(),
                "--quick".into(),
                "--data".into(),
                "/proc/iolab-cannot-exist".into(),
            ],
            "/proc/iolab-cannot-exist",
        ),
    ];
    for (args, expected) in cases {
        let output = iolab()
            .args(&args)
            .arg("--out")
            .arg(dir.path().join("out"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} succeeded");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("iolab: "), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn ctrl_c_writes_partial_results_and_leaves_the_data_set_intact() {
    let dir = common::scratch();
    let (data, out) = (dir.path().join("data"), dir.path().join("out"));
    // Generate the data set first, so the interruption lands in the measurement loop.
    let status = iolab()
        .args([
            "bench",
            "count",
            "--quick",
            "--size",
            "8M",
            "--methods",
            "bufread-chunks",
            "--no-baselines",
            "--data",
        ])
        .arg(&data)
        .arg("--out")
        .arg(dir.path().join("first"))
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let mut child = iolab()
        .args([
            "bench", "count", "--size", "8M", "--runs", "1000", "--warmup", "0", "--data",
        ])
        .arg(&data)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: kill with a valid pid of our own child and a valid signal has no memory effects.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "bench did not stop after SIGINT");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(130), "exit status after Ctrl-C");
    let json = read_json(&out.join("results.json"));
    assert_eq!(json["partial"], true);
    // The data set is still complete: a new run reuses it and verifies every count.
    let output = iolab()
        .args([
            "bench",
            "count",
            "--quick",
            "--size",
            "8M",
            "--methods",
            "mmap",
            "--no-baselines",
            "--cache",
            "warm",
            "--data",
        ])
        .arg(&data)
        .arg("--out")
        .arg(dir.path().join("after"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let after = read_json(&dir.path().join("after").join("results.json"));
    assert_eq!(after["rows"][0]["verified"], true);
}

#[test]
fn a_file_iolab_did_not_make_is_never_overwritten() {
    let dir = common::scratch();
    let data = dir.path().join("data");
    // Learn the data set's file name from a first run in another folder.
    let probe = dir.path().join("probe");
    let status = iolab()
        .args([
            "bench",
            "count",
            "--quick",
            "--size",
            "1M",
            "--methods",
            "mmap",
            "--no-baselines",
            "--cache",
            "warm",
            "--data",
        ])
        .arg(&probe)
        .arg("--out")
        .arg(dir.path().join("out1"))
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let name = std::fs::read_dir(&probe)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.ends_with(".txt"))
        .unwrap();
    // A user's own file by that name, without iolab's manifest.
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join(&name), b"my precious data\n").unwrap();
    let output = iolab()
        .args([
            "bench",
            "count",
            "--quick",
            "--size",
            "1M",
            "--methods",
            "mmap",
            "--no-baselines",
            "--data",
        ])
        .arg(&data)
        .arg("--out")
        .arg(dir.path().join("out2"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("not made by iolab"), "{stderr}");
    assert_eq!(
        std::fs::read(data.join(&name)).unwrap(),
        b"my precious data\n"
    );
}
