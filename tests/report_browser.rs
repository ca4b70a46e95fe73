//! The HTML report of a small real run, rendered in headless Chromium: the verdict table
//! comes first and names the winners of `results.json`, every expected chart is in the
//! rendered page, the page logs no errors and fetches nothing, and a screenshot is saved in
//! the test's temporary folder. Skips (with a message) where
//! Chromium is not installed; `.ci/run` installs it.

use iolab_testkit as common;

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join(name))
                    .find(|p| p.is_file())
            })
        })
}

/// Runs Chromium headless on `page` with `extra` arguments; returns (stdout, stderr).
fn headless(browser: &Path, profile: &Path, page: &Path, extra: &[String]) -> (String, String) {
    let output = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_report_of_a_real_run_renders_every_chart_without_errors() {
    let Some(browser) = chromium() else {
        return common::skip("Chromium is not installed (apt-get install chromium)");
    };
    let dir = common::scratch();
    let out = dir.path().join("results");
    let status = Command::cargo_bin("iolab")
        .unwrap()
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .args(["bench", "--quick", "--size", "4M", "--data"])
        .arg(dir.path().join("data"))
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let page = out.join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    // Nothing to fetch: the only URL allowed is the SVG namespace name, which is never loaded.
    let without_namespace = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(
        !without_namespace.contains("http://") && !without_namespace.contains("https://"),
        "the report must not refer to the network"
    );

    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let mut expected = expected_charts(&results);
    expected.sort();
    expected.dedup();
    assert!(!expected.is_empty());

    let profile = dir.path().join("profile");
    let (dom, log) = headless(&browser, &profile, &page, &["--dump-dom".to_string()]);
    for id in &expected {
        let at = dom
            .find(&format!("id=\"{id}\""))
            .unwrap_or_else(|| panic!("chart #{id} missing from the rendered page"));
        // Each chart draws something: bars or a line.
        let end = dom[at..].find("</svg>").unwrap() + at;
        let chart = &dom[at..end];
        assert!(
            chart.contains("class=\"bar\"") || chart.contains("<polyline"),
            "chart #{id} is empty"
        );
    }
    verdict_table_matches(&dom, &results);
    for line in log.lines() {
        assert!(!line.contains("CONSOLE"), "the page logged: {line}");
        assert!(
            !line.contains("net::ERR"),
            "the page tried to fetch: {line}"
        );
    }

    let shot = dir.path().join("report.png");
    let (_, log) = headless(
        &browser,
        &profile,
        &page,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1100,3000".to_string(),
        ],
    );
    assert!(
        shot.metadata().map(|m| m.len() > 10_000).unwrap_or(false),
        "no screenshot: {log}"
    );
    eprintln!("screenshot: {}", shot.display());
    // Keep the folder for a look when asked.
    if std::env::var_os("IOLAB_KEEP_REPORT").is_some() {
        let kept = dir.keep();
        eprintln!("kept {}", kept.display());
    }
}

/// The verdict is the first table, before any chart, and names results.json's winners
/// (a tie: an empty winner), condition by condition.
fn verdict_table_matches(dom: &str, results: &serde_json::Value) {
    let first_table = dom.find("<table").expect("a table");
    assert!(
        dom[first_table..].starts_with("<table class=\"verdict\" id=\"verdict-table\""),
        "the first table is not the verdict"
    );
    assert!(first_table < dom.find("<svg").expect("a chart"));
    let table_end = dom[first_table..].find("</table>").unwrap() + first_table;
    let attr = |tr: &str, name: &str| -> String {
        let at = tr.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
        tr[at..at + tr[at..].find('"').unwrap()].to_string()
    };
    let shown: Vec<(String, String, String)> = dom[first_table..table_end]
        .split("<tr data-suite=")
        .skip(1)
        .map(|tr| {
            let tr = format!("data-suite={tr}");
            (
                attr(&tr, "data-suite"),
                attr(&tr, "data-condition"),
                attr(&tr, "data-winner"),
            )
        })
        .collect();
    let expected_verdict: Vec<(String, String, String)> = results["verdict"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["suite"].as_str().unwrap().to_string(),
                v["condition"].as_str().unwrap().to_string(),
                v["winner"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert!(!expected_verdict.is_empty());
    assert_eq!(shown, expected_verdict);
}

/// The ids of the charts `results` call for.
fn expected_charts(results: &serde_json::Value) -> Vec<String> {
    let rows = results["rows"].as_array().unwrap();
    let suites: Vec<&str> = rows.iter().filter_map(|r| r["suite"].as_str()).collect();
    let mut expected: Vec<String> = Vec::new();
    if suites.contains(&"count") {
        expected.push("count-throughput".into());
    }
    if suites.contains(&"write") {
        expected.push("write-best".into());
        for r in rows
            .iter()
            .filter(|r| r["suite"] == "write" && r.get("buffer_bytes").is_some())
        {
            expected.push(format!(
                "write-sweep-{}",
                iolab_bench::chart::slug(r["sink"].as_str().unwrap())
            ));
        }
    }
    if suites.contains(&"edit") {
        for r in rows
            .iter()
            .filter(|r| r["suite"] == "edit" && r.get("median_s").is_some())
        {
            expected.push(format!(
                "edit-phases-{}-{}",
                iolab_bench::chart::slug(r["op"].as_str().unwrap()),
                iolab_bench::chart::slug(r["dataset"].as_str().unwrap())
            ));
        }
    }
    if suites.contains(&"append") {
        for r in rows.iter().filter(|r| r["suite"] == "append") {
            if let Some(p) = r["sync_policy"].as_str() {
                expected.push(format!("append-ns-{}", iolab_bench::chart::slug(p)));
            }
        }
    }
    expected
}
