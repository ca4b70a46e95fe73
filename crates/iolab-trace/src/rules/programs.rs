//! Each finding's fix in the terms of the program that made its calls
//! ([`crate::program`]): a Python, sqlite3, node, shell, `dd`, `tar`, C, Go or Java fix
//! where one is known; `None` keeps iolab's (the fix for Rust and unknown programs). The
//! table: docs/trace.md, "The program's own fix".
//!
//! Some fixes depend on what the trace saw beyond the program's name, which the rules say
//! in the finding's evidence ([`writes::INHERITED`], [`writes::LOGGING`], …): whether
//! Python writes its standard output (`-u` matters) or a file it opened (`-u` does not),
//! whether it loaded `logging`, whether node's opens replace the file or append to it.
//! SQLite's findings, recognised by its files whatever program links it, get SQLite's fix
//! from the rules ([`sqlite_fix`]), kept for every program.

use super::writes;
use crate::model::Kind;
use crate::program::{Program, Recognised};
use crate::rules::{Finding, FindingKind};

/// SQLite's `synchronous` levels, by the syncs a transaction makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// No sync.
    Off,
    /// The journal, the folder and the database once each.
    Normal,
    /// The journal twice, the folder and the database once (SQLite's default).
    Full,
    /// As `FULL`, and the folder again once the journal is deleted.
    Extra,
}

impl Level {
    /// Its name in `PRAGMA synchronous=…`.
    pub fn name(self) -> &'static str {
        match self {
            Level::Off => "OFF",
            Level::Normal => "NORMAL",
            Level::Full => "FULL",
            Level::Extra => "EXTRA",
        }
    }
}

/// How SQLite's fix starts ([`sqlite_fix`]): a finding whose fix starts so keeps it.
pub const SQLITE: &str = "SQLite in autocommit";

/// The fix for `finding` in `r`'s terms, when its program has its own; `None` keeps the
/// generic fix (iolab's, in plain words, or SQLite's).
pub fn fix(r: &Recognised, finding: &Finding) -> Option<String> {
    // SQLite's own fix, and a map's msync per record (the same in every language), stay.
    if finding.fix.starts_with(SQLITE) || finding.fix.starts_with(super::MSYNC_FIX) {
        return None;
    }
    python_fix(r, finding)
        .or_else(|| node_fix(r, finding))
        .or_else(|| speed_fix(r, finding))
        .or_else(|| other_fix(r, finding))
}

/// SQLite's fix for a database in autocommit (`transactions` statements, each its own
/// transaction) at `level`: one transaction, and what it saves there; or WAL.
pub fn sqlite_fix(level: Level, transactions: u64) -> String {
    let each = match level {
        Level::Off => {
            " (at synchronous=OFF nothing is synced: the journal's making and deleting, the \
             locks and SQLite's own work around them are what a transaction saves)"
        }
        Level::Normal => {
            ", and syncs the journal, the folder and the database once each (3 syncs per \
             statement at synchronous=NORMAL)"
        }
        Level::Full => {
            ", and syncs the journal twice, the folder and the database (4 syncs per \
             statement at synchronous=FULL, SQLite's default)"
        }
        Level::Extra => {
            ", and syncs the journal twice, the folder twice (again once the journal is \
             deleted) and the database (5 syncs per statement at synchronous=EXTRA)"
        }
    };
    let wal = match level {
        Level::Off => {
            "`PRAGMA journal_mode=WAL;` (a commit appends to one WAL file instead of making a journal)"
        }
        _ => {
            "`PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;` (a commit appends to the WAL and syncs nothing until a checkpoint: a crash may lose the last transactions, never the database)"
        }
    };
    format!(
        "{SQLITE} makes each statement a transaction ({transactions} here), and each makes its \
         rollback journal, writes it, deletes it, and takes and drops the database's locks{each}: \
         put the statements in one transaction, `BEGIN; … COMMIT;` (Python's sqlite3: one \
         `con.commit()` after the loop, not one per row), and that happens once; or {wal}"
    )
}

