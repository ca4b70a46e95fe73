//! `iolab write` and `iolab bench write` end to end: exact byte counts into files, pipes and
//! `/dev/null` for every method and many sizes, the bytes' content, and every way it can
//! fail (closed reader, closed or read-only stdout, a full device, bad arguments). No
//! timing is asserted.

use iolab_testkit as common;

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use assert_cmd::cargo::CommandCargoExt;
use iolab_lab::write::Method;

/// The children's cache folder (`XDG_CACHE_HOME`): this file's own, so no test reads or
/// writes the user's machine profile.
const CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache-cli_write");

fn iolab() -> Command {
    let mut cmd = Command::cargo_bin("iolab").unwrap();
    cmd.env("XDG_CACHE_HOME", CACHE);
    cmd
}

fn exe() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("iolab")
}

/// The buffer the size cases are built around; small, so that many calls happen.
const BUFFER: u64 = 4096;

/// 0, 1, around the buffer, around several buffers, and sizes that are no multiple of
/// anything (a prime, 1 MiB + 1).
fn sizes() -> Vec<u64> {
    vec![
        0,
        1,
        127,
        BUFFER - 1,
        BUFFER,
        BUFFER + 1,
        3 * BUFFER - 1,
        3 * BUFFER + 1,
        65_537,
        999_983,
        (1 << 20) + 1,
    ]
}

fn write_args(method: Method, bytes: u64) -> Vec<String> {
    vec![
        "write".into(),
        "--method".into(),
        method.name().into(),
        "--buffer".into(),
        BUFFER.to_string(),
        "--bytes".into(),
        bytes.to_string(),
    ]
}

/// Runs `iolab write` with its stdout a pipe read here; returns (bytes read, all zero?,
/// the process output).
fn into_pipe(args: &[String]) -> (u64, bool, Output) {
    let mut child = iolab()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut buf = vec![0u8; 1 << 16];
    let (mut total, mut zeros) = (0u64, true);
    loop {
        let n = out.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        total += n as u64;
        zeros &= buf[..n].iter().all(|&b| b == 0);
    }
    drop(out);
    (total, zeros, child.wait_with_output().unwrap())
}

fn assert_clean(output: &Output, what: &str) {
    assert!(
        output.status.success(),
        "{what}: {:?}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.stderr.is_empty(),
        "{what}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn one_error_line(output: &Output, what: &str) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "{what} succeeded");
    assert_eq!(stderr.lines().count(), 1, "{what}: {stderr}");
    assert!(stderr.starts_with("iolab: "), "{what}: {stderr}");
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    stderr
}

#[test]
fn every_method_writes_exactly_n_zero_bytes_into_a_pipe() {
    for method in Method::ALL {
        for bytes in sizes() {
            let what = format!("{method} {bytes} into a pipe");
            let (total, zeros, output) = into_pipe(&write_args(method, bytes));
            assert_clean(&output, &what);
            assert_eq!(total, bytes, "{what}");
            assert!(zeros, "{what}: not all zeros");
        }
    }
}

#[test]
fn every_method_but_vmsplice_writes_exactly_n_zero_bytes_into_a_file() {
    let dir = common::scratch();
    for method in Method::ALL {
        for bytes in sizes() {
            let what = format!("{method} {bytes} into a file");
            let path = dir.path().join(format!("{method}-{bytes}"));
            let output = iolab()
                .args(write_args(method, bytes))
                .stdout(File::create(&path).unwrap())
                .output()
                .unwrap();
            if method == Method::Vmsplice {
                let line = one_error_line(&output, &what);
                assert!(
                    line.contains("vmsplice' is unavailable")
                        && line.contains("a regular file, not a pipe"),
                    "{line}"
                );
                assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
                continue;
            }
            assert_clean(&output, &what);
            let content = std::fs::read(&path).unwrap();
            assert_eq!(content.len() as u64, bytes, "{what}");
            assert!(content.iter().all(|&b| b == 0), "{what}: not all zeros");
        }
    }
}

#[test]
fn into_dev_null_each_method_reports_every_byte_written() {
    for method in [Method::Stdout, Method::RawFd, Method::Bufwriter] {
        for bytes in [0, 1, BUFFER + 1, 999_983] {
            let mut args = write_args(method, bytes);
            args.push("--verbose".into());
            let output = iolab().args(&args).stdout(Stdio::null()).output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(output.status.success(), "{method} {bytes}: {stderr}");
            assert_eq!(
                iolab_bench::suites::write::reported_bytes(&stderr),
                Some(bytes),
                "{stderr}"
            );
            assert!(stderr.contains("into /dev/null"), "{stderr}");
        }
    }
}

#[test]
fn the_default_sizes_and_buffers_work() {
    // No --buffer: the rule picks one; the report says which.
    let (total, zeros, output) = into_pipe(&[
        "write".into(),
        "-m".into(),
        "raw-fd".into(),
        "--bytes".into(),
        "3M".into(),
        "-v".into(),
    ]);
    assert!(output.status.success());
    assert_eq!(total, 3 << 20);
    assert!(zeros);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("wrote 3145728 bytes with raw-fd, buffer ")
            && stderr.contains("into a pipe of "),
        "{stderr}"
    );
    // No --bytes: 1 GiB, cut short here by the reader (covered by the broken-pipe test);
    // a resized pipe is reported with its new capacity.
    let (total, _, output) = into_pipe(&[
        "write".into(),
        "-m".into(),
        "vmsplice".into(),
        "--bytes".into(),
        "1M".into(),
        "--pipe-size".into(),
        "256K".into(),
        "-v".into(),
    ]);
    assert!(output.status.success());
    assert_eq!(total, 1 << 20);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("into a pipe of 256 KiB"), "{stderr}");
}

