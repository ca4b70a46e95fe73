//! The programs in `examples/`, run as a user runs them: each on a small file in a scratch
//! folder, checking what it prints and what it did to the file.
//!
//! `cargo test` builds a package's examples before its tests, into
//! `<target>/<triple>/<profile>/examples/`; this test binary lives in `<profile>/deps/`, so
//! they are at `../examples/<name>`. (`cargo test --test examples` builds only this test.)
//! A missing example, or one older than its source, fails with what to run: skipping
//! would let a broken example pass.

use iolab_testkit as common;

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use iolab_lab::generate::{CsvSpec, blocks, write_csv};

/// Every example, by the name `iolab bench`'s verdict gives it.
const EXAMPLES: [&str; 7] = [
    "count_lines",
    "stdout_writer",
    "edit_in_place",
    "append_records",
    "durable_log",
    "random_reads",
    "random_batch",
];

/// The most any example may take here (the random reads create 64 MiB and read 100 000
/// blocks; the durable log syncs a few hundred times): generous for a busy 2-core machine.
const TIMEOUT: Duration = Duration::from_secs(120);

/// The built example `name`, checked to exist and to be newer than its source.
fn example_path(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary lives in <profile>/deps/");
    let path = profile_dir.join("examples").join(name);
    let profile = profile_dir
        .file_name()
        .unwrap_or_default()
        .to_string_lossy();
    let flag = if profile == "release" {
        " --release"
    } else {
        ""
    };
    let rebuild = format!(
        "run `cargo test{flag} -p iolab`, which builds the examples before the tests \
         (`--test examples` alone does not), or `cargo build{flag} --examples -p iolab` first"
    );
    let built = fs::metadata(&path).and_then(|m| m.modified());
    let Ok(built) = built else {
        panic!(
            "example `{name}` is not built at {}: {rebuild}",
            path.display()
        );
    };
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("examples/{name}.rs"));
    if let Ok(written) = fs::metadata(&source).and_then(|m| m.modified()) {
        assert!(
            built >= written,
            "example `{name}` is older than {}: {rebuild}",
            source.display()
        );
    }
    path
}

/// The examples' cache folder (`XDG_CACHE_HOME`): no machine profile, so each default is
/// its rule whatever this machine measured.
const CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache-examples");

/// Runs example `name` with `args`, within [`TIMEOUT`].
fn run(name: &str, args: &[&Path]) -> Output {
    let mut cmd = Command::new(example_path(name));
    cmd.args(args)
        .stdin(Stdio::null())
        .env("XDG_CACHE_HOME", CACHE);
    common::run_within(cmd, TIMEOUT)
}

/// Runs example `name` on `file` and returns its stdout, after checking it succeeded with
/// nothing on stderr and printed a few lines.
fn run_ok(name: &str, file: &Path) -> String {
    let out = run(name, &[file]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{name} failed: {stderr}");
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 output");
    assert!(stderr.is_empty(), "{name} wrote to stderr: {stderr}");
    assert!(
        (1..=4).contains(&stdout.lines().count()),
        "{name}:\n{stdout}"
    );
    stdout
}

/// Asserts a failure with status 1 and one line on stderr containing `needle`, no panic.
fn assert_one_line_error(name: &str, out: &Output, needle: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{name}, not one line: {stderr}");
    assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    assert!(
        stderr.contains(needle),
        "{name}: {needle:?} missing from {stderr}"
    );
}

/// Lines of varied length, an empty one, bytes that are not UTF-8, and a last line without
/// a newline.
fn text() -> Vec<u8> {
    let mut text = Vec::new();
    for i in 0..1000 {
        writeln!(text, "line {i}: {}", "x,".repeat(i % 37)).unwrap();
    }
    text.extend_from_slice(b"\n\xff\xfe not UTF-8\nno newline at the end");
    text
}

#[test]
fn every_example_wants_exactly_one_file() {
    let dir = common::scratch();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for name in EXAMPLES {
        for args in [&[][..], &[a.as_path(), b.as_path()][..]] {
            assert_one_line_error(name, &run(name, args), &format!("usage: {name} FILE"));
        }
    }
}

#[test]
fn count_lines_counts_the_newlines() {
    let dir = common::scratch();
    let file = dir.path().join("text.txt");
    fs::write(&file, text()).unwrap();
    let newlines = text().iter().filter(|&&b| b == b'\n').count();
    let stdout = run_ok("count_lines", &file);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].ends_with(&format!(": {newlines} lines, {} bytes", text().len())),
        "{stdout}"
    );
    // `auto` names the method it resolved to, never itself.
    assert!(lines[1].starts_with("auto chose: "), "{stdout}");
    assert!(!lines[1].starts_with("auto chose: auto "), "{stdout}");
    assert!(
        lines[2].starts_with(&format!("mmap-avx2: {newlines} lines "))
            || lines[2].starts_with("mmap-avx2: unavailable here"),
        "{stdout}"
    );
}

