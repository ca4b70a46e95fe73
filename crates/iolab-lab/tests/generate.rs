//! Tests of the data-set generators (`iolab_lab::generate`): exact sizes, exact line counts,
//! determinism, the CSV shape, and atomic writes that leave nothing behind on failure. No
//! timing assertions. `iolab gen` itself: the binary's `tests/cli_generate.rs`.

use iolab_testkit as common;

use std::fs;
use std::io::{self, Write};
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;

use iolab::Error;
use iolab_lab::generate::{
    AtomicOptions, CsvSpec, GenerateError, LinesSpec, Summary, rows_for_size, write_csv,
    write_file_atomically, write_lines,
};
use iolab_lab::task::{Fnv1a, Task};
use tempfile::TempDir;

const MIB: u64 = 1 << 20;

fn lines(spec: &LinesSpec) -> (Vec<u8>, Summary) {
    let mut out = Vec::new();
    let summary = write_lines(&mut out, spec).expect("generating into a Vec cannot fail");
    (out, summary)
}

fn csv(spec: &CsvSpec) -> (Vec<u8>, Summary) {
    let mut out = Vec::new();
    let summary = write_csv(&mut out, spec).expect("generating into a Vec cannot fail");
    (out, summary)
}

fn newlines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

fn digest(bytes: &[u8]) -> u64 {
    let mut hash = Fnv1a::default();
    hash.feed(bytes);
    hash.digest()
}

/// A writer that accepts `left` bytes, then fails every write with `error`.
struct FailAfter<'a> {
    inner: &'a mut dyn Write,
    left: usize,
    error: fn() -> io::Error,
}

impl Write for FailAfter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.left == 0 {
            return Err((self.error)());
        }
        let n = buf.len().min(self.left);
        let n = self.inner.write(&buf[..n])?;
        self.left -= n;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

// ---------------------------------------------------------------------------------------
// lines

#[test]
fn lines_have_the_exact_size_and_count() {
    let sizes = [
        0,
        1,
        2,
        3,
        54,
        55,
        109,
        110,
        111,
        165,
        166,
        4095,
        4096,
        4097,
        MIB - 1,
        MIB,
        MIB + 7,
        2 * MIB + 13,
    ];
    for mean in [1, 2, 3, 110, 1000] {
        for size in sizes {
            let spec = LinesSpec {
                size,
                mean_line_len: mean,
                seed: size ^ mean,
            };
            let (out, summary) = lines(&spec);
            let context = format!("size {size}, mean {mean}");
            assert_eq!(out.len() as u64, size, "{context}");
            assert_eq!(summary.bytes, size, "{context}");
            assert_eq!(newlines(&out), summary.lines, "{context}");
            if size > 0 {
                assert_eq!(out.last(), Some(&b'\n'), "{context}");
            }
            assert!(
                out.iter()
                    .all(|&b| b == b'\n' || (b' '..=b'~').contains(&b)),
                "{context}: not printable ASCII"
            );
        }
    }
}

#[test]
fn lines_longer_than_the_write_buffer() {
    // Lines of 1.5 to 4.5 MiB cross several 1 MiB chunks.
    let spec = LinesSpec {
        size: 20 * MIB + 3,
        mean_line_len: 3 * MIB,
        seed: 5,
    };
    let (out, summary) = lines(&spec);
    assert_eq!(out.len() as u64, spec.size);
    assert_eq!(newlines(&out), summary.lines);
    assert_eq!(out.last(), Some(&b'\n'));
    assert!(summary.lines >= 4, "{} lines", summary.lines);
}

#[test]
fn lines_are_deterministic() {
    let spec = LinesSpec {
        size: 3 * MIB + 1,
        ..LinesSpec::default()
    };
    let (first, _) = lines(&spec);
    let (second, _) = lines(&spec);
    assert!(first == second, "same spec, different bytes");
    let (other, _) = lines(&LinesSpec {
        seed: spec.seed + 1,
        ..spec
    });
    assert_eq!(other.len(), first.len());
    assert!(other != first, "different seeds, same bytes");
}

#[test]
fn lines_bytes_are_pinned() {
    // A change to these digests changes every generated data set: make it on purpose.
    let (out, summary) = lines(&LinesSpec {
        size: 100_000,
        mean_line_len: 110,
        seed: 1,
    });
    assert_eq!((digest(&out), summary.lines), (LINES_DIGEST, LINES_COUNT));
}
const LINES_DIGEST: u64 = 0x1663_f6b7_cbab_1d80;
const LINES_COUNT: u64 = 918;