#[test]
fn a_reader_that_goes_away_ends_every_method_quietly() {
    for method in Method::ALL {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let output = iolab()
            .args(["write", "--method", method.name(), "--bytes", "64M"])
            .stdout(writer)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{method}: {output:?}");
        assert!(
            output.stderr.is_empty(),
            "{method}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    // The same when the reader stops half-way, as `| head -c`.
    let mut child = iolab()
        .args(["write", "--method", "bufwriter", "--bytes", "1G"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = vec![0u8; 100_000];
    out.read_exact(&mut first).unwrap();
    drop(out);
    let output = child.wait_with_output().unwrap();
    assert_clean(&output, "reader stopping after 100 kB");
}

#[test]
fn a_full_device_is_one_clear_line() {
    for method in [Method::Stdout, Method::RawFd, Method::Bufwriter] {
        let full = File::options().write(true).open("/dev/full").unwrap();
        let output = iolab()
            .args(["write", "--method", method.name(), "--bytes", "1M"])
            .stdout(full)
            .output()
            .unwrap();
        let line = one_error_line(&output, method.name());
        assert!(
            line.contains("cannot write to standard output: No space left on device"),
            "{line}"
        );
        assert_eq!(output.status.code(), Some(1));
    }
}

#[test]
fn a_closed_or_read_only_stdout_is_one_clear_line() {
    for (redirect, expected) in [
        (">&-", "standard output is closed"),
        ("1</dev/null", "open for reading only"),
    ] {
        for method in Method::ALL {
            let output = Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "exec \"$0\" write --method {} --bytes 1K {redirect}",
                    method.name()
                ))
                .arg(exe())
                .output()
                .unwrap();
            let line = one_error_line(&output, redirect);
            assert!(line.contains(expected), "{redirect} {method}: {line}");
            assert_eq!(output.status.code(), Some(1));
        }
    }
}

#[test]
fn bad_arguments_are_one_line_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["--bytes", "12X"], "invalid size '12X'"),
        (&["--bytes=-5"], "cannot be negative"),
        (&["--bytes", ""], "invalid size"),
        (&["--bytes", "2E"], "too many bytes"),
        (&["--bytes", "99999999999999999999999"], "too large"),
        (&["--buffer", "0"], "at least 1 byte"),
        (&["--buffer", "2G"], "too large"),
        (&["--pipe-size", "0"], "at least 1 byte"),
    ];
    for (extra, expected) in cases {
        let output = iolab()
            .args(["write", "--method", "raw-fd"])
            .args(*extra)
            .stdout(Stdio::null())
            .output()
            .unwrap();
        let line = one_error_line(&output, &format!("{extra:?}"));
        assert!(line.contains(expected), "{extra:?}: {line}");
        assert_eq!(output.status.code(), Some(2), "{extra:?}");
    }
    let output = iolab()
        .args(["write", "--method", "nope"])
        .output()
        .unwrap();
    let line = one_error_line(&output, "unknown method");
    assert!(
        line.contains("unknown method `nope`; one of: stdout, raw-fd, bufwriter, vmsplice"),
        "{line}"
    );
    let output = iolab().args(["write"]).output().unwrap();
    one_error_line(&output, "no method");
}

