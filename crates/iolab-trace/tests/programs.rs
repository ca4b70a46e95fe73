//! The fix in the traced program's own terms: real programs with the write-ups' pitfalls
//! (an unbuffered Python, sqlite3 in autocommit, a node `appendFileSync` loop, a bash
//! `echo >>` loop, C with unbuffered stdio), each recognised and told its own fix, under
//! each backend that can run here; a shell pipeline of several programs is not taken for
//! its shell.

mod common;

use std::path::Path;

use common::{backends, report};
use iolab_testkit::trace::{self as kit, python};
use iolab_trace::backend::Choice;
use iolab_trace::launch::Command;
use iolab_trace::program::Program;
use iolab_trace::report::Report;
use iolab_trace::rules::{Finding, FindingKind};

fn have(program: &str) -> bool {
    kit::have(program, Command::resolve)
}

fn text(p: &Path) -> String {
    p.display().to_string()
}

/// The finding of `kind` on `path` (canonical), with the report's findings when missing.
fn finding<'r>(r: &'r Report, kind: FindingKind, path: &Path, choice: Choice) -> &'r Finding {
    let path = path.canonicalize().unwrap();
    r.findings
        .iter()
        .find(|f| f.kind == kind && Path::new(&f.path) == path)
        .unwrap_or_else(|| {
            let seen: Vec<_> = r.findings.iter().map(|f| (f.kind, &f.path)).collect();
            panic!("{choice}: no {kind} on {}: {seen:?}", path.display())
        })
}

/// Checks `f` was made by `program` and its fix says `words` (each of them).
fn told(f: &Finding, program: Program, words: &[&str], choice: Choice) {
    assert_eq!(f.program, program, "{choice}: {f:?}");
    for w in words {
        assert!(f.fix.contains(w), "{choice}: {w:?} not in {}", f.fix);
    }
}

#[test]
fn an_unbuffered_python_is_told_to_drop_dash_u() {
    let Some(python) = python() else { return };
    let dir = iolab_testkit::scratch();
    let out = dir.path().join("lines");
    let code = format!(
        "import os\nos.dup2(os.open({:?}, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)\n\
         for i in range(3000): print(i)",
        text(&out)
    );
    for choice in backends() {
        let r = report(choice, &[python, "-u", "-c", &code]);
        assert_eq!(
            r.program.program,
            Program::Python,
            "{choice}: {:?}",
            r.program
        );
        assert!(r.program.unbuffered);
        let f = finding(&r, FindingKind::SmallWrites, &out, choice);
        told(f, Program::Python, &["drop `-u`", "buffering="], choice);
        assert!(!f.fix.contains("iolab"), "{}", f.fix);
    }
}

#[test]
fn sqlite3_in_autocommit_is_told_begin_commit_or_wal() {
    if !have("sqlite3") {
        return;
    }
    let dir = iolab_testkit::scratch();
    let db = dir.path().join("db");
    let mut sql = String::from("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);");
    for i in 0..300 {
        sql.push_str(&format!("INSERT INTO t(v) VALUES('row {i}');"));
    }
    for choice in backends() {
        for name in ["db", "db-journal"] {
            let _ = std::fs::remove_file(dir.path().join(name));
        }
        let r = report(choice, &["sqlite3", &text(&db), &sql]);
        let f = finding(&r, FindingKind::SyncPerRecord, dir.path(), choice);
        told(
            f,
            Program::Sqlite3,
            &["BEGIN; … COMMIT;", "journal_mode=WAL"],
            choice,
        );
    }
}

#[test]
fn a_node_append_file_sync_loop_is_told_to_open_a_stream() {
    if !have("node") {
        return;
    }
    let dir = iolab_testkit::scratch();
    let out = dir.path().join("log");
    let code = format!(
        "const fs = require('fs'); for (let i = 0; i < 2000; i++) fs.appendFileSync({:?}, i + '\\n');",
        text(&out)
    );
    for choice in backends() {
        let _ = std::fs::remove_file(&out);
        let r = report(choice, &["node", "-e", &code]);
        let f = finding(&r, FindingKind::OpenChurn, &out, choice);
        told(
            f,
            Program::Node,
            &["fs.createWriteStream", "appendFileSync"],
            choice,
        );
    }
}

