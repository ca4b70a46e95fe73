//! Helpers shared by the differential tests (`differential.rs`, `differential_kernels.rs`):
//! a seeded generator, a collector of mismatches, the proptest settings.
#![allow(dead_code)]

use proptest::prelude::*;

use iolab::lab::kernel::naive_count;
use iolab::lab::read::{Method, ReadOptions, count_input};
use iolab::lab::task::{Fnv1a, Task};
use iolab::{Error, Input};
use iolab_testkit as common;
use std::fs;
use std::path::Path;
pub const KIB: usize = 1 << 10;
pub const MIB: usize = 1 << 20;

// ------------------------------------------------------------------------------------------
// Shared helpers
// ------------------------------------------------------------------------------------------

/// A deterministic xorshift64 generator: the fixed corpora are the same on every run, so a
/// failure names a case that can be rebuilt, and no extra dependency is needed.
pub struct Rng(pub u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // Any non-zero state works; mixing the seed keeps nearby seeds apart.
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn byte(&mut self) -> u8 {
        (self.next() >> 56) as u8
    }
}

/// Every mismatch a test finds, reported together when the test ends.
#[derive(Default)]
pub struct Failures(pub Vec<String>);

impl Failures {
    pub fn push(&mut self, message: String) {
        self.0.push(message);
    }

    /// `Err` with (up to 40 of) the failures, or `Ok` when there were none.
    pub fn into_result(self, what: &str) -> Result<(), String> {
        if self.0.is_empty() {
            return Ok(());
        }
        let shown = self.0.len().min(40);
        Err(format!(
            "{} failure(s) in {what}{}:\n  {}",
            self.0.len(),
            if shown < self.0.len() {
                format!(" (first {shown} shown)")
            } else {
                String::new()
            },
            self.0[..shown].join("\n  ")
        ))
    }

    /// Panics with every failure, if there were any.
    pub fn check(self, what: &str) {
        if let Err(report) = self.into_result(what) {
            panic!("{report}");
        }
    }
}

/// Proptest settings: `cases` cases, and failing inputs saved next to this file (as
/// `tests/differential.proptest-regressions`, to commit) so they are replayed first on
/// later runs. The default location needs a `lib.rs` beside the test, which `tests/` lacks.
pub fn proptest_config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
        )),
        ..ProptestConfig::default()
    }
}

// Read methods against the content they read

/// The methods that can run here, from [`Method::ALL`]; the others are named on stderr.
pub fn available_methods() -> Vec<Method> {
    let mut skipped = Vec::new();
    let methods = Method::ALL
        .into_iter()
        .filter(|m| match m.availability() {
            Ok(()) => true,
            Err(reason) => {
                skipped.push(format!("{m} ({reason})"));
                false
            }
        })
        .collect();
    if !skipped.is_empty() {
        common::skip_once(format!(
            "methods unavailable here, not tested: {}",
            skipped.join(", ")
        ));
    }
    methods
}

/// What a correct read of one file's content yields.
pub struct Expected {
    pub lines: u64,
    pub bytes: u64,
    pub digest: u64,
    /// The 1-based line where invalid UTF-8 starts, if the content is not UTF-8: then
    /// `bufread-lines` must refuse with exactly this line.
    pub invalid_utf8_line: Option<u64>,
}

impl Expected {
    pub fn of(content: &[u8]) -> Expected {
        let mut fnv = Fnv1a::default();
        fnv.feed(content);
        // `\n` cannot occur inside a UTF-8 sequence, so the content is UTF-8 exactly when
        // every line is, and the first bad line is where `read_line` must stop.
        let invalid_utf8_line = std::str::from_utf8(content).err().map(|_| {
            let index = content
                .split_inclusive(|&b| b == b'\n')
                .position(|line| std::str::from_utf8(line).is_err())
                .expect("invalid UTF-8 lies within some line");
            index as u64 + 1
        });
        Expected {
            lines: naive_count(content, b'\n'),
            bytes: content.len() as u64,
            digest: fnv.digest(),
            invalid_utf8_line,
        }
    }
}

/// Judges an error from `method`: `None` when the contract allows it for this content,
/// else the failure to report.
///
/// Allowed: `bufread-lines` refusing invalid UTF-8 (only if the content is invalid, and on
/// the right line), and `direct` being unavailable on a file system without `O_DIRECT`.
pub fn judge_error(method: Method, error: &Error, expected: &Expected) -> Option<String> {
    match (method, error) {
        (Method::BufreadLines, Error::InvalidUtf8 { line }) => match expected.invalid_utf8_line {
            Some(want) if *line == want => None,
            Some(want) => Some(format!(
                "refused invalid UTF-8 on line {line}, but it starts on line {want}"
            )),
            None => Some(format!(
                "refused valid UTF-8 as invalid (line {line}): {error}"
            )),
        },
        (Method::Direct, e) if e.is_unavailable() => {
            common::skip_once(format!("direct is unavailable for a test file: {e}"));
            None
        }
        _ => Some(format!("failed: {error} ({error:?})")),
    }
}

