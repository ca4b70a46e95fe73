//! `iolab bench` end to end: a real quick run on tiny data, its files and exit code, bad
//! input, and Ctrl-C. Structure only: no timing is asserted.

use iolab_testkit as common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;

/// The children's cache folder (`XDG_CACHE_HOME`): this file's own, so no test reads or
/// writes the user's machine profile.
const CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache-cli_bench");

fn iolab() -> Command {
    let mut cmd = Command::cargo_bin("iolab").unwrap();
    cmd.env("XDG_CACHE_HOME", CACHE);
    cmd
}

/// Runs `iolab bench ARGS --data DATA --out OUT`; asserts success; returns (stdout, stderr).
fn bench_ok(args: &[&str], data: &Path, out: &Path) -> (String, String) {
    let output = iolab()
        .arg("bench")
        .args(args)
        .arg("--data")
        .arg(data)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "{args:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    (stdout, stderr)
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_quick_run_writes_verified_rows_for_every_method_and_cache_state() {
    let dir = common::scratch();
    let (data, out) = (dir.path().join("data"), dir.path().join("out"));
    let (stdout, stderr) = bench_ok(&["count", "--quick", "--size", "2M"], &data, &out);
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
    let methods: Vec<String> = iolab::CountMethod::ALL
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
            // A row more than 2× slower than the fastest stops after one run, and says so.
            let stopped = row["notes"]
                .as_array()
                .is_some_and(|n| n.iter().any(|n| n.as_str().unwrap().contains("cannot win")));
            assert_eq!(
                row["runs"].as_array().unwrap().len(),
                if stopped { 1 } else { 2 },
                "--quick counts 2 runs: {row}"
            );
        }
    }
    // The data sets were generated into --data with their manifests (the data set, the
    // many files' source and their folder), and nothing else is left.
    let names: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 6, "{names:?}");
    assert_eq!(
        names
            .iter()
            .filter(|n| n.ends_with(".manifest.json"))
            .count(),
        3,
        "{names:?}"
    );
    assert!(names.iter().all(|n| !n.contains(".tmp")), "{names:?}");
}