/// Python's fixes for its writes: `-u` matters only for its standard output and error; a
/// `logging.FileHandler` flushes each record.
fn python_fix(r: &Recognised, finding: &Finding) -> Option<String> {
    if r.program != Program::Python || finding.kind != FindingKind::SmallWrites {
        return None;
    }
    let file = finding.target_kind == Kind::File;
    let stdout = !file || finding.evidence.contains(writes::INHERITED);
    if file && finding.evidence.contains(writes::LOGGING) {
        return Some(
            "a `logging.FileHandler` flushes after every record (its `emit` calls `flush()`): \
             one `write` per record. Give it a handler that does not: `class \
             BufferedFileHandler(logging.FileHandler): def flush(self): pass` (records go out \
             in 8 KiB blocks, and at `close()` and `logging.shutdown()`), or a \
             `logging.StreamHandler` subclass with that `flush` over `open(path, 'a', \
             buffering=1 << 16)`; a crash or `kill -9` loses the records still buffered. A \
             `logging.handlers.MemoryHandler(capacity, target=logging.FileHandler(path))` \
             alone does not help: it hands its records to the FileHandler one by one, each \
             flushed. `-u` and `PYTHONUNBUFFERED` change only stdout and stderr"
                .into(),
        );
    }
    if r.unbuffered && stdout {
        return Some(
            "drop `-u` (and `PYTHONUNBUFFERED`): Python then writes its output in 8 KiB blocks; \
             for a file, `open(path, 'a', buffering=1 << 16)`, and no `flush()` after each line"
                .into(),
        );
    }
    let own = if r.unbuffered {
        " (`-u` and `PYTHONUNBUFFERED` change only stdout and stderr, not a file Python opens)"
    } else {
        ""
    };
    Some(format!(
        "write through a larger buffer and do not flush per line: `open(path, 'a', \
         buffering=1 << 16)`, or collect lines and `f.writelines(batch)`; `print(..., \
         flush=True)` or `f.flush()` in a loop writes every line on its own{own}"
    ))
}

/// node's fixes for its `fs` calls: fewer, larger writes, keeping a replace a replace.
fn node_fix(r: &Recognised, finding: &Finding) -> Option<String> {
    let churn_or_small = matches!(
        finding.kind,
        FindingKind::SmallWrites | FindingKind::OpenChurn
    );
    if r.program != Program::Node || !churn_or_small || finding.target_kind != Kind::File {
        return None;
    }
    let e = &finding.evidence;
    if e.contains(writes::TRUNCATED) {
        return Some(
            "each record opens the file with O_TRUNC and writes it whole (`fs.writeFileSync(path, \
             data)` per record, or a temporary file written and renamed over it): write it once, \
             with the last contents, after the loop (or once per batch), and keep it a replace \
             (`fs.writeFileSync`, or a temporary file renamed over it) — never an append \
             (`flags: 'a'`): a reader, or a crash, must never find half a file"
                .into(),
        );
    }
    if e.contains(writes::APPENDED) || finding.kind == FindingKind::OpenChurn {
        return Some(
            "open a stream once, `const out = fs.createWriteStream(path, { flags: 'a', \
             highWaterMark: 1 << 16 })`, and `out.write(line)`, instead of `fs.appendFileSync` per \
             record (it opens, writes and closes the file each time)"
                .into(),
        );
    }
    Some(
        "collect the records and write them together: `fs.writeSync(fd, lines.join(''))` once \
         (or per batch of 64 KiB), not `fs.writeSync(fd, line)` per record; or a stream, \
         `fs.createWriteStream(path, { flags, highWaterMark: 1 << 16 })` with the flags the \
         file is opened with now (`'w'` for a file it replaces, `'a'` to append: a replace \
         must stay a replace)"
            .into(),
    )
}

