//! The in-place edits and their replace kernel, against references too simple to be wrong.
//!
//! - Kernels: every kernel this CPU has against [`naive_replace`], on every alignment 0..64
//!   and every length 0..300, with guard bytes on both sides that must stay untouched, plus
//!   big buffers and random inputs (proptest).
//! - Strategies: every [`EditStrategy`] × operation × durability over a corpus of edge cases
//!   (empty, no newline, newline first or last, CRLF, binary, sizes around the `std-stream`
//!   buffer and first-read boundaries), compared with a reference edit of the bytes in
//!   memory; then idempotency, refusals that leave the file untouched, and the kernel
//!   choice. The strategy and kernel lists are iterated, never spelled out, so a new one is
//!   tested as soon as it exists.

use iolab_testkit as common;

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use iolab::Error;
use iolab::{EditOp, EditOptions, EditOutcome, EditStrategy};
use iolab_lab::kernel::Kernel;
use iolab_lab::kernel::replace::{Replacer, naive_replace};
use proptest::prelude::*;
use tempfile::TempDir;

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

/// Deterministic bytes: `density` in 256 of them are `,`, one in 64 is `\n`, the rest any
/// other byte (binary included).
fn corpus(len: usize, seed: u64, density: u64) -> Vec<u8> {
    let mut state = seed | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            match state % 256 {
                r if r < density => b',',
                r if r < density + 4 => b'\n',
                _ => (state >> 8) as u8,
            }
        })
        .collect()
}

fn available_replacers() -> Vec<Replacer> {
    Kernel::ALL.into_iter().filter_map(Replacer::new).collect()
}

// ------------------------------------------------------------------------------------------
// Kernels
// ------------------------------------------------------------------------------------------

/// Guard bytes around the slice a kernel is given: any store outside it shows up here.
const GUARD: usize = 80;
const GUARD_BYTE: u8 = b',';

