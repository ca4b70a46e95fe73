//! Programs that replace files by rename, as real programs do it (a Python lock-file loop,
//! Python, perl and node replace loops, git's commits and `gc`): each file is known by its
//! life, not its inode number, so a renamed file is the one its old name held then, a
//! rename counts once, a file made anew each time is no open churn, and both backends give
//! the same durability findings, counted as `strace -f` counts the renames.

mod common;

use std::path::Path;
use std::process::Command as Process;

use common::{backends, report};
use iolab_testkit::trace::{self as kit, python};
use iolab_trace::backend::Choice;
use iolab_trace::launch::Command;
use iolab_trace::program::Program;
use iolab_trace::report::Report;
use iolab_trace::rules::FindingKind;

fn have(program: &str) -> bool {
    kit::have(program, Command::resolve)
}

/// A scratch folder on a file system that keeps files across a crash (where the
/// durability rules speak), or `None` (skipped).
fn durable_scratch() -> Option<tempfile::TempDir> {
    let dir = iolab_testkit::scratch();
    let fs = Process::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(dir.path())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    if matches!(fs.as_str(), "tmpfs" | "ramfs") {
        iolab_testkit::skip(format!(
            "{} is on {fs}: no durability to find",
            dir.path().display()
        ));
        return None;
    }
    Some(dir)
}

/// A finding as the tests compare it: kind, path within the scratch folder, count.
type Claim = (FindingKind, String, u64);

/// The durability and open-churn findings of `r`: kind, the path's name within `dir`,
/// how many times (renames, names), sorted.
fn claims(r: &Report, dir: &Path) -> Vec<Claim> {
    let dir = dir.canonicalize().unwrap();
    let mut out: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.kind.durability() || f.kind == FindingKind::OpenChurn)
        .map(|f| {
            let name = Path::new(&f.path)
                .strip_prefix(&dir)
                .map_or_else(|_| f.path.clone(), |p| p.display().to_string());
            (f.kind, unrandom(name), f.calls)
        })
        .collect();
    out.sort_by(|a, b| (a.0.name(), &a.1, a.2).cmp(&(b.0.name(), &b.1, b.2)));
    out
}

/// `name` with a `mkstemp` suffix (`_` and six letters or digits) made `_XXXXXX`, and a
/// process id's (`.` and digits) `.PID`: what differs from run to run.
fn unrandom(name: String) -> String {
    if let Some((head, tail)) = name.rsplit_once('_')
        && tail.len() == 6
        && tail.chars().all(|c| c.is_ascii_alphanumeric())
    {
        return format!("{head}_XXXXXX");
    }
    match name.rsplit_once('.') {
        Some((head, tail)) if !tail.is_empty() && tail.chars().all(|c| c.is_ascii_digit()) => {
            format!("{head}.PID")
        }
        _ => name,
    }
}

/// Runs `words` in `dir` (a fresh copy of `setup`'s state each time) under every backend;
/// checks they agree and returns the claims.
fn same_under_both(
    dir: &Path,
    words: &[&str],
    reset: impl Fn(),
) -> Vec<(FindingKind, String, u64)> {
    let mut seen: Vec<(Choice, Vec<Claim>)> = Vec::new();
    for choice in backends() {
        reset();
        let r = report(choice, words);
        assert_eq!(r.exit_code(), 0, "{choice}: {words:?}");
        seen.push((choice, claims(&r, dir)));
    }
    for pair in seen.windows(2) {
        assert_eq!(
            pair[0].1, pair[1].1,
            "{} and {} disagree",
            pair[0].0, pair[1].0
        );
    }
    seen.pop().map(|(_, c)| c).unwrap_or_default()
}

fn clear(dir: &Path, keep: &str) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_name() != keep {
            let p = e.path();
            if p.is_dir() {
                std::fs::remove_dir_all(&p).unwrap();
            } else {
                std::fs::remove_file(&p).unwrap();
            }
        }
    }
}

#[test]
fn a_lock_file_loop_that_syncs_before_each_rename_gets_only_its_unsynced_folder() {
    let Some(python) = python() else { return };
    let Some(dir) = durable_scratch() else { return };
    let d = dir.path().canonicalize().unwrap();
    let script = d.join("lock.py");
    std::fs::write(
        &script,
        "import os, sys\n\
         os.chdir(sys.argv[1])\n\
         for i in range(40):\n\
         \x20   with open(f'f{i}.txt', 'w') as f:\n\
         \x20       f.write(f'hello {i}\\n')\n\
         \x20   for name in ('index', 'master'):\n\
         \x20       with open(name + '.lock', 'w') as f:\n\
         \x20           f.write(f'content {i}\\n')\n\
         \x20           f.flush()\n\
         \x20           os.fsync(f.fileno())\n\
         \x20       os.rename(name + '.lock', name)\n",
    )
    .unwrap();
    let words = [
        python,
        &script.display().to_string(),
        &d.display().to_string(),
    ];
    let claims = same_under_both(&d, &words, || clear(&d, "lock.py"));
    // index and master: two names (renamed 40 times each), never their folder synced.
    assert_eq!(
        claims,
        [(FindingKind::UnsyncedDirectory, "index".to_string(), 2)],
        "{claims:?}"
    );
}

