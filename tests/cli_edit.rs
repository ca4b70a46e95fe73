//! `iolab edit` and `iolab bench edit` end to end, run as a user would run them.
//!
//! Behaviour only: what is printed, the exit code, and the file afterwards; no timing is
//! asserted. One test bounds the peak memory (RSS) of a `std-stream` edit of a 2 GiB file.
//! Tests that need an unprivileged user skip (with a note) where there is none.

use common::{is_root, run_as_nobody};
use iolab_testkit as common;

use std::fs::{self, File};
use std::os::unix::fs::{FileExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_iolab");
const STRATEGIES: [&str; 3] = ["mmap", "std-whole", "std-stream"];
const SAMPLE: &[u8] = b"id,name,price\r\n1,apple,0.5\n2,pear,0.75\n";

/// The children's cache folder (`XDG_CACHE_HOME`): this file's own, so no test reads or
/// writes the user's machine profile.
const CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache-cli_edit");

fn iolab(args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args).env("XDG_CACHE_HOME", CACHE);
    cmd
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("run iolab")
}

fn stdout_of(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr_of(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn sample(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, data).unwrap();
    path
}

/// Asserts one error line `iolab: <path>: ...<expected>...`, nothing on stdout, exit 1.
fn assert_one_line_error(o: &Output, path: &Path, expected: &str) {
    let stderr = stderr_of(o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let prefix = format!("iolab: {}: ", path.display());
    assert!(stderr.starts_with(&prefix), "{stderr}");
    assert!(stderr.contains(expected), "{stderr}");
    assert!(o.stdout.is_empty(), "{}", stdout_of(o));
}

#[test]
fn every_strategy_edits_through_the_cli_and_says_what_it_did() {
    let dir = TempDir::new().unwrap();
    for s in STRATEGIES {
        let path = sample(dir.path(), "t.csv", SAMPLE);
        let o = run(iolab(&["edit", "truncate-first-line", "--strategy", s]).arg(&path));
        assert!(o.status.success(), "{}", stderr_of(&o));
        assert_eq!(fs::read(&path).unwrap(), b"id,name,price\r\n");
        assert_eq!(
            stdout_of(&o),
            format!("{}: kept the first line: 15 of 39 bytes\n", path.display())
        );

        let path = sample(dir.path(), "r.csv", SAMPLE);
        let o = run(iolab(&["edit", "replace", "--from", ",", "--to", ";", "-s", s]).arg(&path));
        assert!(o.status.success(), "{}", stderr_of(&o));
        assert_eq!(
            fs::read(&path).unwrap(),
            SAMPLE
                .iter()
                .map(|&b| if b == b',' { b';' } else { b })
                .collect::<Vec<_>>()
        );
        assert_eq!(
            stdout_of(&o),
            format!("{}: replaced 6 ',' bytes with ';'\n", path.display())
        );
    }
}

#[test]
fn the_default_strategy_is_the_librarys_and_byte_forms_are_accepted() {
    let dir = TempDir::new().unwrap();
    let path = sample(dir.path(), "f", b"a\tb\nc\td\n");
    let o = run(iolab(&[
        "edit",
        "replace",
        "--from",
        "\\t",
        "--to",
        "0x2c",
        "--timings",
    ])
    .arg(&path));
    assert!(o.status.success(), "{}", stderr_of(&o));
    assert_eq!(fs::read(&path).unwrap(), b"a,b\nc,d\n");
    let out = stdout_of(&o);
    assert!(out.contains("replaced 2 '\\t' bytes with ','"), "{out}");
    // The library's default to replace: `EditOptions::replace_byte` without a strategy.
    let default = iolab_lab::edit::DEFAULT_REPLACE.name();
    assert!(out.contains(&format!("strategy {default}")), "{out}");
    let o = run(iolab(&[
        "edit",
        "replace",
        "--from",
        "\\n",
        "--to",
        "\\x00",
        "--buffer-size",
        "3",
    ])
    .arg(&path));
    assert!(o.status.success(), "{}", stderr_of(&o));
    assert_eq!(fs::read(&path).unwrap(), b"a,b\0c,d\0");
}

#[test]
fn a_file_without_newline_and_an_empty_file_are_left_unchanged_and_it_says_so() {
    let dir = TempDir::new().unwrap();
    for s in STRATEGIES {
        let path = sample(dir.path(), "n", b"no newline, here");
        let o = run(iolab(&["edit", "truncate-first-line", "-s", s]).arg(&path));
        assert!(o.status.success(), "{}", stderr_of(&o));
        assert_eq!(
            stdout_of(&o),
            format!(
                "{}: no newline; left unchanged (16 bytes)\n",
                path.display()
            )
        );
        assert_eq!(fs::read(&path).unwrap(), b"no newline, here");

        let path = sample(dir.path(), "e", b"");
        for args in [
            &["edit", "truncate-first-line", "-s", s][..],
            &["edit", "replace", "--from", ",", "--to", ";", "-s", s][..],
        ] {
            let o = run(iolab(args).arg(&path));
            assert!(o.status.success(), "{}", stderr_of(&o));
            assert_eq!(fs::read(&path).unwrap(), b"");
            assert!(o.stderr.is_empty());
        }
        let o = run(iolab(&["edit", "truncate-first-line", "-s", s]).arg(&path));
        assert_eq!(
            stdout_of(&o),
            format!("{}: empty; left unchanged\n", path.display())
        );

        let path = sample(dir.path(), "one", b"only line\n");
        let o = run(iolab(&["edit", "truncate-first-line", "-s", s]).arg(&path));
        assert!(stdout_of(&o).contains("the first line is the whole file; left unchanged"));
        let o = run(iolab(&["edit", "replace", "--from", ";", "--to", ",", "-s", s]).arg(&path));
        assert_eq!(
            stdout_of(&o),
            format!("{}: no ';' byte; left unchanged\n", path.display())
        );
    }
}

#[test]
fn timings_name_the_kernel_and_every_step() {
    let dir = TempDir::new().unwrap();
    let best = iolab_lab::kernel::Kernel::best().name();
    for s in STRATEGIES {
        let path = sample(dir.path(), "f", SAMPLE);
        let o = run(iolab(&[
            "edit",
            "replace",
            "--from",
            ",",
            "--to",
            ";",
            "--timings",
            "-s",
            s,
        ])
        .arg(&path));
        let out = stdout_of(&o);
        assert!(
            out.contains(&format!("strategy {s}, kernel {best}, durable")),
            "{out}"
        );
        for step in ["open", "replace", "sync", "total"] {
            assert!(
                out.lines().any(|l| l.trim_start().starts_with(step)),
                "{step}: {out}"
            );
        }

        let path = sample(dir.path(), "g", SAMPLE);
        let o = run(iolab(&[
            "edit",
            "replace",
            "--from",
            ",",
            "--to",
            ";",
            "--timings-json",
            "--no-sync",
            "-s",
            s,
        ])
        .arg(&path));
        assert!(o.status.success(), "{}", stderr_of(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["op"], "replace");
        assert_eq!(v["strategy"], s);
        assert_eq!(v["kernel"], best);
        assert_eq!(v["durable"], false);
        assert_eq!(v["outcome"], "replaced");
        assert_eq!(v["changed"], 6);
        assert_eq!(v["bytes_before"], 39);
        assert_eq!(v["bytes_after"], 39);
        assert!(v["peak_rss_bytes"].as_u64().is_some_and(|b| b > 0), "{v}");
        let phases = v["phases"].as_object().unwrap();
        assert!(
            phases.contains_key("open") && phases.contains_key("replace"),
            "{v}"
        );
        assert!(!phases.contains_key("sync"), "--no-sync: {v}");
        assert!(
            phases
                .values()
                .all(|s| s.as_f64().is_some_and(|s| s >= 0.0))
        );
        assert!(v["total_s"].as_f64().unwrap() > 0.0);

        let path = sample(dir.path(), "h", SAMPLE);
        let o = run(iolab(&["edit", "truncate-first-line", "--timings-json", "-s", s]).arg(&path));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["outcome"], "truncated");
        assert_eq!(v["kernel"], serde_json::Value::Null);
        assert_eq!(v["bytes_after"], 15);
        assert!(v["phases"]["sync"].as_f64().is_some(), "{v}");
    }
}

#[test]
fn a_directory_a_missing_file_and_a_device_are_one_line_errors() {
    let dir = TempDir::new().unwrap();
    let sub = dir.path().join("sub");
    fs::create_dir(&sub).unwrap();
    let missing = dir.path().join("missing.csv");
    for s in STRATEGIES {
        let o = run(iolab(&["edit", "truncate-first-line", "-s", s]).arg(&sub));
        assert_one_line_error(&o, &sub, "is a directory");
        let o = run(iolab(&["edit", "replace", "--from", ",", "--to", ";", "-s", s]).arg(&missing));
        assert_one_line_error(&o, &missing, "cannot open: No such file or directory");
        assert!(!missing.exists());
        let null = Path::new("/dev/null");
        let o = run(iolab(&["edit", "replace", "--from", ",", "--to", ";", "-s", s]).arg(null));
        assert_one_line_error(&o, null, "is a character device, not a regular file");
    }
}

#[test]
fn bad_arguments_are_one_line_and_leave_the_file_alone() {
    let dir = TempDir::new().unwrap();
    let path = sample(dir.path(), "f", SAMPLE);
    for (args, expected) in [
        (vec!["--from", "ab", "--to", ";"], "'ab' is not one byte"),
        (
            vec!["--from", "", "--to", ";"],
            "expected one byte, got nothing",
        ),
        (vec!["--from", "é", "--to", ";"], "is 2 bytes in UTF-8"),
        (
            vec!["--from", ",", "--to", "0x100"],
            "'0x100' is not one byte",
        ),
        (
            vec!["--from", ",", "--to", ";", "-s", "fast"],
            "unknown strategy `fast`; one of: mmap, std-whole, std-stream",
        ),
        (
            vec!["--from", ",", "--to", ";", "--kernel", "sse9"],
            "unknown kernel `sse9`; one of: scalar, avx2, avx512",
        ),
        (vec!["--to", ";"], "required arguments were not provided"),
        (
            vec!["--from", ",", "--to", ";", "--buffer-size", "0"],
            "at least 1 byte",
        ),
        (
            vec!["--from", ",", "--to", ";", "--buffer-size", "2G"],
            "at most 1G",
        ),
    ] {
        let mut cmd = iolab(&["edit", "replace"]);
        cmd.args(&args).arg(&path);
        let o = run(&mut cmd);
        let stderr = stderr_of(&o);
        assert!(!o.status.success(), "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("iolab: ") && stderr.contains(expected),
            "{args:?}: {stderr}"
        );
        assert_eq!(fs::read(&path).unwrap(), SAMPLE);
    }
}

#[test]
fn methods_edit_lists_the_three_strategies() {
    let o = run(&mut iolab(&["methods", "edit"]));
    assert!(o.status.success());
    let out = stdout_of(&o);
    let names: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(names, STRATEGIES);
    assert!(out.lines().all(|l| l.ends_with("  available")), "{out}");
}

#[test]
fn a_file_the_user_cannot_write_is_refused_untouched() {
    let dir = TempDir::new().unwrap();
    // The unprivileged user must reach the file; TempDir is created 0700.
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let path = sample(dir.path(), "read-only.csv", SAMPLE);
    fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
    let before = fs::metadata(&path).unwrap();
    let root = is_root();
    // Root bypasses permission checks: run a copy `nobody` can reach, as nobody.
    let nobody = if root {
        match common::nobody_exe(Path::new(BIN), &["--version"]) {
            Ok(exe) => Some(exe),
            Err(reason) => return common::skip(reason),
        }
    } else {
        None
    };
    for s in STRATEGIES {
        for args in [
            &["edit", "truncate-first-line", "-s", s][..],
            &["edit", "replace", "--from", ",", "--to", ";", "-s", s][..],
        ] {
            let mut cmd = match &nobody {
                Some(exe) => {
                    let mut cmd = exe.command();
                    cmd.args(args);
                    run_as_nobody(&mut cmd);
                    cmd
                }
                None => iolab(args),
            };
            cmd.arg(&path);
            let o = run(&mut cmd);
            assert_one_line_error(&o, &path, "cannot open for writing: Permission denied");
            let after = fs::metadata(&path).unwrap();
            assert_eq!(fs::read(&path).unwrap(), SAMPLE);
            assert_eq!(
                (after.len(), after.mtime(), after.mtime_nsec()),
                (before.len(), before.mtime(), before.mtime_nsec())
            );
        }
    }
}

/// The bound on `std-stream`'s peak memory for a 2 GiB file.
const STREAM_RSS_LIMIT: u64 = 16 << 20;

/// Runs an edit with `--timings-json` and returns the peak RSS it reports, checked against
/// GNU time's figure where `/usr/bin/time` is GNU time. (Measuring from here with `wait4`
/// would not do: `ru_maxrss` of a child includes the peak of the process that spawned it,
/// this test harness; `time` is a small parent.)
fn peak_rss_of_edit(args: &[&str], path: &Path) -> u64 {
    let o = run(iolab(args).arg("--timings-json").arg(path));
    assert!(o.status.success(), "{}", stderr_of(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let reported = v["peak_rss_bytes"].as_u64().expect("peak_rss_bytes");
    let time = Path::new("/usr/bin/time");
    let gnu = time.exists()
        && Command::new(time)
            .args(["-f", "%M", "true"])
            .output()
            .is_ok_and(|o| {
                o.status.success()
                    && String::from_utf8_lossy(&o.stderr)
                        .trim()
                        .parse::<u64>()
                        .is_ok()
            });
    if gnu {
        let o = run(Command::new(time)
            .args(["-f", "%M", BIN])
            .args(args)
            .arg(path)
            .stdout(Stdio::null()));
        assert!(o.status.success(), "{}", stderr_of(&o));
        let kib: u64 = stderr_of(&o)
            .trim()
            .lines()
            .last()
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            kib * 1024 <= STREAM_RSS_LIMIT,
            "GNU time: peak RSS {kib} KiB"
        );
    }
    reported
}

#[test]
fn std_stream_edits_a_2_gib_file_in_bounded_memory() {
    let dir = common::scratch();
    let path = dir.path().join("sparse-2g.csv");
    let len: u64 = 2 << 30;
    // Sparse (holes read as zeros), with a comma and a newline every 256 MiB and at the end,
    // so the replace reads all of it and writes a few buffers back.
    let file = File::create(&path).unwrap();
    file.set_len(len).unwrap();
    let marks: Vec<u64> = (0..8)
        .map(|i| i * (256 << 20) + 4095)
        .chain([len - 2])
        .collect();
    for &at in &marks {
        file.write_all_at(b",\n", at).unwrap();
    }
    drop(file);
    let replace = [
        "edit",
        "replace",
        "--from",
        ",",
        "--to",
        ";",
        "--strategy",
        "std-stream",
    ];
    let rss = peak_rss_of_edit(&replace, &path);
    assert!(rss <= STREAM_RSS_LIMIT, "std-stream peak RSS {rss} bytes");
    let file = File::open(&path).unwrap();
    for &at in &marks {
        let mut two = [0u8; 2];
        file.read_exact_at(&mut two, at).unwrap();
        assert_eq!(&two, b";\n", "at {at}");
    }
    let truncate = ["edit", "truncate-first-line", "--strategy", "std-stream"];
    let rss = peak_rss_of_edit(&truncate, &path);
    assert!(rss <= STREAM_RSS_LIMIT, "truncate peak RSS {rss}");
    assert_eq!(fs::metadata(&path).unwrap().len(), marks[0] + 2);
}

// ------------------------------------------------------------------------------------------
// `iolab bench edit`
// ------------------------------------------------------------------------------------------

#[test]
fn a_quick_bench_writes_verified_edit_rows_with_every_key_and_cleans_up() {
    let dir = common::scratch();
    let (data, out) = (dir.path().join("data"), dir.path().join("out"));
    fs::create_dir(&data).unwrap();
    // A file of someone else's in the data folder: the bench must not touch it.
    let bystander = sample(&data, "bystander.csv", b"mine,not,yours\n");
    // Its own cache: the winners it saves must not reach the other tests' edits.
    let o = run(iolab(&["bench", "edit", "--quick", "--data"])
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .arg(&data)
        .arg("--out")
        .arg(&out));
    let (stdout, stderr) = (stdout_of(&o), stderr_of(&o));
    assert!(o.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("edit: replace, large, warm cache"),
        "{stdout}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let rows: Vec<&serde_json::Value> = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["suite"] == "edit")
        .collect();
    let has = |program: &str| {
        std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
    };
    let tmpfs = stderr.contains("tmpfs");
    for dataset in ["small", "large"] {
        for cache in ["warm", "cold"] {
            let mut expected: Vec<(&str, &str, Option<bool>)> = Vec::new();
            for op in ["truncate-first-line", "replace"] {
                for s in STRATEGIES {
                    expected.push((op, s, Some(true)));
                    expected.push((op, s, Some(false)));
                }
            }
            expected.push(("count", "mmap", None));
            expected.push(("count", "std-stream", None));
            if has("head") && has("truncate") {
                expected.push(("truncate-first-line", "head", None));
            }
            if has("tr") {
                expected.push(("replace", "tr", None));
            }
            if has("sed") {
                expected.push(("replace", "sed", None));
            }
            if has("wc") {
                expected.push(("count", "wc -l", None));
            }
            for (op, method, durable) in expected {
                let row = rows
                    .iter()
                    .find(|r| {
                        r["dataset"] == dataset
                            && r["cache"] == cache
                            && r["op"] == op
                            && r["method"] == method
                            && durable.is_none_or(|d| r["durable"] == d)
                    })
                    .unwrap_or_else(|| {
                        panic!("no row {dataset} {cache} {op} {method} {durable:?}")
                    });
                if cache == "cold" && tmpfs {
                    assert!(row.get("unavailable").is_some());
                    continue;
                }
                check_edit_row(row, op, method, durable);
            }
        }
        // Every edit of one operation produced the same bytes.
        for op in ["truncate-first-line", "replace", "count"] {
            let results: std::collections::BTreeSet<&str> = rows
                .iter()
                .filter(|r| r["dataset"] == dataset && r["op"] == op && r.get("result").is_some())
                .map(|r| r["result"].as_str().unwrap())
                .collect();
            assert_eq!(results.len(), 1, "{dataset} {op}: {results:?}");
        }
    }
    // Only the data sets, their manifests and the bystander remain.
    let mut names: Vec<String> = fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 5, "{names:?}");
    assert!(
        names
            .iter()
            .all(|n| n.starts_with("csv-") || n == "bystander.csv"),
        "{names:?}"
    );
    assert_eq!(fs::read(&bystander).unwrap(), b"mine,not,yours\n");
}

/// A measured edit row of `op` by `method`: every documented key, verified, two runs, and
/// the phases an iolab strategy reports.
fn check_edit_row(row: &serde_json::Value, op: &str, method: &str, durable: Option<bool>) {
    for key in [
        "suite",
        "op",
        "method",
        "durable",
        "dataset",
        "phases",
        "bytes",
        "runs",
        "median_s",
        "throughput_bytes_per_s",
        "user_s",
        "sys_s",
        "verified",
        "cache",
        "residency_before",
        "result",
    ] {
        assert!(row.get(key).is_some(), "{key} missing in {row}");
    }
    assert_eq!(row["verified"], true, "{row}");
    assert_eq!(
        row["runs"].as_array().unwrap().len(),
        2,
        "--quick: 2 runs: {row}"
    );
    let phases = row["phases"].as_object().unwrap();
    let reports = op != "count" && STRATEGIES.contains(&method);
    assert_eq!(phases.contains_key("open"), reports, "{row}");
    if reports {
        assert_eq!(phases.contains_key("sync"), durable == Some(true), "{row}");
        assert!(row["variant"].is_string(), "{row}");
    }
}

#[test]
fn a_big_replace_without_a_profile_measures_both_strategies_and_finishes_with_one() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("big.csv");
    // Sparse, 136 MiB: a comma every 4 MiB, two at each 8 MiB chunk boundary of the trial,
    // and one in the last byte, so every chunk and the rest have work.
    let len = (iolab_lab::edit::TRIAL_MIN + (8 << 20)).next_multiple_of(4096);
    let file = File::create(&path).unwrap();
    file.set_len(len).unwrap();
    let mut commas: Vec<u64> = (0..len).step_by(4 << 20).map(|o| o + 17).collect();
    commas.extend((1..=16u64).flat_map(|c| [c * (8 << 20) - 1, c * (8 << 20)]));
    commas.push(len - 1);
    for &at in &commas {
        file.write_at(b",", at).unwrap();
    }
    drop(file);
    let o = run(
        iolab(&["edit", "replace", "--from", ",", "--to", ";", "--timings"])
            .env("XDG_CACHE_HOME", dir.path().join("cache"))
            .arg(&path),
    );
    assert!(o.status.success(), "{}", stderr_of(&o));
    let out = stdout_of(&o);
    commas.sort_unstable();
    commas.dedup();
    assert!(
        out.contains(&format!("replaced {} ',' bytes with ';'", commas.len())),
        "{out}"
    );
    assert!(
        out.contains("why: the rule, measured on the first 64 MiB: mmap "),
        "{out}"
    );
    let chosen = ["mmap", "std-stream"]
        .into_iter()
        .find(|s| out.contains(&format!("strategy {s},")))
        .unwrap_or_else(|| panic!("one of the two finished: {out}"));
    assert!(
        out.contains(&format!("{chosen} replaced the rest")),
        "{out}"
    );
    // Every comma replaced, nothing else touched, the length kept.
    let bytes = fs::read(&path).unwrap();
    assert_eq!(bytes.len() as u64, len);
    let semis: Vec<u64> = (0..len).filter(|&i| bytes[i as usize] == b';').collect();
    assert_eq!(semis, commas);
    assert_eq!(bytes.iter().filter(|&&b| b != 0).count(), commas.len());
}