#[test]
fn count_lines_of_a_missing_file_is_one_line_on_stderr() {
    let dir = common::scratch();
    let out = run("count_lines", &[&dir.path().join("missing.txt")]);
    assert_one_line_error("count_lines", &out, "missing.txt: cannot open");
    assert!(out.stdout.is_empty());
}

#[test]
fn stdout_writer_numbers_lines_like_cat_n() {
    let dir = common::scratch();
    let file = dir.path().join("text.txt");
    fs::write(&file, text()).unwrap();
    let out = run("stdout_writer", &[&file]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");

    // `cat -n`: the number in 6 columns, a tab, the line as it is (no newline added).
    let mut expected = Vec::new();
    for (i, line) in text().split_inclusive(|&b| b == b'\n').enumerate() {
        write!(expected, "{:6}\t", i + 1).unwrap();
        expected.extend_from_slice(line);
    }
    assert!(out.stdout == expected, "the output differs from cat -n's");
    let lines = text().split_inclusive(|&b| b == b'\n').count();
    let summary = format!("{lines} lines, {} bytes written through a ", expected.len());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with(&summary), "{stderr}");
}

#[test]
fn stdout_writer_into_a_pipe_closed_early_exits_0_quietly() {
    let dir = common::scratch();
    let file = dir.path().join("long.txt");
    // Megabytes of output: far more than a pipe holds, so writes go on after the reader left.
    let long: String = (0..300_000).map(|i| format!("{i}\n")).collect();
    fs::write(&file, long).unwrap();
    let mut child = Command::new(example_path("stdout_writer"))
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // `| head -1`: read one line, then close the pipe.
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first, "     1\t0\n");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "not quiet: {stderr}");
}

/// `--records` into a pipe lends its pages; with `vmsplice` refused (`EINVAL`, as a seccomp
/// filter or an odd kernel may), the same bytes go out with `write`.
#[test]
#[cfg(target_arch = "x86_64")]
fn stdout_writer_records_are_the_same_bytes_with_vmsplice_refused() {
    let records = || {
        let mut cmd = Command::new(example_path("stdout_writer"));
        cmd.args(["--records", "8M"]);
        cmd
    };
    let lent = records().output().unwrap();
    let refusal = common::seccomp::deny(&[libc::SYS_vmsplice], libc::EINVAL);
    let Some(written) = common::seccomp::output_under(records(), refusal) else {
        return;
    };
    for out in [&lent, &written] {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.stdout.len(), 8 << 20);
    }
    assert!(
        lent.stdout == written.stdout,
        "lent and written bytes differ"
    );
    assert!(lent.stdout.starts_with(b"record 00000000000000000000 "));
    assert!(lent.stdout.ends_with(b" \n"));
    let says = |out: &std::process::Output| String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        says(&lent).contains("8388608 by lent pages"),
        "{}",
        says(&lent)
    );
    assert!(
        says(&written).contains(", 0 by lent pages"),
        "{}",
        says(&written)
    );
    assert!(
        says(&written).contains("pages not lent"),
        "{}",
        says(&written)
    );
}

