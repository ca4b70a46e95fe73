//! Differential tests: every kernel and every read method against the obvious answer.
//!
//! Two references, both too simple to be wrong:
//!
//! - [`naive_count`], a plain byte loop, for the kernels and for line counts;
//! - a fresh [`Fnv1a`] fed the whole file content in one call, for the bytes a read method
//!   delivers: equal digests mean every byte arrived, once, in order.
//!
//! The harness never lists methods or kernels by hand: it iterates [`Method::ALL`] and
//! [`Kernel::ALL`], so a new method or kernel is tested as soon as it is added there. The one
//! place that must know each method, [`needs_size`], is an exhaustive `match` without a `_`
//! arm, so a new method does not compile here until someone decides which group it is in.
//!
//! Corpora are deterministic (a seeded xorshift), so a failure reproduces; the proptests add
//! random inputs on top. Each test collects every mismatch before failing, so one run shows
//! the whole picture (which methods, which sizes, which options) instead of the first case.

use iolab_testkit as common;

use std::collections::BTreeSet;
use std::ffi::CString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::ops::Range;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::time::Instant;

use iolab::kernel::{ByteCounter, Kernel, count_byte, naive_count};
use iolab::task::{Fnv1a, Task};
use iolab::{Error, FileKind, Input, Method, ReadOptions, count_lines};
use proptest::collection::vec;
use proptest::prelude::*;

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

// ------------------------------------------------------------------------------------------
// Shared helpers
// ------------------------------------------------------------------------------------------

/// A deterministic xorshift64 generator: the fixed corpora are the same on every run, so a
/// failure names a case that can be rebuilt, and no extra dependency is needed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        // Any non-zero state works; mixing the seed keeps nearby seeds apart.
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn byte(&mut self) -> u8 {
        (self.next() >> 56) as u8
    }
}

/// Every mismatch a test finds, reported together when the test ends.
#[derive(Default)]
struct Failures(Vec<String>);

impl Failures {
    fn push(&mut self, message: String) {
        self.0.push(message);
    }

    /// `Err` with (up to 40 of) the failures, or `Ok` when there were none.
    fn into_result(self, what: &str) -> Result<(), String> {
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
    fn check(self, what: &str) {
        if let Err(report) = self.into_result(what) {
            panic!("{report}");
        }
    }
}

/// Proptest settings: `cases` cases, and failing inputs saved next to this file (as
/// `tests/differential.proptest-regressions`, to commit) so they are replayed first on
/// later runs. The default location needs a `lib.rs` beside the test, which `tests/` lacks.
fn proptest_config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
        )),
        ..ProptestConfig::default()
    }
}

// ------------------------------------------------------------------------------------------
// 1. Kernels against `naive_count`
// ------------------------------------------------------------------------------------------

/// The bytes the kernels are checked with: the newline they exist for, zero (the SWAR
/// kernel's "byte is zero" trick), and the two bytes with the top bit set (signed versus
/// unsigned compares, `vpsadbw`'s unsigned sums).
const NEEDLES: [u8; 4] = [b'\n', 0x00, 0xFF, 0x80];

/// Every kernel this CPU can run. Kernels it cannot run are named on stderr, not hidden.
fn counters() -> Vec<ByteCounter> {
    let mut counters = Vec::new();
    for kernel in Kernel::ALL {
        match ByteCounter::new(kernel) {
            Some(counter) => counters.push(counter),
            None => {
                common::skip_once(format!(
                    "kernel {kernel} cannot run on this CPU; not tested"
                ));
            }
        }
    }
    counters
}

/// Buffers of `len` bytes, each stressing a different part of a kernel for `needle`.
fn kernel_patterns(len: usize, needle: u8, seed: u64) -> Vec<(&'static str, Vec<u8>)> {
    let mut rng = Rng::new(seed ^ ((len as u64) << 8) ^ u64::from(needle));
    // About one byte in four is the needle: every vector holds a mix.
    let random: Vec<u8> = (0..len)
        .map(|_| {
            if rng.below(4) == 0 {
                needle
            } else {
                rng.byte()
            }
        })
        .collect();
    // Random bytes with the needle replaced: the answer is 0 whatever the kernel folds.
    let none: Vec<u8> = (0..len)
        .map(|_| match rng.byte() {
            b if b == needle => b ^ 1,
            b => b,
        })
        .collect();
    // Bytes one bit away from the needle, with the needle at the first and last position
    // only: catches a compare that is off by a bit and an off-by-one at either end.
    let mut near_miss: Vec<u8> = (0..len).map(|_| needle ^ (1u8 << rng.below(8))).collect();
    if let Some(first) = near_miss.first_mut() {
        *first = needle;
    }
    if let Some(last) = near_miss.last_mut() {
        *last = needle;
    }
    vec![
        ("random", random),
        ("all-needle", vec![needle; len]),
        ("no-needle", none),
        ("near-miss", near_miss),
    ]
}