/// The replace loops: (program, its script's name, its source, renames, the new name).
fn replace_loops() -> Vec<(&'static str, &'static str, String)> {
    vec![
        (
            "python3",
            "rep.py",
            "import os, sys\nos.chdir(sys.argv[1])\nfor i in range(150):\n    \
             with open('cfg.tmp', 'w') as f:\n        f.write('{\"n\": %d}\\n' % i)\n    \
             os.rename('cfg.tmp', 'cfg.json')\n"
                .into(),
        ),
        (
            "node",
            "rep.js",
            "const fs = require('fs'); process.chdir(process.argv[2]);\n\
             for (let i = 0; i < 150; i++) { fs.writeFileSync('cfg.tmp', JSON.stringify({i}));\n\
             fs.renameSync('cfg.tmp', 'cfg.json'); }\n"
                .into(),
        ),
        (
            "perl",
            "rep.pl",
            "chdir $ARGV[0] or die;\nfor my $i (1..150) {\n  open(my $f, '>', 'cfg.tmp') or die;\n  \
             print $f \"{\\\"n\\\": $i}\\n\";\n  close($f) or die;\n  \
             rename('cfg.tmp', 'cfg.json') or die;\n}\n"
                .into(),
        ),
    ]
}

#[test]
fn a_replace_loop_without_sync_is_one_rename_before_sync_per_rename_and_no_churn() {
    for (program, name, source) in replace_loops() {
        if !have(program) {
            continue;
        }
        let Some(dir) = durable_scratch() else { return };
        let d = dir.path().canonicalize().unwrap();
        let script = d.join(name);
        std::fs::write(&script, source).unwrap();
        let words = [
            program,
            &script.display().to_string(),
            &d.display().to_string(),
        ];
        let claims = same_under_both(&d, &words, || clear(&d, name));
        assert_eq!(
            claims,
            [(FindingKind::RenameBeforeSync, "cfg.tmp".to_string(), 150)],
            "{program}: {claims:?}"
        );
        // The fix keeps the replace: a sync before the rename, never an append.
        let r = report(Choice::Ptrace, &words);
        let f = r
            .findings
            .iter()
            .find(|f| f.kind == FindingKind::RenameBeforeSync)
            .unwrap();
        assert!(
            f.evidence.contains("150 times"),
            "{program}: {}",
            f.evidence
        );
        assert!(f.fix.contains("sync"), "{program}: {}", f.fix);
        assert!(!f.fix.contains("'a'"), "{program}: {}", f.fix);
    }
}

#[test]
fn a_replace_loop_that_syncs_each_file_gets_no_rename_before_sync() {
    if !have("perl") {
        return;
    }
    let Some(dir) = durable_scratch() else { return };
    let d = dir.path().canonicalize().unwrap();
    let script = d.join("sync.pl");
    std::fs::write(
        &script,
        "use IO::Handle;\nchdir $ARGV[0] or die;\nfor my $i (1..50) {\n  \
         open(my $f, '>', 'cfg.tmp') or die;\n  print $f \"n = $i\\n\";\n  \
         $f->flush; $f->sync or die;\n  close($f) or die;\n  \
         rename('cfg.tmp', 'cfg.json') or die;\n}\n",
    )
    .unwrap();
    let words = [
        "perl",
        &script.display().to_string(),
        &d.display().to_string(),
    ];
    let claims = same_under_both(&d, &words, || clear(&d, "sync.pl"));
    assert_eq!(
        claims,
        [(FindingKind::UnsyncedDirectory, "cfg.json".to_string(), 1)],
        "{claims:?}"
    );
    // The 50 files at cfg.tmp: each written once and synced once, counted per call.
    for choice in backends() {
        clear(&d, "sync.pl");
        let r = report(choice, &words);
        let tmp = d.join("cfg.tmp").display().to_string();
        let t = r.groups.iter().find(|t| t.path == tmp);
        let t = t.unwrap_or_else(|| panic!("{choice}: no {tmp}"));
        assert_eq!(
            (t.write.calls, t.syncs, t.opens),
            (50, 50, 50),
            "{choice}: {t:?}"
        );
    }
}

