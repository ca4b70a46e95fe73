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

/// Python's `logging` through a `FileHandler` (a flush per record), `-u` or not, and
/// through a handler that does not flush per record.
fn logging_script(log: &Path, buffered: bool) -> String {
    let handler = if buffered {
        "class H(logging.FileHandler):\n    def flush(self):\n        pass\n"
    } else {
        "H = logging.FileHandler\n"
    };
    format!(
        "import logging\n{handler}log = logging.getLogger('t')\nlog.addHandler(H({:?}))\n\
         log.setLevel(logging.INFO)\nlog.propagate = False\n\
         for i in range(3000): log.info('record %d', i)\n",
        text(log)
    )
}

#[test]
fn a_python_logging_file_handler_is_told_a_handler_that_does_not_flush() {
    let Some(python) = python() else { return };
    let dir = iolab_testkit::scratch();
    let log = dir.path().join("app.log");
    for choice in backends() {
        // `-u` changes stdout and stderr only: the fix is the handler's either way.
        let r = report(choice, &[python, "-u", "-c", &logging_script(&log, false)]);
        let f = finding(&r, FindingKind::SmallWrites, &log, choice);
        told(
            f,
            Program::Python,
            &["BufferedFileHandler", "MemoryHandler"],
            choice,
        );
        assert!(!f.fix.contains("drop `-u`"), "{}", f.fix);
        let fixed = report(choice, &[python, "-c", &logging_script(&log, true)]);
        let canon = log.canonicalize().unwrap();
        assert!(
            !fixed.findings.iter().any(|f| Path::new(&f.path) == canon),
            "{choice}: {:?}",
            fixed.findings
        );
    }
}

#[test]
fn sqlite3_at_synchronous_off_run_by_a_shell_is_told_one_transaction() {
    if !have("sqlite3") {
        return;
    }
    let dir = iolab_testkit::scratch();
    let db = dir.path().join("t.db");
    let inserts: String = (0..1200)
        .map(|i| format!("INSERT INTO t VALUES({i}, 'row {i}');\n"))
        .collect();
    for (name, body) in [
        ("auto.sql", inserts.clone()),
        ("tx.sql", format!("BEGIN;\n{inserts}COMMIT;\n")),
    ] {
        let sql = format!("PRAGMA synchronous=OFF;\n{body}");
        std::fs::write(dir.path().join(name), sql).unwrap();
    }
    for choice in backends() {
        for (name, slow) in [("auto.sql", true), ("tx.sql", false)] {
            let _ = std::fs::remove_file(&db);
            let made = std::process::Command::new("sqlite3")
                .arg(&db)
                .arg("CREATE TABLE t(x INTEGER, y TEXT)")
                .status()
                .unwrap();
            assert!(made.success());
            let script = format!("sqlite3 {} < {}", text(&db), text(&dir.path().join(name)));
            let r = report(choice, &["sh", "-c", &script]);
            if !slow {
                assert!(r.findings.is_empty(), "{choice}: {:?}", r.findings);
                continue;
            }
            let f = finding(&r, FindingKind::StatStorm, &db, choice);
            told(
                f,
                Program::Sqlite3,
                &["synchronous=OFF", "BEGIN; … COMMIT;", "journal_mode=WAL"],
                choice,
            );
            assert!(f.evidence.contains("1200 transactions"), "{}", f.evidence);
        }
    }
}

#[test]
fn git_run_by_a_script_is_git_and_told_the_component_of_each_file() {
    if !have("git") {
        return;
    }
    let dir = iolab_testkit::scratch();
    let repo = dir.path().join("repo");
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-C"])
            .arg(&repo)
            .args(args)
            .status()
            .unwrap();
        assert!(ok.success(), "git {args:?}");
    };
    std::fs::create_dir(&repo).unwrap();
    git(&["init", "-q"]);
    for i in 0..10 {
        std::fs::write(repo.join(format!("f{i}")), format!("{i}\n")).unwrap();
        git(&["add", "."]);
        git(&["commit", "-qm", &format!("c{i}")]);
    }
    for choice in backends() {
        let script = format!("cd {} && git gc -q", text(&repo));
        let r = report(choice, &["sh", "-c", &script]);
        assert_eq!(r.program.program, Program::Git, "{choice}: {:?}", r.program);
        for f in &r.findings {
            assert_eq!(f.program, Program::Git, "{choice}: {f:?}");
            assert!(!f.fix.contains("iolab::"), "{choice}: {}", f.fix);
        }
        // A file no core.fsync component covers is said to be one (on a file system
        // that keeps files across a crash, where the durability rules speak).
        if let Some(f) = r.findings.iter().find(|f| f.evidence.contains("/gc.pid ")) {
            assert!(
                f.fix.contains("no `core.fsync` component covers it"),
                "{}",
                f.fix
            );
        }
        if let Some(f) = r
            .findings
            .iter()
            .find(|f| f.path.ends_with("/.git/packed-refs.new"))
        {
            assert!(f.fix.contains("`reference`"), "{}", f.fix);
        }
    }
}

#[test]
fn node_write_sync_per_record_and_a_replace_per_record_keep_their_kind() {
    if !have("node") {
        return;
    }
    let dir = iolab_testkit::scratch();
    let out = dir.path().join("out");
    let per_record = format!(
        "const fs = require('fs'); const fd = fs.openSync({0:?}, 'w');\n\
         for (let i = 0; i < 3000; i++) fs.writeSync(fd, i + '\\n');",
        text(&out)
    );
    let replace = format!(
        "const fs = require('fs');\n\
         for (let i = 0; i < 500; i++) fs.writeFileSync({0:?}, 'count ' + i + '\\n');",
        text(&out)
    );
    let once = format!(
        "const fs = require('fs'); const lines = [];\n\
         for (let i = 0; i < 3000; i++) lines.push(i + '\\n');\n\
         fs.writeFileSync({0:?}, lines.join(''));",
        text(&out)
    );
    for choice in backends() {
        let r = report(choice, &["node", "-e", &per_record]);
        let f = finding(&r, FindingKind::SmallWrites, &out, choice);
        told(
            f,
            Program::Node,
            &["lines.join('')", "a replace must stay a replace"],
            choice,
        );
        let r = report(choice, &["node", "-e", &replace]);
        let f = finding(&r, FindingKind::OpenChurn, &out, choice);
        told(f, Program::Node, &["never an append"], choice);
        assert!(!f.fix.contains("flags: 'a', highWaterMark"), "{}", f.fix);
        let r = report(choice, &["node", "-e", &once]);
        let canon = out.canonicalize().unwrap();
        assert!(
            !r.findings.iter().any(|f| Path::new(&f.path) == canon),
            "{choice}: {:?}",
            r.findings
        );
    }
}