#[test]
fn methods_write_lists_the_four_methods() {
    let output = iolab().args(["methods", "write"]).output().unwrap();
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    let names: Vec<&str> = text
        .lines()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(names, ["stdout", "raw-fd", "bufwriter", "vmsplice"]);
    for line in text.lines() {
        assert!(line.contains("available"), "{line}");
    }
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_quick_bench_write_run_produces_verified_rows_per_sink_and_buffer() {
    let dir = common::scratch();
    let (data, out) = (dir.path().join("data"), dir.path().join("out"));
    // A file that was there before must survive the run untouched.
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("keep.txt"), b"mine").unwrap();
    let output = iolab()
        .args(["bench", "write", "--quick", "--data"])
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
    // Every sink's table is in results.md, the pinned pipes labelled as diagnostics; the
    // terminal shortens to the verdict's sinks.
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    let pv = std::process::Command::new("pv")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let mut titles = vec![
        "write: splice-reader,",
        "write: head,",
        "write: pipe-same-cpu, diagnostic,",
        "write: pipe-resized, diagnostic,",
        "write: pipe-two-cpus, diagnostic,",
        "write: /dev/null,",
        "write: file,",
    ];
    if pv {
        titles.push("write: pv,");
    } else {
        common::skip("pv is not installed: the pv sink is not checked");
    }
    for title in titles {
        assert!(md.contains(title), "{title} missing:\n{md}");
    }
    assert!(stdout.contains("write: splice-reader,"), "{stdout}");
    assert!(stdout.contains("(baseline)"), "{stdout}");
    check_write_rows(&read_json(&out.join("results.json")), pv);
    // The chart of each sink marks raw-fd's default.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("raw-fd default"),
        "no default marked in the charts"
    );
    // The sink file is gone, the user's file untouched.
    let names: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["keep.txt"]);
    assert_eq!(std::fs::read(data.join("keep.txt")).unwrap(), b"mine");
}

/// The quick run's write rows: every sink's methods verified, the default's adaptive writes
/// said, vmsplice only into pipes, the baselines' bytes exact, the pinned and resized pipes.
fn check_write_rows(json: &serde_json::Value, pv: bool) {
    let rows: Vec<&serde_json::Value> = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["suite"] == "write")
        .collect();
    assert!(!rows.is_empty());
    let consumers: &[&str] = if pv {
        &["splice-reader", "head", "pv"]
    } else {
        &["splice-reader", "head"]
    };
    for &sink in consumers
        .iter()
        .chain(&["pipe-same-cpu", "/dev/null", "file"])
    {
        for method in ["stdout", "raw-fd", "bufwriter"] {
            let of: Vec<&&serde_json::Value> = rows
                .iter()
                .filter(|r| r["sink"] == sink && r["method"] == method)
                .collect();
            assert!(of.len() >= 2, "{sink} {method}: {of:?}");
            // Exactly one row is the method's default, marked and sized.
            let defaults: Vec<_> = of.iter().filter(|r| r["auto_buffer"] == true).collect();
            assert_eq!(defaults.len(), 1, "{sink} {method}: {of:?}");
            let default = defaults[0];
            assert!(
                default["notes"][0]
                    .as_str()
                    .unwrap()
                    .starts_with("iolab default"),
                "{default}"
            );
            for row in of {
                assert!(row["buffer_bytes"].as_u64().unwrap() >= 1024, "{row}");
                assert_eq!(row["verified"], true, "{row}");
                assert_eq!(row["runs"].as_array().unwrap().len(), 2, "{row}");
                assert_eq!(row["result"], row["bytes"].to_string(), "{row}");
                assert!(row["writer_switches_per_gib"].is_number(), "{row}");
            }
        }
    }
    // Into a pipe the default adapts its writes between 8 KiB and the pipe's capacity, and
    // says so.
    let adaptive = rows
        .iter()
        .find(|r| {
            r["sink"] == "splice-reader" && r["method"] == "raw-fd" && r["auto_buffer"] == true
        })
        .unwrap();
    assert!(
        adaptive["notes"][0]
            .as_str()
            .unwrap()
            .contains("adaptive writes"),
        "{adaptive}"
    );
    assert!(
        adaptive["reader_switches_per_gib"].is_number(),
        "{adaptive}"
    );
    // vmsplice runs into pipes only; elsewhere it is unavailable with the reason.
    for row in rows.iter().filter(|r| r["method"] == "vmsplice") {
        if row["sink"] != "/dev/null" && row["sink"] != "file" {
            assert_eq!(row["verified"], true, "{row}");
        } else {
            assert!(
                row["unavailable"].as_str().unwrap().contains("not a pipe"),
                "{row}"
            );
        }
    }
    // yes moves exactly N bytes into every consumer, like everyone else.
    for &sink in consumers {
        let yes = rows
            .iter()
            .find(|r| r["method"] == "yes" && r["sink"] == sink)
            .unwrap();
        assert_eq!(yes["verified"], true, "{yes}");
        assert_eq!(yes["baseline"], true);
        assert_eq!(yes["cpus"], "free", "{yes}");
    }
    let consumer = rows.iter().find(|r| r["sink"] == "head").unwrap();
    assert!(
        consumer["reader"].as_str().unwrap().starts_with("head -c"),
        "{consumer}"
    );
    assert!(consumer.get("role").is_none(), "{consumer}");
    let pipe = rows.iter().find(|r| r["sink"] == "pipe-same-cpu").unwrap();
    assert!(
        pipe["pipe_capacity_bytes"].as_u64().unwrap() >= 4096,
        "{pipe}"
    );
    assert!(
        pipe["reader"].as_str().unwrap().contains("splice"),
        "{pipe}"
    );
    assert_eq!(pipe["cpus"], "shared", "{pipe}");
    assert_eq!(pipe["role"], "diagnostic", "{pipe}");
    let resized = rows.iter().find(|r| r["sink"] == "pipe-resized").unwrap();
    assert!(
        resized["pipe_capacity_bytes"].as_u64() > pipe["pipe_capacity_bytes"].as_u64(),
        "{resized}"
    );
}

