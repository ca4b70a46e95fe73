//! `iolab random` and `iolab bench random` end to end: the figures, one-line errors, and
//! the rows' documented keys. Structure only: no speed is asserted.

use iolab_testkit as common;

use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;

/// The children's cache folder (`XDG_CACHE_HOME`): this file's own, so no test reads or
/// writes the user's machine profile.
const CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache-cli_random");

fn iolab() -> Command {
    let mut cmd = Command::cargo_bin("iolab").unwrap();
    cmd.env("XDG_CACHE_HOME", CACHE);
    cmd
}

fn blocks_file(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("blocks.bin");
    let out = iolab()
        .args(["gen", "blocks", "--size", "1000003", "--out"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    path
}

#[test]
fn prints_the_figures_and_json() {
    let dir = common::scratch();
    let path = blocks_file(dir.path());
    let out = iolab()
        .args(["random", "--method", "pread", "--reads", "500", "--verbose"])
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    for needle in ["IOPS", "MB/s", "p50", "p99", "p99.9", "every read verified"] {
        assert!(stdout.contains(needle), "{needle}: {stdout}");
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("RandomAccessFile::open: trial 1: "),
        "{stderr}"
    );
    let out = iolab()
        .args([
            "random",
            "--method",
            "mmap-random",
            "--seconds",
            "0.05",
            "--pattern",
            "zipf",
            "--json",
        ])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "iops",
        "p50_us",
        "p99_us",
        "p999_us",
        "cpu_us_per_read",
        "verified",
    ] {
        assert!(v.get(key).is_some(), "{key}");
    }
    assert_eq!(v["verified"], true);
    assert_eq!(v["check"], "generated");
    assert_eq!(v["checked"], v["reads"]);
    assert_eq!(v["why"], serde_json::Value::Null);
}

#[test]
fn the_io_uring_methods_take_the_measured_depth_else_the_rules_32() {
    let dir = common::scratch();
    let path = blocks_file(dir.path());
    let out = iolab()
        .args([
            "random", "--method", "uring", "--reads", "2000", "--json", "-v",
        ])
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("unavailable") {
        common::skip(format!("io_uring cannot run here: {stderr}"));
        return;
    }
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // This file's cache folder holds no `--sweep` depths: the rule.
    assert_eq!(v["queue_depth"], 32);
    assert!(
        stderr.contains("queue depth 32: the rule, 32 ("),
        "{stderr}"
    );
    // Asked for, a depth is taken as it is; a method reading one at a time says so.
    let out = iolab()
        .args([
            "random",
            "--method",
            "uring",
            "--reads",
            "500",
            "--queue-depth",
            "4",
            "--json",
        ])
        .arg(&path)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["queue_depth"], 4);
    let out = iolab()
        .args([
            "random", "--method", "pread", "--reads", "500", "--json", "-v",
        ])
        .arg(&path)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["queue_depth"], 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("queue depth 1: one read at a time"));
}

