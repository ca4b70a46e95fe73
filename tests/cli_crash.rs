//! `iolab crash` end to end on real programs: a JSON file replaced by `os.replace` with no
//! sync fails under `posix` (the acknowledged version can be lost), the same program with
//! the file and its folder synced passes every state under both models; a write through a
//! shared map is refused (exit 2); bad arguments are one line and exit 2; `--json` has the
//! documented keys and never overwrites a file; an appender that acknowledges a record
//! before its `fsync` loses an acknowledged record, and one that syncs first does not.

use std::path::Path;
use std::process::{Command, Output};

use assert_cmd::cargo::CommandCargoExt;

/// The cache folder the runs are kept in (`iolab crash replay`), the tests' own.
const CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache-crash");

fn iolab() -> Command {
    let mut c = Command::cargo_bin("iolab").unwrap();
    c.env("XDG_CACHE_HOME", CACHE);
    c
}

/// Whether the ptrace backend and python3 can run here (a skip line printed otherwise).
fn can_run() -> bool {
    let probe = |b: &str| {
        let mut c = iolab();
        c.args(["trace", "--no-calibrate", "--backend", b]);
        c
    };
    if !iolab_testkit::trace::cli_backends(probe).contains(&"ptrace") {
        return false;
    }
    if Command::new("python3")
        .arg("-c")
        .arg("pass")
        .status()
        .is_err()
    {
        iolab_testkit::skip("python3 is not installed");
        return false;
    }
    true
}

/// The program: replaces `config.json` in the folder by rename, printing `saved` after;
/// `sync` adds the `fsync` of the file and of the folder.
fn replace_script(sync: bool) -> String {
    let (file_sync, dir_sync) = if sync {
        (
            "    f.flush()\n    os.fsync(f.fileno())\n",
            "dfd = os.open(d, os.O_RDONLY)\nos.fsync(dfd)\nos.close(dfd)\n",
        )
    } else {
        ("", "")
    };
    format!(
        "import json, os, sys\nd = sys.argv[1]\n\
         with open(os.path.join(d, 'config.json.tmp'), 'w') as f:\n    \
         json.dump({{'v': 2, 'pad': 'x' * 5000}}, f)\n{file_sync}\
         os.replace(os.path.join(d, 'config.json.tmp'), os.path.join(d, 'config.json'))\n\
         {dir_sync}print('saved', flush=True)\n"
    )
}

/// The check: `config.json` parses, and once `saved` was printed it is version 2.
const CHECK: &str = "python3 -c \"import json, os, sys\n\
    v = json.load(open('config.json'))['v']\n\
    acked = open(os.environ['IOLAB_CRASH_STDOUT']).read()\n\
    sys.exit(1 if 'saved' in acked and v != 2 else 0)\"";

/// A scratch folder holding the program's folder `d`.
fn folder() -> (tempfile::TempDir, std::path::PathBuf) {
    let scratch = iolab_testkit::scratch();
    let dir = scratch.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    (scratch, dir)
}

fn crash(dir: &Path, model: &str, script: &str, extra: &[&str]) -> Output {
    std::fs::write(dir.join("config.json"), b"{\"v\": 1}\n").unwrap();
    let _ = std::fs::remove_file(dir.join("config.json.tmp"));
    let mut c = iolab();
    c.args(["crash", "--model", model, "--check", CHECK, "--dir"])
        .arg(dir)
        .args(extra)
        .args(["--", "python3", "-c", script])
        .arg(dir);
    c.output().unwrap()
}

#[test]
fn a_replace_without_syncs_fails_and_with_them_every_state_passes() {
    if !can_run() {
        return;
    }
    let (_scratch, dir) = folder();
    let unsafe_run = crash(&dir, "posix", &replace_script(false), &[]);
    let stderr = String::from_utf8_lossy(&unsafe_run.stderr);
    assert_eq!(unsafe_run.status.code(), Some(1), "{stderr}");
    // The program's own output is untouched.
    assert_eq!(unsafe_run.stdout, b"saved\n");
    assert!(
        stderr.contains("lost write(") && stderr.contains("of config.json.tmp"),
        "{stderr}"
    );
    // The fix in Python's terms (`iolab trace`'s), though python3 may be a shim script.
    assert!(
        stderr.contains("fix: write the new contents to a temporary file"),
        "{stderr}"
    );
    assert!(stderr.contains("os.fsync(f.fileno())"), "{stderr}");
    for model in ["posix", "ext4-ordered"] {
        let safe = crash(&dir, model, &replace_script(true), &[]);
        let stderr = String::from_utf8_lossy(&safe.stderr);
        assert_eq!(safe.status.code(), Some(0), "{model}: {stderr}");
        assert!(stderr.contains(": 0 failed"), "{stderr}");
    }
    // ext4-ordered: auto_da_alloc never leaves the replaced file empty or torn, but the
    // acknowledgement still comes before anything is durable.
    let ext4 = crash(&dir, "ext4-ordered", &replace_script(false), &[]);
    let stderr = String::from_utf8_lossy(&ext4.stderr);
    assert_eq!(ext4.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("torn"), "{stderr}");
}