#[test]
fn a_smaller_file_is_a_prefix_up_to_its_last_line() {
    let spec = LinesSpec {
        size: 2 * MIB,
        seed: 77,
        ..LinesSpec::default()
    };
    let (big, _) = lines(&spec);
    for size in [1, 500, 4096, MIB + 3] {
        let (small, _) = lines(&LinesSpec { size, ..spec });
        let last_line_start = small[..small.len() - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |at| at + 1);
        assert_eq!(
            small[..last_line_start],
            big[..last_line_start],
            "size {size}"
        );
    }
}

#[test]
fn mean_line_length_is_as_requested() {
    for mean in [20, 110, 500] {
        let spec = LinesSpec {
            size: 4 * MIB,
            mean_line_len: mean,
            seed: mean,
        };
        let (_, summary) = lines(&spec);
        let measured = spec.size as f64 / summary.lines as f64;
        let error = (measured - mean as f64).abs() / mean as f64;
        assert!(error < 0.05, "mean {mean}: measured {measured:.1}");
    }
}

#[test]
fn line_lengths_vary_within_the_documented_range() {
    let spec = LinesSpec {
        size: MIB,
        ..LinesSpec::default()
    };
    let (out, _) = lines(&spec);
    let range = spec.line_len_range();
    assert_eq!(range, 55..=165);
    let lengths: Vec<u64> = out
        .split_inclusive(|&b| b == b'\n')
        .map(|line| line.len() as u64)
        .collect();
    let (last, whole) = lengths.split_last().unwrap();
    assert!(whole.iter().all(|len| range.contains(len)));
    assert!(*last <= *range.end());
    // Uniform over 111 lengths: both ends are reached in ~9500 lines.
    assert!(whole.contains(range.start()) && whole.contains(range.end()));
}

#[test]
fn invalid_lines_specs_are_refused() {
    let zero = LinesSpec {
        mean_line_len: 0,
        ..LinesSpec::default()
    };
    let error = write_lines(&mut Vec::new(), &zero).unwrap_err();
    assert!(matches!(error, GenerateError::InvalidSpec(_)), "{error}");
}

#[test]
fn a_failing_writer_is_reported() {
    let mut sink = Vec::new();
    let mut out = FailAfter {
        inner: &mut sink,
        left: 5000,
        error: || io::Error::other("injected"),
    };
    let spec = LinesSpec {
        size: 3 * MIB,
        ..LinesSpec::default()
    };
    let error = write_lines(&mut out, &spec).unwrap_err();
    assert_eq!(error.to_string(), "cannot write: injected");
    let error = write_csv(&mut out, &CsvSpec::default()).unwrap_err();
    assert!(
        matches!(error, GenerateError::File(Error::Io { .. })),
        "{error}"
    );
}

#[test]
fn a_full_device_is_reported() {
    let Ok(mut full) = fs::OpenOptions::new().write(true).open("/dev/full") else {
        return common::skip("no /dev/full here");
    };
    let error = write_lines(&mut full, &LinesSpec::default()).unwrap_err();
    assert_eq!(error.to_string(), "cannot write: No space left on device");
}

// ---------------------------------------------------------------------------------------
// csv

#[test]
fn csv_rows_have_the_right_shape() {
    for cols in [1, 2, 3, 4, 5, 8, 13] {
        for rows in [0, 1, 2, 1000, 100_000] {
            let spec = CsvSpec {
                rows,
                cols,
                seed: u64::from(cols) * rows,
            };
            let (out, summary) = csv(&spec);
            let context = format!("{rows} rows × {cols} cols");
            assert_eq!(summary.bytes, out.len() as u64, "{context}");
            assert_eq!(summary.lines, rows, "{context}");
            assert_eq!(newlines(&out), rows, "{context}");
            assert!(
                out.iter()
                    .all(|&b| b.is_ascii_digit() || b".-,\n".contains(&b)),
                "{context}: unexpected byte"
            );
            if rows > 0 {
                assert_eq!(out.last(), Some(&b'\n'), "{context}");
            }
            for line in out.split(|&b| b == b'\n').take(rows as usize) {
                let commas = line.iter().filter(|&&b| b == b',').count();
                assert_eq!(commas, cols as usize - 1, "{context}");
                for field in line.split(|&b| b == b',') {
                    assert!(!field.is_empty(), "{context}: empty field");
                    let text = std::str::from_utf8(field).unwrap();
                    assert!(text.parse::<f64>().is_ok(), "{context}: '{text}'");
                }
            }
        }
    }
}

#[test]
fn csv_is_deterministic() {
    let spec = CsvSpec {
        rows: 200_000,
        cols: 7,
        seed: 3,
    };
    let (first, _) = csv(&spec);
    let (second, _) = csv(&spec);
    assert!(first == second, "same spec, different bytes");
    let (other, _) = csv(&CsvSpec { seed: 4, ..spec });
    assert!(other != first, "different seeds, same bytes");
}

