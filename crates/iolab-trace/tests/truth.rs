//! Does the tracer tell the truth? Real programs nobody here wrote (sh, seq, wc, sed, git,
//! tar, cat, sqlite3, bash, dd, Python), each the case of a bug once reported against the
//! tracer: a file written then read taken for a rewrite, paths after a `cd` or relative to
//! a folder's descriptor, long paths, many files, SQLite's journal and folder syncs, a
//! shell's open per command, `O_DIRECT`, `sendfile` offsets, a tiny finding in a long run,
//! and estimates below what was observed. Under each backend that can run here; a program
//! that is missing, or a file system that refuses what a case needs, is skipped with the
//! reason. Behaviour only (counts, kinds, paths), never a time.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use iolab_testkit::corpus::text_file;
use iolab_testkit::trace::{self as kit, python};
use iolab_trace::backend::{Choice, Outcome};
use iolab_trace::engine;
use iolab_trace::launch::Command;
use iolab_trace::model::{Kind, Target};
use iolab_trace::report::Report;
use iolab_trace::rules::{Finding, FindingKind};

/// The backends that can trace here (ptrace where it can trace `true`); the skip line names
/// the others.
fn backends() -> Vec<Choice> {
    kit::backends([Choice::Bpf, Choice::Ptrace], engine::availability)
}

/// Whether `program` is on `PATH`; prints the skip line when it is not.
fn have(program: &str) -> bool {
    kit::have(program, Command::resolve)
}

/// Traces `w` with `choice` and reports, calibrating only when asked.
fn report(choice: Choice, w: &[&str], calibrate: bool) -> Report {
    let options = iolab_trace::Options {
        backend: choice,
        calibrate,
        ..iolab_trace::Options::default()
    };
    kit::locked(choice, w, |words| iolab_trace::trace(words, &options))
}

/// The target at `path` (canonical paths compared).
fn target<'a>(o: &'a Outcome, path: &Path) -> &'a Target {
    kit::target(o.backend, &o.trace.targets, |t| &t.path, path)
}

/// The findings of `kind` in `r`.
fn findings_of(r: &Report, kind: FindingKind) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.kind == kind).collect()
}

/// The findings on `path` (compared with its canonical form).
fn findings_on<'a>(r: &'a Report, path: &Path) -> Vec<&'a Finding> {
    let path = canonical(path);
    r.findings
        .iter()
        .filter(|f| Path::new(&f.path) == path)
        .collect()
}

fn kinds(r: &Report) -> Vec<(FindingKind, &str)> {
    r.findings
        .iter()
        .map(|f| (f.kind, f.path.as_str()))
        .collect()
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn text(path: &Path) -> String {
    path.display().to_string()
}

/// `git` with a fixed author, run in `dir`, which must succeed (under the traces' lock:
/// the ptrace backend reaps any child of this process).
fn git(dir: &Path, args: &[&str]) {
    let _guard = kit::lock();
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=iolab", "-c", "user.email=iolab@localhost"])
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Why `dir`'s file system refuses `O_DIRECT` (tmpfs does), if it does.
fn refuses_o_direct(dir: &Path) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let probe = dir.join("o-direct-probe");
    let opened = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_DIRECT)
        .open(&probe);
    let _ = std::fs::remove_file(&probe);
    opened.err().map(|e| {
        format!(
            "{} refuses O_DIRECT ({e}): no small-direct-writes to see",
            dir.display()
        )
    })
}

// The cases: each sets up its files in `dir`, traces its program with `choice` (with the
// calibration or without) and hands back the reports; none if its program is missing. The
// tests below check what each report says, and `estimates_never_fall_below_observation`
// checks the estimates of them all.

/// `seq` writes a file, then `wc -l` reads it.
fn written_then_read(choice: Choice, dir: &Path, calibrate: bool) -> Vec<Report> {
    let script = "cd \"$1\" && seq 1 100000 > f && wc -l f > /dev/null";
    let _ = std::fs::remove_file(dir.join("f"));
    vec![report(
        choice,
        &["sh", "-c", script, "sh", &text(dir)],
        calibrate,
    )]
}

