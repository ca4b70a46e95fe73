//! `iolab count` end to end, against the system's `wc -l` as the reference: the methods
//! `iolab methods count` lists, the counts and the column `wc` prints, the fixtures.
//!
//! The binary itself is the caller's (`env!("CARGO_BIN_EXE_iolab")` exists only in the
//! tests of its own package): the helpers that run it take the command to run.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::corpus::{binary, text};
use crate::{skip_once, stderr_of, stdout_of};

pub const WC: &str = "/usr/bin/wc";

/// Every method `iolab methods count` must list, in any order.
pub const METHOD_NAMES: [&str; 14] = [
    "bufread-lines",
    "bufread-chunks",
    "direct",
    "mmap",
    "mmap-avx2",
    "mmap-avx512",
    "readv",
    "uring",
    "uring-readv",
    "mmap-parallel",
    "pread-parallel",
    "uring-direct",
    "stream",
    "auto",
];

/// Methods that need a regular file with a real size; they refuse pipes and /proc files.
pub const SIZED_METHODS: [&str; 9] = [
    "direct",
    "mmap",
    "mmap-avx2",
    "mmap-avx512",
    "uring",
    "uring-readv",
    "mmap-parallel",
    "pread-parallel",
    "uring-direct",
];

/// One row of `iolab methods count`.
#[derive(Debug)]
pub struct MethodRow {
    pub name: String,
    /// `None` when available, else the reason given after `unavailable:`.
    pub unavailable: Option<String>,
}

/// Parses `iolab methods count` output, checking each line's shape on the way.
pub fn parse_methods(stdout: &str) -> Vec<MethodRow> {
    stdout
        .lines()
        .map(|line| {
            let name = line
                .split_whitespace()
                .next()
                .unwrap_or_else(|| panic!("empty line in methods output: {stdout:?}"));
            let rest = line[name.len()..].trim_start();
            let unavailable = if rest == "available" {
                None
            } else if let Some(reason) = rest.strip_prefix("unavailable:") {
                let reason = reason.trim();
                assert!(!reason.is_empty(), "no reason given on line {line:?}");
                Some(reason.to_string())
            } else {
                panic!("line {line:?} is neither `available` nor `unavailable: <reason>`");
            };
            MethodRow {
                name: name.to_string(),
                unavailable,
            }
        })
        .collect()
}

/// Runs `iolab methods count` with `iolab` (a command running the binary) and parses it.
pub fn run_methods(mut iolab: Command) -> Vec<MethodRow> {
    let output = iolab
        .args(["methods", "count"])
        .output()
        .expect("run iolab");
    assert!(output.status.success(), "iolab methods count: {output:?}");
    parse_methods(&stdout_of(&output))
}

/// The methods this machine can run, as `iolab methods count` reports them through
/// `iolab` (a command running the binary); the others are named in a `skipped:` line.
pub fn available_methods(iolab: Command) -> Vec<String> {
    let (available, unavailable): (Vec<_>, Vec<_>) = run_methods(iolab)
        .into_iter()
        .partition(|row| row.unavailable.is_none());
    for row in unavailable {
        skip_once(format!(
            "{} is unavailable here: {}",
            row.name,
            row.unavailable.unwrap_or_default()
        ));
    }
    available.into_iter().map(|row| row.name).collect()
}

/// The per-file counts of the real `wc -l` on `paths` (the `total` line is dropped),
/// checking that wc names the files as given.
pub fn wc_counts(paths: &[&Path]) -> Vec<u64> {
    let output = Command::new(WC)
        .arg("-l")
        .args(paths)
        .output()
        .expect("run wc");
    assert!(output.status.success(), "wc -l failed: {output:?}");
    let stdout = stdout_of(&output);
    let counts: Vec<u64> = stdout
        .lines()
        .take(paths.len())
        .zip(paths)
        .map(|(line, path)| {
            // wc pads counts to a common width when given several files.
            let (count, name) = line
                .trim_start()
                .split_once(' ')
                .unwrap_or_else(|| panic!("unexpected wc line {line:?}"));
            assert_eq!(name, path.display().to_string(), "wc line {line:?}");
            count.parse().expect("wc count is a number")
        })
        .collect();
    assert_eq!(counts.len(), paths.len(), "wc output {stdout:?}");
    counts
}

