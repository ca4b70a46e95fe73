//! The durability findings on a real C program that saves a file each way people do
//! (`c/save.c`), under each backend that can run here: a replace with no sync and one
//! whose directory is never synced are found, so is a file made without its directory
//! synced and a file truncated and rewritten in place; the correct sequence (write, fsync,
//! rename, fsync the directory) gets none, nor a file made and then covered by a `sync()`.
//! Each finding names the process that made its
//! calls, and the program, built with debug information, gets the file and line of its
//! offending call.

mod common;

use std::path::Path;
use std::process::Command as Process;

use common::{backends, build_c, report};
use iolab_trace::backend::Choice;
use iolab_trace::report::Report;
use iolab_trace::rules::{Finding, FindingKind};

/// Whether `dir` is on a file system that keeps files across a crash (not tmpfs), where
/// the durability rules speak.
fn durable(dir: &Path) -> bool {
    let out = Process::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(dir)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let ok = !matches!(out.as_str(), "tmpfs" | "ramfs");
    if !ok {
        iolab_testkit::skip(format!(
            "{} is on {out}: no durability to find",
            dir.display()
        ));
    }
    ok
}

fn durability(r: &Report) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.kind.durability()).collect()
}

/// Runs `save DIR MODE` in a fresh folder holding an old `config`, under `choice`.
fn save(exe: &Path, choice: Choice, mode: &str) -> (Report, tempfile::TempDir) {
    let dir = iolab_testkit::scratch();
    std::fs::write(dir.path().join("config"), "old = 1\n").unwrap();
    let d = dir.path().canonicalize().unwrap();
    let r = report(
        choice,
        &[&exe.display().to_string(), &d.display().to_string(), mode],
    );
    assert_eq!(r.exit_code(), 0, "{choice} {mode}");
    (r, dir)
}

#[test]
fn each_unsafe_save_gets_its_finding_and_the_correct_one_none() {
    let bin = iolab_testkit::scratch();
    let Some(exe) = build_c(bin.path(), "save", "-O0") else {
        return;
    };
    if !durable(bin.path()) {
        return;
    }
    for choice in backends() {
        for (mode, want) in [
            ("replace-nosync", Some(FindingKind::RenameBeforeSync)),
            ("replace-nodirsync", Some(FindingKind::UnsyncedDirectory)),
            ("create-nodirsync", Some(FindingKind::UnsyncedDirectory)),
            ("rewrite", Some(FindingKind::RewriteInPlace)),
            ("replace-correct", None),
            ("create-correct", None),
            ("create-sync", None),
        ] {
            let (r, dir) = save(&exe, choice, mode);
            let found = durability(&r);
            let kinds: Vec<FindingKind> = found.iter().map(|f| f.kind).collect();
            match want {
                None => assert!(found.is_empty(), "{choice} {mode}: {found:#?}"),
                Some(kind) => {
                    assert_eq!(kinds, [kind], "{choice} {mode}: {found:#?}");
                    let f = found[0];
                    assert!(f.shown && f.risk.is_some(), "{choice} {mode}: {f:?}");
                    let d = dir.path().canonicalize().unwrap();
                    assert!(
                        f.evidence.contains(&d.display().to_string()),
                        "{choice} {mode}: {}",
                        f.evidence
                    );
                    let p = f
                        .processes
                        .first()
                        .unwrap_or_else(|| panic!("{choice} {mode}: no process: {f:?}"));
                    assert!(p.exe.ends_with("/save"), "{choice} {mode}: {p:?}");
                    assert_eq!(p.args.last().map(String::as_str), Some(mode), "{p:?}");
                    assert!(f.fix.contains("fsync"), "{choice} {mode}: {}", f.fix);
                }
            }
        }
    }
}

#[test]
fn a_native_debug_build_gets_the_file_and_line_of_its_offending_call() {
    let bin = iolab_testkit::scratch();
    let Some(exe) = build_c(bin.path(), "save", "-O0") else {
        return;
    };
    let source =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/save.c"))
            .unwrap();
    let line = source
        .lines()
        .position(|l| l.contains("/* the offending call */"))
        .unwrap() as u32
        + 1;
    for choice in backends() {
        let (r, dir) = save(&exe, choice, "small-writes");
        let log = dir.path().canonicalize().unwrap().join("log");
        let f = r
            .findings
            .iter()
            .find(|f| f.kind == FindingKind::SmallWrites && Path::new(&f.path) == log)
            .unwrap_or_else(|| panic!("{choice}: no small-writes: {:#?}", r.findings));
        assert_eq!(f.processes.len(), 1, "{choice}: {:?}", f.processes);
        assert!(f.processes[0].use_.calls >= 5000, "{:?}", f.processes);
        let stack = f
            .stacks
            .first()
            .unwrap_or_else(|| panic!("{choice}: no stack: {f:?}"));
        let own = stack.own_frame().unwrap();
        assert_eq!(
            own.function.as_deref(),
            Some("small_writes"),
            "{choice}: {stack:?}"
        );
        assert!(
            own.file.as_deref().is_some_and(|p| p.ends_with("save.c")),
            "{choice}: {stack:?}"
        );
        assert_eq!(own.line, Some(line), "{choice}: {stack:?}");
        let names: Vec<_> = stack
            .frames
            .iter()
            .filter_map(|f| f.function.as_deref())
            .collect();
        assert!(names.contains(&"main"), "{choice}: {names:?}");
    }
}
