//! `auto`: what it picks for small, warm and cold files, and that it follows the winners a
//! benchmark measured on this machine (and ignores stale ones). Each run gets its own
//! `XDG_CACHE_HOME`, so the user's own `auto.json` never interferes.

use iolab_testkit as common;

use std::path::Path;
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;

/// Runs `iolab count --verbose FILE` with `cache` as XDG_CACHE_HOME; returns (stdout, stderr).
fn count_verbose(cache: &Path, file: &Path) -> (String, String) {
    let out = Command::cargo_bin("iolab")
        .unwrap()
        .env("XDG_CACHE_HOME", cache)
        .args(["count", "--verbose"])
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn chosen(stderr: &str) -> String {
    let at = stderr
        .find("auto chose ")
        .expect("verbose names the choice")
        + "auto chose ".len();
    stderr[at..].split(':').next().unwrap().to_string()
}

fn text_file(path: &Path, len: usize) -> u64 {
    let content: Vec<u8> = (0..len)
        .map(|i| if i % 50 == 49 { b'\n' } else { b'a' })
        .collect();
    std::fs::write(path, &content).unwrap();
    content.iter().filter(|&&b| b == b'\n').count() as u64
}

fn evict(path: &Path) {
    iolab_lab::cache::evict(path, false).unwrap();
}

#[test]
fn small_warm_and_cold_files_get_the_rule_without_measurements() {
    let dir = common::scratch();
    let cache = dir.path().join("cache");
    let small = dir.path().join("small");
    let lines = text_file(&small, 1024);
    let (out, err) = count_verbose(&cache, &small);
    assert_eq!(out, format!("{lines} {}\n", small.display()));
    assert_eq!(chosen(&err), "bufread-chunks");

    let big = dir.path().join("big");
    let lines = text_file(&big, 4 << 20);
    iolab_lab::cache::warm(&big).unwrap();
    let (out, err) = count_verbose(&cache, &big);
    assert_eq!(out, format!("{lines} {}\n", big.display()));
    assert!(chosen(&err).starts_with("mmap"), "{err}");

    if iolab_lab::sysinfo::is_tmpfs(dir.path()) {
        return;
    }
    evict(&big);
    let (out, err) = count_verbose(&cache, &big);
    assert_eq!(out, format!("{lines} {}\n", big.display()));
    // Cold: io_uring O_DIRECT reads where io_uring runs, else the map on every core, and
    // --verbose says it is the rule.
    assert!(is_cold_rule(&chosen(&err)), "{err}");
    assert!(err.contains("0% cached"), "{err}");
    assert!(err.contains("the rule"), "{err}");
}

/// Whether `method` is what `auto`'s rule takes for a cold file of a few MiB or more here:
/// `uring-direct` where io_uring runs, else a map.
fn is_cold_rule(method: &str) -> bool {
    if iolab_lab::read::uring_direct::availability().is_ok() {
        method == "uring-direct"
    } else {
        method.starts_with("mmap")
    }
}

/// A sparse file of `len` bytes (no newline), evicted: big enough for a size class
/// without writing gigabytes.
fn sparse_cold(path: &Path, len: u64) {
    std::fs::File::create(path).unwrap().set_len(len).unwrap();
    evict(path);
}

#[test]
fn measured_winners_are_followed_for_their_size_class_on_the_same_machine_only() {
    let dir = common::scratch();
    if iolab_lab::sysinfo::is_tmpfs(dir.path()) {
        common::skip("the scratch folder is on tmpfs: files cannot be evicted");
        return;
    }
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(cache.join("iolab")).unwrap();
    let gib = dir.path().join("one-gib");
    sparse_cold(&gib, 1 << 30);
    let cores = std::thread::available_parallelism().unwrap().get();
    let tuning = |release: &str, cpu: &str| {
        serde_json::json!({
            "measured_at": "2026-01-01T00:00:00Z",
            "kernel_release": release,
            "cores": cores,
            "cpu_model": cpu,
            "written_by": iolab_lab::profile::Provenance::here(),
            "count": [{
                "cache": "cold",
                "size_class": {"from_bytes": 1u64 << 30, "to_bytes": 4u64 << 30},
                "file_bytes": 1u64 << 30,
                "method": "pread-parallel", "threads": 1, "bytes_per_s": 2e9,
                "runner_up": "mmap-parallel", "runner_up_bytes_per_s": 1e9
            }]
        })
    };
    let file = cache.join("iolab").join(iolab_lab::profile::FILE_NAME);
    std::fs::write(
        &file,
        tuning(
            &iolab_lab::profile::kernel_release(),
            &iolab_lab::profile::cpu_model(),
        )
        .to_string(),
    )
    .unwrap();
    let (out, err) = count_verbose(&cache, &gib);
    assert_eq!(out, format!("0 {}\n", gib.display()));
    assert_eq!(chosen(&err), "pread-parallel", "{err}");
    assert!(
        err.contains("cold winner for files of 1.00 GiB to 4.00 GiB"),
        "{err}"
    );
    assert!(err.contains("over mmap-parallel"), "{err}");

    // A file of another size class does not follow it: the rule, and --verbose says so.
    let small = dir.path().join("300-mib");
    sparse_cold(&small, 300 << 20);
    let (out, err) = count_verbose(&cache, &small);
    assert_eq!(out, format!("0 {}\n", small.display()));
    assert!(is_cold_rule(&chosen(&err)), "{err}");
    assert!(
        err.contains("no cold winner beyond the noise measured for files of 256 MiB"),
        "{err}"
    );

    // Warm, the same 1 GiB file does not follow the cold winner either.
    iolab_lab::cache::warm(&gib).unwrap();
    let (_, err) = count_verbose(&cache, &gib);
    assert!(chosen(&err).starts_with("mmap"), "{err}");
    evict(&gib);

    // Measured under another kernel, or on another CPU: ignored, and --verbose says why.
    let cpu = iolab_lab::profile::cpu_model();
    std::fs::write(&file, tuning("0.0.0-other", &cpu).to_string()).unwrap();
    let (_, err) = count_verbose(&cache, &gib);
    assert!(is_cold_rule(&chosen(&err)), "{err}");
    assert!(err.contains("measured under kernel 0.0.0-other"), "{err}");
    let kernel = iolab_lab::profile::kernel_release();
    std::fs::write(&file, tuning(&kernel, "Another CPU").to_string()).unwrap();
    let (_, err) = count_verbose(&cache, &gib);
    assert!(is_cold_rule(&chosen(&err)), "{err}");
    assert!(err.contains("on another CPU (Another CPU)"), "{err}");
    // Written by another iolab (or user, or machine: crates/iolab/tests/profile_provenance.rs):
    // ignored, and --verbose says why.
    let mut foreign = tuning(&kernel, &cpu);
    foreign["written_by"]["version"] = "0.0.9".into();
    std::fs::write(&file, foreign.to_string()).unwrap();
    let (_, err) = count_verbose(&cache, &gib);
    assert!(is_cold_rule(&chosen(&err)), "{err}");
    assert!(err.contains("was written by iolab 0.0.9, this is"), "{err}");

    // The old format (one warm and one cold winner for every size, no noise rule): its
    // count winners are ignored.
    let old = serde_json::json!({
        "measured_at": "2026-01-01T00:00:00Z",
        "kernel_release": iolab_lab::profile::kernel_release(),
        "cores": cores,
        "file_bytes": 1u64 << 30,
        "warm": null,
        "cold": {"method": "pread-parallel", "threads": 1, "bytes_per_s": 1e10}
    });
    std::fs::write(&file, old.to_string()).unwrap();
    evict(&gib);
    let (_, err) = count_verbose(&cache, &gib);
    assert!(is_cold_rule(&chosen(&err)), "{err}");

    // Garbage: ignored, not an error.
    std::fs::write(&file, "not json").unwrap();
    let (out, _) = count_verbose(&cache, &gib);
    assert_eq!(out, format!("0 {}\n", gib.display()));
}