/// An appender of three records to `log` (made before the run): `early` prints each
/// record's acknowledgement before its `fsync`, else after.
fn appender_script(early: bool) -> String {
    let (before, after) = if early {
        ("    print(f'ack {i}', flush=True)\n", "")
    } else {
        ("", "    print(f'ack {i}', flush=True)\n")
    };
    format!(
        "import os, sys\nf = open(os.path.join(sys.argv[1], 'log'), 'a')\n\
         for i in range(3):\n    f.write(f'record {{i}}\\n')\n    f.flush()\n\
         {before}    os.fsync(f.fileno())\n{after}"
    )
}

/// The appender's check: every acknowledged record is in `log`.
const APPENDER_CHECK: &str = "python3 -c \"import os, sys\n\
    acks = open(os.environ['IOLAB_CRASH_STDOUT']).read().split()[1::2]\n\
    log = open('log').read().splitlines()\n\
    missing = [a for a in acks if 'record ' + a not in log]\n\
    print('missing', missing)\n\
    sys.exit(1 if missing else 0)\"";

#[test]
fn an_appender_that_acknowledges_before_it_syncs_loses_an_acknowledged_record() {
    if !can_run() {
        return;
    }
    let (_scratch, dir) = folder();
    let run = |model: &str, early: bool| {
        std::fs::write(dir.join("log"), b"").unwrap();
        let mut c = iolab();
        c.args([
            "crash",
            "--model",
            model,
            "--check",
            APPENDER_CHECK,
            "--dir",
        ])
        .arg(&dir)
        .args(["--", "python3", "-c", &appender_script(early)])
        .arg(&dir);
        c.output().unwrap()
    };
    for model in ["posix", "ext4-ordered"] {
        let early = run(model, true);
        let stderr = String::from_utf8_lossy(&early.stderr);
        assert_eq!(early.status.code(), Some(1), "{model}: {stderr}");
        assert!(
            stderr.contains("lost write(") && stderr.contains("of log"),
            "{stderr}"
        );
        assert!(stderr.contains("check said: missing ['"), "{stderr}");
        assert_eq!(early.stdout, b"ack 0\nack 1\nack 2\n");
        let synced_first = run(model, false);
        let stderr = String::from_utf8_lossy(&synced_first.stderr);
        assert_eq!(synced_first.status.code(), Some(0), "{model}: {stderr}");
    }
}