#[test]
fn every_kernel_equals_the_reference_at_every_alignment_and_length() {
    let replacers = available_replacers();
    assert!(!replacers.is_empty());
    let mut failures = Vec::new();
    for density in [0, 40, 255] {
        let source = corpus(300, 0x5eed + density, density);
        for align in 0..64 {
            for len in 0..300 {
                let body = &source[..len];
                let mut expected = body.to_vec();
                let want = naive_replace(&mut expected, b',', b';');
                for r in &replacers {
                    // The guards are `from` bytes too, so a kernel that reads or writes
                    // past its slice changes them.
                    let mut buf = vec![GUARD_BYTE; align + len + GUARD];
                    buf[align..align + len].copy_from_slice(body);
                    let got = r.replace(&mut buf[align..align + len], b',', b';');
                    let guards_intact = buf[..align].iter().all(|&b| b == GUARD_BYTE)
                        && buf[align + len..].iter().all(|&b| b == GUARD_BYTE);
                    if got != want || buf[align..align + len] != expected[..] || !guards_intact {
                        failures.push(format!(
                            "{} density {density} align {align} len {len}: returned {got} \
                             (want {want}), guards intact: {guards_intact}",
                            r.kernel()
                        ));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_kernel_equals_the_reference_on_big_buffers_and_every_byte_pair() {
    for len in [MIB, 4 * MIB + 77] {
        let source = corpus(len, len as u64, 37);
        for r in available_replacers() {
            for (from, to) in [(b',', b';'), (b'\n', b'\0'), (0, 0xff), (0xff, 0)] {
                let mut expected = source.clone();
                let want = naive_replace(&mut expected, from, to);
                let mut got = source.clone();
                assert_eq!(r.replace(&mut got, from, to), want, "{}", r.kernel());
                assert!(
                    got == expected,
                    "{} {from:#x}->{to:#x} len {len}",
                    r.kernel()
                );
            }
        }
    }
    // Every byte value as `from`, on a buffer holding every byte value.
    let all: Vec<u8> = (0..=255u8).cycle().take(3 * 256 + 5).collect();
    for r in available_replacers() {
        for from in 0..=255u8 {
            let to = from.wrapping_add(1);
            let mut expected = all.clone();
            let want = naive_replace(&mut expected, from, to);
            let mut got = all.clone();
            assert_eq!(r.replace(&mut got, from, to), want);
            assert_eq!(got, expected, "{} from {from}", r.kernel());
        }
    }
}

#[test]
fn replacing_a_byte_by_itself_changes_and_counts_nothing() {
    for r in available_replacers() {
        let mut buf = b",,,,".repeat(100);
        assert_eq!(r.replace(&mut buf, b',', b','), 0, "{}", r.kernel());
        assert_eq!(buf, b",,,,".repeat(100));
    }
}

proptest! {
    #[test]
    fn kernels_equal_the_reference_on_random_input(
        data in proptest::collection::vec(any::<u8>(), 0..2000),
        from in any::<u8>(),
        to in any::<u8>(),
        skip in 0usize..64,
    ) {
        let start = skip.min(data.len());
        let mut expected = data.clone();
        let want = naive_replace(&mut expected[start..], from, to);
        for r in available_replacers() {
            let mut got = data.clone();
            prop_assert_eq!(r.replace(&mut got[start..], from, to), want);
            prop_assert_eq!(&got, &expected);
        }
    }

    #[test]
    fn every_strategy_equals_the_reference_on_random_files(
        data in proptest::collection::vec(prop_oneof![Just(b','), Just(b'\n'), any::<u8>()], 0..600),
        buffer in 1usize..40,
    ) {
        let dir = TempDir::new().unwrap();
        for strategy in EditStrategy::ALL {
            let path = write_file(dir.path(), "p", &data);
            EditOptions::new().strategy(strategy).durable(false).buffer_size(buffer)
                .replace_byte(&path, b',', b';').unwrap();
            prop_assert_eq!(fs::read(&path).unwrap(), reference_replace(&data, b',', b';'));
            let path = write_file(dir.path(), "t", &data);
            EditOptions::new().strategy(strategy).durable(false).buffer_size(buffer)
                .truncate_after_first_line(&path).unwrap();
            prop_assert_eq!(fs::read(&path).unwrap(), reference_truncate(&data));
        }
    }
}

// ------------------------------------------------------------------------------------------
// Strategies
// ------------------------------------------------------------------------------------------

fn reference_truncate(data: &[u8]) -> Vec<u8> {
    match data.iter().position(|&b| b == b'\n') {
        Some(at) => data[..=at].to_vec(),
        None => data.to_vec(),
    }
}

fn reference_replace(data: &[u8], from: u8, to: u8) -> Vec<u8> {
    data.iter()
        .map(|&b| if b == from { to } else { b })
        .collect()
}

fn write_file(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let path = dir.join(name);
    let mut f = File::create(&path).unwrap();
    f.write_all(data).unwrap();
    path
}

/// A named file content for the corpus.
struct Case {
    name: String,
    data: Vec<u8>,
}

fn case(name: impl Into<String>, data: Vec<u8>) -> Case {
    Case {
        name: name.into(),
        data,
    }
}

/// Bytes of `len` without a newline, commas every 7, and a newline at each of `at`.
fn with_newlines(len: usize, at: &[usize]) -> Vec<u8> {
    let mut data: Vec<u8> = (0..len)
        .map(|i| {
            if i % 7 == 3 {
                b','
            } else {
                b'a' + (i % 26) as u8
            }
        })
        .collect();
    for &i in at {
        data[i] = b'\n';
    }
    data
}

/// The edge cases every strategy and operation must get right.
fn edge_cases() -> Vec<Case> {
    let binary: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
    let mut cases = vec![
        case("empty", Vec::new()),
        case("one newline", b"\n".to_vec()),
        case("newline first", b"\na,b\nc,d\n".to_vec()),
        case("newline last only", b"a,b,c\n".to_vec()),
        case("no newline", b"a,b,c".to_vec()),
        case("one comma", b",".to_vec()),
        case("no comma", b"abc\ndef\n".to_vec()),
        case("crlf", b"a,b\r\nc,d\r\n".to_vec()),
        case("cr only", b"a,b\rc,d\r".to_vec()),
        case("two lines", b"x,y\nz,w".to_vec()),
        case("binary", binary.clone()),
        case(
            "binary without newline",
            binary
                .iter()
                .map(|&b| if b == b'\n' { 0 } else { b })
                .collect(),
        ),
        case("nul bytes", vec![0, b',', 0, b'\n', 0, b',']),
        case("all commas", vec![b','; 5000]),
    ];
    // Around the first read of a std-stream truncation (64 KiB) and its buffer (1 MiB).
    for boundary in [64 * KIB, MIB] {
        for delta in [-1i64, 0, 1] {
            let at = (boundary as i64 + delta) as usize;
            cases.push(case(
                format!("newline at {at}"),
                with_newlines(boundary + 100, &[at, at + 50]),
            ));
            cases.push(case(
                format!("no newline, {at} bytes"),
                with_newlines(at, &[]),
            ));
            cases.push(case(
                format!("newline last, {at} bytes"),
                with_newlines(at, &[at - 1]),
            ));
        }
    }
    cases
}

/// The buffer sizes `std-stream` is tried with: tiny (many boundaries), odd, the default.
const BUFFERS: [usize; 4] = [1, 7, 4096, iolab_lab::edit::std_stream::DEFAULT_BUFFER_SIZE];

/// Files above this size are not edited with the tiny buffers (a system call per byte).
const TINY_BUFFER_MAX_FILE: usize = 16 * KIB;

fn editors(file_len: usize) -> Vec<(String, EditOptions)> {
    let mut out = Vec::new();
    for strategy in EditStrategy::ALL {
        for durable in [true, false] {
            let buffers: &[usize] = if strategy != EditStrategy::StdStream {
                &BUFFERS[3..]
            } else if file_len > TINY_BUFFER_MAX_FILE {
                &BUFFERS[2..]
            } else {
                &BUFFERS
            };
            for &buffer in buffers {
                out.push((
                    format!("{strategy} durable={durable} buffer={buffer}"),
                    EditOptions::new()
                        .strategy(strategy)
                        .durable(durable)
                        .buffer_size(buffer),
                ));
            }
        }
    }
    out
}

#[test]
fn every_strategy_truncates_like_the_reference() {
    let dir = TempDir::new().unwrap();
    let mut failures = Vec::new();
    for c in edge_cases() {
        let want = reference_truncate(&c.data);
        for (label, editor) in editors(c.data.len()) {
            let path = write_file(dir.path(), "f", &c.data);
            let report = match editor.truncate_after_first_line(&path) {
                Ok(r) => r,
                Err(e) => {
                    failures.push(format!("{label} on {}: {e}", c.name));
                    continue;
                }
            };
            let got = fs::read(&path).unwrap();
            let expected_outcome = if c.data.contains(&b'\n') {
                EditOutcome::Truncated {
                    kept: want.len() as u64,
                }
            } else {
                EditOutcome::NoNewline
            };
            let ok = got == want
                && report.outcome == expected_outcome
                && report.op == EditOp::TruncateAfterFirstLine
                && report.len_before == c.data.len() as u64
                && report.len_after == want.len() as u64
                && report.kernel.is_none()
                && report.durable == (report.phase("sync").is_some())
                && report.phase("open").is_some();
            if !ok {
                failures.push(format!(
                    "{label} on {}: got {} bytes (want {}), report {report:?}",
                    c.name,
                    got.len(),
                    want.len()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_strategy_replaces_like_the_reference() {
    let dir = TempDir::new().unwrap();
    let mut failures = Vec::new();
    for c in edge_cases() {
        for (from, to) in [(b',', b';'), (b'\n', b'\r'), (0u8, 0xffu8)] {
            let want = reference_replace(&c.data, from, to);
            let changed = c.data.iter().filter(|&&b| b == from).count() as u64;
            for (label, editor) in editors(c.data.len()) {
                let path = write_file(dir.path(), "f", &c.data);
                let report = match editor.replace_byte(&path, from, to) {
                    Ok(r) => r,
                    Err(e) => {
                        failures.push(format!("{label} on {}: {e}", c.name));
                        continue;
                    }
                };
                let got = fs::read(&path).unwrap();
                let ok = got == want
                    && report.outcome == EditOutcome::Replaced { changed }
                    && report.op == EditOp::ReplaceByte { from, to }
                    && report.len_before == c.data.len() as u64
                    && report.len_after == c.data.len() as u64
                    && report.kernel == Some(Kernel::best())
                    && report.durable == (report.phase("sync").is_some());
                if !ok {
                    failures.push(format!(
                        "{label} on {} ({from:#x}->{to:#x}): report {report:?}",
                        c.name
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn edits_are_idempotent_and_finish_an_interrupted_run() {
    let dir = TempDir::new().unwrap();
    let data = corpus(3 * MIB + 123, 7, 40);
    let want = reference_replace(&data, b',', b';');
    for strategy in EditStrategy::ALL {
        // An interrupted replace: the first half already done.
        let mut half = data.clone();
        let mid = half.len() / 2;
        naive_replace(&mut half[..mid], b',', b';');
        let remaining = data[mid..].iter().filter(|&&b| b == b',').count() as u64;
        let path = write_file(dir.path(), "half", &half);
        let report = EditOptions::new()
            .strategy(strategy)
            .replace_byte(&path, b',', b';')
            .unwrap();
        assert_eq!(report.outcome, EditOutcome::Replaced { changed: remaining });
        assert!(fs::read(&path).unwrap() == want, "{strategy}");
        // Once more: nothing left to do.
        let report = EditOptions::new()
            .strategy(strategy)
            .replace_byte(&path, b',', b';')
            .unwrap();
        assert_eq!(report.outcome, EditOutcome::Replaced { changed: 0 });
        assert!(fs::read(&path).unwrap() == want, "{strategy}");

        let path = write_file(dir.path(), "lines", &data);
        EditOptions::new()
            .strategy(strategy)
            .truncate_after_first_line(&path)
            .unwrap();
        let once = fs::read(&path).unwrap();
        assert_eq!(once, reference_truncate(&data), "{strategy}");
        let report = EditOptions::new()
            .strategy(strategy)
            .truncate_after_first_line(&path)
            .unwrap();
        assert_eq!(fs::read(&path).unwrap(), once, "{strategy}");
        assert_eq!(
            report.outcome,
            EditOutcome::Truncated {
                kept: once.len() as u64
            }
        );
    }
}

#[test]
fn every_kernel_can_be_chosen_and_is_reported() {
    let dir = TempDir::new().unwrap();
    let data = corpus(100 * KIB + 3, 11, 30);
    let want = reference_replace(&data, b',', b';');
    for kernel in Kernel::ALL {
        for strategy in EditStrategy::ALL {
            let path = write_file(dir.path(), "k", &data);
            let result = EditOptions::new()
                .strategy(strategy)
                .kernel(kernel)
                .replace_byte(&path, b',', b';');
            match kernel.availability() {
                Ok(()) => {
                    assert_eq!(result.unwrap().kernel, Some(kernel));
                    assert!(fs::read(&path).unwrap() == want, "{strategy} {kernel}");
                }
                Err(_) => {
                    let e = result.unwrap_err();
                    assert!(matches!(e.cause(), Error::KernelUnavailable { .. }), "{e}");
                    assert!(fs::read(&path).unwrap() == data, "untouched");
                }
            }
        }
    }
}

#[test]
fn std_whole_refuses_a_file_bigger_than_its_memory_limit_before_reading() {
    let dir = TempDir::new().unwrap();
    let data = b"a,b\nc,d\n".repeat(100);
    let path = write_file(dir.path(), "big", &data);
    let editor = EditOptions::new()
        .strategy(EditStrategy::StdWhole)
        .memory_limit(100);
    for result in [
        editor.replace_byte(&path, b',', b';'),
        editor.truncate_after_first_line(&path),
    ] {
        let e = result.unwrap_err();
        assert!(
            matches!(
                e.cause(),
                Error::TooBigForMemory {
                    len: 800,
                    limit: 100
                }
            ),
            "{e:?}"
        );
        let text = e.cause().to_string();
        assert!(
            text.contains("std-stream") && !text.contains('\n'),
            "{text}"
        );
    }
    assert_eq!(fs::read(&path).unwrap(), data);
    // The other strategies do not need the memory.
    for strategy in [EditStrategy::Mmap, EditStrategy::StdStream] {
        EditOptions::new()
            .strategy(strategy)
            .memory_limit(100)
            .replace_byte(&path, b',', b';')
            .unwrap();
    }
}

#[test]
fn what_is_not_a_regular_writable_file_is_refused_and_left_alone() {
    let dir = TempDir::new().unwrap();
    let sub = dir.path().join("a-directory");
    fs::create_dir(&sub).unwrap();
    let fifo = dir.path().join("a-fifo");
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo has no memory effects.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    let missing = dir.path().join("missing");
    for strategy in EditStrategy::ALL {
        let e = EditOptions::new()
            .strategy(strategy)
            .truncate_after_first_line(&sub)
            .unwrap_err();
        assert!(matches!(e.cause(), Error::IsDirectory), "{e:?}");
        let e = EditOptions::new()
            .strategy(strategy)
            .replace_byte(&fifo, b',', b';')
            .unwrap_err();
        assert!(
            matches!(e.cause(), Error::NotEditable { kind: "FIFO" }),
            "{e:?}"
        );
        let e = EditOptions::new()
            .strategy(strategy)
            .replace_byte(Path::new("/dev/null"), b',', b';')
            .unwrap_err();
        assert!(
            matches!(
                e.cause(),
                Error::NotEditable {
                    kind: "character device"
                }
            ),
            "{e:?}"
        );
        let e = EditOptions::new()
            .strategy(strategy)
            .truncate_after_first_line(&missing)
            .unwrap_err();
        assert_eq!(
            e.cause().to_string(),
            "cannot open: No such file or directory"
        );
        assert!(!missing.exists());
    }
}

#[test]
fn the_strategies_are_listed_by_name_and_available() {
    let listed: Vec<_> = EditStrategy::ALL
        .map(|s| (s.name(), s.availability()))
        .into();
    let names: Vec<&str> = listed.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["mmap", "std-whole", "std-stream"]);
    assert!(listed.iter().all(|(_, a)| a.is_ok()));
    for s in EditStrategy::ALL {
        assert_eq!(s.name().parse::<EditStrategy>().unwrap(), s);
    }
    let e = "fast".parse::<EditStrategy>().unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown strategy `fast`; one of: mmap, std-whole, std-stream"
    );
}

/// `cachestat(2)` (Linux 6.5): the number of dirty page-cache pages of `file`, or `None`
/// where the kernel lacks it.
fn dirty_pages(file: &File) -> Option<u64> {
    use std::os::fd::AsRawFd;
    #[repr(C)]
    struct Range {
        off: u64,
        len: u64,
    }
    #[repr(C)]
    #[derive(Default)]
    struct Stat {
        nr_cache: u64,
        nr_dirty: u64,
        nr_writeback: u64,
        nr_evicted: u64,
        nr_recently_evicted: u64,
    }
    const SYS_CACHESTAT: libc::c_long = 451;
    let range = Range { off: 0, len: 0 };
    let mut stat = Stat::default();
    // SAFETY: both pointers point to live `repr(C)` structs laid out as the kernel expects,
    // for the duration of the call; a zero length means "to the end of the file".
    let rc = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            file.as_raw_fd(),
            &range as *const Range,
            &mut stat as *mut Stat,
            0,
        )
    };
    (rc == 0).then_some(stat.nr_dirty + stat.nr_writeback)
}

#[test]
fn replacing_dirties_only_the_pages_around_the_matches() {
    let dir = common::scratch();
    let len = 32 * MIB;
    let mut data = vec![b'a'; len];
    data[20 * MIB + 5] = b',';
    let page = 4096;
    // The kernel keeps the dirty state per folio, and a page-cache folio can be as large as
    // a PMD (2 MiB on x86-64; ext4 uses such large folios since Linux 6.x), so one changed
    // byte may dirty that much. (EditStrategy, the most pages it may leave dirty): the folio
    // with the match for mmap and std-stream; std-whole writes everything back.
    let largest_folio = (2 * MIB / page) as u64;
    for (strategy, most) in [
        (EditStrategy::Mmap, largest_folio),
        (EditStrategy::StdStream, largest_folio),
        (EditStrategy::StdWhole, (len / page) as u64),
    ] {
        let path = write_file(dir.path(), "sparse-matches", &data);
        let file = File::open(&path).unwrap();
        file.sync_all().unwrap();
        let Some(before) = dirty_pages(&file) else {
            return common::skip("cachestat(2) is unavailable (Linux 6.5+)");
        };
        assert_eq!(before, 0);
        let report = EditOptions::new()
            .strategy(strategy)
            .durable(false)
            .replace_byte(&path, b',', b';')
            .unwrap();
        assert_eq!(report.outcome, EditOutcome::Replaced { changed: 1 });
        let dirty = dirty_pages(&file).unwrap();
        assert!(
            (1..=most).contains(&dirty),
            "{strategy}: {dirty} dirty pages, at most {most} expected"
        );
    }
}

#[test]
fn a_file_truncated_during_an_mmap_edit_is_an_error_not_a_crash() {
    use std::time::Duration;
    let dir = common::scratch();
    let data = vec![b','; 64 * MIB];
    let (mut completed, mut shrank) = (0, 0);
    // Another thread truncates the file to nothing at various moments of the edit: the
    // process must survive, and the edit either complete or report the shrinking.
    for attempt in 0..12u64 {
        let path = write_file(dir.path(), "shrinking", &data);
        let victim = path.clone();
        let truncator = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_micros(attempt * 700));
            fs::OpenOptions::new()
                .write(true)
                .open(&victim)
                .unwrap()
                .set_len(0)
                .unwrap();
        });
        let editor = EditOptions::new()
            .strategy(EditStrategy::Mmap)
            .durable(false);
        let result = if attempt % 2 == 0 {
            editor.replace_byte(&path, b',', b';').map(|_| ())
        } else {
            editor.truncate_after_first_line(&path).map(|_| ())
        };
        truncator.join().unwrap();
        match result.as_ref().map_err(Error::cause) {
            Ok(()) => completed += 1,
            Err(Error::ShrankWhileEdited | Error::Changed { .. }) => shrank += 1,
            Err(e) => panic!("attempt {attempt}: {e}"),
        }
        assert!(
            !fs::read(&path).unwrap().contains(&0),
            "attempt {attempt}: a NUL byte in the file"
        );
    }
    eprintln!("{completed} edits completed first, {shrank} saw the file shrink");
}
