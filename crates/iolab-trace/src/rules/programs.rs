//! Each finding's fix in the terms of the program that made its calls
//! ([`crate::program`]): a Python, sqlite3, node, shell, `dd`, `tar`, C, Go or Java fix
//! where one is known; `None` keeps iolab's (the fix for Rust and unknown programs). The
//! table: docs/trace.md, "The program's own fix".

use crate::model::Kind;
use crate::program::{Program, Recognised};
use crate::rules::{Finding, FindingKind};

/// The fix for `finding` in `r`'s terms, when its program has its own; `None` keeps the
/// generic fix (iolab's, in plain words).
pub fn fix(r: &Recognised, finding: &Finding) -> Option<String> {
    speed_fix(r, finding).or_else(|| other_fix(r, finding))
}

/// The fixes of the findings about time spent in reads, writes, opens and syncs.
fn speed_fix(r: &Recognised, finding: &Finding) -> Option<String> {
    let to_file = finding.target_kind == Kind::File;
    let s = |text: &str| Some(text.to_string());
    match (r.program, finding.kind) {
        (Program::Python, FindingKind::SmallWrites) if r.unbuffered => s(
            "drop `-u` (and `PYTHONUNBUFFERED`): Python then writes its output in 8 KiB blocks; \
             for a file, `open(path, 'a', buffering=1 << 16)`, and no `flush()` after each line",
        ),
        (Program::Python, FindingKind::SmallWrites) => s(
            "write through a larger buffer and do not flush per line: `open(path, 'a', \
             buffering=1 << 16)`, or collect lines and `f.writelines(batch)`; \
             `print(..., flush=True)` in a loop writes every line on its own",
        ),
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
        (Program::Node, FindingKind::SmallWrites | FindingKind::OpenChurn) if to_file => s(
            "open a stream once, `const out = fs.createWriteStream(path, { flags: 'a' })`, and \
             `out.write(line)`, instead of `fs.appendFileSync` per record (it opens, writes and \
             closes the file each time)",
        ),
        (Program::Node, FindingKind::SmallWrites) => s(
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
    let s = |text: &str| Some(text.to_string());
    match (r.program, finding.kind) {
        (Program::Git, FindingKind::UnsyncedDirectory) => s(
            "no git setting syncs a folder (`core.fsync` hardens files, git-config(1)): when \
             the commit must survive a crash, `sync -f .git` after the command (GNU coreutils \
             8.24+) makes its renames durable",
        ),
        (Program::Git, FindingKind::RenameBeforeSync | FindingKind::RewriteInPlace) => s(
            "git's default, `core.fsync=committed,-loose-object` (git-config(1)), leaves the \
             index and the refs unsynced, as seen here: `git config core.fsync \
             committed,index,reference` (or `all`) makes git sync them before it renames \
             them into place; `core.fsyncMethod=batch` keeps the cost down",
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
        (Program::CStdio, FindingKind::MmapFaults) => {
            s("`madvise(addr, length, MADV_RANDOM)` on the map before the scattered reads")
        }
        _ => None,
    }
}
