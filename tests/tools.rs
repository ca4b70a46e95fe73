//! The C probes in `tools/` that the floors in docs/findings/ come from still build and measure
//! what their headers say: each is compiled with the system's `cc` and run on tiny inputs;
//! and `tools/warm_random_profile.py`, whose runs docs/findings/random.md quotes, runs a round.

use iolab_testkit as common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Compiles `tools/<name>.c` into `dir`, or says why it cannot (no compiler).
fn build(name: &str, dir: &Path, extra: &[&str]) -> Option<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tools/{name}.c"));
    let exe = dir.join(name);
    let out = match Command::new("cc")
        .args(["-O2", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(&src)
        .args(extra)
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            common::skip(format!("no C compiler (cc: {e})"));
            return None;
        }
    };
    assert!(
        out.status.success(),
        "{} does not build: {}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(exe)
}

#[test]
fn sync_floor_measures_every_mode_and_leaves_no_file() {
    let dir = common::scratch();
    let Some(exe) = build("sync_floor", dir.path(), &[]) else {
        return;
    };
    let file = dir.path().join("floor.tmp");
    for (mode, bytes) in [
        ("bsame", "8192"),
        ("badvance", "8192"),
        ("grow", "520"),
        ("same", "8192"),
        ("advance", "8192"),
    ] {
        let out = Command::new(&exe)
            .args([mode, "20", bytes])
            .arg(&file)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() && matches!(mode, "same" | "advance") && stderr.contains("Invalid")
        {
            common::skip(format!("O_DIRECT refused here ({mode}: {stderr})"));
            assert!(!file.exists(), "{mode} left its file behind on failing");
            continue;
        }
        assert!(out.status.success(), "{mode}: {stderr}");
        let rate: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        assert!(rate > 0.0, "{mode}: {rate}");
        assert!(!file.exists(), "{mode} left its file behind");
    }
    for bad in [
        &["same", "20", "100"][..],
        &["grow", "0", "8"],
        &["grow"],
        &["typo", "20", "8192"],
    ] {
        let out = Command::new(&exe).args(bad).arg(&file).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
    // A file that exists is not the probe's to truncate or remove.
    std::fs::write(&file, b"precious").unwrap();
    let out = Command::new(&exe)
        .args(["bsame", "5", "4096"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&file).unwrap(), b"precious");
}

#[test]
fn many_files_floor_opens_every_listed_file() {
    let dir = common::scratch();
    let Some(exe) = build("many_files_floor", dir.path(), &["-pthread"]) else {
        return;
    };
    let mut list = Vec::new();
    for i in 0..5 {
        let f = dir.path().join(format!("f{i}"));
        std::fs::write(&f, b"a\nb\n").unwrap();
        list.extend_from_slice(f.as_os_str().as_encoded_bytes());
        list.push(0);
    }
    let list_path = dir.path().join("list");
    std::fs::write(&list_path, &list).unwrap();
    for mode in ["0", "1", "12", "14", "15"] {
        let out = Command::new(&exe)
            .args([mode])
            .arg(&list_path)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "mode {mode}: {stdout}");
        assert!(
            stdout.contains("5 files") && stdout.contains("(0 failed calls)"),
            "mode {mode}: {stdout}"
        );
    }
    // A missing file is a failed call, and the exit status says so.
    list.extend_from_slice(dir.path().join("missing").as_os_str().as_encoded_bytes());
    list.push(0);
    std::fs::write(&list_path, &list).unwrap();
    let out = Command::new(&exe)
        .arg("12")
        .arg(&list_path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("(1 failed calls)"));
}

/// `tools/warm_random_profile.py` (issue 48's done-when: `RandomAccessFile::open` after a
/// profile naming a plain map, against a `pread` loop) still runs: one round on a small
/// file, each planted profile taken as planned (the tool checks each run's `why`: the one
/// of another iolab version ignored, this one's followed), and its table printed.
#[test]
fn warm_random_profile_runs_its_rounds_and_checks_each_profile() {
    let runs = |cmd: &str| {
        Command::new(cmd)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !runs("python3") {
        common::skip("no python3");
        return;
    }
    if !runs("fincore") {
        common::skip("no fincore (util-linux)");
        return;
    }
    let dir = common::scratch();
    let file = dir.path().join("data");
    let bytes: Vec<u8> = (0..8usize << 20)
        .map(|i| (i * 7 + i / 4093) as u8)
        .collect();
    std::fs::write(&file, bytes).unwrap();
    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/warm_random_profile.py");
    let out = Command::new("python3")
        .arg(tool)
        .arg("--iolab")
        .arg(assert_cmd::cargo::cargo_bin("iolab"))
        .arg("--file")
        .arg(&file)
        .args(["--rounds", "1", "--reads", "2000", "--schema"])
        .arg(iolab_lab::profile::provenance::SCHEMA.to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for row in ["| pread |", "| auto-other |", "| auto-same |"] {
        assert!(stdout.contains(row), "{row}: {stdout}");
    }
}