/// `bufread-lines` must not succeed on content that is not UTF-8.
pub fn check_utf8_refusal(method: Method, expected: &Expected) -> Option<String> {
    match expected.invalid_utf8_line {
        Some(line) if method == Method::BufreadLines => Some(format!(
            "succeeded on invalid UTF-8 (line {line}) instead of Error::InvalidUtf8"
        )),
        _ => None,
    }
}

/// Counts `path` with `method` and checks lines and bytes; then reads it again with the
/// FNV-1a task and checks the digest. Mismatches go to `failures`.
pub fn check_file(
    method: Method,
    path: &Path,
    label: &str,
    expected: &Expected,
    options: &ReadOptions,
    failures: &mut Failures,
) {
    let context = format!(
        "{method} on {label} ({} bytes, {options:?})",
        expected.bytes
    );
    let open = || Input::open(path).unwrap_or_else(|e| panic!("cannot open {path:?}: {e}"));

    match count_input(method, &open(), options) {
        Ok(count) => {
            if let Some(problem) = check_utf8_refusal(method, expected) {
                failures.push(format!("count: {context}: {problem}"));
            } else if count.lines != expected.lines || count.bytes != expected.bytes {
                failures.push(format!(
                    "count: {context}: got {} lines / {} bytes, want {} / {}",
                    count.lines, count.bytes, expected.lines, expected.bytes
                ));
            }
            if count.method == Method::Auto || (method != Method::Auto && count.method != method) {
                failures.push(format!("count: {context}: reports method {}", count.method));
            }
        }
        Err(e) => {
            if let Some(problem) = judge_error(method, &e, expected) {
                failures.push(format!("count: {context}: {problem}"));
            }
        }
    }

    // The digest proves the exact bytes arrived in order: a method that skipped one chunk
    // and repeated another of the same newline count would pass the count check.
    let mut fnv = Fnv1a::default();
    match iolab::lab::read::run(method, &open(), options, &mut fnv) {
        Ok((_, bytes)) => {
            if let Some(problem) = check_utf8_refusal(method, expected) {
                failures.push(format!("fnv1a: {context}: {problem}"));
            } else if fnv.digest() != expected.digest || bytes != expected.bytes {
                failures.push(format!(
                    "fnv1a: {context}: digest {:#018x} over {bytes} bytes, want {:#018x} over {}",
                    fnv.digest(),
                    expected.digest,
                    expected.bytes
                ));
            }
        }
        Err(e) => {
            if let Some(problem) = judge_error(method, &e, expected) {
                failures.push(format!("fnv1a: {context}: {problem}"));
            }
        }
    }
}

/// A named file content.
pub struct Case {
    pub name: String,
    pub content: Vec<u8>,
}

impl Case {
    pub fn new(name: impl Into<String>, content: impl Into<Vec<u8>>) -> Case {
        Case {
            name: name.into(),
            content: content.into(),
        }
    }
}

/// `len` bytes of ASCII text with a newline about every `mean_line` bytes, at positions
/// that depend on `seed`.
pub fn text(len: usize, mean_line: u64, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    (0..len)
        .map(|_| {
            if rng.below(mean_line) == 0 {
                b'\n'
            } else {
                b' ' + rng.below(95) as u8
            }
        })
        .collect()
}

/// `len` random bytes, about one in eight a newline (almost surely invalid UTF-8).
pub fn binary(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    (0..len)
        .map(|_| if rng.below(8) == 0 { b'\n' } else { rng.byte() })
        .collect()
}

/// Writes each case to a file in a fresh temporary directory and checks every available
/// method with every options set on it; panics with all failures at the end.
pub fn check_methods(cases: &[Case], options: &[ReadOptions], what: &str) {
    let dir = tempfile::tempdir().expect("create a temporary directory");
    let methods = available_methods();
    let mut failures = Failures::default();
    for (i, case) in cases.iter().enumerate() {
        let path = dir.path().join(format!("case-{i}"));
        fs::write(&path, &case.content).expect("write a test file");
        let expected = Expected::of(&case.content);
        for opts in options {
            for &method in &methods {
                check_file(method, &path, &case.name, &expected, opts, &mut failures);
            }
        }
        // Keep at most one test file per test on disk.
        fs::remove_file(&path).expect("remove a test file");
    }
    failures.check(what);
}

/// The default options plus small buffers, one and several per vectored read, so reads
/// fill buffers partly and chunks end at every position. (`direct` rounds the size up to
/// its alignment; the methods that have one buffer ignore `buffers`.)
pub fn small_buffer_options() -> Vec<ReadOptions> {
    let mut all = vec![ReadOptions::new()];
    for size in [7, 4096] {
        for buffers in [1, 3] {
            all.push(ReadOptions::new().buffer_size(size).buffers(buffers));
        }
    }
    all
}