/// The fixes of the findings about time spent in reads, writes, opens and syncs.
fn speed_fix(r: &Recognised, finding: &Finding) -> Option<String> {
    let to_file = finding.target_kind == Kind::File;
    let s = |text: &str| Some(text.to_string());
    match (r.program, finding.kind) {
        (Program::Python, FindingKind::OpenChurn) => s(
            "open the file once, outside the loop (`with open(path, 'a', buffering=1 << 16) as f:` \
             around it), not per record",
        ),
        (Program::Python, FindingKind::SyncPerRecord) => s(
            "call `os.fsync(f.fileno())` once per batch of records (group commit), not after each",
        ),
        (Program::Python, FindingKind::SmallReads) => s(
            "read in large blocks: `open(path, 'rb', buffering=1 << 16)` and `f.read(1 << 16)`; \
             `for line in f` on a buffered file reads in blocks already",
        ),
        (Program::Python, FindingKind::RandomReads) => s(
            "map the file and advise it: `m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)`; \
             `m.madvise(mmap.MADV_RANDOM)`, or keep `os.pread` and read whole blocks",
        ),
        (
            Program::Sqlite3,
            FindingKind::SyncPerRecord | FindingKind::SmallWrites | FindingKind::OpenChurn,
        ) => s(
            "put the statements in one transaction, `BEGIN; … COMMIT;` (one journal and its syncs \
             per transaction instead of per statement), or `PRAGMA journal_mode=WAL; PRAGMA \
             synchronous=NORMAL;` (syncs at checkpoints; a crash may lose the last transactions, \
             never the database)",
        ),
        (Program::Node, FindingKind::SmallWrites) if !to_file => s(
            "join the lines and write them together (`process.stdout.write(lines.join(''))`), \
             not one `write` or `console.log` per line",
        ),
        (Program::Node, FindingKind::SyncPerRecord) => {
            s("call `fs.fsyncSync(fd)` once per batch of records, not after each")
        }
        (Program::Shell, FindingKind::OpenChurn) => s(
            "redirect once, outside the loop: `while …; do echo …; done >> FILE` (each `echo … >> \
             FILE` opens, writes and closes the file)",
        ),
        (Program::Shell, FindingKind::SmallWrites) => s(
            "the shell writes each `echo`/`printf` on its own: redirect the whole loop once \
             (`done >> FILE`), or let one program make the lines (`seq`, `printf '%s\\n' …`, `awk`)",
        ),
        (Program::Dd, FindingKind::SmallWrites | FindingKind::SmallReads) => s(
            "give `dd` a larger block, `dd bs=1M …`: each of its reads and writes moves `bs` bytes \
             (512 by default)",
        ),
        (Program::Tar, FindingKind::SmallWrites | FindingKind::SmallReads) => {
            s("give `tar` a larger record: `-b 2048` (1 MiB; its default is 20 × 512 bytes)")
        }
        (Program::CStdio, FindingKind::SmallWrites) => s(
            "give the stream a full buffer, `setvbuf(f, NULL, _IOFBF, 1 << 16)` before its first \
             write (stdout to a terminal is line-buffered, stderr unbuffered), write with \
             `fwrite`, and drop the `fflush` after each record; a loop of `write(2)` calls: \
             gather the records in a 64 KiB buffer and write it whole",
        ),
        (Program::CStdio, FindingKind::SmallReads) => s(
            "read through a full buffer, `setvbuf(f, NULL, _IOFBF, 1 << 16)`, or `fread`/`read` \
             64 KiB at a time",
        ),
        (Program::CStdio, FindingKind::SyncPerRecord) => s(
            "`fflush` and `fdatasync(fileno(f))` once per batch of records (group commit), not \
             after each",
        ),
        (Program::Go, FindingKind::SmallWrites) => {
            s("wrap the file in `w := bufio.NewWriterSize(f, 1<<16)` and `defer w.Flush()`")
        }
        (Program::Go, FindingKind::SmallReads) => s("read through `bufio.NewReaderSize(f, 1<<16)`"),
        (Program::Java, FindingKind::SmallWrites) => s(
            "wrap the stream: `new BufferedOutputStream(new FileOutputStream(path, true), 1 << 16)`",
        ),
        (Program::Java, FindingKind::SmallReads) => {
            s("wrap the stream: `new BufferedInputStream(new FileInputStream(path), 1 << 16)`")
        }
        _ => None,
    }
}

/// The fixes of the durability findings and the blind spots (lookups, faults).
fn other_fix(r: &Recognised, finding: &Finding) -> Option<String> {
    if let Some(fix) = durability_fix(r.program, finding.kind) {
        return Some(fix);
    }
    let s = |text: &str| Some(text.to_string());
    match (r.program, finding.kind) {
        (Program::Git, FindingKind::RenameBeforeSync | FindingKind::RewriteInPlace) => {
            Some(git_fix(finding))
        }
        (Program::Python, FindingKind::FailedOpens) => s(
            "put the folders that hold the imported modules first on `sys.path` (or trim \
             `PYTHONPATH`): each import probes every folder before it for several suffixes",
        ),
        (Program::Python, FindingKind::StatStorm) => s(
            "keep what `os.stat`/`os.path.exists` answered (or walk with `os.scandir`, whose \
             entries carry their type) instead of asking again per use",
        ),
        (Program::Python, FindingKind::MmapFaults) => {
            s("advise the map before reading it: `m.madvise(mmap.MADV_RANDOM)` (Python 3.8+)")
        }
        (Program::CStdio, FindingKind::MmapFaults) => {
            s("`madvise(addr, length, MADV_RANDOM)` on the map before the scattered reads")
        }
        _ => None,
    }
}