#[test]
fn csv_bytes_are_pinned() {
    let (out, summary) = csv(&CsvSpec {
        rows: 1000,
        cols: 6,
        seed: 1,
    });
    assert_eq!((digest(&out), summary.bytes), (CSV_DIGEST, CSV_BYTES));
}
const CSV_DIGEST: u64 = 0x5c14_ba85_07fe_8005;
const CSV_BYTES: u64 = 38938;

#[test]
fn csv_size_estimates_are_close() {
    for cols in [1, 3, 8, 20] {
        let target = 4 * MIB;
        let rows = rows_for_size(cols, target);
        let spec = CsvSpec {
            rows,
            cols,
            seed: 11,
        };
        let (out, _) = csv(&spec);
        for estimate in [target, spec.estimated_size()] {
            let error = (out.len() as f64 - estimate as f64).abs() / estimate as f64;
            assert!(
                error < 0.02,
                "{cols} cols: {} bytes, estimated {estimate}",
                out.len()
            );
        }
    }
    assert_eq!(rows_for_size(0, MIB), 0);
}

#[test]
fn zero_columns_are_refused() {
    let spec = CsvSpec {
        cols: 0,
        ..CsvSpec::default()
    };
    assert!(matches!(
        write_csv(&mut Vec::new(), &spec),
        Err(GenerateError::InvalidSpec(_))
    ));
}

// ---------------------------------------------------------------------------------------
// atomic writes

#[test]
fn atomic_write_puts_the_whole_file_in_place() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("data.txt");
    let spec = LinesSpec {
        size: 3 * MIB + 5,
        ..LinesSpec::default()
    };
    let options = AtomicOptions::new().expected_size(spec.size);
    let summary = write_file_atomically(&path, &options, |out| write_lines(out, &spec)).unwrap();
    let written = fs::read(&path).unwrap();
    assert_eq!(written, lines(&spec).0);
    assert_eq!(newlines(&written), summary.lines);
    assert_eq!(common::names_in(dir.path()), ["data.txt"]);
}

#[test]
fn atomic_write_of_small_writes_and_empty_files() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("small");
    write_file_atomically(&path, &AtomicOptions::new(), |out| {
        for i in 0..1000 {
            writeln!(out, "{i}").map_err(|e| Error::io("cannot write", e))?;
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(newlines(&fs::read(&path).unwrap()), 1000);

    let empty = dir.path().join("empty");
    write_file_atomically(&empty, &AtomicOptions::new(), |out| {
        write_lines(
            out,
            &LinesSpec {
                size: 0,
                ..LinesSpec::default()
            },
        )
    })
    .unwrap();
    assert_eq!(fs::metadata(&empty).unwrap().len(), 0);
}

#[test]
fn a_replaced_file_keeps_its_permissions_only_when_asked() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("settings.json");
    let mode = |p: &std::path::Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let write = |options: AtomicOptions, text: &'static str| {
        write_file_atomically(&path, &options, |out| {
            out.write_all(text.as_bytes())
                .map_err(|e| Error::io("cannot write", e).into())
        })
        .unwrap();
    };
    write(AtomicOptions::new(), "one");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o604)).unwrap();
    write(
        AtomicOptions::new().overwrite(true).keep_permissions(true),
        "two",
    );
    assert_eq!(
        (fs::read_to_string(&path).unwrap(), mode(&path)),
        ("two".into(), 0o604)
    );
    write(AtomicOptions::new().overwrite(true), "three");
    assert_ne!(
        mode(&path),
        0o604,
        "the default mode (0604 would need a umask of 062), not the old file's"
    );
    assert_eq!(common::names_in(dir.path()), ["settings.json"]);
}

#[test]
fn a_failed_write_leaves_nothing_behind() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("data.txt");
    let spec = LinesSpec {
        size: 4 * MIB,
        ..LinesSpec::default()
    };
    let error = write_file_atomically(&path, &AtomicOptions::new(), |out| {
        let mut failing = FailAfter {
            inner: out,
            left: 2 * MIB as usize + 100,
            error: || io::Error::other("injected"),
        };
        write_lines(&mut failing, &spec)
    })
    .unwrap_err();
    assert_eq!(error.to_string(), "cannot write: injected");
    assert!(
        common::names_in(dir.path()).is_empty(),
        "{:?}",
        common::names_in(dir.path())
    );
}