/// `sed -i` on a 1 MiB CSV in `sub`, after a `cd` into it.
fn sed_after_cd(choice: Choice, dir: &Path, calibrate: bool) -> Vec<Report> {
    if !have("sed") {
        return Vec::new();
    }
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    text_file(&sub, "t.csv", 1 << 20);
    let script = "cd \"$1\" && cd sub && sed -i s/a/b/ t.csv";
    vec![report(
        choice,
        &["sh", "-c", script, "sh", &text(dir)],
        calibrate,
    )]
}

/// A repository with three files and one commit, in `dir/repo`.
fn repository(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    if !repo.join(".git").is_dir() {
        std::fs::create_dir_all(&repo).unwrap();
        git(&repo, &["init", "-q"]);
        for name in ["a", "b", "c"] {
            std::fs::write(repo.join(name), format!("{name}\n")).unwrap();
        }
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-q", "-m", "three files"]);
    }
    repo
}

/// The small files of [`tree`].
const TREE: [&str; 4] = ["top.txt", "a/b/file1", "a/b/file2", "a/b/file3"];

/// A tree of small files to archive, in `dir/tree`.
fn tree(dir: &Path) -> PathBuf {
    let tree = dir.join("tree");
    std::fs::create_dir_all(tree.join("a/b")).unwrap();
    for name in TREE {
        std::fs::write(tree.join(name), format!("{name}\n")).unwrap();
    }
    tree
}

/// Programs that open files relative to a folder's descriptor: `git -C`, `tar -C` making
/// an archive of a folder and extracting it into another. Reports in that order, the ones
/// whose program is missing left out.
fn relative_to_a_folder(choice: Choice, dir: &Path, calibrate: bool) -> Vec<Report> {
    let mut out = Vec::new();
    if have("git") {
        let repo = repository(dir);
        out.push(report(
            choice,
            &["git", "-C", &text(&repo), "status", "--short"],
            calibrate,
        ));
    }
    if have("tar") {
        let tree = tree(dir);
        let archive = dir.join("tree.tar");
        let into = dir.join("extracted");
        let _ = std::fs::remove_dir_all(&into);
        std::fs::create_dir_all(&into).unwrap();
        out.push(report(
            choice,
            &["tar", "-C", &text(&tree), "-cf", &text(&archive), "."],
            calibrate,
        ));
        out.push(report(
            choice,
            &["tar", "-C", &text(&into), "-xf", &text(&archive)],
            calibrate,
        ));
    }
    out
}

/// The folder of more than 202 bytes (ten nested folders) that [`deep_sed`] edits in.
fn deep_folder(dir: &Path) -> PathBuf {
    (0..10).fold(dir.to_path_buf(), |p, i| {
        p.join(format!("a-folder-with-a-long-name-{i:02}"))
    })
}

/// `sed -i` on a file in a folder whose path is more than 202 bytes long.
fn deep_sed(choice: Choice, dir: &Path, calibrate: bool) -> Vec<Report> {
    if !have("sed") {
        return Vec::new();
    }
    let deep = deep_folder(dir);
    std::fs::create_dir_all(&deep).unwrap();
    let file = text_file(&deep, "t.csv", 1 << 20);
    vec![report(
        choice,
        &["sed", "-i", "s/a/b/", &text(&file)],
        calibrate,
    )]
}

/// Files of [`many_files`].
const MANY: usize = 10_000;

fn many_name(i: usize) -> String {
    format!("f{i:05}")
}

/// `cat` of [`MANY`] small files, more than the 8 192 targets the tracer once kept.
fn many_files(choice: Choice, dir: &Path, calibrate: bool) -> Vec<Report> {
    let many = dir.join("many");
    if !many.is_dir() {
        std::fs::create_dir_all(&many).unwrap();
        for i in 0..MANY {
            std::fs::write(many.join(many_name(i)), format!("line {i}\n")).unwrap();
        }
    }
    let script = "cd \"$1\" && cat f* > /dev/null";
    vec![report(
        choice,
        &["sh", "-c", script, "sh", &text(&many)],
        calibrate,
    )]
}