#[test]
fn auto_reads_through_the_librarys_default_and_says_why() {
    let dir = common::scratch();
    let path = blocks_file(dir.path());
    let out = iolab()
        .args(["random", "--method", "auto", "--reads", "2000", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&v["method"], &v["verified"]),
        (&"auto".into(), &true.into())
    );
    assert_eq!(v["checked"], v["reads"]);
    let why = v["why"].as_str().unwrap();
    assert!(
        why.starts_with("trial ") && why.contains(" serves"),
        "{why}"
    );
    // A queue: the library's batch call, every read verified, and why it read so.
    let out = iolab()
        .args([
            "random",
            "--method",
            "auto",
            "--queue-depth",
            "4",
            "--reads",
            "3000",
        ])
        .args(["--json", "-v"])
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((&v["verified"], &v["reads"]), (&true.into(), &3000.into()));
    let why = v["why"].as_str().unwrap();
    let backings = ["map:", "uring-direct at", "uring at", "pread:"];
    assert!(backings.iter().any(|b| why.starts_with(b)), "{why}");
    assert!(
        stderr.contains("RandomAccessFile::read_batch: "),
        "{stderr}"
    );
    // One read at a time: a queue is refused in one line.
    let out = iolab()
        .args(["random", "--method", "pread", "--queue-depth", "4"])
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("one read at a time"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

#[test]
fn a_file_of_the_users_own_is_read_and_sampled() {
    let dir = common::scratch();
    let path = dir.path().join("mine.csv");
    let text: String = (0..50_000).map(|i| format!("{i},row {i}\n")).collect();
    std::fs::write(&path, &text).unwrap();
    let tiny = dir.path().join("tiny.csv");
    std::fs::write(&tiny, "a,b\nc,d\n").unwrap();
    for (file, method) in [
        (&path, "pread"),
        (&path, "mmap"),
        (&path, "uring"),
        (&tiny, "mmap-random"),
        (&tiny, "pread-direct"),
    ] {
        let out = iolab()
            .args(["random", "--method", method, "--reads", "2000", "--json"])
            .arg(file)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("unavailable") || stderr.contains("O_DIRECT") {
            common::skip(format!("{method}: {stderr}"));
            continue;
        }
        assert!(out.status.success(), "{method}: {stderr}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["check"], "sampled", "{method}");
        assert_eq!(v["verified"], true, "{method}");
        assert_eq!(v["reads"], 2000, "{method}");
        // One read in 64, the first included: 32 of 2000.
        assert_eq!(v["checked"], 32, "{method}");
    }
    // Nothing of the user's changed.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    assert_eq!(std::fs::read_to_string(&tiny).unwrap(), "a,b\nc,d\n");
}

#[test]
fn bad_input_gets_one_line_and_a_non_zero_exit() {
    let dir = common::scratch();
    let path = blocks_file(dir.path());
    let missing = dir.path().join("missing");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![missing.display().to_string()], "cannot open"),
        (vec![dir.path().display().to_string()], "is a directory"),
        (
            vec!["--block".into(), "3000".into(), path.display().to_string()],
            "power of two",
        ),
        (
            vec!["--block".into(), "2M".into(), path.display().to_string()],
            "power of two",
        ),
        (
            vec![
                "--queue-depth".into(),
                "0".into(),
                path.display().to_string(),
            ],
            "queue depth",
        ),
        (
            vec![
                "--queue-depth".into(),
                "257".into(),
                path.display().to_string(),
            ],
            "queue depth",
        ),
        (
            vec!["--threads".into(), "0".into(), path.display().to_string()],
            "threads",
        ),
    ];
    for (args, needle) in cases {
        let out = iolab()
            .args(["random", "--method", "uring"])
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("is unavailable") {
            common::skip(format!("uring: {stderr}"));
            continue;
        }
        assert!(!out.status.success(), "{args:?}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

#[test]
fn bench_random_quick_writes_rows_with_the_documented_keys() {
    let dir = common::scratch();
    let (data, out) = (dir.path().join("data"), dir.path().join("out"));
    let output = iolab()
        .args(["bench", "random", "--quick", "--size", "4M", "--data"])
        .arg(&data)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let rows: Vec<&serde_json::Value> = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["suite"] == "random")
        .collect();
    assert!(!rows.is_empty());
    // --quick measures the two ends: in memory (warm) and beyond it.
    for state in ["warm", "beyond-memory"] {
        let in_state: Vec<_> = rows.iter().filter(|r| r["state"] == state).collect();
        assert!(!in_state.is_empty(), "no {state} rows");
        if in_state.iter().all(|r| r.get("unavailable").is_some()) {
            common::skip(format!("{state}: {}", in_state[0]["unavailable"]));
            continue;
        }
    }
    for r in &rows {
        for key in [
            "suite",
            "method",
            "pattern",
            "state",
            "block_bytes",
            "queue_depth",
            "threads",
            "verified",
        ] {
            assert!(r.get(key).is_some(), "{key} missing in {r}");
        }
        if r.get("unavailable").is_none() && r.get("error").is_none() {
            for key in ["iops", "p50_us", "p99_us", "p999_us", "cpu_us_per_read"] {
                assert!(r[key].is_number(), "{key} in {r}");
            }
            assert_eq!(r["verified"], true, "{r}");
        }
    }
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("random-iops-qd-"));
}

#[test]
fn a_damaged_first_block_is_reported_like_any_other() {
    let dir = common::scratch();
    let path = blocks_file(dir.path());
    for damaged in [0u64, 1] {
        use std::os::unix::fs::FileExt;
        let copy = dir.path().join(format!("damaged-{damaged}.bin"));
        std::fs::copy(&path, &copy).unwrap();
        let file = std::fs::OpenOptions::new().write(true).open(&copy).unwrap();
        file.write_all_at(&[0x55; 4096], damaged * 4096).unwrap();
        drop(file);
        // 245 blocks and 3000 reads: the damaged block is read about 12 times.
        let out = iolab()
            .args(["random", "--method", "pread", "--reads", "3000"])
            .arg(&copy)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "block {damaged}: {stderr}");
        assert!(
            stderr.contains("returned wrong bytes")
                && stderr.contains(&format!("first at offset {}", damaged * 4096))
                && stderr.contains("offset-derived"),
            "block {damaged}: {stderr}"
        );
    }
}