#[test]
fn bad_arguments_give_one_line_and_a_non_zero_exit() {
    let dir = common::scratch();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["bench".into(), "nosuchsuite".into()],
            "unknown suite `nosuchsuite`; one of: count, write, edit, append, random",
        ),
        (
            vec!["bench".into(), "--size".into(), "12X".into()],
            "invalid size",
        ),
        (vec!["bench".into(), "--runs".into(), "0".into()], "runs"),
        (
            vec!["bench".into(), "--size".into(), "0".into()],
            "too small",
        ),
        (
            vec![
                "bench".into(),
                "--methods".into(),
                "mmap,nope".into(),
                "--quick".into(),
            ],
            "--methods: unknown method `nope`; one of: bufread-lines",
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
fn a_results_folder_that_cannot_be_made_fails_before_any_measuring() {
    let dir = common::scratch();
    let taken = dir.path().join("a-file");
    std::fs::write(&taken, "mine\n").unwrap();
    let output = iolab()
        .args(["bench", "count", "--quick", "--data"])
        .arg(dir.path().join("data"))
        .arg("--out")
        .arg(&taken)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("cannot create the results folder"),
        "{stderr}"
    );
    assert!(!dir.path().join("data").exists(), "it generated data first");
    assert_eq!(std::fs::read(&taken).unwrap(), b"mine\n");
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

#[test]
fn a_quick_run_starts_with_the_verdict_fits_a_screen_and_logs_each_section() {
    let dir = common::scratch();
    let out = dir.path().join("out");
    let (stdout, stderr) = bench_ok(&["--quick", "--size", "4M"], &dir.path().join("data"), &out);
    assert!(stdout.starts_with("Verdict"), "{stdout}");
    // The verdict (a line per condition), how to use each winner (the command and a
    // snippet of up to five lines that compiles, per use) and a compact table per section:
    // a few screens, not the hundreds of lines of results.md.
    assert!(
        stdout.lines().count() <= 190,
        "{} lines:\n{stdout}",
        stdout.lines().count()
    );
    let json = read_json(&out.join("results.json"));
    // One verdict per (suite, condition) that ran, with the documented keys.
    let verdict = json["verdict"].as_array().unwrap();
    for suite in ["count", "write", "edit", "append"] {
        assert!(
            verdict.iter().any(|v| v["suite"] == suite),
            "no verdict for {suite}"
        );
    }
    let mut seen = std::collections::HashSet::new();
    for v in verdict {
        for key in [
            "suite",
            "condition",
            "winner",
            "tied",
            "median_s",
            "ratio_to_best_baseline",
            "of_limit",
            "cli",
            "library",
        ] {
            assert!(v.get(key).is_some(), "verdict key {key} missing in {v}");
        }
        assert!(seen.insert((v["suite"].to_string(), v["condition"].to_string())));
        // A winner, or a tie naming at least two.
        assert!(
            v["winner"].is_string() != (v["tied"].as_array().unwrap().len() >= 2),
            "{v}"
        );
        // A tie is shortened to its first two and a count of the rest.
        let named = v["winner"].as_str().map(String::from).unwrap_or_else(|| {
            v["tied"].as_array().unwrap()[..2]
                .iter()
                .map(|t| t.as_str().unwrap().to_string())
                .collect::<Vec<_>>()
                .join(" ≈ ")
        });
        // The terminal's verdict table names it, in the order of results.json.
        assert!(stdout.contains(&named), "{named} not in:\n{stdout}");
    }
    every_verdict_command_works(verdict, dir.path());
    assert_eq!(json["verdict"][0]["suite"], "count");
    assert!(
        stdout.lines().nth(3).unwrap().starts_with("count"),
        "{stdout}"
    );
    // stderr is not a terminal: one `<suite> <section>: N rows in X s` line per section
    // (each table of results.md), and one per suite with its whole time.
    let section_line = |l: &&str| {
        let Some((title, rest)) = l.split_once(": ") else {
            return false;
        };
        let words: Vec<&str> = rest.split(' ').collect();
        title.contains(' ')
            && words.len() == 5
            && words[0].parse::<usize>().is_ok()
            && words[1].starts_with("row")
            && words[2] == "in"
            && words[3].parse::<f64>().is_ok()
            && words[4] == "s"
    };
    let lines: Vec<&str> = stderr.lines().filter(section_line).collect();
    let sections: Vec<&&str> = lines.iter().filter(|l| !l.contains("(all)")).collect();
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    let tables = md
        .lines()
        .filter(|l| l.starts_with("## ") && !l.starts_with("## Verdict"))
        .count();
    assert_eq!(sections.len(), tables, "{stderr}");
    for suite in ["count", "write", "edit", "append"] {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("{suite} (all): "))),
            "{stderr}"
        );
    }
}

/// Each verdict's command works as given: FILE a small CSV of ours (FILE... two of them),
/// READER a pipe's reader, and `iolab write` told to stop after 1 MiB.
fn every_verdict_command_works(verdict: &[serde_json::Value], dir: &Path) {
    let exe = assert_cmd::cargo::cargo_bin("iolab");
    for v in verdict {
        let cli = v["cli"].as_str().unwrap();
        let Some(rest) = cli.strip_prefix("iolab ") else {
            continue;
        };
        let file = dir.join("verdict.csv");
        std::fs::write(&file, "a,b\nc,d\n").unwrap();
        let rest = rest
            .replacen("write ", "write --bytes 1M ", 1)
            .replace("FILE...", &format!("{0} {0}", file.display()))
            .replace("FILE", &file.display().to_string())
            .replace("READER", "cat > /dev/null");
        let status = Command::new("sh")
            .arg("-c")
            .arg(format!("{} {rest}", exe.display()))
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "`{cli}` failed");
    }
}