/// sqlite3 in autocommit: a table, then 500 INSERT statements, one transaction each, read
/// from a file.
fn sqlite_autocommit(choice: Choice, dir: &Path, calibrate: bool) -> Vec<Report> {
    if !have("sqlite3") {
        return Vec::new();
    }
    let db = dir.join("db");
    for name in ["db", "db-journal"] {
        let _ = std::fs::remove_file(dir.join(name));
    }
    let mut sql = String::from("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);\n");
    for i in 0..500 {
        sql.push_str(&format!("INSERT INTO t(v) VALUES('row {i}');\n"));
    }
    let statements = dir.join("statements.sql");
    std::fs::write(&statements, sql).unwrap();
    vec![report(
        choice,
        &[
            "sh",
            "-c",
            "sqlite3 \"$1\" < \"$2\"",
            "sh",
            &text(&db),
            &text(&statements),
        ],
        calibrate,
    )]
}

/// Lines that [`bash_appends`] appends, one command each.
const APPENDS: u64 = 2000;

/// A bash loop that appends each line with a redirection of its own.
fn bash_appends(choice: Choice, dir: &Path, calibrate: bool) -> Vec<Report> {
    if !have("bash") {
        return Vec::new();
    }
    let _ = std::fs::remove_file(dir.join("f"));
    // Standard output is /dev/null whatever the test's is: the shell saves and restores
    // it around each redirected echo.
    let script = format!(
        "cd \"$1\" && exec > /dev/null && for i in $(seq {APPENDS}); do echo $i >> f; done"
    );
    vec![report(
        choice,
        &["bash", "-c", &script, "bash", &text(dir)],
        calibrate,
    )]
}

/// `dd` writing 2000 blocks of 512 bytes with `O_DIRECT`; none where the folder's file
/// system refuses `O_DIRECT`.
fn direct_dd(choice: Choice, dir: &Path, calibrate: bool) -> Vec<Report> {
    if let Some(reason) = refuses_o_direct(dir) {
        iolab_testkit::skip(reason);
        return Vec::new();
    }
    let out = dir.join("direct");
    let _ = std::fs::remove_file(&out);
    vec![report(
        choice,
        &[
            "dd",
            "if=/dev/zero",
            &format!("of={}", out.display()),
            "bs=512",
            "count=2000",
            "oflag=direct",
            "status=none",
        ],
        calibrate,
    )]
}

/// The file [`sendfile_loops`] sends.
const SENT: u64 = 32 << 20;

/// Python sending a 32 MiB file to `/dev/null` 16 KiB at a time with `os.sendfile`: at
/// increasing explicit offsets, then with `offset=None` (the file's own position).
fn sendfile_loops(choice: Choice, dir: &Path, calibrate: bool) -> Vec<Report> {
    let Some(python) = python() else {
        return Vec::new();
    };
    let input = dir.join("sent");
    if std::fs::metadata(&input).map(|m| m.len()).ok() != Some(SENT) {
        text_file(dir, "sent", SENT as usize);
    }
    let code = r#"
import os, sys
src = os.open(sys.argv[1], os.O_RDONLY)
out = os.open("/dev/null", os.O_WRONLY)
if sys.argv[2] == "offset":
    offset, size = 0, os.fstat(src).st_size
    while offset < size:
        offset += os.sendfile(out, src, offset, 16384)
else:
    while os.sendfile(out, src, None, 16384):
        pass
"#;
    ["offset", "none"]
        .into_iter()
        .map(|how| report(choice, &[python, "-c", code, &text(&input), how], calibrate))
        .collect()
}

/// Python writing 1500 lines of 2 bytes into a pipe of its own that nobody reads (3000
/// bytes fit), then waiting 2 s in a read (its child holds the other end while it sleeps):
/// a tiny finding in a long run, of a shape no load changes (no reader to wake, to keep up
/// or not with each write, and make a finding of its own), long by its own calls (ptrace
/// counts a run's user time and time in calls, not a sleep outside them).
fn tiny_in_a_long_run(choice: Choice, _dir: &Path, calibrate: bool) -> Vec<Report> {
    let Some(python) = python() else {
        return Vec::new();
    };
    let code = r#"
import os, time
r, w = os.pipe()
for _ in range(1500):
    os.write(w, b'x\n')
done_r, done_w = os.pipe()
if os.fork() == 0:
    time.sleep(2)
    os._exit(0)
os.close(done_w)
assert os.read(done_r, 1) == b''
os.wait()
"#;
    vec![report(choice, &[python, "-c", code], calibrate)]
}

