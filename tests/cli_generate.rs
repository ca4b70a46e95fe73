//! Tests of `iolab gen`, the data-set generator's command: what it writes and how it refuses
//! bad sizes and places (the generators themselves: `crates/iolab/tests/generate.rs`).

use iolab_testkit as common;

use std::fs;

use assert_cmd::Command;
use iolab_lab::generate::{LinesSpec, write_lines};
use tempfile::TempDir;

const MIB: u64 = 1 << 20;

/// The data set the library writes for `spec`.
fn lines(spec: &LinesSpec) -> Vec<u8> {
    let mut out = Vec::new();
    write_lines(&mut out, spec).expect("generating into a Vec cannot fail");
    out
}

fn newlines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

// ---------------------------------------------------------------------------------------
// iolab gen

/// The children's cache folder (`XDG_CACHE_HOME`): this file's own, so no test reads or
/// writes the user's machine profile.
const CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache-cli_generate");

fn iolab() -> Command {
    let mut cmd = Command::cargo_bin("iolab").unwrap();
    cmd.env("XDG_CACHE_HOME", CACHE);
    cmd
}

/// Runs `iolab ARGS`, expecting failure with exactly one line on stderr; returns it.
fn one_line_failure(args: &[&str]) -> String {
    let output = iolab().args(args).output().unwrap();
    assert!(!output.status.success(), "{args:?} succeeded");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    stderr.trim_end().to_string()
}

#[test]
fn cli_gen_lines_writes_the_file_and_a_summary() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("lines.txt");
    let out = path.to_str().unwrap();
    let output = iolab()
        .args(["gen", "lines", "--size", "64K", "--out", out, "--seed", "9"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let data = fs::read(&path).unwrap();
    assert_eq!(data.len(), 65536);
    assert_eq!(data.last(), Some(&b'\n'));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let expected = format!(
        "iolab: {out}: 65536 bytes (64.0 KiB), {} lines in ",
        newlines(&data)
    );
    assert!(stderr.starts_with(&expected), "{stderr}");
    let spec = LinesSpec {
        size: 65536,
        seed: 9,
        ..LinesSpec::default()
    };
    assert!(data == lines(&spec), "the CLI and the library disagree");
    assert_eq!(common::names_in(dir.path()), ["lines.txt"]);
}

#[test]
fn cli_gen_is_deterministic() {
    let dir = TempDir::new().unwrap();
    let run = |name: &str, seed: &str| {
        let path = dir.path().join(name);
        iolab()
            .args([
                "gen",
                "lines",
                "--size",
                "300000",
                "--mean-line-length",
                "80",
            ])
            .args(["--seed", seed, "--out"])
            .arg(&path)
            .assert()
            .success();
        fs::read(path).unwrap()
    };
    let (a, b, c) = (run("a", "1"), run("b", "1"), run("c", "2"));
    assert!(a == b);
    assert!(a != c);
}

#[test]
fn cli_refuses_to_overwrite_without_force() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("data.txt");
    fs::write(&path, "keep me\n").unwrap();
    let out = path.to_str().unwrap();
    let line = one_line_failure(&["gen", "lines", "--size", "1K", "--out", out]);
    assert_eq!(
        line,
        format!("iolab: {out}: already exists (use --force to replace it)")
    );
    assert_eq!(fs::read(&path).unwrap(), b"keep me\n");

    iolab()
        .args(["gen", "lines", "--size", "1K", "--out", out, "--force"])
        .assert()
        .success();
    assert_eq!(fs::metadata(&path).unwrap().len(), 1024);
    assert_eq!(common::names_in(dir.path()), ["data.txt"]);
}

#[test]
fn cli_bad_sizes_give_one_line() {
    for (size, reason) in [
        ("12X", "unknown suffix 'X'"),
        ("", "empty"),
        ("-5G", "negative"),
        ("lots", "no number"),
        ("1.5", "a fraction of a byte"),
        ("20E", "too large"),
    ] {
        let dir = TempDir::new().unwrap();
        let out = dir.path().join("x");
        let line = one_line_failure(&[
            "gen",
            "lines",
            "--size",
            size,
            "--out",
            out.to_str().unwrap(),
        ]);
        let start = format!("iolab: invalid size '{size}': ");
        assert!(line.starts_with(&start) && line.contains(reason), "{line}");
        assert!(common::names_in(dir.path()).is_empty());
    }
}

#[test]
fn cli_errors_name_the_file() {
    let dir = TempDir::new().unwrap();
    let missing = dir.path().join("missing").join("x.txt");
    let out = missing.to_str().unwrap();
    let line = one_line_failure(&["gen", "lines", "--size", "1K", "--out", out]);
    assert_eq!(
        line,
        format!("iolab: {out}: cannot open its directory: No such file or directory")
    );
    let dir_path = dir.path().to_str().unwrap();
    let line = one_line_failure(&[
        "gen", "csv", "--rows", "1", "--cols", "2", "--out", dir_path,
    ]);
    assert_eq!(line, format!("iolab: {dir_path}: is a directory"));
    let line = one_line_failure(&[
        "gen",
        "lines",
        "--size",
        "1K",
        "--mean-line-length",
        "0",
        "--out",
        out,
    ]);
    assert!(
        line.starts_with("iolab: the mean line length must be at least 1"),
        "{line}"
    );
    let line = one_line_failure(&["gen", "csv", "--rows", "1", "--cols", "0", "--out", out]);
    assert_eq!(line, "iolab: a CSV needs at least 1 column");
}

#[test]
fn cli_gen_csv_rows_and_size() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("data.csv");
    iolab()
        .args(["gen", "csv", "--rows", "1000", "--cols", "5", "--out"])
        .arg(&path)
        .assert()
        .success();
    let data = fs::read(&path).unwrap();
    assert_eq!(newlines(&data), 1000);
    assert!(
        data.split(|&b| b == b'\n').take(1000).all(|line| line
            .iter()
            .filter(|&&b| b == b',')
            .count()
            == 4)
    );

    let sized = dir.path().join("sized.csv");
    iolab()
        .args(["gen", "csv", "--size", "1M", "--cols", "8", "--out"])
        .arg(&sized)
        .assert()
        .success();
    let len = fs::metadata(&sized).unwrap().len() as f64;
    assert!(
        (len - MIB as f64).abs() / (MIB as f64) < 0.02,
        "{len} bytes"
    );

    let output = iolab()
        .args([
            "gen", "csv", "--rows", "5", "--cols", "3", "--out", "x", "--size", "1K",
        ])
        .output()
        .unwrap();
    assert!(!output.status.success(), "--rows and --size together");
}

#[test]
fn cli_writes_to_stdout_and_devices() {
    let output = iolab()
        .args(["gen", "lines", "--size", "100000", "--out", "-"])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_eq!(
        output.stdout,
        lines(&LinesSpec {
            size: 100_000,
            ..LinesSpec::default()
        })
    );
    // /dev/null exists and is no regular file: written to, without --force, and not replaced.
    iolab()
        .args(["gen", "lines", "--size", "3M", "--out", "/dev/null"])
        .assert()
        .success();
    assert!(!fs::metadata("/dev/null").unwrap().is_file());
}

#[test]
fn an_impossible_tree_is_one_line_and_makes_nothing() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("tree");
    let output = iolab()
        .args(["gen", "tree", "--files", "100000000000", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("at most 10000000 files"), "{stderr}");
    assert!(!out.exists());
}