/// A user's file and its metadata, to check it is left as it was.
fn snapshot(path: &Path) -> (Vec<u8>, std::time::SystemTime, u64) {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).unwrap();
    (
        std::fs::read(path).unwrap(),
        meta.modified().unwrap(),
        meta.ino(),
    )
}

fn user_file(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("mine.csv");
    let mut text = String::new();
    for i in 0..40_000 {
        text.push_str(&format!("{i},{},{}\n", i * 7, i % 13));
    }
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn bench_count_file_measures_the_users_file_and_leaves_it_as_it_was() {
    let dir = common::scratch();
    let file = user_file(dir.path());
    let before = snapshot(&file);
    std::thread::sleep(Duration::from_millis(20));
    let (data, out) = (dir.path().join("data"), dir.path().join("out"));
    let file_arg = file.to_str().unwrap();
    let (stdout, _) = bench_ok(&["count", "--quick", "--file", file_arg], &data, &out);
    assert_eq!(snapshot(&file), before, "the user's file changed");
    let json = read_json(&out.join("results.json"));
    let rows = json["rows"].as_array().unwrap();
    let measured: Vec<_> = rows
        .iter()
        .filter(|r| r.get("median_s").is_some())
        .collect();
    assert!(!measured.is_empty());
    for r in &measured {
        assert_eq!(r["file"], file.display().to_string(), "{r}");
        // Verified by agreement: every method printed the same count, wc -l's.
        assert_eq!(r["verified"], true, "{r}");
        assert_eq!(r["result"], "40000", "{r}");
    }
    assert!(
        json["verdict"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["condition"] == "warm: mine.csv"),
        "{stdout}"
    );
    // No data set was generated for it.
    let generated = std::fs::read_dir(&data).map(|d| d.count()).unwrap_or(0);
    assert_eq!(generated, 0);
}

#[test]
fn bench_edit_file_edits_copies_and_never_the_original() {
    let dir = common::scratch();
    let file = user_file(dir.path());
    let before = snapshot(&file);
    let out = dir.path().join("out");
    let file_arg = file.to_str().unwrap();
    bench_ok(
        &["edit", "--quick", "--file", file_arg],
        &dir.path().join("data"),
        &out,
    );
    assert_eq!(snapshot(&file), before, "the user's file changed");
    let json = read_json(&out.join("results.json"));
    let rows = json["rows"].as_array().unwrap();
    assert!(
        rows.iter().all(|r| r["dataset"] == "mine.csv"),
        "only the user's file"
    );
    assert!(
        rows.iter()
            .filter(|r| r.get("median_s").is_some())
            .all(|r| r["verified"] == true)
    );
    let conditions: Vec<&str> = json["verdict"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["condition"].as_str().unwrap())
        .collect();
    assert_eq!(conditions, ["truncate: mine.csv", "replace: mine.csv"]);
}

#[test]
fn a_missing_directory_or_fifo_file_gives_one_line_and_a_non_zero_exit() {
    let dir = common::scratch();
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path and mode; no memory is shared.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let cases = [
        (dir.path().join("missing"), "cannot read it"),
        (dir.path().to_path_buf(), "a directory"),
        (fifo, "a FIFO"),
    ];
    for (path, expected) in cases {
        for suite in ["count", "edit"] {
            let output = iolab()
                .args(["bench", suite, "--quick", "--file"])
                .arg(&path)
                .arg("--data")
                .arg(dir.path().join("data"))
                .arg("--out")
                .arg(dir.path().join("out"))
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(!output.status.success(), "{path:?}");
            assert_eq!(stderr.lines().count(), 1, "{path:?}: {stderr}");
            assert!(stderr.contains(expected), "{path:?}: {stderr}");
            assert!(stderr.contains(&path.display().to_string()), "{stderr}");
        }
    }
    // A suite that reads no file refuses --file.
    let output = iolab()
        .args(["bench", "write", "--file", "/etc/hostname"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("does not read a file"));
}

#[test]
fn a_failed_suite_exits_non_zero_and_keeps_the_other_suites_rows() {
    let dir = common::scratch();
    let (data, out) = (dir.path().join("data"), dir.path().join("out"));
    // Something that is not iolab's where the random suite's data set goes: the suite must
    // refuse it (and fail), the count suite must still be measured and written.
    let size = 2u64 << 20;
    std::fs::create_dir_all(data.join(format!("blocks-{size}.bin"))).unwrap();
    let output = iolab()
        .args(["bench", "count", "random", "--quick", "--size", "2M"])
        .arg("--data")
        .arg(&data)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("suite random FAILED"), "{stderr}");
    let json = read_json(&out.join("results.json"));
    assert_eq!(json["partial"], true);
    assert_eq!(json["errors"][0]["suite"], "random");
    let error = json["errors"][0]["error"].as_str().unwrap();
    assert!(error.contains("not made by iolab"), "{error}");
    let rows = json["rows"].as_array().unwrap();
    assert!(rows.iter().any(|r| r["suite"] == "count"));
    assert!(rows.iter().all(|r| r["suite"] != "random"));
    assert!(
        json["verdict"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["suite"] == "count")
    );
}

#[test]
fn user_files_that_cannot_be_measured_as_asked_are_refused_or_said_so() {
    let dir = common::scratch();
    let out = dir.path().join("out");
    // A /proc file: refused before measuring, one line.
    let output = iolab()
        .args([
            "bench",
            "count",
            "--quick",
            "--file",
            "/proc/self/status",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("/proc/self/status") && stderr.contains("real file system"),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing measured");
    // An empty file, given twice under two names: measured once, no NaN, n/a for its
    // cache state.
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, b"").unwrap();
    let link = dir.path().join("empty-link.txt");
    std::os::unix::fs::symlink(&empty, &link).unwrap();
    let output = iolab()
        .args([
            "bench",
            "count",
            "--quick",
            "--methods",
            "mmap,stream",
            "--file",
        ])
        .arg(&empty)
        .arg("--file")
        .arg(&link)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("the same file as --file"), "{stderr}");
    assert!(
        !stdout.contains("NaN") && !stderr.contains("NaN"),
        "{stdout}"
    );
    let json = read_json(&out.join("results.json"));
    let rows = json["rows"].as_array().unwrap();
    assert!(
        rows.iter()
            .all(|r| r["file"] == empty.display().to_string()),
        "measured once"
    );
    for r in rows.iter().filter(|r| !r["median_s"].is_null()) {
        assert!(r["residency_before"].is_null(), "{r}");
        assert!(r.get("ceiling_pct").is_none(), "{r}");
    }
    assert!(stdout.contains("n/a"), "{stdout}");
    assert!(
        !stderr.contains("not cold") && !stderr.contains("not warm"),
        "{stderr}"
    );
}

/// Every line a `--quick` run prints, on stdout and stderr, fits the terminal: `COLUMNS`
/// columns (80 and 120 here; 120 is also the width without a terminal).
#[test]
fn every_line_of_a_quick_run_fits_the_terminal() {
    let dir = common::scratch();
    let data = dir.path().join("data");
    for width in [80usize, 120] {
        let out = dir.path().join(format!("out-{width}"));
        let output = iolab()
            .args(["bench", "--quick", "--data"])
            .arg(&data)
            .arg("--out")
            .arg(&out)
            .env("COLUMNS", width.to_string())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        for line in stdout.lines().chain(stderr.lines()) {
            assert!(
                line.chars().count() <= width,
                "{} columns at COLUMNS={width}: {line}",
                line.chars().count()
            );
        }
        assert!(
            stdout.starts_with("Verdict"),
            "the verdict comes first: {stdout}"
        );
        assert!(stdout.contains("How to use each winner"), "{stdout}");
        assert!(stdout.contains("cargo run --release --example count_lines -- FILE"));
        // The files keep everything the terminal shortens: the notes and the commands.
        let md = std::fs::read_to_string(out.join("results.md")).unwrap();
        assert!(md.contains("| notes"), "results.md lost its notes column");
        assert!(md.contains("iolab count"), "results.md lost the commands");
    }
}
