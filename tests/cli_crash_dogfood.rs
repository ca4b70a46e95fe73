//! iolab's own durable files under `iolab crash` (issue #51, point 5): `iolab::Log` under
//! each policy, and `AppendFile` with a `sync` after each record, keep every acknowledged
//! record in every state `posix` allows; with a sync taken out of the program
//! (`--drop`: the mutations fdatasync a no-op, no folder sync after the create, `O_DSYNC`
//! dropped), `iolab crash` finds a state that loses an acknowledged record.
//!
//! The program is `examples/crash_dogfood.rs`, which `cargo test` builds before the tests
//! into `<profile>/examples/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use assert_cmd::cargo::CommandCargoExt;
use iolab::LogPolicy;

/// Records each run appends.
const RECORDS: &str = "3";

/// The built dogfood program, checked to be newer than its source.
fn dogfood() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary lives in <profile>/deps/");
    let path = profile_dir.join("examples/crash_dogfood");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/crash_dogfood.rs");
    let built = std::fs::metadata(&path).and_then(|m| m.modified());
    let written = std::fs::metadata(&source).and_then(|m| m.modified());
    match (built, written) {
        (Ok(built), Ok(written)) if built >= written => path,
        _ => panic!(
            "{} is missing or older than its source: run `cargo test` (which builds the \
             examples first) or `cargo build --examples`",
            path.display()
        ),
    }
}

/// Whether `iolab crash` can record here (a skip line printed otherwise).
fn can_run() -> bool {
    let probe = |b: &str| {
        let mut c = Command::cargo_bin("iolab").unwrap();
        c.args(["trace", "--no-calibrate", "--backend", b]);
        c
    };
    if !iolab_testkit::trace::cli_backends(probe).contains(&"ptrace") {
        return false;
    }
    if !iolab_trace::journal::DROPS_AVAILABLE {
        iolab_testkit::skip("syncs can be dropped only on x86-64");
        return false;
    }
    true
}

/// `iolab crash` of the dogfood program writing `file` (`log` or `append` mode, with
/// `policy` for a log) in a new folder under `scratch`, with `drop` taken out.
fn crash(scratch: &Path, mode: &str, policy: Option<LogPolicy>, drop: Option<&str>) -> Output {
    let dir = tempfile::tempdir_in(scratch).unwrap();
    let program = dogfood();
    let check = format!(
        "'{}' check-{mode} data \"$IOLAB_CRASH_STDOUT\"",
        program.display()
    );
    let mut c = Command::cargo_bin("iolab").unwrap();
    c.env(
        "XDG_CACHE_HOME",
        concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache-crash"),
    );
    c.args(["crash", "--jobs", "2", "--check", &check, "--dir"])
        .arg(dir.path());
    if let Some(d) = drop {
        c.args(["--drop", d]);
    }
    c.arg("--").arg(&program).args([mode, "data", RECORDS]);
    c.args(policy.map(|p| p.to_string()));
    c.current_dir(dir.path());
    c.output().unwrap()
}

/// Asserts that `out` found a lost acknowledged record (exit 1, the check's line).
fn assert_loses_an_ack(out: &Output, what: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{what}: {stderr}");
    assert!(stderr.contains("check said: records "), "{what}: {stderr}");
    assert!(stderr.contains("lost "), "{what}: {stderr}");
    // Where the lost call was made: frames of the program (it has symbols).
    assert!(stderr.contains(" by process "), "{what}: {stderr}");
    assert!(
        stderr.contains("replay: iolab crash replay "),
        "{what}: {stderr}"
    );
}

fn assert_passes(out: &Output, what: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{what}: {stderr}");
    assert!(stderr.contains(": 0 failed"), "{what}: {stderr}");
    // The program ran as it does untraced: one acknowledgement per record.
    let acks = String::from_utf8_lossy(&out.stdout);
    assert_eq!(acks.lines().count().to_string(), RECORDS, "{what}: {acks}");
}

#[test]
fn the_log_keeps_every_acknowledged_record_and_each_dropped_sync_loses_one() {
    if !can_run() {
        return;
    }
    let scratch = iolab_testkit::scratch();
    for policy in [
        LogPolicy::Prealloc,
        LogPolicy::Fdatasync,
        LogPolicy::Dsync,
        LogPolicy::DirectDsync,
    ] {
        if let Err(why) = policy.availability_for(scratch.path()) {
            iolab_testkit::skip(format!("log policy {policy}: {why}"));
            continue;
        }
        assert_passes(
            &crash(scratch.path(), "log", Some(policy), None),
            &format!("{policy}"),
        );
        // The sync each policy's records rely on, and the folder's sync after the create.
        let record_sync = match policy {
            LogPolicy::Dsync | LogPolicy::DirectDsync => "o-dsync",
            _ => "fdatasync",
        };
        for drop in [record_sync, "dir-fsync"] {
            let out = crash(scratch.path(), "log", Some(policy), Some(drop));
            assert_loses_an_ack(&out, &format!("{policy} without {drop}"));
        }
    }
}

#[test]
fn append_file_with_sync_keeps_every_record_and_each_dropped_sync_loses_one() {
    if !can_run() {
        return;
    }
    let scratch = iolab_testkit::scratch();
    assert_passes(&crash(scratch.path(), "append", None, None), "append");
    for drop in ["fdatasync", "dir-fsync"] {
        let out = crash(scratch.path(), "append", None, Some(drop));
        assert_loses_an_ack(&out, &format!("append without {drop}"));
    }
}
