//! `iolab report` and `iolab compare` on inputs a user should be protected from: report
//! outputs that already exist (the run's own `results.json` above all), symbolic links, and
//! results that cannot be compared or trusted (another `schema_version`, different data
//! sizes, negative medians). Each refusal is one line, a non-zero exit, and leaves every
//! file byte for byte as it was.
//!
//! One real quick run (`iolab bench count`, 1 MiB, warm, `mmap` only) provides the
//! results; the other cases are copies of its `results.json` with one key changed.

use iolab_testkit as common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;
use tempfile::TempDir;

/// The children's cache folder (`XDG_CACHE_HOME`): this file's own, so no test reads or
/// writes the user's machine profile.
const CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache-cli_report_safety");

fn iolab() -> Command {
    let mut cmd = Command::cargo_bin("iolab").unwrap();
    cmd.env("XDG_CACHE_HOME", CACHE);
    cmd
}

/// The `results.json` of one quick real run, made once for the whole file.
fn real_results() -> &'static Value {
    static RESULTS: OnceLock<Value> = OnceLock::new();
    RESULTS.get_or_init(|| {
        let dir = common::scratch();
        let out = dir.path().join("run");
        let output = iolab()
            // Three runs (not --quick's two): compare judges rows of three runs or more.
            .args([
                "bench", "count", "--size", "1M", "--runs", "3", "--warmup", "0",
            ])
            .args(["--cache", "warm", "--methods", "mmap", "--no-baselines"])
            .arg("--data")
            .arg(dir.path().join("data"))
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", text(&output.stderr));
        serde_json::from_str(&fs::read_to_string(out.join("results.json")).unwrap()).unwrap()
    })
}