/// The fix of a file not synced before its rename or a rewrite (`RenameBeforeSync`,
/// `RewriteInPlace`) or of a folder not synced after a name changed in it
/// (`UnsyncedDirectory`), in `program`'s terms, where it needs nothing of a finding's
/// evidence (git's rename fix names its file: not here). `iolab crash` says its fixes so.
pub fn durability_fix(program: Program, kind: FindingKind) -> Option<String> {
    let s = |text: &str| Some(text.to_string());
    match (program, kind) {
        (Program::Git, FindingKind::UnsyncedDirectory) => s(
            "no git setting syncs a folder (`core.fsync` hardens files, git-config(1)): when \
             the commit must survive a crash, `sync -f .git` after the command (GNU coreutils \
             8.24+) makes its renames durable",
        ),
        (Program::Python, FindingKind::RenameBeforeSync | FindingKind::RewriteInPlace) => s(
            "write the new contents to a temporary file in the same folder, then `f.flush(); \
             os.fsync(f.fileno())` before `os.replace(tmp, path)`, then sync the folder: `fd = \
             os.open(folder, os.O_RDONLY); os.fsync(fd); os.close(fd)`",
        ),
        (Program::Python, FindingKind::UnsyncedDirectory) => s(
            "after making or renaming the file, sync its folder: `fd = os.open(folder, \
             os.O_RDONLY); os.fsync(fd); os.close(fd)`",
        ),
        (Program::Node, FindingKind::RenameBeforeSync | FindingKind::RewriteInPlace) => s(
            "write a temporary file, `fs.fsyncSync(fd)` it before `fs.renameSync(tmp, path)`, \
             then `fs.fsyncSync(fs.openSync(folder, 'r'))`",
        ),
        (Program::Node, FindingKind::UnsyncedDirectory) => {
            s("after the file is made or renamed: `fs.fsyncSync(fs.openSync(folder, 'r'))`")
        }
        (Program::Go, FindingKind::RenameBeforeSync | FindingKind::RewriteInPlace) => s(
            "write a temporary file, `f.Sync()` before `os.Rename(tmp, path)`, then open the \
             folder and `d.Sync()` it",
        ),
        (Program::Go, FindingKind::UnsyncedDirectory) => {
            s("after the file is made or renamed: `d, _ := os.Open(folder); d.Sync()`")
        }
        (Program::Shell, FindingKind::RenameBeforeSync | FindingKind::UnsyncedDirectory) => s(
            "sync before and after the rename: `sync FILE.tmp && mv FILE.tmp FILE && sync \
             FOLDER` (GNU coreutils 8.24+ syncs one file or folder given as an argument)",
        ),
        (Program::CStdio, FindingKind::RenameBeforeSync | FindingKind::RewriteInPlace) => s(
            "`fflush(f); fsync(fileno(f));` before `rename(tmp, path)`, then `int d = \
             open(folder, O_RDONLY | O_DIRECTORY); fsync(d); close(d);`",
        ),
        (Program::CStdio, FindingKind::UnsyncedDirectory) => s(
            "after the file is made or renamed: `int d = open(folder, O_RDONLY | O_DIRECTORY); \
             fsync(d); close(d);`",
        ),
        _ => None,
    }
}

/// The file a durability finding is about once in place: the path its evidence says it
/// was renamed to, else its own.
fn final_path(finding: &Finding) -> &str {
    const TO: &str = "renamed it to ";
    match finding.evidence.find(TO) {
        Some(at) => {
            let rest = &finding.evidence[at + TO.len()..];
            rest.split(' ').next().unwrap_or(rest)
        }
        None => &finding.path,
    }
}