/// With standard output on `/dev/null`, a child's own write to `/dev/null` is not an
/// acknowledgement: a character device is shared, so only descriptor 1 acknowledges.
#[test]
fn writes_to_a_shared_device_on_another_descriptor_are_not_acknowledgements() {
    if !can_run() {
        return;
    }
    let (_scratch, dir) = folder();
    let out = iolab()
        .args(["crash", "--check"])
        .arg("! grep -q noise \"$IOLAB_CRASH_STDOUT\"")
        .arg("--dir")
        .arg(&dir)
        .args([
            "--",
            "sh",
            "-c",
            "python3 -c \"import os; os.write(os.open('/dev/null', os.O_WRONLY), b'noise')\"; \
             echo ack",
        ])
        .current_dir(&dir)
        .stdout(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(": 0 failed"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // The one entry is the acknowledgement on descriptor 1.
    assert!(stderr.contains(" of 1 entries "), "{stderr}");
}

#[test]
fn the_json_has_the_states_and_the_failing_ones_and_is_never_written_over() {
    if !can_run() {
        return;
    }
    let (scratch, dir) = folder();
    let json = scratch.path().join("crash.json");
    let out = crash(
        &dir,
        "posix",
        &replace_script(false),
        &["--json", json.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["model"], "posix");
    assert!(doc["states"].as_u64().unwrap() > 3);
    let failing = doc["failing"].as_array().unwrap();
    assert!(!failing.is_empty());
    for f in failing {
        for key in ["after", "persisted", "lost", "torn", "output", "state"] {
            assert!(f.get(key).is_some(), "{key} in {f}");
        }
    }
    assert!(doc["seconds"].as_f64().is_some());
    // `iolab crash replay` rebuilds a failing state, on which the check fails again.
    let state = failing[0]["state"].as_str().unwrap();
    let rebuilt = scratch.path().join("rebuilt");
    let replay = iolab()
        .args(["crash", "replay", state])
        .arg(&rebuilt)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&replay.stderr);
    assert_eq!(replay.status.code(), Some(0), "{said}");
    let printed = said
        .rsplit_once(" is in ")
        .and_then(|(_, rest)| rest.split_once(" (the check's"))
        .map(|(path, _)| path.to_string())
        .unwrap_or_else(|| panic!("no stdout file in {said}"));
    let check = Command::new("sh")
        .args(["-c", CHECK])
        .current_dir(&rebuilt)
        .env("IOLAB_CRASH_STDOUT", &printed)
        .status()
        .unwrap();
    assert!(
        !check.success(),
        "the replayed state {state} passes its check"
    );
    // It never writes into a folder that exists.
    let again = iolab()
        .args(["crash", "replay", state])
        .arg(&rebuilt)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    // A second run refuses to write over the file: exit 2, and the file is unchanged.
    let before = std::fs::read(&json).unwrap();
    let again = crash(
        &dir,
        "posix",
        &replace_script(false),
        &["--json", json.to_str().unwrap()],
    );
    assert_eq!(again.status.code(), Some(2));
    assert_eq!(std::fs::read(&json).unwrap(), before);
}

#[test]
fn a_write_through_a_shared_map_is_refused_by_name() {
    if !can_run() {
        return;
    }
    let (_scratch, dir) = folder();
    std::fs::write(dir.join("m"), [0u8; 4096]).unwrap();
    let script = "import mmap, sys\nf = open(sys.argv[1] + '/m', 'r+b')\n\
                  m = mmap.mmap(f.fileno(), 4096)\nm[0:1] = b'x'\nm.flush()\n";
    let out = iolab()
        .args(["crash", "--check", "true", "--dir"])
        .arg(&dir)
        .args(["--", "python3", "-c", script])
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot replay this run") && stderr.contains("map"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

#[test]
fn bad_arguments_are_one_line_and_exit_2() {
    for args in [
        vec!["crash", "--check", "true"],
        vec![
            "crash",
            "--check",
            "true",
            "--dir",
            "/nonexistent/iolab",
            "--",
            "true",
        ],
        vec!["crash", "--check", "true", "--model", "zfs", "--", "true"],
        vec!["crash", "--check", "true", "--drop", "fsck", "--", "true"],
        vec!["crash", "--", "true"],
        vec!["crash", "replay", "not-a-state", "/nonexistent/iolab"],
        vec!["crash", "replay", "1-1:0", "/nonexistent/iolab"],
    ] {
        let out = iolab().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("iolab: "), "{args:?}: {stderr}");
    }
}

/// Whether sqlite3 is installed (a skip line printed otherwise).
fn have_sqlite3() -> bool {
    let found = Command::new("sqlite3").arg("-version").output().is_ok();
    if !found {
        iolab_testkit::skip("sqlite3 is not installed");
    }
    found
}

/// The check of a SQLite state: `PRAGMA integrity_check` is `ok`, and the table holds at
/// least as many rows as were acknowledged (`ack` lines printed).
const SQLITE_CHECK: &str = "sqlite3 db.sqlite 'PRAGMA integrity_check;' | grep -qx ok \
    || { echo integrity; exit 1; }; \
    n=$(sqlite3 db.sqlite 'SELECT count(*) FROM t'); \
    a=$(grep -c ack \"$IOLAB_CRASH_STDOUT\"); echo \"rows $n acks $a\"; [ \"$n\" -ge \"$a\" ]";

/// `iolab crash` of `inserts` autocommit inserts into a fresh SQLite database in `dir`,
/// each acknowledged, with `journal_mode` and `synchronous`.
fn sqlite_crash(dir: &Path, model: &str, inserts: u32, mode: &str, sync: &str) -> Output {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir(dir).unwrap();
    let made = Command::new("sqlite3")
        .arg(dir.join("db.sqlite"))
        .arg("CREATE TABLE t(x INTEGER);")
        .status()
        .unwrap();
    assert!(made.success());
    let mut sql = format!("PRAGMA journal_mode={mode}; PRAGMA synchronous={sync};\n");
    for i in 1..=inserts {
        sql.push_str(&format!("INSERT INTO t VALUES({i}); SELECT 'ack', {i};\n"));
    }
    let script = dir.with_extension("sql");
    std::fs::write(&script, sql).unwrap();
    let program = format!(
        "sqlite3 '{}' < '{}' | grep ack",
        dir.join("db.sqlite").display(),
        script.display()
    );
    iolab()
        .args([
            "crash",
            "--jobs",
            "2",
            "--volatile",
            "*-shm",
            "--model",
            model,
        ])
        .args(["--check", SQLITE_CHECK, "--dir"])
        .arg(dir)
        .args(["--", "sh", "-c", &program])
        .output()
        .unwrap()
}

#[test]
fn sqlite_in_wal_mode_with_full_syncs_passes_every_state_under_both_models() {
    if !can_run() || !have_sqlite3() {
        return;
    }
    let (scratch, _) = folder();
    let dir = scratch.path().join("wal");
    for model in ["posix", "ext4-ordered"] {
        let out = sqlite_crash(&dir, model, 5, "WAL", "FULL");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{model}: {stderr}");
        assert!(stderr.contains(": 0 failed"), "{stderr}");
    }
}

#[test]
fn sqlite_rollback_journal_loses_the_last_commit_with_full_not_with_extra() {
    if !can_run() || !have_sqlite3() {
        return;
    }
    let (scratch, _) = folder();
    let dir = scratch.path().join("delete");
    // ALICE (OSDI 2014): the journal's unlink, its folder not synced, can be lost, and the
    // hot journal then rolls back the last acknowledged transaction.
    let full = sqlite_crash(&dir, "posix", 5, "DELETE", "FULL");
    let stderr = String::from_utf8_lossy(&full.stderr);
    assert_eq!(full.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("lost unlink(db.sqlite-journal)"),
        "{stderr}"
    );
    assert!(stderr.contains("rows 4 acks 5"), "{stderr}");
    // EXTRA syncs the folder after the unlink.
    let extra = sqlite_crash(&dir, "posix", 5, "DELETE", "EXTRA");
    let stderr = String::from_utf8_lossy(&extra.stderr);
    assert_eq!(extra.status.code(), Some(0), "{stderr}");
}

/// `iolab crash --model MODEL` of one `git commit` (with `fsync`, the value of
/// `core.fsync`, or git's default) in a fresh repository in `dir`, checked by `git fsck`.
fn git_crash(dir: &Path, model: &str, fsync: Option<&str>) -> Output {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir(dir).unwrap();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(ok.status.success(), "git {args:?}: {ok:?}");
    };
    git(&["init", "-q"]);
    std::fs::write(dir.join("f"), b"one\n").unwrap();
    git(&["add", "f"]);
    git(&["commit", "-qm", "one"]);
    let config = match fsync {
        Some(v) => format!("-c core.fsync={v} -c core.fsyncMethod=fsync"),
        None => String::new(),
    };
    let program = format!(
        "cd '{}' && echo two >> f && git -c user.name=t -c user.email=t@t {config} commit -qam two",
        dir.display()
    );
    iolab()
        .args(["crash", "--jobs", "2", "--model", model])
        .args(["--check", "git fsck --full", "--dir"])
        .arg(dir)
        .args(["--", "sh", "-c", &program])
        .output()
        .unwrap()
}

#[test]
fn git_with_core_fsync_all_passes_fsck_in_every_ext4_state_and_its_default_does_not() {
    if !can_run() {
        return;
    }
    if Command::new("git").arg("--version").output().is_err() {
        iolab_testkit::skip("git is not installed");
        return;
    }
    let (scratch, _) = folder();
    let dir = scratch.path().join("repo");
    let all = git_crash(&dir, "ext4-ordered", Some("all"));
    let stderr = String::from_utf8_lossy(&all.stderr);
    assert_eq!(all.status.code(), Some(0), "{stderr}");
    // By default git syncs no loose object: a crash can keep the new branch head and lose
    // the objects it names.
    let default = git_crash(&dir, "ext4-ordered", None);
    let stderr = String::from_utf8_lossy(&default.stderr);
    assert_eq!(default.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("missing"), "{stderr}");
}
