//! The benchmark harness, driven by a mock executor: interleaving, verification, unavailable
//! and failing methods, residency recording and the `results.json` schema. No timings are
//! asserted: the mock decides them.

use iolab_testkit as common;

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;

use iolab_bench::export::{self, table};
use iolab_bench::results::Results;
use iolab_bench::runner::{Executor, Job, Outcome};
use iolab_bench::{CacheState, Config};

/// Answers every job from a script: the count it prints (or a failure line), and records
/// the order in which jobs ran.
struct MockExecutor {
    answers: HashMap<String, Result<u64, String>>,
    ran: Vec<String>,
}

impl Executor for MockExecutor {
    fn execute(&mut self, job: &Job) -> io::Result<Outcome> {
        self.ran.push(job.name.clone());
        // Several files (the many-files section): the true total, as `iolab count` prints.
        let files: Vec<&std::ffi::OsString> = job
            .args
            .iter()
            .filter(|a| a.to_string_lossy().ends_with(".txt"))
            .collect();
        if files.len() > 1 && matches!(self.answers.get(&job.name), Some(Ok(_))) {
            let total: usize = files
                .iter()
                .map(|f| {
                    std::fs::read(f)
                        .unwrap()
                        .iter()
                        .filter(|&&b| b == b'\n')
                        .count()
                })
                .sum();
            return Ok(Outcome {
                wall_s: 0.010,
                user_s: 0.001,
                sys_s: 0.002,
                code: Some(0),
                signal: None,
                stdout: format!("{total} total\n"),
                stderr: String::new(),
                ..Outcome::default()
            });
        }
        let (code, stdout, stderr) = match self.answers.get(&job.name) {
            Some(Ok(n)) => (0, format!("{n} file\n"), String::new()),
            Some(Err(line)) => (1, String::new(), format!("{line}\n")),
            None => (0, "0 file\n".to_string(), String::new()),
        };
        Ok(Outcome {
            wall_s: 0.010 + self.ran.len() as f64 * 1e-6,
            user_s: 0.001,
            sys_s: 0.002,
            code: Some(code),
            signal: None,
            stdout,
            stderr,
            ..Outcome::default()
        })
    }
}

fn config(data: PathBuf, methods: &[&str]) -> Config {
    Config {
        suites: vec!["count".into()],
        data_dir: data,
        size: Some(256 << 10),
        runs: 3,
        warmup: 1,
        caches: vec![CacheState::Warm, CacheState::Cold],
        drop_caches: false,
        methods: Some(methods.iter().map(|m| m.to_string()).collect()),
        baselines: false,
        iolab_exe: PathBuf::from("/nonexistent/iolab"),
        progress: false,
        quick: false,
        sweep: false,
        files: Vec::new(),
    }
}

/// Runs the count suite once with the mock, returning the results and the expected count.
fn run_mock(
    answers: impl Fn(u64) -> HashMap<String, Result<u64, String>>,
) -> (Results, u64, Vec<String>) {
    let dir = common::scratch();
    // Generate the data set first so the mock can know the true line count.
    let dataset = iolab_bench::data::lines(dir.path(), 256 << 10, false).unwrap();
    let methods = ["bufread-chunks", "mmap", "readv", "direct"];
    let mut mock = MockExecutor {
        answers: answers(dataset.lines),
        ran: Vec::new(),
    };
    let results = iolab_bench::run(
        &config(dir.path().to_path_buf(), &methods),
        &mut mock,
        vec!["test".into()],
        &mut |_| Ok(()),
    )
    .unwrap();
    (results, dataset.lines, mock.ran)
}

