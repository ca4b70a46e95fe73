//! The plain parts of the differential harness (every read method and kernel against the
//! naive references): named file contents, what a correct read of one yields, the methods
//! that can run here, a collector of mismatches and the proptest settings.
//!
//! The references themselves (`naive_count`, `Fnv1a`) and the methods are `iolab`'s: the
//! test computes them and hands the numbers in (see the crate's doc for why).

use std::fmt::Display;

use proptest::test_runner::{Config, FileFailurePersistence};

use crate::skip_once;

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

/// Proptest settings: `cases` cases, and failing inputs saved next to the test's source
/// file (as `tests/<test>.proptest-regressions`, to commit) so they are replayed first on
/// later runs. The default location needs a `lib.rs` beside the test, which `tests/` lacks.
pub fn proptest_config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..Config::default()
    }
}

/// The methods of `all` that can run here by `availability`; the others are named in one
/// `skipped:` line.
pub fn available_methods<M: Display>(
    all: impl IntoIterator<Item = M>,
    availability: impl Fn(&M) -> Result<(), String>,
) -> Vec<M> {
    let mut skipped = Vec::new();
    let methods = all
        .into_iter()
        .filter(|m| match availability(m) {
            Ok(()) => true,
            Err(reason) => {
                skipped.push(format!("{m} ({reason})"));
                false
            }
        })
        .collect();
    if !skipped.is_empty() {
        skip_once(format!(
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
    /// What a read of `content` yields, given the references' answers for it: its `lines`
    /// (newlines) and its `digest`.
    /// What a correct read of `content` yields, by references of the test kit's own
    /// (a byte-at-a-time count of `\n`, FNV-1a 64 over every byte): written apart from the
    /// library, so that none of its code checks itself.
    pub fn of(content: &[u8]) -> Expected {
        let lines = content.iter().filter(|&&b| b == b'\n').count() as u64;
        let digest = content.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        Expected::new(content, lines, digest)
    }

    pub fn new(content: &[u8], lines: u64, digest: u64) -> Expected {
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
            lines,
            bytes: content.len() as u64,
            digest,
            invalid_utf8_line,
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