/// The bytes a failed write reports are the bytes that reached the output, or the message
/// says that some cannot be known (std's line buffer held them).
#[test]
fn a_failed_write_counts_only_what_reached_the_output() {
    // /dev/full: nothing ever reaches it.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = iolab()
        .args(["write", "-m", "stdout", "--buffer", "100", "--bytes", "500"])
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("after 0 to 500 bytes") && stderr.contains("cannot be known"),
        "{stderr}"
    );
    // A full file system: the count is the file's size, for every method.
    let small = match common::SmallFs::mount("64k") {
        Ok(small) => small,
        Err(reason) => return common::skip(reason),
    };
    for method in ["stdout", "raw-fd", "bufwriter"] {
        let path = small.path().join(method);
        let file = std::fs::File::create(&path).unwrap();
        let out = iolab()
            .args([
                "write", "-m", method, "--buffer", "100", "--bytes", "1000000",
            ])
            .stdout(file)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{method}: {stderr}");
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(
            stderr.contains(&format!("after {size} bytes")),
            "{method}: the file holds {size} bytes: {stderr}"
        );
        std::fs::remove_file(&path).unwrap();
    }
}

#[test]
fn into_a_file_the_default_buffer_follows_the_profile_and_verbose_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let out = dir.path().join("out");
    let write = || {
        let mut cmd = Command::cargo_bin("iolab").unwrap();
        cmd.env("XDG_CACHE_HOME", &cache)
            .args(["write", "-m", "bufwriter", "--bytes", "3M", "-v"])
            .stdout(File::create(&out).unwrap());
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{o:?}");
        assert_eq!(std::fs::metadata(&out).unwrap().len(), 3 << 20);
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    // No profile: the rule, 32 blocks of the file system's preferred size (within 64K..1M).
    let stderr = write();
    assert!(stderr.contains("iolab: buffer: the rule, "), "{stderr}");
    // A winner measured on this machine and on the file's device: followed.
    let tuning = serde_json::json!({
        "measured_at": "2026-11-26T00:00:00Z",
        "kernel_release": iolab_lab::profile::kernel_release(),
        "cores": std::thread::available_parallelism().unwrap().get(),
        "cpu_model": iolab_lab::profile::cpu_model(),
        "written_by": iolab_lab::profile::Provenance::here(),
        "write": [{
            "condition": "file", "method": "bufwriter", "runner_up": "the rule's buffer",
            "lead": 1.3, "measured_at": "2026-11-26T00:00:00Z",
            "device": iolab_lab::profile::device_of(dir.path()),
            "bytes": 1u64 << 20
        }]
    });
    std::fs::create_dir_all(cache.join("iolab")).unwrap();
    std::fs::write(
        cache.join("iolab").join(iolab_lab::profile::FILE_NAME),
        tuning.to_string(),
    )
    .unwrap();
    let stderr = write();
    assert!(
        stderr.contains("buffer 1.00 MiB, into a regular file"),
        "{stderr}"
    );
    assert!(
        stderr.contains("iolab: buffer: the file winner `iolab bench` measured here"),
        "{stderr}"
    );
}