#[test]
fn rows_runs_order_and_verification() {
    let (results, lines, ran) = run_mock(|lines| {
        HashMap::from([
            ("bufread-chunks".to_string(), Ok(lines)),
            ("mmap".to_string(), Ok(lines + 1)), // a wrong answer
            ("readv".to_string(), Ok(lines)),
            (
                "direct".to_string(),
                Err("iolab: f: method 'direct' is unavailable: the file system refuses O_DIRECT (EINVAL)".to_string()),
            ),
        ])
    });
    // One row per (method, cache state), and per method for the many files (warm).
    let main = |r: &&iolab_bench::results::Row| !r.extra.contains_key("input");
    assert_eq!(results.rows.iter().filter(main).count(), 8);
    assert_eq!(results.rows.len(), 12);
    for cache in ["warm", "cold"] {
        let row = |m: &str| {
            results
                .rows
                .iter()
                .find(|r| r.method == m && r.cache.as_deref() == Some(cache))
                .unwrap_or_else(|| panic!("no {m} {cache} row"))
        };
        let good = row("bufread-chunks");
        assert_eq!(good.runs.len(), 3, "warm-up runs are not counted");
        assert!(good.verified);
        assert_eq!(good.result.as_deref(), Some(lines.to_string().as_str()));
        assert!(good.median_s.is_some() && good.throughput_bytes_per_s.is_some());
        assert_eq!(good.residency_runs.len(), 3);
        let residency = good.residency_before.unwrap();
        if cache == "warm" {
            assert!(residency >= 0.95, "warm residency {residency}");
        } else {
            assert!(residency <= 0.05, "cold residency {residency}");
        }
        let wrong = row("mmap");
        assert!(!wrong.verified);
        assert!(wrong.error.as_deref().unwrap().contains("wrong result"));
        let unavailable = row("direct");
        assert!(
            unavailable
                .unavailable
                .as_deref()
                .unwrap()
                .contains("O_DIRECT")
        );
        assert!(unavailable.runs.is_empty() && unavailable.median_s.is_none());
    }
    assert!(results.has_failures());
    // Jobs run in `Method::ALL` order, interleaved: each round starts one job later, and
    // direct is not run again after it said it is unavailable.
    let first_round: Vec<&str> = ran.iter().take(4).map(String::as_str).collect();
    assert_eq!(first_round, ["bufread-chunks", "direct", "mmap", "readv"]);
    let second_round: Vec<&str> = ran.iter().skip(4).take(3).map(String::as_str).collect();
    assert_eq!(second_round, ["mmap", "readv", "bufread-chunks"]);
}

#[test]
fn results_json_has_the_documented_keys_and_round_trips() {
    let (results, _, _) = run_mock(|lines| {
        HashMap::from([
            ("bufread-chunks".to_string(), Ok(lines)),
            ("mmap".to_string(), Ok(lines)),
            ("readv".to_string(), Ok(lines)),
            ("direct".to_string(), Ok(lines)),
        ])
    });
    assert!(!results.has_failures());
    let out = tempfile::tempdir().unwrap();
    let written = export::write_all(&results, iolab_bench::SUITES, out.path()).unwrap();
    assert_eq!(written.len(), 4, "json, md, csv and html");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("results.json")).unwrap())
            .unwrap();
    for key in [
        "schema_version",
        "iolab_version",
        "sysinfo",
        "rows",
        "partial",
        "config",
        "warnings",
        "notes",
    ] {
        assert!(json.get(key).is_some(), "top-level key {key} missing");
    }
    for row in json["rows"].as_array().unwrap() {
        for key in [
            "suite",
            "method",
            "cache",
            "bytes",
            "runs",
            "median_s",
            "throughput_bytes_per_s",
            "user_s",
            "sys_s",
            "result",
            "verified",
            "residency_before",
            "baseline",
        ] {
            assert!(row.get(key).is_some(), "row key {key} missing in {row}");
        }
        assert_eq!(row["suite"], "count");
        assert!(row["cache"] == "warm" || row["cache"] == "cold");
    }
    // Round trip.
    let back: Results = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(serde_json::to_value(&back).unwrap(), json);
    // The CSV has a header and one line per row; the Markdown one table per cache state,
    // and one for the many files.
    let csv = std::fs::read_to_string(out.path().join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + results.rows.len());
    let md = std::fs::read_to_string(out.path().join("results.md")).unwrap();
    assert_eq!(md.matches("## count:").count(), 3);
    assert_eq!(table::tables(&results, iolab_bench::SUITES).len(), 3);
}

#[test]
fn unavailable_rows_show_no_number_in_the_table() {
    let (results, _, _) = run_mock(|lines| {
        HashMap::from([
            ("bufread-chunks".to_string(), Ok(lines)),
            ("mmap".to_string(), Ok(lines)),
            ("readv".to_string(), Ok(lines)),
            (
                "direct".to_string(),
                Err("iolab: f: method 'direct' is unavailable: no O_DIRECT here".to_string()),
            ),
        ])
    });
    for t in table::tables(&results, iolab_bench::SUITES) {
        let row = t.rows.iter().find(|r| r[0] == "direct").unwrap();
        let (notes, numbers) = row[1..].split_last().unwrap();
        assert!(numbers.iter().all(|cell| cell == "—"), "{row:?}");
        assert!(notes.contains("unavailable: no O_DIRECT here"));
    }
}