#[test]
fn a_bash_echo_loop_is_told_to_redirect_once() {
    if !have("bash") {
        return;
    }
    let dir = iolab_testkit::scratch();
    let out = dir.path().join("f");
    // A loop of builtins only: the shell alone makes the calls.
    let script = "exec > /dev/null; for ((i = 0; i < 2000; i++)); do echo $i >> \"$1\"; done";
    for choice in backends() {
        let _ = std::fs::remove_file(&out);
        let r = report(choice, &["bash", "-c", script, "bash", &text(&out)]);
        let f = finding(&r, FindingKind::OpenChurn, &out, choice);
        told(
            f,
            Program::Shell,
            &["redirect once", "done >> FILE"],
            choice,
        );
    }
}

#[test]
fn c_with_unbuffered_stdio_is_told_setvbuf() {
    if !have("cc") {
        return;
    }
    let dir = iolab_testkit::scratch();
    let source = dir.path().join("unbuffered.c");
    std::fs::write(
        &source,
        "#include <stdio.h>\nint main(int argc, char **argv) {\n  FILE *f = fopen(argv[1], \"w\");\n  \
         setvbuf(f, NULL, _IONBF, 0);\n  for (int i = 0; i < 3000; i++) fprintf(f, \"%d\\n\", i);\n  \
         return fclose(f);\n}\n",
    )
    .unwrap();
    let exe = dir.path().join("unbuffered");
    let built = std::process::Command::new("cc")
        .arg("-O2")
        .arg(&source)
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap();
    assert!(built.success());
    let out = dir.path().join("out");
    for choice in backends() {
        let r = report(choice, &[&text(&exe), &text(&out)]);
        let f = finding(&r, FindingKind::SmallWrites, &out, choice);
        told(f, Program::CStdio, &["setvbuf(f, NULL, _IOFBF"], choice);
    }
}

#[test]
fn a_pipeline_of_several_programs_keeps_the_generic_fix() {
    let Some(python) = python() else { return };
    let script = format!("{python} -u -c 'for i in range(3000): print(i)' | cat > /dev/null");
    for choice in backends() {
        let r = report(choice, &["sh", "-c", &script]);
        assert_eq!(
            r.program.program,
            Program::Unknown,
            "{choice}: {:?}",
            r.program
        );
        assert!(r.program.how.contains("programs"), "{:?}", r.program);
        let f = r
            .findings
            .iter()
            .find(|f| f.kind == FindingKind::SmallWrites)
            .unwrap_or_else(|| panic!("{choice}: no small writes"));
        assert_eq!(f.program, Program::Unknown);
        assert!(f.library.contains("StdoutWriter"), "{}", f.library);
    }
}

#[test]
fn a_rust_program_keeps_iolabs_call_and_gets_its_line() {
    let bin = iolab_testkit::scratch();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rust/lines.rs");
    let exe = bin.path().join("lines");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let built = std::process::Command::new(&rustc)
        .args(["--edition", "2024", "-g", "-o"])
        .arg(&exe)
        .arg(&source)
        .status();
    match built {
        Ok(s) if s.success() => {}
        Ok(s) => panic!("{rustc} failed on {}: {s}", source.display()),
        Err(e) => {
            iolab_testkit::skip(format!("no rustc ({rustc}: {e})"));
            return;
        }
    }
    let line = std::fs::read_to_string(&source)
        .unwrap()
        .lines()
        .position(|l| l.contains("// the offending call"))
        .unwrap() as u32
        + 1;
    let out = bin.path().join("out");
    for choice in backends() {
        let r = report(choice, &[&text(&exe), &text(&out)]);
        assert_eq!(
            r.program.program,
            Program::Rust,
            "{choice}: {:?}",
            r.program
        );
        let f = finding(&r, FindingKind::SmallWrites, &out, choice);
        assert_eq!(f.program, Program::Rust, "{choice}");
        assert!(f.program.takes_iolab());
        assert!(f.library.contains("iolab::"), "{}", f.library);
        let own = f
            .stacks
            .iter()
            .find_map(|s| s.own_frame().filter(|o| o.line == Some(line)))
            .unwrap_or_else(|| panic!("{choice}: no frame at lines.rs:{line}: {:#?}", f.stacks));
        assert!(
            own.file.as_deref().is_some_and(|p| p.ends_with("lines.rs")),
            "{own:?}"
        );
    }
}