pub fn wc_count(path: &Path) -> u64 {
    wc_counts(&[path])[0]
}

/// `wc -l`'s output for `rows` (count, name) from `operands`, the names on the command
/// line: the column is as wide as the digits of the operands' regular sizes summed, at
/// least 7 if one of them exists but is not regular; 1 for a single operand. As GNU `wc`,
/// an operand that is there but cannot be read still counts by its `stat`, and one that
/// does not exist adds nothing.
pub fn expected_stdout<P: AsRef<Path>>(rows: &[(u64, String)], operands: &[P]) -> String {
    let width = if operands.len() > 1 {
        let found: Vec<fs::Metadata> = operands
            .iter()
            .filter_map(|p| fs::metadata(p).ok())
            .collect();
        let total: u64 = found.iter().filter(|m| m.is_file()).map(|m| m.len()).sum();
        let minimum = if found.iter().any(|m| !m.is_file()) {
            7
        } else {
            1
        };
        total.to_string().len().max(minimum)
    } else {
        1
    };
    let mut out = String::new();
    for (count, label) in rows {
        out.push_str(&format!("{count:>width$} {label}\n"));
    }
    if operands.len() > 1 {
        let total: u64 = rows.iter().map(|(count, _)| count).sum();
        out.push_str(&format!("{total:>width$} total\n"));
    }
    out
}

/// `direct` is listed as available when the kernel has O_DIRECT, yet a file system may
/// still refuse it for a file (tmpfs before Linux 6.6, some FUSE). That is documented
/// behaviour, not a bug: such a run is skipped with a note.
pub fn refused_per_file(method: &str, output: &Output) -> bool {
    let stderr = stderr_of(output);
    if method == "direct"
        && output.status.code() == Some(1)
        && stderr.contains("method 'direct' is unavailable")
    {
        skip_once(format!("direct: {}", stderr.trim_end()));
        return true;
    }
    false
}

/// The text fixtures (valid UTF-8): the edge cases of `wc -l`, and big files that take
/// the multi-buffer and mmap paths.
pub fn text_fixtures(dir: &Path) -> Vec<PathBuf> {
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("no-trailing-newline", b"one\ntwo\nthree".to_vec()),
        ("only-newlines", b"\n\n\n\n\n\n\n".to_vec()),
        ("crlf", b"a\r\nb\r\n\r\nlast\r\n".to_vec()),
        // 3 MiB: over auto's mmap threshold, several buffers for every reader.
        ("three-mib", text(3 << 20, 60, 1)),
        // Not a multiple of any block size, so `direct` ends on an unaligned tail.
        ("three-mib-odd", text((3 << 20) + 4097, 60, 2)),
    ];
    files
        .into_iter()
        .map(|(name, bytes)| {
            let path = dir.join(name);
            fs::write(&path, bytes).expect("write fixture");
            path
        })
        .collect()
}

/// Random bytes, certainly not UTF-8 (and with newlines among them).
pub fn binary_fixture(dir: &Path) -> PathBuf {
    let mut bytes = b"fine first line\n\xff\xfe".to_vec();
    bytes.extend(binary(256 * 1024, 42));
    let path = dir.join("random-bytes");
    fs::write(&path, bytes).expect("write fixture");
    path
}

pub fn path_label(path: &Path) -> String {
    path.display().to_string()
}

/// Two small text files in `dir`, the second without a final newline.
pub fn two_good_files(dir: &Path) -> [PathBuf; 2] {
    let a = dir.join("good-a");
    let b = dir.join("good-b");
    fs::write(&a, "1\n2\n3\n").unwrap();
    fs::write(&b, "x\ny").unwrap();
    [a, b]
}