/// Checks every kernel, and the dispatching [`count_byte`], on `content` placed at each
/// start offset in `offsets` (within 0..64) of a bigger buffer.
///
/// Every other byte of that buffer is `needle`, 64 bytes before and after: a kernel that
/// reads before its slice or past its end (a wrong tail length, an unmasked load) counts
/// them and fails, instead of reading harmless padding.
fn check_kernels(
    counters: &[ByteCounter],
    label: &str,
    content: &[u8],
    needle: u8,
    offsets: Range<usize>,
    failures: &mut Failures,
) {
    let expected = naive_count(content, needle);
    let mut buf = vec![needle; 64 + content.len() + 64];
    for offset in offsets {
        // Restore the padding the previous offset's copy overwrote.
        buf.fill(needle);
        buf[offset..offset + content.len()].copy_from_slice(content);
        let haystack = &buf[offset..offset + content.len()];
        let results = counters
            .iter()
            .map(|c| (c.kernel().name(), c.count(haystack, needle)))
            .chain([("count_byte", count_byte(haystack, needle))]);
        for (name, got) in results {
            if got != expected {
                failures.push(format!(
                    "{name} on {label} (len {}, offset {offset}, needle {needle:#04x}): \
                     got {got}, want {expected}",
                    content.len()
                ));
            }
        }
    }
}

#[test]
fn kernel_availability_matches_byte_counter() {
    // The harness trusts `ByteCounter::new` to say which kernels run; it must agree with
    // `availability`, and the portable kernel must always be there as the reference tier.
    for kernel in Kernel::ALL {
        assert_eq!(
            ByteCounter::new(kernel).is_some(),
            kernel.availability().is_ok(),
            "ByteCounter::new and availability disagree for {kernel}"
        );
    }
    assert!(ByteCounter::new(Kernel::Scalar).is_some());
    assert!(ByteCounter::new(Kernel::best()).is_some());
}

#[test]
fn kernels_every_length_to_300_every_offset() {
    // Every length up to 300 covers every tail length of every kernel (8-byte words,
    // 128-byte AVX2 steps, 256-byte AVX-512 steps with 64-byte masked tails) and more.
    let counters = counters();
    let mut failures = Failures::default();
    for len in 0..=300 {
        for needle in NEEDLES {
            for (name, content) in kernel_patterns(len, needle, 1) {
                check_kernels(&counters, name, &content, needle, 0..64, &mut failures);
            }
        }
    }
    failures.check("kernels, lengths 0..=300");
}

#[test]
fn kernels_page_and_vector_boundaries() {
    // One page and either side of it, and one byte either side of every multiple of 64 up
    // to 70 * 64 (past several AVX2 and AVX-512 steps).
    let mut lengths = BTreeSet::from([4095, 4096, 4097]);
    for k in 1..=70 {
        lengths.extend([64 * k - 1, 64 * k, 64 * k + 1]);
    }
    let counters = counters();
    let mut failures = Failures::default();
    for &len in &lengths {
        for needle in NEEDLES {
            for (name, content) in kernel_patterns(len, needle, 2) {
                check_kernels(&counters, name, &content, needle, 0..64, &mut failures);
            }
        }
    }
    failures.check("kernels, page and vector boundaries");
}