/// The `core.fsync` component under which git (2.47) syncs the file at `rel` (a path in
/// its `.git` folder), or `None` where no component does (it writes the file with no sync
/// whatever `core.fsync` says); what the file is, for the fix.
pub fn git_component(rel: &str) -> (Option<&'static str>, &'static str) {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let hex2 = |d: &str| d.len() == 2 && d.bytes().all(|b| b.is_ascii_hexdigit());
    let loose = rel
        .strip_prefix("objects/")
        .and_then(|r| r.split_once('/'))
        .is_some_and(|(d, _)| hex2(d));
    if rel == "index" || rel.starts_with("index.") {
        (Some("index"), "the index")
    } else if rel.starts_with("refs/")
        || rel == "packed-refs"
        || rel == "HEAD"
        || rel == "ORIG_HEAD"
    {
        (Some("reference"), "a ref")
    } else if rel.starts_with("logs/") {
        (
            None,
            "a reflog (`git reflog expire`, run by `git gc`, rewrites it)",
        )
    } else if rel.starts_with("objects/pack/")
        && (name.ends_with(".pack") || name.starts_with("tmp_pack_"))
    {
        (Some("pack"), "a pack")
    } else if rel.starts_with("objects/pack/") {
        (
            Some("pack-metadata"),
            "a pack's index, reverse index or bitmap",
        )
    } else if rel.starts_with("objects/info/commit-graph") {
        (Some("commit-graph"), "the commit-graph")
    } else if loose {
        (Some("loose-object"), "a loose object")
    } else if rel == "gc.pid" {
        (
            None,
            "`git gc`'s lock (harmless: git gc takes it again when the process it names is gone)",
        )
    } else if rel == "info/refs" || rel == "objects/info/packs" {
        (
            None,
            "written for dumb-HTTP clients by `git update-server-info` (`git gc`'s repack runs it): run it again after a crash",
        )
    } else if rel == "config" {
        (None, "the repository's configuration")
    } else {
        (None, "a file of git's own")
    }
}