#[test]
fn edit_in_place_replaces_every_comma_and_keeps_the_length() {
    let dir = common::scratch();
    let file = dir.path().join("data.csv");
    let mut csv = Vec::new();
    let spec = CsvSpec {
        rows: 500,
        ..CsvSpec::default()
    };
    write_csv(&mut csv, &spec).unwrap();
    fs::write(&file, &csv).unwrap();
    let commas = csv.iter().filter(|&&b| b == b',').count();

    let stdout = run_ok("edit_in_place", &file);
    assert!(
        stdout.starts_with(&format!("replaced {commas} ',' by ';' in ")),
        "{stdout}"
    );
    assert!(stdout.contains("with the mmap strategy"), "{stdout}");
    let after = fs::read(&file).unwrap();
    let expected: Vec<u8> = csv
        .iter()
        .map(|&b| if b == b',' { b';' } else { b })
        .collect();
    assert_eq!(after.len(), csv.len());
    assert!(after == expected, "bytes other than ',' changed");

    // Again: nothing left to replace.
    let stdout = run_ok("edit_in_place", &file);
    assert!(stdout.starts_with("replaced 0 ','"), "{stdout}");
}

#[test]
fn edit_in_place_makes_a_csv_when_the_file_is_missing() {
    let dir = common::scratch();
    let file = dir.path().join("new.csv");
    let stdout = run_ok("edit_in_place", &file);
    assert!(stdout.starts_with("created "), "{stdout}");
    let after = fs::read(&file).unwrap();
    assert_eq!(after.iter().filter(|&&b| b == b'\n').count(), 10_000);
    assert!(!after.contains(&b','), "a ',' is left");
    assert!(after.contains(&b';'));
}

#[test]
fn append_records_appends_100k_records_and_appends_again() {
    let dir = common::scratch();
    let file = dir.path().join("records.log");
    let records: Vec<u8> = (0..100_000)
        .flat_map(|i| format!("record {i:06}\n").into_bytes())
        .collect();
    let stdout = run_ok("append_records", &file);
    assert!(
        stdout.starts_with(&format!(
            "appended 100000 records ({} bytes)",
            records.len()
        )),
        "{stdout}"
    );
    assert!(fs::read(&file).unwrap() == records);

    // An existing file is opened and appended to, not refused or replaced.
    run_ok("append_records", &file);
    let twice = fs::read(&file).unwrap();
    assert_eq!(twice.len(), 2 * records.len());
    assert!(twice[records.len()..] == records[..]);
}

#[test]
fn durable_log_records_read_back() {
    let dir = common::scratch();
    let file = dir.path().join("wal.log");
    let stdout = run_ok("durable_log", &file);
    assert!(
        stdout.starts_with("4000 durable records from 8 threads, policy "),
        "{stdout}"
    );
    let syncs: u64 = stdout
        .split(" syncs")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no sync count in {stdout}"));
    assert!((1..=4000).contains(&syncs), "{stdout}");

    // Every record, each writer's in its own order, threads interleaved as they came.
    let payloads: Vec<Vec<u8>> = iolab::Log::records(&file)
        .unwrap()
        .collect::<iolab::Result<_>>()
        .unwrap();
    assert_eq!(payloads.len(), 4000);
    for w in 0..8 {
        let prefix = format!("writer {w} record ");
        let mine: Vec<&[u8]> = payloads
            .iter()
            .map(Vec::as_slice)
            .filter(|p| p.starts_with(prefix.as_bytes()))
            .collect();
        let expected: Vec<Vec<u8>> = (0..500)
            .map(|i| format!("{prefix}{i}").into_bytes())
            .collect();
        assert!(mine == expected, "writer {w}'s records differ");
    }
}

#[test]
fn durable_log_refuses_a_file_that_is_not_a_log() {
    let dir = common::scratch();
    let file = dir.path().join("notes.txt");
    fs::write(&file, "not a log\n").unwrap();
    let out = run("durable_log", &[&file]);
    assert_one_line_error("durable_log", &out, "not an iolab log");
    assert_eq!(fs::read(&file).unwrap(), b"not a log\n");
}

/// Checks the line of measurements `random_reads` prints after any `created` line.
fn assert_random_reads(stdout: &str, checked: bool) {
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.starts_with("created"))
        .collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    let backing = lines[0].contains("Pread backing") || lines[0].contains("Mmap backing");
    assert!(
        lines[0].starts_with("10000 lookups, ") && backing,
        "{stdout}"
    );
    assert_eq!(lines[0].ends_with(", each checked"), checked, "{stdout}");
}

