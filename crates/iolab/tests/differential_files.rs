//! Differential tests of the read methods on the files that break naive readers: a sparse
//! file larger than 4 GiB, files without a trustworthy size (`/proc`, `/sys`, FIFOs), and
//! big files split among threads and deep queues. Every method must deliver the same bytes
//! and count as the test kit's references (`Expected::of`).

use iolab_testkit as common;
use iolab_testkit::corpus::{MIB, text};
use iolab_testkit::differential::{Expected, Failures};

use iolab::{Error, FileKind, Input};
use iolab_lab::kernel::naive_count;
use iolab_lab::read::{CountMethod, ReadOptions, count_input};
use iolab_lab::task::Fnv1a;
use std::collections::BTreeSet;
use std::ffi::CString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::time::Instant;

/// The methods that can run here, from [`CountMethod::ALL`]; the others are named on stderr.
fn available_methods() -> Vec<CountMethod> {
    common::differential::available_methods(CountMethod::ALL, |m| m.availability())
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
        match count_input(method, &input, &ReadOptions::new()) {
            Ok(count) => {
                if count.lines != expected || count.bytes != LEN {
                    failures.push(format!(
                        "{method}: got {} lines / {} bytes, want {expected} / {LEN}",
                        count.lines, count.bytes
                    ));
                }
            }
            Err(e) if method == CountMethod::Direct && e.is_unavailable() => {
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
            let counted = count_input(method, &open(), opts);
            let mut fnv = Fnv1a::default();
            let digested = iolab_lab::read::run(method, &open(), opts, &mut fnv);
            if method.needs_size() {
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
    for method in available_methods().into_iter().filter(|&m| !m.needs_size()) {
        for opts in &options {
            let context = format!("{method} on a FIFO ({opts:?})");
            let (counted, written) =
                through_fifo(&path, &content, |input| count_input(method, input, opts));
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
                iolab_lab::read::run(method, input, opts, &mut fnv)
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
    for method in available_methods().into_iter().filter(|&m| m.needs_size()) {
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
                count_input(method, &open(), &ReadOptions::new()).map(|c| c.lines),
            ),
            (
                "fnv1a",
                iolab_lab::read::run(method, &open(), &ReadOptions::new(), &mut fnv)
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
        CountMethod::MmapParallel,
        CountMethod::PreadParallel,
        CountMethod::UringDirect,
    ] {
        if method.availability().is_err() {
            common::skip(format!("{method} unavailable here"));
            continue;
        }
        let option_sets: Vec<ReadOptions> = match method {
            CountMethod::UringDirect => [1usize, 3, 8, 32]
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
                match count_input(method, &input, &options) {
                    Ok(c) if c.lines == expected && c.bytes == len as u64 - start => {}
                    Ok(c) => failures.push(format!(
                        "{method} {options:?} start {start}: {} lines / {} bytes, expected {expected} / {}",
                        c.lines,
                        c.bytes,
                        len as u64 - start
                    )),
                    Err(e) if method == CountMethod::UringDirect && e.is_unavailable() => {
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