#[test]
fn kernels_fold_boundary_all_needle() {
    // The AVX2 kernel counts in 8-bit lanes and folds them every 255 iterations of 128
    // bytes; with every byte equal to the needle each lane reaches exactly 255 before a
    // fold. One iteration more without a fold would wrap a lane to 0. These lengths sit on
    // either side of one, two and several folds.
    const FOLD: usize = 255 * 128;
    let lengths = [
        FOLD - 1,
        FOLD,
        FOLD + 1,
        FOLD + 128,
        FOLD + 4 * KIB + 3,
        2 * FOLD - 1,
        2 * FOLD,
        2 * FOLD + 1,
        255 * 256 + 1,
        255 * 256 + 4 * KIB + 77,
    ];
    let counters = counters();
    let mut failures = Failures::default();
    for len in lengths {
        for needle in NEEDLES {
            let all = vec![needle; len];
            // All but one byte, so a kernel that answers `len` for a full buffer fails.
            let mut all_but_one = all.clone();
            all_but_one[len / 2] = needle.wrapping_add(1);
            for (name, content) in [("all-needle", all), ("all-but-one", all_but_one)] {
                check_kernels(&counters, name, &content, needle, 0..64, &mut failures);
            }
        }
    }
    // Many folds in one call: 1 MiB + 13 of needles, at a few offsets (all 64 would only
    // repeat the cases above at 16 times the cost).
    for needle in NEEDLES {
        let content = vec![needle; MIB + 13];
        for offset in [0, 1, 31, 32, 33, 63] {
            check_kernels(
                &counters,
                "all-needle 1 MiB",
                &content,
                needle,
                offset..offset + 1,
                &mut failures,
            );
        }
    }
    failures.check("kernels, fold boundary");
}

/// Random bytes with many newlines: short buffers, or long ones that are newlines except
/// for up to 500 random bytes at random places (so AVX2 lanes get close to the fold limit
/// with a random pattern). The long ones are built from the few changed bytes, which is
/// much faster to generate and shrink than 70 000 independent elements.
fn newline_heavy_bytes() -> impl Strategy<Value = Vec<u8>> {
    let long = (
        30_000..70_000usize,
        vec((any::<prop::sample::Index>(), any::<u8>()), 0..500),
    )
        .prop_map(|(len, changes)| {
            let mut bytes = vec![b'\n'; len];
            for (at, byte) in changes {
                bytes[at.index(len)] = byte;
            }
            bytes
        });
    prop_oneof![
        4 => vec(prop_oneof![1 => Just(b'\n'), 3 => any::<u8>()], 0..4096),
        1 => long,
    ]
}

proptest! {
    #![proptest_config(proptest_config(256))]

    #[test]
    fn kernels_match_naive_on_random_bytes(
        content in newline_heavy_bytes(),
        offset in 0usize..64,
        needle in prop_oneof![3 => Just(b'\n'), 1 => any::<u8>()],
    ) {
        let mut failures = Failures::default();
        check_kernels(&counters(), "random", &content, needle, offset..offset + 1, &mut failures);
        failures.into_result("kernels, random bytes").map_err(TestCaseError::fail)?;
    }
}

// ------------------------------------------------------------------------------------------
// 2. Read methods against the content they read
// ------------------------------------------------------------------------------------------

/// Whether `method` needs a size it can trust (and so refuses FIFOs and /proc files), or
/// streams from the file position (and so reads anything).
///
/// An exhaustive match on purpose: a new method stops this file from compiling until it
/// is put in one group, so the FIFO and /proc tests cannot silently skip it.
fn needs_size(method: Method) -> bool {
    match method {
        Method::BufreadLines
        | Method::BufreadChunks
        | Method::Readv
        | Method::Stream
        | Method::Auto => false,
        Method::Direct
        | Method::Mmap
        | Method::MmapAvx2
        | Method::MmapAvx512
        | Method::Uring
        | Method::UringReadv
        | Method::MmapParallel
        | Method::PreadParallel
        | Method::UringDirect => true,
    }
}