/// `bytes` bytes in which every 8-byte word holds its offset, as `random_reads` checks.
fn offsets(bytes: usize) -> Vec<u8> {
    let mut data: Vec<u8> = (0..bytes as u64)
        .step_by(8)
        .flat_map(u64::to_le_bytes)
        .collect();
    data.truncate(bytes);
    data
}

#[test]
fn random_reads_checks_every_read_of_a_file_of_offsets() {
    let dir = common::scratch();
    let file = dir.path().join("offsets.bin");
    // Not a multiple of 4 KiB, so the last block is short.
    fs::write(&file, offsets((1 << 20) + 1000)).unwrap();
    assert_random_reads(&run_ok("random_reads", &file), true);
}

#[test]
fn random_reads_makes_its_file_when_missing_and_reads_any_file() {
    let dir = common::scratch();
    let file = dir.path().join("new.bin");
    let stdout = run_ok("random_reads", &file);
    assert!(stdout.starts_with("created "), "{stdout}");
    assert_random_reads(&stdout, true);
    assert!(fs::read(&file).unwrap() == offsets(64 << 20));

    // A file of other bytes is read all the same, its reads not checked.
    let other = dir.path().join("text.txt");
    fs::write(&other, text()).unwrap();
    assert_random_reads(&run_ok("random_reads", &other), false);
}

#[test]
fn random_batch_serves_every_lookup_whole_through_the_batch_call() {
    let dir = common::scratch();
    let file = dir.path().join("blocks.bin");
    let mut data = Vec::new();
    blocks::write_blocks(&mut data, (1 << 20) + 1000).unwrap();
    fs::write(&file, &data).unwrap();
    let out = run("random_batch", &[&file, Path::new("5000")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines[0].starts_with("5000 lookups of 4096 bytes in "),
        "{stdout}"
    );
    assert!(
        lines[0].ends_with(&format!(" lookups/s, {} bytes, 0 failed", 5000 * 4096)),
        "{stdout}"
    );
    assert!(lines[1].starts_with("how: "), "{stdout}");
    let missing = run("random_batch", &[&dir.path().join("missing")]);
    assert_one_line_error("random_batch", &missing, "missing");
}

#[test]
fn six_workloads_runs_every_default_call_in_one_main() {
    let dir = common::scratch();
    let out = run("six_workloads", &[dir.path()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "six_workloads failed: {stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{stdout}");
    assert!(lines[0].starts_with("count: 100000 lines via "), "{stdout}");
    assert!(
        lines[1].starts_with("edit: Replaced { changed: 200000 }"),
        "{stdout}"
    );
    assert_eq!(lines[2], "append: 10000 records");
    assert!(lines[3].starts_with("durable: "), "{stdout}");
    assert!(
        lines[4].starts_with("random: 4096 bytes at offset 4096"),
        "{stdout}"
    );
    let text = fs::read(dir.path().join("big.txt")).unwrap();
    assert!(!text.contains(&b','), "a comma was left");
    assert_eq!(text.iter().filter(|&&b| b == b';').count(), 200_000);
    let records = fs::read_to_string(dir.path().join("records.log")).unwrap();
    assert_eq!(records.lines().count(), 10_000);
    assert_eq!(records.lines().last(), Some("record 9999"));
    let wal = iolab::read_records(dir.path().join("wal.log")).unwrap();
    assert_eq!(wal.records, [b"acknowledged".to_vec()]);
}

#[test]
fn six_workloads_refuses_a_folder_that_is_not_empty_and_leaves_it_alone() {
    let dir = common::scratch();
    let mine = dir.path().join("mine.txt");
    fs::write(&mine, "keep me\n").unwrap();
    let out = run("six_workloads", &[dir.path()]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("is not empty"), "{stderr}");
    assert!(
        stderr.contains(&dir.path().display().to_string()),
        "{stderr}"
    );
    assert_eq!(fs::read_to_string(&mine).unwrap(), "keep me\n");
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
}
