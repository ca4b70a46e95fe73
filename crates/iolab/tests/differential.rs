//! Differential tests: every kernel and every read method against the obvious answer.
//!
//! Two references, both too simple to be wrong and written in the test kit apart from the
//! library (`Expected::of`):
//!
//! - a plain byte loop counting `\n`, for line counts;
//! - FNV-1a 64 over the whole file content, for the bytes a read method delivers (the digest
//!   the library's `Fnv1a` task computes as it is fed): equal digests mean every byte
//!   arrived, once, in order.
//!
//! The harness never lists methods or kernels by hand: it iterates [`CountMethod::ALL`] and
//! [`Kernel::ALL`], so a new method or kernel is tested as soon as it is added there. The one
//! place that must know each method, `CountMethod::needs_size` (which decides whether the FIFO
//! and /proc tests expect a refusal), is an exhaustive `match` in the library, so a new
//! method does not compile until someone decides which group it is in.
//!
//! Corpora are deterministic (a seeded xorshift), so a failure reproduces; the proptests add
//! random inputs on top. Each test collects every mismatch before failing, so one run shows
//! the whole picture (which methods, which sizes, which options) instead of the first case.

use iolab::{Error, Input};
use iolab_lab::read::{CountMethod, ReadOptions, count_input};
use iolab_lab::task::Fnv1a;
use iolab_testkit as common;
use iolab_testkit::corpus::{KIB, MIB, binary, text};
use iolab_testkit::differential::{Case, Expected, Failures, proptest_config};
use proptest::collection::vec;
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::fs::{self, File};
use std::path::Path;

// ------------------------------------------------------------------------------------------
// The harness: the references, the methods that run here, the checks
// ------------------------------------------------------------------------------------------

/// The methods that can run here, from [`CountMethod::ALL`]; the others are named on stderr.
fn available_methods() -> Vec<CountMethod> {
    common::differential::available_methods(CountMethod::ALL, |m| m.availability())
}

/// Judges an error from `method`: `None` when the contract allows it for this content,
/// else the failure to report.
///
/// Allowed: `bufread-lines` refusing invalid UTF-8 (only if the content is invalid, and on
/// the right line), and `direct` being unavailable on a file system without `O_DIRECT`.
fn judge_error(method: CountMethod, error: &Error, expected: &Expected) -> Option<String> {
    match (method, error) {
        (CountMethod::BufreadLines, Error::InvalidUtf8 { line }) => {
            match expected.invalid_utf8_line {
                Some(want) if *line == want => None,
                Some(want) => Some(format!(
                    "refused invalid UTF-8 on line {line}, but it starts on line {want}"
                )),
                None => Some(format!(
                    "refused valid UTF-8 as invalid (line {line}): {error}"
                )),
            }
        }
        (CountMethod::Direct, e) if e.is_unavailable() => {
            common::skip_once(format!("direct is unavailable for a test file: {e}"));
            None
        }
        _ => Some(format!("failed: {error} ({error:?})")),
    }
}

/// `bufread-lines` must not succeed on content that is not UTF-8.
fn check_utf8_refusal(method: CountMethod, expected: &Expected) -> Option<String> {
    match expected.invalid_utf8_line {
        Some(line) if method == CountMethod::BufreadLines => Some(format!(
            "succeeded on invalid UTF-8 (line {line}) instead of Error::InvalidUtf8"
        )),
        _ => None,
    }
}