/// A results folder in `dir` named `name`, holding `results` as its results.json and the
/// other files `iolab bench` writes beside it.
fn results_folder(dir: &Path, name: &str, results: &Value) -> PathBuf {
    let folder = dir.join(name);
    fs::create_dir(&folder).unwrap();
    fs::write(
        folder.join("results.json"),
        serde_json::to_string_pretty(results).unwrap(),
    )
    .unwrap();
    fs::write(folder.join("results.md"), "# the run's summary\n").unwrap();
    fs::write(folder.join("results.csv"), "suite,method\n").unwrap();
    folder
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Asserts a refusal: exit 1, nothing on stdout, one `iolab: ` line on stderr that contains
/// every one of `needles`; returns that line.
fn assert_refused(output: &Output, needles: &[&str]) -> String {
    assert!(output.stdout.is_empty(), "stdout: {}", text(&output.stdout));
    common::assert_one_line_error(output, 1, needles)
}

/// `iolab compare`'s refusal: as [`assert_refused`], with exit code 2 (1 means "B
/// regressed", which a refusal must not be taken for).
fn assert_compare_refused(output: &Output, needles: &[&str]) -> String {
    assert!(output.stdout.is_empty(), "stdout: {}", text(&output.stdout));
    common::assert_one_line_error(output, 2, needles)
}

/// Every file of `folder` (not its subfolders) with its bytes, to check that nothing
/// changed.
fn snapshot(folder: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| !path.is_dir())
        .map(|path| {
            let bytes = fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    files.sort();
    files
}

fn run_dir() -> (TempDir, PathBuf) {
    let dir = common::scratch();
    let run = results_folder(dir.path(), "run", real_results());
    (dir, run)
}

#[test]
fn report_refuses_the_runs_own_results_json_even_with_force() {
    let (_dir, run) = run_dir();
    let before = snapshot(&run);
    let json = run.join("results.json");
    for force in [false, true] {
        let mut cmd = iolab();
        cmd.arg("report").arg(&run).arg("--html").arg(&json);
        if force {
            cmd.arg("--force");
        }
        let line = assert_refused(&cmd.output().unwrap(), &[&json.display().to_string()]);
        assert!(line.contains("results"), "{line}");
    }
    // The other files of the run, under another spelling and through a link, with --force.
    let link = run.join("link.html");
    std::os::unix::fs::symlink("results.md", &link).unwrap();
    for output in [run.join("..").join("run").join("results.csv"), link.clone()] {
        let result = iolab()
            .arg("report")
            .arg(run.join("results.json"))
            .arg("--html")
            .arg(&output)
            .arg("--force")
            .output()
            .unwrap();
        assert_refused(&result, &[&output.display().to_string()]);
    }
    fs::remove_file(&link).unwrap();
    assert_eq!(snapshot(&run), before, "a file of the run changed");
}

#[test]
fn report_refuses_an_existing_output_without_force() {
    let (dir, run) = run_dir();
    let mine = dir.path().join("mine.html");
    fs::write(&mine, "the user's own page\n").unwrap();
    let svg = dir.path().join("chart.svg");
    fs::write(&svg, "the user's own chart\n").unwrap();
    let before = (snapshot(&run), snapshot(dir.path()));

    let output = iolab()
        .arg("report")
        .arg(&run)
        .arg("--html")
        .arg(&mine)
        .output()
        .unwrap();
    assert_refused(
        &output,
        &[&mine.display().to_string(), "already exists", "--force"],
    );
    // The HTML would be new, the chart's file is not: neither is written.
    let fresh = dir.path().join("fresh.html");
    let output = iolab()
        .arg("report")
        .arg(&run)
        .arg("--html")
        .arg(&fresh)
        .arg("--count-svg")
        .arg(&svg)
        .output()
        .unwrap();
    assert_refused(&output, &[&svg.display().to_string(), "already exists"]);
    assert!(!fresh.exists(), "the report was written before the refusal");
    assert_eq!((snapshot(&run), snapshot(dir.path())), before);

    // The default output, the run's own report.html (which the bench wrote), is rewritten.
    fs::write(run.join("report.html"), "old\n").unwrap();
    let output = iolab().arg("report").arg(&run).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let html = fs::read_to_string(run.join("report.html")).unwrap();
    assert!(html.contains("<html"), "{}", &html[..html.len().min(200)]);
}

#[test]
fn report_never_writes_through_a_symbolic_link() {
    let (dir, run) = run_dir();
    let target = dir.path().join("target.txt");
    fs::write(&target, "precious\n").unwrap();
    let link = dir.path().join("out.html");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    for force in [false, true] {
        let mut cmd = iolab();
        cmd.arg("report").arg(&run).arg("--html").arg(&link);
        if force {
            cmd.arg("--force");
        }
        assert_refused(&cmd.output().unwrap(), &[&link.display().to_string()]);
        assert_eq!(fs::read(&target).unwrap(), b"precious\n");
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
}

#[test]
fn report_with_force_replaces_an_existing_output_that_is_not_an_input() {
    let (dir, run) = run_dir();
    let before = snapshot(&run);
    let (html, svg) = (dir.path().join("old.html"), dir.path().join("old.svg"));
    fs::write(&html, "old report\n").unwrap();
    fs::write(&svg, "old chart\n").unwrap();
    let output = iolab()
        .arg("report")
        .arg(&run)
        .arg("--html")
        .arg(&html)
        .arg("--count-svg")
        .arg(&svg)
        .arg("--force")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        fs::read_to_string(&html)
            .unwrap()
            .starts_with("<!DOCTYPE html>")
    );
    assert!(fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    assert_eq!(snapshot(&run), before);
    // Nothing else was left beside them (no temporary file).
    let names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
}

#[test]
fn report_writes_a_new_output_without_force() {
    let (dir, run) = run_dir();
    let html = dir.path().join("new.html");
    let output = iolab()
        .arg("report")
        .arg(&run)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(fs::read_to_string(&html).unwrap().contains("iolab results"));
}

#[test]
fn compare_and_report_refuse_another_schema_version() {
    let dir = common::scratch();
    let a = results_folder(dir.path(), "a", real_results());
    let mut future = real_results().clone();
    future["schema_version"] = 999.into();
    let b = results_folder(dir.path(), "b", &future);
    let b_json = b.join("results.json").display().to_string();
    let output = iolab().arg("compare").arg(&a).arg(&b).output().unwrap();
    assert_compare_refused(&output, &[&b_json, "999", "schema_version 1"]);
    let output = iolab().arg("compare").arg(&b).arg(&a).output().unwrap();
    assert_compare_refused(&output, &[&b_json, "999"]);
    report_refuses(dir.path(), &b, &[&b_json, "999"]);
}

/// `iolab report RUN --html NEW` refuses with one line holding `needles`, and writes
/// nothing.
fn report_refuses(dir: &Path, run: &Path, needles: &[&str]) {
    let html = dir.join("refused.html");
    let output = iolab()
        .arg("report")
        .arg(run)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    assert_refused(&output, needles);
    assert!(!html.exists());
}

/// `results` with every measured row's times multiplied by `factor` and its bytes set.
fn scaled(results: &Value, factor: f64, bytes: Option<u64>) -> Value {
    let mut out = results.clone();
    for row in out["rows"].as_array_mut().unwrap() {
        if let Some(bytes) = bytes {
            row["bytes"] = bytes.into();
        }
        let scale = |v: &mut Value| {
            if let Some(x) = v.as_f64() {
                *v = (x * factor).into();
            }
        };
        scale(&mut row["median_s"]);
        for run in row["runs"].as_array_mut().into_iter().flatten() {
            scale(run);
        }
        if let Some(stats) = row["stats"].as_object_mut() {
            for key in ["min", "max", "median", "mean", "stddev", "mad"] {
                if let Some(v) = stats.get_mut(key) {
                    scale(v);
                }
            }
        }
    }
    out
}

#[test]
fn compare_does_not_call_rows_of_different_sizes_improved() {
    let dir = common::scratch();
    let a = results_folder(dir.path(), "a", real_results());
    // Ten times faster, on no data at all.
    let b = results_folder(dir.path(), "b", &scaled(real_results(), 0.1, Some(0)));
    let output = iolab().arg("compare").arg(&a).arg(&b).output().unwrap();
    let line = assert_compare_refused(&output, &["not comparable", "0 B"]);
    assert!(!line.contains("improved"), "{line}");

    // One row of the same size, one not: the table says which is which.
    let mut mixed = scaled(real_results(), 0.1, None);
    mixed["rows"][0]["bytes"] = 0.into();
    let c = results_folder(dir.path(), "c", &mixed);
    let output = iolab().arg("compare").arg(&a).arg(&c).output().unwrap();
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("count ")).collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines[0].contains("not comparable") && !lines[0].contains("improved"),
        "{stdout}"
    );
    assert!(lines[1].contains("improved"), "{stdout}");
    assert!(text(&output.stderr).contains("not compared"));
}

#[test]
fn compare_and_report_refuse_a_negative_median() {
    let dir = common::scratch();
    let a = results_folder(dir.path(), "a", real_results());
    let mut corrupt = real_results().clone();
    corrupt["rows"][0]["median_s"] = (-0.02).into();
    corrupt["rows"][0]["stats"]["median"] = (-0.02).into();
    let b = results_folder(dir.path(), "b", &corrupt);
    let b_json = b.join("results.json").display().to_string();
    let output = iolab().arg("compare").arg(&a).arg(&b).output().unwrap();
    assert_compare_refused(&output, &[&b_json, "median_s", "-0.02"]);
    report_refuses(dir.path(), &b, &[&b_json, "-0.02"]);
}
