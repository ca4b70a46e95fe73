//! `iolab methods append` and `iolab bench append` end to end: the names, a real quick run,
//! its rows and keys, and that the bench leaves nothing behind and touches nothing else.
//! Structure only: no timing is asserted.

use iolab_testkit as common;

use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;

/// The children's cache folder (`XDG_CACHE_HOME`): this file's own, so no test reads or
/// writes the user's machine profile.
const CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache-cli_append");

fn iolab() -> Command {
    let mut cmd = Command::cargo_bin("iolab").unwrap();
    cmd.env("XDG_CACHE_HOME", CACHE);
    cmd
}

const STRATEGIES: [&str; 5] = [
    "write-per-record",
    "bufwriter-8k",
    "bufwriter-64k",
    "writev-batch",
    "append-file",
];

/// The durability policies of `iolab_lab::durable::Log` (the `durable` section).
const POLICIES: [&str; 4] = ["fdatasync", "dsync", "direct-dsync", "prealloc"];

#[test]
fn methods_append_lists_every_strategy_as_available() {
    let out = iolab().args(["methods", "append"]).output().unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    for name in STRATEGIES.iter().chain(&POLICIES) {
        let line = stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} missing from:\n{stdout}"));
        assert!(line.ends_with("available"), "{line}");
    }
    assert_eq!(
        stdout.lines().count(),
        STRATEGIES.len() + POLICIES.len(),
        "{stdout}"
    );
}

#[test]
fn a_quick_append_bench_writes_verified_rows_and_cleans_up() {
    let dir = common::scratch();
    let (data, out) = (dir.path().join("data"), dir.path().join("out"));
    std::fs::create_dir(&data).unwrap();
    // Someone else's file in the data folder must survive the run untouched.
    let bystander = data.join("not-ours.log");
    std::fs::write(&bystander, b"keep").unwrap();

    let output = iolab()
        .args(["bench", "append", "--quick", "--data"])
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
    assert!(stdout.contains("append: payload_bytes 5, none"), "{stdout}");
    assert!(stdout.contains("every-record"), "{stdout}");

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let rows = json["rows"].as_array().unwrap();
    let has_fstream = rows.iter().any(|r| r["method"] == "fstream");
    let notes: Vec<&str> = json["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .collect();
    if !has_fstream {
        common::skip("the fstream baseline: no C++ compiler (apt-get install g++)");
        assert!(
            notes
                .iter()
                .any(|n| n.contains("baseline `fstream` skipped")),
            "{notes:?}"
        );
    }
    assert!(
        notes.iter().any(|n| n.contains("xsputn_2")),
        "the append write-up's question is answered: {notes:?}"
    );
    let rows: Vec<&serde_json::Value> = rows.iter().collect();
    let (rows, durable_rows): (Vec<_>, Vec<_>) =
        rows.into_iter().partition(|r| r["section"] != "durable");
    for payload in [5, 64, 512, 4096] {
        for method in STRATEGIES
            .iter()
            .copied()
            .chain(has_fstream.then_some("fstream"))
        {
            let row = rows
                .iter()
                .find(|r| {
                    r["method"] == method
                        && r["payload_bytes"] == payload
                        && r["sync_policy"] == "none"
                })
                .unwrap_or_else(|| panic!("no row for {method} at {payload} bytes"));
            check_row(row);
            assert_eq!(row["baseline"], method == "fstream");
        }
    }
    for policy in ["every-K", "every-record"] {
        for method in STRATEGIES {
            let row = rows
                .iter()
                .find(|r| r["method"] == method && r["sync_policy"] == policy)
                .unwrap_or_else(|| panic!("no {policy} row for {method}"));
            check_row(row);
            assert!(
                row["fdatasyncs_per_record"].as_f64().unwrap() > 0.0,
                "{row}"
            );
        }
    }
    assert!(
        rows.iter()
            .all(|r| r["suite"] == "append" && r.get("cache").is_none()),
        "append rows have no cache state"
    );

    check_durable_rows(&durable_rows, &notes);

    // Only the bystander is left, unchanged.
    let names: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["not-ours.log"]);
    assert_eq!(std::fs::read(&bystander).unwrap(), b"keep");
}

/// The durable section: every policy (or its reason), 1 and 8 writers with group
/// commit and 8 alone, 512-byte records, every row verified; pg_test_fsync's rows or
/// the note that it is missing.
fn check_durable_rows(durable: &[&serde_json::Value], notes: &[&str]) {
    for policy in POLICIES {
        for (writers, group) in [(1, true), (8, true), (8, false)] {
            let row = durable
                .iter()
                .find(|r| {
                    r["policy"] == policy
                        && r["writers"] == writers
                        && r["group_commit"] == group
                        && r["record_bytes"] == 512
                })
                .unwrap_or_else(|| panic!("no durable row for {policy} {writers} {group}"));
            if let Some(reason) = row["unavailable"].as_str() {
                common::skip(format!("durable {policy}: {reason}"));
                continue;
            }
            assert_eq!(row["verified"], true, "{row}");
            assert_eq!(row["runs"].as_array().unwrap().len(), 2, "{row}");
            for key in ["records_per_s", "p50_us", "p99_us", "syncs_per_record"] {
                assert!(row[key].as_f64().is_some_and(|v| v > 0.0), "{key}: {row}");
            }
            let syncs = row["syncs_per_record"].as_f64().unwrap();
            if !group || writers == 1 {
                assert_eq!(syncs, 1.0, "one sync per record alone: {row}");
            }
        }
    }
    match durable.iter().find(|r| r["baseline"] == true) {
        Some(row) => assert!(
            row["method"]
                .as_str()
                .unwrap()
                .starts_with("pg_test_fsync "),
            "{row}"
        ),
        None => {
            common::skip("pg_test_fsync is not installed (apt-get install postgresql-15)");
            assert!(
                notes.iter().any(|n| n.contains("pg_test_fsync")),
                "{notes:?}"
            );
        }
    }
}

fn check_row(row: &serde_json::Value) {
    assert_eq!(row["verified"], true, "{row}");
    let runs = row["runs"].as_array().unwrap().len();
    let stopped = row["notes"]
        .as_array()
        .is_some_and(|n| n.iter().any(|n| n.as_str().unwrap().contains("cannot win")));
    // --quick: 2 runs, or 1 for a row stopped as one that cannot win (never a baseline).
    if stopped {
        assert_eq!(runs, 1, "{row}");
        assert_eq!(row["baseline"], false, "{row}");
    } else {
        assert_eq!(runs, 2, "--quick: 2 runs: {row}");
    }
    let records = row["records"].as_u64().unwrap();
    let payload = row["payload_bytes"].as_u64().unwrap();
    assert_eq!(row["bytes"].as_u64().unwrap(), records * payload, "{row}");
    for key in [
        "median_s",
        "throughput_bytes_per_s",
        "user_s",
        "sys_s",
        "ns_per_record",
        "syscalls_per_record",
    ] {
        assert!(row[key].as_f64().is_some(), "{key} missing: {row}");
    }
    let calls = row["syscalls_per_record"].as_f64().unwrap();
    match row["method"].as_str().unwrap() {
        "write-per-record" => assert_eq!(calls, 1.0, "{row}"),
        _ => assert!(calls <= 1.0, "{row}"),
    }
}