/// Counts `path` with `method` and checks lines and bytes; then reads it again with the
/// FNV-1a task and checks the digest. Mismatches go to `failures`.
fn check_file(
    method: CountMethod,
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
            if count.method == CountMethod::Auto
                || (method != CountMethod::Auto && count.method != method)
            {
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
    match iolab_lab::read::run(method, &open(), options, &mut fnv) {
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

/// Writes each case to a file in a fresh temporary directory and checks every available
/// method with every options set on it; panics with all failures at the end.
fn check_methods(cases: &[Case], options: &[ReadOptions], what: &str) {
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
fn small_buffer_options() -> Vec<ReadOptions> {
    let mut all = vec![ReadOptions::new()];
    for size in [7, 4096] {
        for buffers in [1, 3] {
            all.push(ReadOptions::new().buffer_size(size).buffers(buffers));
        }
    }
    all
}

// ------------------------------------------------------------------------------------------
// 2. Read methods against the content they read
// ------------------------------------------------------------------------------------------
#[test]
fn method_list_drives_the_harness() {
    // Every test below iterates `CountMethod::ALL`; this checks that list is one the harness
    // can rely on: unique names that parse back, and a classification for each.
    let mut names = BTreeSet::new();
    for method in CountMethod::ALL {
        assert!(names.insert(method.name()), "duplicate name {method}");
        assert_eq!(method.name().parse::<CountMethod>().ok(), Some(method));
        let _ = method.needs_size();
    }
    // The streaming fallback everything else relies on must always run.
    assert!(CountMethod::BufreadChunks.availability().is_ok());
    assert!(!available_methods().is_empty());

    // A method that cannot run here must say so through `count_lines`, not fail otherwise.
    let dir = tempfile::tempdir().expect("create a temporary directory");
    let path = dir.path().join("small");
    fs::write(&path, b"one\ntwo\n").expect("write a test file");
    for method in CountMethod::ALL {
        if method.availability().is_err() {
            let input = Input::open(&path).expect("open the test file");
            match count_input(method, &input, &ReadOptions::new()) {
                Err(e) if e.is_unavailable() => {}
                other => panic!("{method} is unavailable but count_lines gave {other:?}"),
            }
        }
    }
}

#[test]
fn methods_on_edge_cases() {
    let mut cases = vec![
        Case::new("empty file", b"".as_slice()),
        Case::new("one newline", b"\n".as_slice()),
        Case::new("one byte, no newline", b"x".as_slice()),
        Case::new("no trailing newline", b"alpha\nbeta\ngamma".as_slice()),
        Case::new("only newlines", vec![b'\n'; 1000]),
        Case::new("only newlines, 64 KiB + 1", vec![b'\n'; 64 * KIB + 1]),
        Case::new(
            "CRLF text",
            b"one\r\ntwo\r\n\r\nthree\r\nno end\r".as_slice(),
        ),
        Case::new("lone CRs", b"a\rb\rc\r".as_slice()),
        Case::new("NUL bytes", b"\0\0\n\0\n\0".as_slice()),
        // Multi-byte UTF-8 is valid: bufread-lines must count it, also when a 7-byte
        // buffer splits a character.
        Case::new("multi-byte UTF-8", "é€😀\nžluťoučký kůň\n日本語".as_bytes()),
        Case::new("multi-byte UTF-8, long", "é€😀\n".repeat(5000).into_bytes()),
        Case::new("invalid UTF-8 on line 1", b"\xff\xfe\n\x80abc\n".as_slice()),
        Case::new(
            "invalid UTF-8 on line 3",
            b"fine\nstill fine\n\xc3\x28 bad\nafter\n".as_slice(),
        ),
        Case::new(
            "truncated UTF-8 at end of file",
            b"caf\xc3\xa9\ncaf\xc3".as_slice(),
        ),
        // A UTF-8 sequence cut by a newline is invalid on both sides.
        Case::new("UTF-8 cut by a newline", b"ab\xe2\x82\n\xacz\n".as_slice()),
        Case::new("binary, 5000 bytes", binary(5000, 3)),
        Case::new(
            "every byte value",
            (0..=255u8).cycle().take(2048).collect::<Vec<_>>(),
        ),
    ];
    // A very long line after a long invalid one: the error must name the right line.
    let mut long = text(20_000, 100, 4);
    long.extend_from_slice(b"\xff\n");
    long.extend(text(10_000, 5000, 5));
    cases.push(Case::new("invalid UTF-8 deep in the file", long));
    check_methods(&cases, &small_buffer_options(), "methods, edge cases");
}

#[test]
fn methods_every_size_to_300() {
    // Every size from 0 to 300, newlines at positions that change with the size; every
    // third size is binary so bufread-lines' refusal is checked at many sizes too.
    let cases: Vec<Case> = (0..=300)
        .map(|len| {
            let seed = 1000 + len as u64;
            if len % 3 == 2 {
                Case::new(format!("binary size {len}"), binary(len, seed))
            } else {
                Case::new(
                    format!("text size {len}"),
                    text(len, 1 + len as u64 % 17, seed),
                )
            }
        })
        .collect();
    check_methods(&cases, &small_buffer_options(), "methods, sizes 0..=300");
}

#[test]
fn methods_page_and_buffer_boundaries() {
    // Around a page (the usual O_DIRECT alignment), one byte either side of multiples of
    // 64, and either side of bufread-lines' 16 KiB and the 64 KiB buffers.
    let mut sizes = BTreeSet::from([
        4095,
        4096,
        4097,
        8191,
        8192,
        8193,
        16 * KIB - 1,
        16 * KIB,
        16 * KIB + 1,
        64 * KIB - 1,
        64 * KIB,
        64 * KIB + 1,
    ]);
    for k in 1..=70 {
        sizes.extend([64 * k - 1, 64 * k + 1]);
    }
    let cases: Vec<Case> = sizes
        .into_iter()
        .map(|len| Case::new(format!("text size {len}"), text(len, 40, len as u64)))
        .collect();
    check_methods(
        &cases,
        &small_buffer_options(),
        "methods, page and buffer boundaries",
    );
}

#[test]
fn methods_on_files_larger_than_their_buffers() {
    // `auto` switches method at 1 MiB (MMAP_THRESHOLD); direct and uring read 1 MiB per
    // call and readv / uring-readv 16 x 64 KiB, so files of a few MiB take several full
    // reads and a partial last one. The odd buffer size below makes partial fills land
    // inside a buffer of a vectored read, not at its edges.
    let sizes = [MIB - 1, MIB, MIB + 1, 2 * MIB, 2 * MIB + 4096, 3 * MIB + 17];
    let cases: Vec<Case> = sizes
        .iter()
        .map(|&len| Case::new(format!("text size {len}"), text(len, 80, len as u64)))
        .collect();
    let options = [
        ReadOptions::new(),
        ReadOptions::new().buffer_size(4096).buffers(3),
        ReadOptions::new().buffer_size(64 * KIB + 1).buffers(5),
    ];
    check_methods(&cases, &options, "methods, multi-buffer files");
}

#[test]
fn methods_agree_on_an_input_not_at_offset_zero() {
    // `{ read -r header; iolab count; } < file` hands iolab a descriptor whose position is
    // past the header, and `wc -l` counts from there. Every method must give that answer:
    // the streaming ones read from the position anyway; the ones that read by offset
    // (mmap, direct, io_uring) must start at `Input::start`, not at 0. Sizes either side
    // of auto's 1 MiB threshold (auto switches to mmap there); positions unaligned,
    // page-aligned, just before the end and at the end (direct rounds down to its
    // alignment and must skip the difference).
    use std::io::{Seek, SeekFrom};
    let dir = tempfile::tempdir().expect("create a temporary directory");
    let path = dir.path().join("positioned");
    let mut failures = Failures::default();
    // Tiny buffers only on the small file: on 2 MiB they cost a million system calls.
    for (len, small) in [(1000, 7), (2 * MIB + 1, 4096)] {
        let options = [
            ReadOptions::new(),
            ReadOptions::new().buffer_size(small).buffers(3),
        ];
        let content = text(len, 40, len as u64);
        fs::write(&path, &content).expect("write a test file");
        for start in [1, 500, 4096, len - 1, len] {
            let start = start.min(len);
            let expected = Expected::of(&content[start..]);
            for opts in &options {
                for method in available_methods() {
                    let mut file = File::open(&path).expect("open the test file");
                    file.seek(SeekFrom::Start(start as u64))
                        .expect("seek the test file");
                    let input = Input::from_file(file).expect("wrap the test file");
                    let context = format!("{method} ({len} bytes, position {start}, {opts:?})");
                    match count_input(method, &input, opts) {
                        Ok(c) if c.lines == expected.lines && c.bytes == expected.bytes => {}
                        Ok(c) => failures.push(format!(
                            "{context}: got {} lines / {} bytes, want {} / {} \
                             (from the position on)",
                            c.lines, c.bytes, expected.lines, expected.bytes
                        )),
                        Err(e) => {
                            if let Some(problem) = judge_error(method, &e, &expected) {
                                failures.push(format!("{context}: {problem}"));
                            }
                        }
                    }
                }
            }
        }
    }
    failures.check("methods, input not at offset 0");
}

/// File contents for the proptest: UTF-8 text (so bufread-lines counts it) or binary (so
/// it refuses), both with frequent newlines, up to about 20 KB.
fn file_content() -> impl Strategy<Value = Vec<u8>> {
    let text = vec(
        prop_oneof![
            3 => Just("\n".to_string()),
            1 => Just("\r\n".to_string()),
            1 => Just("é€😀".to_string()),
            4 => "[ -~]{0,60}",
        ],
        0..600,
    )
    .prop_map(|pieces| pieces.concat().into_bytes());
    let binary = vec(prop_oneof![1 => Just(b'\n'), 4 => any::<u8>()], 0..20_000);
    prop_oneof![text, binary]
}

/// Read options with a random buffer size (tiny, page-ish or large) and buffer count.
fn read_options() -> impl Strategy<Value = ReadOptions> {
    (
        prop_oneof![1..64usize, 64..8192usize, 8192..100_000usize],
        1..6usize,
    )
        .prop_map(|(size, buffers)| ReadOptions::new().buffer_size(size).buffers(buffers))
}

proptest! {
    // Each case runs every method twice (count and digest); 64 cases keep it quick.
    #![proptest_config(proptest_config(64))]

    #[test]
    fn methods_match_naive_on_random_files(content in file_content(), options in read_options()) {
        let dir = tempfile::tempdir().expect("create a temporary directory");
        let path = dir.path().join("random");
        fs::write(&path, &content).expect("write a test file");
        let expected = Expected::of(&content);
        let mut failures = Failures::default();
        for method in available_methods() {
            check_file(method, &path, "random content", &expected, &options, &mut failures);
        }
        failures.into_result("methods, random files").map_err(TestCaseError::fail)?;
    }
}