/// The methods that can run here, from [`Method::ALL`]; the others are named on stderr.
fn available_methods() -> Vec<Method> {
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
struct Expected {
    lines: u64,
    bytes: u64,
    digest: u64,
    /// The 1-based line where invalid UTF-8 starts, if the content is not UTF-8: then
    /// `bufread-lines` must refuse with exactly this line.
    invalid_utf8_line: Option<u64>,
}

impl Expected {
    fn of(content: &[u8]) -> Expected {
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
fn judge_error(method: Method, error: &Error, expected: &Expected) -> Option<String> {
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
fn check_utf8_refusal(method: Method, expected: &Expected) -> Option<String> {
    match expected.invalid_utf8_line {
        Some(line) if method == Method::BufreadLines => Some(format!(
            "succeeded on invalid UTF-8 (line {line}) instead of Error::InvalidUtf8"
        )),
        _ => None,
    }
}

/// Counts `path` with `method` and checks lines and bytes; then reads it again with the
/// FNV-1a task and checks the digest. Mismatches go to `failures`.
fn check_file(
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

    match count_lines(method, &open(), options) {
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
    match iolab::read::run(method, &open(), options, &mut fnv) {
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
struct Case {
    name: String,
    content: Vec<u8>,
}

impl Case {
    fn new(name: impl Into<String>, content: impl Into<Vec<u8>>) -> Case {
        Case {
            name: name.into(),
            content: content.into(),
        }
    }
}

/// `len` bytes of ASCII text with a newline about every `mean_line` bytes, at positions
/// that depend on `seed`.
fn text(len: usize, mean_line: u64, seed: u64) -> Vec<u8> {
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
fn binary(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    (0..len)
        .map(|_| if rng.below(8) == 0 { b'\n' } else { rng.byte() })
        .collect()
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

#[test]
fn method_list_drives_the_harness() {
    // Every test below iterates `Method::ALL`; this checks that list is one the harness
    // can rely on: unique names that parse back, and a classification for each.
    let mut names = BTreeSet::new();
    for method in Method::ALL {
        assert!(names.insert(method.name()), "duplicate name {method}");
        assert_eq!(method.name().parse::<Method>().ok(), Some(method));
        let _ = needs_size(method);
    }
    // The streaming fallback everything else relies on must always run.
    assert!(Method::BufreadChunks.availability().is_ok());
    assert!(!available_methods().is_empty());

    // A method that cannot run here must say so through `count_lines`, not fail otherwise.
    let dir = tempfile::tempdir().expect("create a temporary directory");
    let path = dir.path().join("small");
    fs::write(&path, b"one\ntwo\n").expect("write a test file");
    for method in Method::ALL {
        if method.availability().is_err() {
            let input = Input::open(&path).expect("open the test file");
            match count_lines(method, &input, &ReadOptions::new()) {
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
                    match count_lines(method, &input, opts) {
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

// ------------------------------------------------------------------------------------------
// 3. A file larger than 4 GiB
// ------------------------------------------------------------------------------------------

/// Bytes available to this user on the file system holding `path`, if `statvfs` says.
fn free_bytes(path: &Path) -> Option<u64> {
    let c_path = CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `c_path` is a NUL-terminated string that outlives the call, and `st` points
    // to writable memory of the size `statvfs` fills.
    let rc = unsafe { libc::statvfs(c_path.as_ptr(), st.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: `statvfs` returned 0, so it initialised `st`.
    let st = unsafe { st.assume_init() };
    #[allow(clippy::unnecessary_cast)] // the field types differ between architectures
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Whether the file system holding `dir` keeps holes: a 256 MiB `set_len` must allocate
/// (almost) nothing. Probed on a scratch file so that a file system without holes never
/// has to allocate the full 4 GiB.
fn supports_sparse_files(dir: &Path) -> io::Result<bool> {
    let path = dir.join("sparse-probe");
    let file = File::create(&path)?;
    file.set_len(256 * MIB as u64)?;
    let allocated = file.metadata()?.blocks() * 512;
    drop(file);
    fs::remove_file(&path)?;
    Ok(allocated < MIB as u64)
}

#[test]
fn methods_on_sparse_file_larger_than_4_gib() {
    // Offsets and sizes past u32::MAX: a method that keeps an offset, a length or a count
    // in 32 bits (or an io_uring length in a u32 that wraps) fails here and nowhere else.
    const LEN: u64 = (1 << 32) + 3;
    let dir = tempfile::tempdir().expect("create a temporary directory");
    match free_bytes(dir.path()) {
        Some(free) if free >= 1 << 30 => {}
        other => {
            return common::skip(format!(
                "under 1 GiB free in {:?} ({other:?} bytes)",
                dir.path()
            ));
        }
    }
    match supports_sparse_files(dir.path()) {
        Ok(true) => {}
        Ok(false) => {
            return common::skip(format!("{:?} does not keep sparse files", dir.path()));
        }
        Err(e) => {
            return common::skip(format!("cannot probe sparse files: {e}"));
        }
    }

    // Newlines every 1 MiB keep every line short (bufread-lines holds a line whole), plus
    // the bytes either side of 2^32 and the very last byte. Holes read as zeros, which
    // are valid UTF-8, so bufread-lines must count this file too.
    let mut newlines: BTreeSet<u64> = (0..LEN).step_by(MIB).collect();
    newlines.extend([(1 << 32) - 1, 1 << 32, (1 << 32) + 1, LEN - 1]);
    let path = dir.path().join("sparse-4g");
    let file = File::create(&path).expect("create the sparse file");
    file.set_len(LEN).expect("set the sparse file's length");
    for &offset in &newlines {
        file.write_all_at(b"\n", offset)
            .expect("write a newline into the sparse file");
    }
    drop(file);
    let expected = newlines.len() as u64;

    let mut failures = Failures::default();
    for method in available_methods() {
        let started = Instant::now();
        let input = Input::open(&path).expect("open the sparse file");
        match count_lines(method, &input, &ReadOptions::new()) {
            Ok(count) => {
                if count.lines != expected || count.bytes != LEN {
                    failures.push(format!(
                        "{method}: got {} lines / {} bytes, want {expected} / {LEN}",
                        count.lines, count.bytes
                    ));
                }
            }
            Err(e) if method == Method::Direct && e.is_unavailable() => {
                common::skip(format!("direct is unavailable for the sparse file: {e}"));
            }
            Err(e) => failures.push(format!("{method}: failed: {e} ({e:?})")),
        }
        eprintln!("  >4 GiB: {method} took {:.2?}", started.elapsed());
    }
    failures.check("methods, sparse file over 4 GiB");
}

// ------------------------------------------------------------------------------------------
// 4. Files without a trustworthy size: /proc, /sys, FIFOs
// ------------------------------------------------------------------------------------------

/// Checks every method on a pseudo file: sized methods must refuse with `SizeUnknown` (a
/// /proc file reports size 0, a sysfs one 4096: trusting either gives a wrong count);
/// streaming ones must count what `std::fs::read` sees. With `exact`, the content is stable
/// between reads, so bytes and digest must match too; otherwise only the line count,
/// which does not change (values in /proc/self/status do).
fn check_pseudo_file(path: &str, exact: bool, failures: &mut Failures) {
    let reference = fs::read(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let expected = Expected::of(&reference);
    assert!(
        expected.lines > 0,
        "{path} has no newline; pick another file"
    );
    let options = [
        ReadOptions::new(),
        ReadOptions::new().buffer_size(7).buffers(3),
    ];
    for opts in &options {
        for method in available_methods() {
            let context = format!("{method} on {path} ({opts:?})");
            let open = || Input::open(Path::new(path)).expect("open the pseudo file");
            let counted = count_lines(method, &open(), opts);
            let mut fnv = Fnv1a::default();
            let digested = iolab::read::run(method, &open(), opts, &mut fnv);
            if needs_size(method) {
                for (task, result) in [
                    ("count", counted.map(|c| c.lines)),
                    ("fnv1a", digested.map(|(_, bytes)| bytes)),
                ] {
                    match result {
                        Err(Error::SizeUnknown { method: name }) if name == method.name() => {}
                        Err(e) => failures.push(format!(
                            "{task}: {context}: want Error::SizeUnknown, got {e:?}"
                        )),
                        Ok(n) => failures.push(format!(
                            "{task}: {context}: want Error::SizeUnknown, got Ok({n})"
                        )),
                    }
                }
                continue;
            }
            match counted {
                Ok(c) if c.lines == expected.lines && (!exact || c.bytes == expected.bytes) => {}
                Ok(c) => failures.push(format!(
                    "count: {context}: got {} lines / {} bytes, want {} / {}",
                    c.lines, c.bytes, expected.lines, expected.bytes
                )),
                Err(e) => failures.push(format!("count: {context}: failed: {e:?}")),
            }
            match digested {
                Ok(_) if !exact || fnv.digest() == expected.digest => {}
                Ok(_) => failures.push(format!("fnv1a: {context}: digest differs")),
                Err(e) => failures.push(format!("fnv1a: {context}: failed: {e:?}")),
            }
        }
    }
}

#[test]
fn methods_on_proc_and_sys_files() {
    let mut failures = Failures::default();
    // Per-process and always there; its values change between reads, its lines do not.
    check_pseudo_file("/proc/self/status", false, &mut failures);
    // Stable content: bytes and digest must match too.
    check_pseudo_file("/proc/version", true, &mut failures);
    // sysfs reports 4096 bytes for every attribute; not every container mounts /sys.
    let sysfs = "/sys/devices/system/cpu/online";
    if Path::new(sysfs).exists() {
        check_pseudo_file(sysfs, true, &mut failures);
    } else {
        common::skip(format!("{sysfs} does not exist; sysfs not tested"));
    }
    failures.check("methods, /proc and /sys files");
}

/// Creates a FIFO at `path`.
fn make_fifo(path: &Path) {
    let c_path = CString::new(path.as_os_str().as_bytes()).expect("path without NUL");
    // SAFETY: `c_path` is a NUL-terminated string that outlives the call; mkfifo only
    // reads it.
    let rc = unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) };
    assert_eq!(rc, 0, "mkfifo failed: {}", io::Error::last_os_error());
}

/// Opens the FIFO at `path` for reading while a thread writes `content` into it in
/// irregular pieces and closes it, and returns what `read` made of the input, with the
/// writer's outcome.
///
/// The pieces (1 byte to 100 KB, against a 64 KiB pipe buffer) make reads return partial
/// buffers that end anywhere, which a sized read of a regular file never does.
fn through_fifo<T>(
    path: &Path,
    content: &[u8],
    read: impl FnOnce(&Input) -> T,
) -> (T, io::Result<()>) {
    let data = content.to_vec();
    let writer_path = path.to_owned();
    let writer = std::thread::spawn(move || -> io::Result<()> {
        // Blocks until the reader below opens its end.
        let mut fifo = OpenOptions::new().write(true).open(&writer_path)?;
        let mut rest = &data[..];
        for size in [1, 7, 4096, 65_537, 13, 100_000].into_iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let n = size.min(rest.len());
            fifo.write_all(&rest[..n])?;
            rest = &rest[n..];
        }
        Ok(())
    });
    // Blocks until the writer opens its end. If the method stops early, dropping the
    // input closes the read end and the writer fails with EPIPE rather than hanging.
    let input = Input::open(path).expect("open the FIFO for reading");
    assert_eq!(input.kind(), FileKind::Fifo);
    let out = read(&input);
    drop(input);
    let written = writer.join().expect("the FIFO writer panicked");
    (out, written)
}

#[test]
fn methods_on_a_fifo() {
    let dir = tempfile::tempdir().expect("create a temporary directory");
    let path = dir.path().join("fifo");
    make_fifo(&path);
    // UTF-8 text, so bufread-lines counts it too; 300 KB is several pipe buffers.
    let mut content = text(300_000, 50, 7);
    content.extend("é€😀\n".repeat(100).into_bytes());
    let expected = Expected::of(&content);
    let mut failures = Failures::default();

    let options = [
        ReadOptions::new(),
        ReadOptions::new().buffer_size(7).buffers(3),
        ReadOptions::new().buffer_size(4096).buffers(2),
    ];
    for method in available_methods().into_iter().filter(|&m| !needs_size(m)) {
        for opts in &options {
            let context = format!("{method} on a FIFO ({opts:?})");
            let (counted, written) =
                through_fifo(&path, &content, |input| count_lines(method, input, opts));
            match counted {
                Ok(c) if c.lines == expected.lines && c.bytes == expected.bytes => {}
                Ok(c) => failures.push(format!(
                    "count: {context}: got {} lines / {} bytes, want {} / {}",
                    c.lines, c.bytes, expected.lines, expected.bytes
                )),
                Err(e) => failures.push(format!("count: {context}: failed: {e:?}")),
            }
            if let Err(e) = written {
                failures.push(format!("count: {context}: the writer failed: {e}"));
            }

            let mut fnv = Fnv1a::default();
            let (digested, written) = through_fifo(&path, &content, |input| {
                iolab::read::run(method, input, opts, &mut fnv)
            });
            match digested {
                Ok((_, bytes)) if bytes == expected.bytes && fnv.digest() == expected.digest => {}
                Ok((_, bytes)) => failures.push(format!(
                    "fnv1a: {context}: digest {:#018x} over {bytes} bytes, want {:#018x} over {}",
                    fnv.digest(),
                    expected.digest,
                    expected.bytes
                )),
                Err(e) => failures.push(format!("fnv1a: {context}: failed: {e:?}")),
            }
            if let Err(e) = written {
                failures.push(format!("fnv1a: {context}: the writer failed: {e}"));
            }
        }
    }

    // Sized methods must refuse a FIFO before reading from it. Opening with O_NONBLOCK
    // needs no writer, so nothing can block if a method wrongly tries to read.
    for method in available_methods().into_iter().filter(|&m| needs_size(m)) {
        let open = || {
            let file = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&path)
                .expect("open the FIFO without a writer");
            Input::from_file(file).expect("wrap the FIFO")
        };
        let mut fnv = Fnv1a::default();
        let results = [
            (
                "count",
                count_lines(method, &open(), &ReadOptions::new()).map(|c| c.lines),
            ),
            (
                "fnv1a",
                iolab::read::run(method, &open(), &ReadOptions::new(), &mut fnv)
                    .map(|(_, bytes)| bytes),
            ),
        ];
        for (task, result) in results {
            match result {
                Err(Error::NotRegularFile { kind, method: name })
                    if kind == FileKind::Fifo.describe() && name == method.name() => {}
                Err(e) => failures.push(format!(
                    "{task}: {method} on a FIFO: want Error::NotRegularFile, got {e:?}"
                )),
                Ok(n) => failures.push(format!(
                    "{task}: {method} on a FIFO: want Error::NotRegularFile, got Ok({n})"
                )),
            }
        }
        if fnv.digest() != Fnv1a::default().digest() {
            failures.push(format!("{method} fed bytes from a FIFO it refused"));
        }
    }
    failures.check("methods, FIFO");
}

// ------------------------------------------------------------------------------------------
// Parallel methods: parts, thread counts and queue depths
// ------------------------------------------------------------------------------------------

/// The parallel and deep-queue methods only split big inputs (parts of at least 8 MiB), so
/// the small corpus above runs them on one thread. This file is big enough to split, with
/// newlines right at and around the part boundaries, and is counted with several thread
/// counts, queue depths and block sizes, from offset 0 and from an unaligned position.
#[test]
fn parallel_and_deep_queue_methods_split_big_files_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big");
    let len = 41 * (1 << 20) + 12_345;
    let mut content: Vec<u8> = (0..len)
        .map(|i| if i % 97 == 0 { b'\n' } else { b'x' })
        .collect();
    for boundary in (1..21).map(|k| k * (2 << 20)) {
        for d in [-1i64, 0, 1] {
            content[(boundary as i64 + d) as usize] = b'\n';
        }
    }
    std::fs::write(&path, &content).unwrap();
    let mut failures = Vec::new();
    for method in [
        Method::MmapParallel,
        Method::PreadParallel,
        Method::UringDirect,
    ] {
        if method.availability().is_err() {
            common::skip(format!("{method} unavailable here"));
            continue;
        }
        let option_sets: Vec<ReadOptions> = match method {
            Method::UringDirect => [1usize, 3, 8, 32]
                .iter()
                .flat_map(|&q| {
                    [4096usize, 1 << 20, 3 << 20]
                        .map(|b| ReadOptions::new().queue_depth(q).buffer_size(b))
                })
                .collect(),
            _ => [1usize, 2, 3, 5, 16]
                .map(|t| ReadOptions::new().threads(t).buffer_size(1 << 20))
                .to_vec(),
        };
        for options in option_sets {
            for start in [0u64, 1, 4097, (len - 3) as u64] {
                let mut file = std::fs::File::open(&path).unwrap();
                std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(start)).unwrap();
                let input = Input::from_file(file).unwrap();
                let expected = naive_count(&content[start as usize..], b'\n');
                match count_lines(method, &input, &options) {
                    Ok(c) if c.lines == expected && c.bytes == len as u64 - start => {}
                    Ok(c) => failures.push(format!(
                        "{method} {options:?} start {start}: {} lines / {} bytes, expected {expected} / {}",
                        c.lines,
                        c.bytes,
                        len as u64 - start
                    )),
                    Err(e) if method == Method::UringDirect && e.is_unavailable() => {
                        common::skip_once(format!("{method}: {e}"));
                    }
                    Err(e) => failures.push(format!("{method} {options:?} start {start}: {e}")),
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