/// Python making a file, deleting it, then making another, which the file system gives the
/// freed inode number, and writing it 2000 times, 10 bytes each. The inode numbers of both
/// go into `dir/reuse/inodes`.
fn inode_reused(choice: Choice, dir: &Path, calibrate: bool) -> Vec<Report> {
    let Some(python) = python() else {
        return Vec::new();
    };
    let reuse = dir.join("reuse");
    let _ = std::fs::remove_dir_all(&reuse);
    std::fs::create_dir_all(&reuse).unwrap();
    let code = r#"
import os, sys
os.chdir(sys.argv[1])
first = os.open("first", os.O_WRONLY | os.O_CREAT)
os.write(first, b"x")
inodes = [os.fstat(first).st_ino]
os.close(first)
os.unlink("first")
second = os.open("second", os.O_WRONLY | os.O_CREAT)
inodes.append(os.fstat(second).st_ino)
for _ in range(2000):
    os.write(second, b"y" * 10)
os.close(second)
with open("inodes", "w") as f:
    f.write(" ".join(map(str, inodes)))
"#;
    vec![report(
        choice,
        &[python, "-c", code, &text(&reuse)],
        calibrate,
    )]
}

/// A case: sets up its files in a folder, traces its program with a backend, with the
/// calibration or without, and hands back the reports.
type Case = fn(Choice, &Path, bool) -> Vec<Report>;

/// Every case, for the calibration's test.
const CASES: [(&str, Case); 11] = [
    ("written then read", written_then_read),
    ("sed after cd", sed_after_cd),
    ("relative to a folder", relative_to_a_folder),
    ("deep sed", deep_sed),
    ("many files", many_files),
    ("sqlite autocommit", sqlite_autocommit),
    ("bash appends", bash_appends),
    ("direct dd", direct_dd),
    ("sendfile loops", sendfile_loops),
    ("tiny in a long run", tiny_in_a_long_run),
    ("inode reused", inode_reused),
];

#[test]
fn a_file_written_then_read_is_no_rewrite() {
    let dir = iolab_testkit::scratch();
    for choice in backends() {
        for r in written_then_read(choice, dir.path(), false) {
            let f = dir.path().join("f");
            assert_eq!(r.exit_code(), 0, "{choice}");
            assert!(
                findings_of(&r, FindingKind::WholeFileRewrite).is_empty(),
                "{choice}: {:?}",
                kinds(&r)
            );
            // The trace did see the file written whole, then read whole.
            let t = target(&r.outcome, &f);
            assert_eq!(t.write.bytes, 588_895, "{choice}");
            assert_eq!(t.read.bytes, 588_895, "{choice}");
        }
    }
}

#[test]
fn a_sed_after_cd_names_the_file_where_it_is() {
    let dir = iolab_testkit::scratch();
    for choice in backends() {
        for r in sed_after_cd(choice, dir.path(), false) {
            let file = canonical(&dir.path().join("sub/t.csv"));
            let rewrites = findings_of(&r, FindingKind::WholeFileRewrite);
            assert_eq!(rewrites.len(), 1, "{choice}: {:?}", kinds(&r));
            assert_eq!(Path::new(&rewrites[0].path), file, "{choice}");
            // No file or folder is named relative to anything.
            for t in &r.outcome.trace.targets {
                if matches!(t.kind, Some(Kind::File | Kind::Directory)) {
                    assert!(t.path.starts_with('/'), "{choice}: {}", t.path);
                }
            }
        }
    }
}