#[test]
fn a_full_disk_is_named_and_leaves_nothing_behind() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("data.txt");
    let spec = LinesSpec {
        size: 4 * MIB,
        ..LinesSpec::default()
    };
    let error = write_file_atomically(&path, &AtomicOptions::new(), |out| {
        let mut failing = FailAfter {
            inner: out,
            left: MIB as usize,
            error: || io::Error::from_raw_os_error(libc_enospc()),
        };
        write_lines(&mut failing, &spec)
    })
    .unwrap_err();
    let GenerateError::NoSpaceWhileGenerating { written, .. } = error else {
        panic!("expected NoSpace, got {error:?}");
    };
    assert_eq!(written, MIB);
    let message = error.to_string();
    assert!(message.starts_with("no space left in "), "{message}");
    assert!(message.ends_with("after writing 1.00 MiB; the partial file was removed"));
    assert!(common::names_in(dir.path()).is_empty());
}

/// `ENOSPC` on Linux (the tests do not depend on the libc crate).
fn libc_enospc() -> i32 {
    28
}

#[test]
fn a_panicking_writer_leaves_nothing_behind() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("data.txt");
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        write_file_atomically(
            &path,
            &AtomicOptions::new(),
            |out| -> Result<(), GenerateError> {
                out.write_all(b"partial").unwrap();
                panic!("writer panicked");
            },
        )
    }));
    assert!(result.is_err());
    assert!(common::names_in(dir.path()).is_empty());
}

#[test]
fn a_missing_directory_is_an_error() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("missing").join("data.txt");
    let error = write_file_atomically(&path, &AtomicOptions::new(), |out| {
        write_lines(
            out,
            &LinesSpec {
                size: 10,
                ..LinesSpec::default()
            },
        )
    })
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "cannot open its directory: No such file or directory"
    );
    assert!(common::names_in(dir.path()).is_empty());
}

#[test]
fn not_enough_space_is_refused_before_writing() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("huge");
    let options = AtomicOptions::new().expected_size(u64::MAX / 2);
    let mut called = false;
    let error = write_file_atomically(&path, &options, |_| {
        called = true;
        Ok(())
    })
    .unwrap_err();
    assert!(!called);
    let GenerateError::NotEnoughSpace { need, have, .. } = &error else {
        panic!("expected NotEnoughSpace, got {error:?}");
    };
    assert_eq!(*need, u64::MAX / 2);
    assert!(*have < *need);
    let message = error.to_string();
    let expected_start = format!(
        "not enough free space in {}: need 8.00 EiB, have ",
        dir.path().display()
    );
    assert!(message.starts_with(&expected_start), "{message}");
    assert!(common::names_in(dir.path()).is_empty());
}

#[test]
fn existing_files_are_replaced_only_when_allowed() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("data.txt");
    fs::write(&path, "keep me\n").unwrap();
    let spec = LinesSpec {
        size: 1000,
        ..LinesSpec::default()
    };
    let error = write_file_atomically(&path, &AtomicOptions::new(), |out| write_lines(out, &spec))
        .unwrap_err();
    assert!(
        matches!(error, GenerateError::File(Error::Exists)),
        "{error}"
    );
    assert_eq!(fs::read(&path).unwrap(), b"keep me\n");
    assert_eq!(common::names_in(dir.path()), ["data.txt"]);

    let options = AtomicOptions::new().overwrite(true);
    write_file_atomically(&path, &options, |out| write_lines(out, &spec)).unwrap();
    assert_eq!(fs::read(&path).unwrap(), lines(&spec).0);
    assert_eq!(common::names_in(dir.path()), ["data.txt"]);
}

#[test]
fn directories_and_symbolic_links_are_not_replaced() {
    let dir = TempDir::new().unwrap();
    let sub = dir.path().join("sub");
    fs::create_dir(&sub).unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink("sub", &link).unwrap();
    let options = AtomicOptions::new().overwrite(true);
    let error = write_file_atomically(&sub, &options, |_| Ok(())).unwrap_err();
    assert!(
        matches!(error, GenerateError::File(Error::IsDirectory)),
        "{error}"
    );
    let error = write_file_atomically(&link, &options, |_| Ok(())).unwrap_err();
    assert_eq!(
        error.to_string(),
        "is a symbolic link, not a regular file, so it cannot be replaced atomically"
    );
    let error = write_file_atomically(Path::new("/"), &options, |_| Ok(())).unwrap_err();
    assert!(matches!(error, GenerateError::NoFileName), "{error}");
    assert_eq!(common::names_in(dir.path()), ["link", "sub"]);
}

#[test]
fn a_taken_temporary_name_is_left_alone() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("data.txt");
    let stale = dir
        .path()
        .join(format!(".data.txt.tmp-{}", std::process::id()));
    fs::write(&stale, "another writer's").unwrap();
    write_file_atomically(&path, &AtomicOptions::new(), |out| {
        out.write_all(b"mine\n")
            .map_err(|e| Error::io("cannot write", e).into())
    })
    .unwrap();
    assert_eq!(fs::read(&path).unwrap(), b"mine\n");
    assert_eq!(fs::read(&stale).unwrap(), b"another writer's");
}