/// git's fix for a file renamed (or rewritten) before it was synced: the `core.fsync`
/// component that covers it, or that none does.
fn git_fix(finding: &Finding) -> String {
    let path = final_path(finding);
    let path = [".lock", ".new"]
        .iter()
        .find_map(|x| path.strip_suffix(x))
        .unwrap_or(path);
    let rel = path.rsplit_once("/.git/").map_or(path, |(_, r)| r);
    match git_component(rel) {
        (Some(c), what) => format!(
            "`{rel}` is {what}: git syncs it only under `core.fsync`'s `{c}` component, which \
             the default leaves out (with `core.fsync` unset git 2.47 syncs packs, their \
             metadata and the commit-graph; git-config(1) calls it `committed,-loose-object`): \
             `git config core.fsync {c}` adds it to the default (`all` syncs every component)"
        ),
        (None, what) => format!(
            "`{rel}` is {what}: no `core.fsync` component covers it — git 2.47 writes it and \
             renames it into place with no sync whatever `core.fsync` says; when it must \
             survive a crash, `sync -f .git` after the command (GNU coreutils 8.24+)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::recognise;
    use std::path::Path;

    fn finding(kind: FindingKind, target_kind: Kind, path: &str, evidence: &str) -> Finding {
        Finding {
            kind,
            path: path.into(),
            target_kind,
            calls: 1000,
            bytes: 0,
            evidence: evidence.into(),
            measured_s: 0.0,
            estimated_s: 0.0,
            estimated_fixed_s: None,
            saving_s: None,
            share: None,
            shown: true,
            basis: Vec::new(),
            warnings: Vec::new(),
            fix: "iolab's".into(),
            program: Program::Unknown,
            cli: String::new(),
            library: String::new(),
            risk: None,
            processes: Vec::new(),
            stacks: Vec::new(),
            keys: Vec::new(),
        }
    }

    fn python(unbuffered: bool) -> Recognised {
        let args: Vec<String> = if unbuffered {
            vec!["-u".into()]
        } else {
            vec![]
        };
        recognise(Path::new("/usr/bin/python3"), &args, false)
    }

    #[test]
    fn python_is_told_what_flushes_its_records() {
        let small =
            |kind, evidence: &str| finding(FindingKind::SmallWrites, kind, "/d/f", evidence);
        let logging = small(Kind::File, &format!("50000 writes; {}", writes::LOGGING));
        for unbuffered in [false, true] {
            let fix = fix(&python(unbuffered), &logging).unwrap();
            assert!(fix.contains("BufferedFileHandler"), "{fix}");
            assert!(fix.contains("MemoryHandler"), "{fix}");
            assert!(!fix.starts_with("drop `-u`"), "{fix}");
        }
        // -u matters for its standard output, a pipe or a file a shell opened for it...
        for f in [
            small(Kind::Pipe, "3000 writes"),
            small(Kind::File, &format!("3000 writes ({})", writes::INHERITED)),
        ] {
            assert!(fix(&python(true), &f).unwrap().starts_with("drop `-u`"));
        }
        // ... not for a file Python opened.
        let own = fix(&python(true), &small(Kind::File, "3000 writes")).unwrap();
        assert!(own.contains("change only stdout and stderr"), "{own}");
        assert!(own.contains("buffering=1 << 16"), "{own}");
    }

    #[test]
    fn node_keeps_a_replace_a_replace() {
        let node = recognise(Path::new("/usr/bin/node"), &[], false);
        let churn = |evidence: &str| finding(FindingKind::OpenChurn, Kind::File, "/d/f", evidence);
        let replace = fix(
            &node,
            &churn(&format!("2000 opens of the file, {}", writes::TRUNCATED)),
        )
        .unwrap();
        assert!(replace.contains("never an append"), "{replace}");
        let append = fix(
            &node,
            &churn(&format!("2000 opens of the file, {}", writes::APPENDED)),
        )
        .unwrap();
        assert!(
            append.contains("fs.createWriteStream(path, { flags: 'a'"),
            "{append}"
        );
        let small = finding(FindingKind::SmallWrites, Kind::File, "/d/f", "20000 writes");
        let once = fix(&node, &small).unwrap();
        assert!(once.contains("lines.join('')"), "{once}");
        assert!(once.contains("a replace must stay a replace"), "{once}");
    }

    #[test]
    fn git_names_the_core_fsync_component_of_each_file_or_none() {
        for (rel, component) in [
            ("index", Some("index")),
            ("refs/heads/main", Some("reference")),
            ("packed-refs", Some("reference")),
            ("objects/pack/pack-1.pack", Some("pack")),
            ("objects/pack/pack-1.idx", Some("pack-metadata")),
            ("objects/info/commit-graph", Some("commit-graph")),
            ("objects/d0/0491fd7e", Some("loose-object")),
            ("logs/HEAD", None),
            ("gc.pid", None),
            ("info/refs", None),
            ("objects/info/packs", None),
            ("config", None),
        ] {
            assert_eq!(git_component(rel).0, component, "{rel}");
        }
        let git = recognise(Path::new("/usr/bin/git"), &[], false);
        let renamed = |from: &str, to: &str| {
            finding(
                FindingKind::RenameBeforeSync,
                Kind::File,
                from,
                &format!("wrote 7 B to {from} and renamed it to {to} with no fsync"),
            )
        };
        let gc = fix(&git, &renamed("/r/.git/gc.pid.lock", "/r/.git/gc.pid")).unwrap();
        assert!(gc.starts_with("`gc.pid` is"), "{gc}");
        assert!(gc.contains("no `core.fsync` component covers it"), "{gc}");
        // The evidence's new name counts, whatever the first-seen name of the file.
        let refs = fix(&git, &renamed("/r/.git/objects/d0", "/r/.git/info/refs")).unwrap();
        assert!(
            refs.contains("`info/refs`") && refs.contains("update-server-info"),
            "{refs}"
        );
        let packed = fix(
            &git,
            &renamed("/r/.git/packed-refs.new", "/r/.git/packed-refs"),
        );
        assert!(
            packed
                .unwrap()
                .contains("`git config core.fsync reference`")
        );
    }

    #[test]
    fn sqlites_fix_says_what_a_transaction_saves_at_its_level() {
        for (level, words) in [
            (Level::Off, "nothing is synced"),
            (Level::Normal, "3 syncs per statement"),
            (Level::Full, "4 syncs per statement"),
            (Level::Extra, "5 syncs per statement"),
        ] {
            let text = sqlite_fix(level, 2000);
            for w in [
                SQLITE,
                words,
                "BEGIN; … COMMIT;",
                "journal_mode=WAL",
                "2000 here",
            ] {
                assert!(text.contains(w), "{level:?}: {w:?} not in {text}");
            }
        }
        // SQLite's fix stays, whatever program links SQLite.
        let mut f = finding(FindingKind::StatStorm, Kind::File, "/d/t.db", "lookups");
        f.fix = sqlite_fix(Level::Off, 10);
        assert_eq!(fix(&python(false), &f), None);
    }
}