#[test]
fn files_opened_relative_to_a_folder_carry_their_whole_path() {
    let dir = iolab_testkit::scratch();
    for choice in backends() {
        for r in relative_to_a_folder(choice, dir.path(), false) {
            // git reads its repository's files; tar -c the tree's, tar -x writes them.
            let (folder, names) = if r.command[0] == "git" {
                ("repo", &[".git/HEAD", ".git/config", ".git/index"][..])
            } else if r.command.iter().any(|w| w == "-cf") {
                ("tree", &TREE[..])
            } else {
                ("extracted", &TREE[..])
            };
            let folder = canonical(&dir.path().join(folder));
            let seen: HashSet<PathBuf> = r
                .outcome
                .trace
                .targets
                .iter()
                .map(|t| PathBuf::from(&t.path))
                .collect();
            for name in names {
                let want = folder.join(name);
                assert!(
                    seen.contains(&want),
                    "{choice}: {}: {want:?} in {seen:?}",
                    r.display
                );
            }
        }
    }
}

#[test]
fn a_folder_path_over_202_bytes_comes_out_whole() {
    let dir = iolab_testkit::scratch();
    let folder = deep_folder(dir.path());
    assert!(text(&folder).len() >= 202, "{}", folder.display());
    for choice in backends() {
        for r in deep_sed(choice, dir.path(), false) {
            let file = canonical(&folder.join("t.csv"));
            let rewrites = findings_of(&r, FindingKind::WholeFileRewrite);
            assert_eq!(rewrites.len(), 1, "{choice}: {:?}", kinds(&r));
            assert_eq!(Path::new(&rewrites[0].path), file, "{choice}");
            assert!(!rewrites[0].path.contains('…'), "{choice}");
        }
    }
}

#[test]
fn ten_thousand_files_are_all_targets_and_nothing_is_lost() {
    let dir = iolab_testkit::scratch();
    for choice in backends() {
        for r in many_files(choice, dir.path(), false) {
            let many = canonical(&dir.path().join("many"));
            let trace = &r.outcome.trace;
            let seen: HashSet<&str> = trace.targets.iter().map(|t| t.path.as_str()).collect();
            let missing: Vec<String> = (0..MANY)
                .map(|i| text(&many.join(many_name(i))))
                .filter(|p| !seen.contains(p.as_str()))
                .collect();
            assert!(
                missing.is_empty(),
                "{choice}: {} of {MANY} files are no target, such as {:?}",
                missing.len(),
                &missing[..missing.len().min(3)]
            );
            assert!(trace.lost.is_none(), "{choice}: {:?}", trace.lost);
            let said: Vec<&String> = trace
                .warnings
                .iter()
                .chain(&r.notes)
                .filter(|w| {
                    let w = w.to_lowercase();
                    ["lost", "incomplete", "could not", "not kept"]
                        .iter()
                        .any(|word| w.contains(word))
                })
                .collect();
            assert!(said.is_empty(), "{choice}: {said:?}");
        }
    }
}

#[test]
fn sqlite_in_autocommit_syncs_its_folder_and_its_journal_is_one_finding() {
    let dir = iolab_testkit::scratch();
    for choice in backends() {
        for r in sqlite_autocommit(choice, dir.path(), false) {
            assert_eq!(r.exit_code(), 0, "{choice}");
            let folder = findings_on(&r, dir.path());
            assert_eq!(folder.len(), 1, "{choice}: {:?}", kinds(&r));
            let f = folder[0];
            assert_eq!(f.kind, FindingKind::SyncPerRecord, "{choice}");
            assert_eq!(f.target_kind, Kind::Directory, "{choice}");
            assert!(f.measured_s > 0.0, "{choice}: {f:?}");
            // The journal is made anew for each transaction: one finding all the same.
            let journal = r
                .findings
                .iter()
                .filter(|f| f.path.ends_with("/db-journal"))
                .collect::<Vec<_>>();
            assert_eq!(journal.len(), 1, "{choice}: {:?}", kinds(&r));
            assert_eq!(journal[0].kind, FindingKind::SyncPerRecord, "{choice}");
            // Its header read again and again at one offset, and the journal's empty
            // reads, are not random reads.
            assert!(
                findings_of(&r, FindingKind::RandomReads).is_empty(),
                "{choice}: {:?}",
                kinds(&r)
            );
        }
    }
}