/// Renames of each old path (within `.git/`) by `strace -f` of `words`, or `None`
/// without strace.
fn strace_renames(words: &[&str], dir: &Path) -> Option<Vec<(String, u64)>> {
    let log = dir.join("strace.log");
    let ok = Process::new("strace")
        .args(["-f", "-qq", "-e", "trace=rename,renameat,renameat2", "-o"])
        .arg(&log)
        .args(words)
        .output()
        .ok()?
        .status
        .success();
    assert!(ok, "strace {words:?} failed");
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::remove_file(&log).unwrap();
    let mut counts: std::collections::BTreeMap<String, u64> = Default::default();
    for line in text.lines().filter(|l| l.contains(") = 0")) {
        if let Some(from) = line.split('"').nth(1) {
            // Within the repository: what follows `.git/`.
            let inside = from
                .rsplit_once(".git/")
                .map_or(from, |(_, p)| p)
                .to_string();
            *counts.entry(inside).or_default() += 1;
        }
    }
    Some(counts.into_iter().collect())
}

#[test]
fn git_commits_and_gc_get_the_same_findings_under_both_backends_counted_as_strace_counts() {
    if !have("git") {
        return;
    }
    let Some(dir) = durable_scratch() else { return };
    let d = dir.path().canonicalize().unwrap();
    let script = d.join("commits.sh");
    std::fs::write(
        &script,
        "set -e\ncd \"$1\"\nrm -rf r\ngit init -q r\ncd r\n\
         git config user.email t@example.com\ngit config user.name t\n\
         for i in $(seq 20); do echo $i > f$i; git add f$i; git commit -qm m$i; done\n\
         git gc -q\n",
    )
    .unwrap();
    let words = [
        "sh",
        &script.display().to_string(),
        &d.display().to_string(),
    ];
    let found = same_under_both(&d, &words, || clear(&d, "commits.sh"));
    let renamed = |name: &str| {
        found
            .iter()
            .find(|c| c.0 == FindingKind::RenameBeforeSync && c.1 == name)
            .map(|c| c.2)
    };
    // git add and git commit each replace the index through index.lock: 40 renames.
    assert_eq!(renamed("r/.git/index.lock"), Some(40), "{found:?}");
    assert_eq!(
        renamed("r/.git/refs/heads/master.lock"),
        Some(20),
        "{found:?}"
    );
    if let Some(counts) = strace_renames(&words, &d) {
        for (name, n) in [("index.lock", 40), ("refs/heads/master.lock", 20)] {
            let traced = counts.iter().find(|c| c.0 == name).map(|c| c.1);
            assert_eq!(traced, Some(n), "strace: {counts:?}");
        }
    } else {
        iolab_testkit::skip("strace is not installed: the counts are checked against git's own");
    }
    // Git's processes are git, though a shell script ran them.
    let r = report(Choice::Ptrace, &words);
    for f in r.findings.iter().filter(|f| f.kind.durability()) {
        assert_eq!(f.program, Program::Git, "{f:?}");
    }
    // The fix applied from outside: with core.fsync=all git syncs the index and the refs
    // before renaming them into place, and those findings go.
    let all = std::fs::read_to_string(&script).unwrap().replace(
        "git config user.name t\n",
        "git config user.name t\ngit config core.fsync all\n",
    );
    std::fs::write(&script, all).unwrap();
    let r = report(Choice::Ptrace, &words);
    let left = claims(&r, &d);
    for name in ["r/.git/index.lock", "r/.git/refs/heads/master.lock"] {
        assert!(
            !left
                .iter()
                .any(|c| c.0 == FindingKind::RenameBeforeSync && c.1 == name),
            "{left:?}"
        );
    }
}

#[test]
fn initdb_gets_the_same_findings_under_both_backends() {
    let initdb = ["/usr/local/bin/initdb", "/usr/lib/postgresql/15/bin/initdb"]
        .into_iter()
        .find(|p| Path::new(p).is_file());
    let Some(initdb) = initdb else {
        iolab_testkit::skip("PostgreSQL's initdb is not installed");
        return;
    };
    // initdb refuses root: as root, it runs as the postgres user.
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    if root && !have("runuser") {
        return;
    }
    if root
        && Process::new("id")
            .arg("postgres")
            .output()
            .is_ok_and(|o| !o.status.success())
    {
        iolab_testkit::skip("no postgres user to run initdb as");
        return;
    }
    let dir = iolab_testkit::public_scratch();
    let d = dir.path().canonicalize().unwrap();
    if Process::new("chmod").arg("777").arg(&d).status().is_err() {
        return;
    }
    let data = d.join("data").display().to_string();
    let mut words = if root {
        vec!["runuser", "-u", "postgres", "--"]
    } else {
        vec![]
    };
    words.extend([initdb, "-D", &data]);
    let claims = same_under_both(&d, &words, || clear(&d, ""));
    // initdb syncs the whole data folder at its end (its files and folders): no name is
    // left waiting for its folder's sync.
    assert!(
        claims.iter().all(|c| c.0 != FindingKind::UnsyncedDirectory),
        "{claims:?}"
    );
}