#[test]
fn a_reused_data_set_is_not_regenerated_and_a_damaged_one_is() {
    let dir = common::scratch();
    let first = iolab_bench::data::lines(dir.path(), 100_000, false).unwrap();
    let mtime = std::fs::metadata(&first.path).unwrap().modified().unwrap();
    let again = iolab_bench::data::lines(dir.path(), 100_000, false).unwrap();
    assert_eq!(first, again);
    assert_eq!(
        std::fs::metadata(&again.path).unwrap().modified().unwrap(),
        mtime
    );
    // Truncate it behind the harness's back: it must be regenerated, whole.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&first.path)
        .unwrap()
        .set_len(10)
        .unwrap();
    let repaired = iolab_bench::data::lines(dir.path(), 100_000, false).unwrap();
    assert_eq!(std::fs::metadata(&repaired.path).unwrap().len(), 100_000);
    let content = std::fs::read(&repaired.path).unwrap();
    assert_eq!(
        content.iter().filter(|&&b| b == b'\n').count() as u64,
        repaired.lines
    );
    // No temporary files are left behind.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.contains(".tmp")), "{names:?}");
}

#[test]
fn a_failing_suite_loses_nothing_and_marks_the_run_partial() {
    let dir = common::scratch();
    let dataset = iolab_bench::data::lines(dir.path(), 256 << 10, false).unwrap();
    let methods = ["bufread-chunks", "mmap"];
    let mut mock = MockExecutor {
        answers: methods
            .iter()
            .map(|m| (m.to_string(), Ok(dataset.lines)))
            .collect(),
        ran: Vec::new(),
    };
    let mut cfg = config(dir.path().to_path_buf(), &methods);
    // A suite that cannot run, between two that can.
    cfg.suites = vec!["count".into(), "no-such-suite".into(), "count".into()];
    let mut seen: Vec<(usize, bool, usize)> = Vec::new();
    let results = iolab_bench::run(&cfg, &mut mock, vec!["test".into()], &mut |r| {
        seen.push((r.rows.len(), r.partial, r.errors.len()));
        Ok(())
    })
    .unwrap();
    // Written after every suite: the first suite's rows before the failure, then the
    // failure, then the last suite's rows added to them.
    assert_eq!(seen.len(), 3, "{seen:?}");
    let first = seen[0].0;
    assert!(first > 0 && !seen[0].1 && seen[0].2 == 0, "{seen:?}");
    assert_eq!(seen[1], (first, true, 1), "{seen:?}");
    assert_eq!(seen[2], (2 * first, true, 1), "{seen:?}");
    assert!(results.partial);
    assert_eq!(results.errors.len(), 1);
    assert_eq!(results.errors[0].suite, "no-such-suite");
    assert!(
        results.errors[0]
            .error
            .contains("unknown suite `no-such-suite`"),
        "{}",
        results.errors[0].error
    );
    assert_eq!(results.rows.len(), 2 * first);
    assert!(
        !results.verdict.is_empty(),
        "the measured suites keep their verdict"
    );
    // The files say so too.
    let out = common::scratch();
    export::write_all(&results, iolab_bench::SUITES, out.path()).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("results.json")).unwrap())
            .unwrap();
    assert_eq!(json["partial"], true);
    assert_eq!(json["errors"][0]["suite"], "no-such-suite");
    let md = std::fs::read_to_string(out.path().join("results.md")).unwrap();
    assert!(md.contains("the no-such-suite suite failed"), "{md}");
}

#[test]
fn a_failing_write_stops_the_run_with_the_write_error() {
    let dir = common::scratch();
    let dataset = iolab_bench::data::lines(dir.path(), 256 << 10, false).unwrap();
    let mut mock = MockExecutor {
        answers: HashMap::from([("mmap".to_string(), Ok(dataset.lines))]),
        ran: Vec::new(),
    };
    let mut cfg = config(dir.path().to_path_buf(), &["mmap"]);
    cfg.suites = vec!["count".into(), "count".into()];
    let mut calls = 0;
    let err = iolab_bench::run(&cfg, &mut mock, vec!["test".into()], &mut |_| {
        calls += 1;
        Err(iolab_bench::error::Error::io(
            "cannot write results",
            io::Error::other("disk full"),
        ))
    })
    .unwrap_err();
    assert_eq!(calls, 1, "the run stops at the first failed write");
    assert!(
        matches!(err, iolab_bench::run::RunError::Write(_)),
        "{err:?}"
    );
}