/// Under ptrace this fails until the ptrace backend counts `dup2` and `fcntl` on the
/// descriptor's target, as bpf does (it counts them apart, on no target).
#[test]
fn a_bash_append_per_line_is_open_churn_with_the_shells_save_and_restore() {
    let dir = iolab_testkit::scratch();
    for choice in backends() {
        for r in bash_appends(choice, dir.path(), false) {
            let f = dir.path().join("f");
            let churn: Vec<&Finding> = findings_on(&r, &f)
                .into_iter()
                .filter(|x| x.kind == FindingKind::OpenChurn)
                .collect();
            assert_eq!(churn.len(), 1, "{choice}: {:?}", kinds(&r));
            let t = target(&r.outcome, &f);
            assert_eq!(t.opens, APPENDS, "{choice}");
            // The file's own opens, closes and dups, and as many again on standard
            // output: the shell saves it before each redirected echo and restores it after.
            let own: u64 = t
                .calls
                .iter()
                .filter(|(sys, _)| {
                    ["openat", "openat2", "close", "dup", "dup2", "dup3", "fcntl"]
                        .contains(&sys.name())
                })
                .map(|(_, c)| c.calls)
                .sum();
            assert!(
                churn[0].calls > own + APPENDS,
                "{choice}: the shell's save and restore of stdout are not counted: {} calls, {own} on the file: {}",
                churn[0].calls,
                churn[0].evidence
            );
            assert!(
                churn[0]
                    .evidence
                    .contains("saving and restoring a descriptor"),
                "{choice}: {}",
                churn[0].evidence
            );
        }
    }
}

#[test]
fn dd_with_o_direct_gets_small_direct_writes_and_keeps_o_direct() {
    let dir = iolab_testkit::scratch();
    for choice in backends() {
        for r in direct_dd(choice, dir.path(), false) {
            let out = dir.path().join("direct");
            let on: Vec<FindingKind> = findings_on(&r, &out).iter().map(|f| f.kind).collect();
            assert_eq!(on, [FindingKind::SmallDirectWrites], "{choice}");
            let f = findings_on(&r, &out)[0];
            assert_eq!((f.calls, f.bytes), (2000, 1_024_000), "{choice}");
            assert!(f.fix.contains("O_DIRECT"), "{choice}: {}", f.fix);
        }
    }
}

/// Under ptrace this fails until the ptrace backend reads a copy's offsets (it places
/// every `sendfile` at offset 0, so they come out repeated, not sequential).
#[test]
fn sendfile_at_increasing_offsets_is_sequential_not_random() {
    let dir = iolab_testkit::scratch();
    for choice in backends() {
        for (r, how) in sendfile_loops(choice, dir.path(), false)
            .iter()
            .zip(["offset", "None"])
        {
            assert_eq!(r.exit_code(), 0, "{choice}: offset={how}");
            assert!(
                findings_of(r, FindingKind::RandomReads).is_empty(),
                "{choice}: offset={how}: {:?}",
                kinds(r)
            );
            let t = target(&r.outcome, &dir.path().join("sent"));
            assert_eq!(t.read.bytes, SENT, "{choice}: offset={how}");
            assert_eq!(t.read.sequential, SENT / 16384, "{choice}: offset={how}");
            assert_eq!(t.read.scattered(), 0, "{choice}: offset={how}");
        }
    }
}

/// As `iolab trace` runs by default, with the calibration; and without it under bpf, whose
/// times are the calls' own (under ptrace each call's time holds a round trip through the
/// tracer, so that uncalibrated the writes may come to 2% of the run). The one finding is
/// the pipe's: in the JSON, not in the summary, which counts it.
#[test]
fn a_tiny_finding_in_a_long_run_is_only_in_the_json() {
    for choice in backends() {
        let mut reports = tiny_in_a_long_run(choice, Path::new("."), true);
        if choice == Choice::Bpf {
            reports.extend(tiny_in_a_long_run(choice, Path::new("."), false));
        }
        for r in reports {
            let what = format!("{choice} (calibrated: {})", r.sources.calibration.is_some());
            assert_eq!(r.exit_code(), 0, "{what}");
            let [f] = r.findings.as_slice() else {
                panic!("{what}: {:?}", kinds(&r));
            };
            let shape = (f.kind, f.calls, f.bytes);
            assert_eq!(shape, (FindingKind::SmallWrites, 1500, 3000), "{what}");
            assert!(f.path.starts_with("pipe:["), "{what}: {}", f.path);
            assert!(!f.shown, "{what}: shown: {f:?}");
            let text = iolab_trace::report::summary::render(&r);
            assert!(!text.contains("small-writes"), "{what}: {text}");
            assert!(
                text.contains("no findings: none of the write-ups' pitfalls in these calls\n  (1 finding that would save under 2% of the run each (in --json))"),
                "{what}: {text}"
            );
            let json = &iolab_trace::report::json::render(&r)["findings"];
            assert_eq!(json.as_array().map(Vec::len), Some(1), "{json}");
            assert_eq!(json[0]["kind"], "small-writes", "{json}");
            assert_eq!(json[0]["shown"], false, "{json}");
        }
    }
}

/// Under ptrace this fails until its backend tells a reused inode number from the deleted
/// file's (it counts the second file's writes on the first, under the first's name).
#[test]
fn a_file_made_with_a_freed_inode_number_is_not_the_deleted_file() {
    let dir = iolab_testkit::scratch();
    let reuse = dir.path().join("reuse");
    for choice in backends() {
        for r in inode_reused(choice, dir.path(), false) {
            let inodes = std::fs::read_to_string(reuse.join("inodes")).unwrap();
            let (first, second) = inodes.split_once(' ').unwrap();
            if first != second {
                iolab_testkit::skip(format!(
                    "{} gave the new file another inode number ({inodes})",
                    reuse.display()
                ));
                return;
            }
            let second = target(&r.outcome, &reuse.join("second"));
            assert_eq!(
                (second.opens, second.write.calls, second.write.bytes),
                (1, 2000, 20_000),
                "{choice}"
            );
            let first = reuse.canonicalize().unwrap().join("first");
            let first = r
                .outcome
                .trace
                .targets
                .iter()
                .find(|t| Path::new(&t.path) == first)
                .unwrap_or_else(|| panic!("{choice}: no target {}", first.display()));
            assert_eq!((first.opens, first.write.calls), (1, 1), "{choice}");
            let on: Vec<(FindingKind, &str)> = kinds(&r)
                .into_iter()
                .filter(|(_, path)| path.contains("/reuse/"))
                .collect();
            let want = text(&reuse.canonicalize().unwrap().join("second"));
            assert_eq!(on, [(FindingKind::SmallWrites, want.as_str())], "{choice}");
        }
    }
}

/// The estimates of `f` against what was observed: a number, never below what the calls
/// were measured to take, and a saving no larger than the cost.
fn check_estimates(f: &Finding) -> Result<(), String> {
    let mut numbers = vec![("measured_s", f.measured_s), ("estimated_s", f.estimated_s)];
    numbers.extend(f.estimated_fixed_s.map(|x| ("estimated_fixed_s", x)));
    numbers.extend(f.saving_s.map(|x| ("saving_s", x)));
    numbers.extend(f.share.map(|x| ("share", x)));
    for (name, x) in numbers {
        if !x.is_finite() || x < 0.0 {
            return Err(format!("{name} is {x}"));
        }
    }
    if f.estimated_s < f.measured_s {
        return Err(format!(
            "estimated {} s, below the measured {} s",
            f.estimated_s, f.measured_s
        ));
    }
    if let Some(saving) = f.saving_s
        && saving > f.estimated_s
    {
        return Err(format!(
            "saves {saving} s of an estimated {} s",
            f.estimated_s
        ));
    }
    Ok(())
}

#[test]
fn estimates_never_fall_below_observation() {
    let dir = iolab_testkit::scratch();
    for choice in backends() {
        let mut findings = 0;
        for (name, case) in CASES {
            for r in case(choice, dir.path(), true) {
                for f in &r.findings {
                    findings += 1;
                    if let Err(e) = check_estimates(f) {
                        panic!("{choice}: {name}: {} on {}: {e}: {f:?}", f.kind, f.path);
                    }
                }
            }
        }
        assert!(findings > 0, "{choice}: no finding to check");
    }
}
