//! The library's write methods and [`StdoutWriter`], called in this process with file
//! descriptor 1 pointed at a file, at a pipe drained by a counting thread, at `/dev/full`,
//! at a pipe without a reader, and at a read-only file.
//!
//! This file holds ONE test function on purpose: libtest prints each finished test's
//! result on file descriptor 1, and would print it into whatever the test has put there.
//! With a single test nothing else finishes while descriptor 1 is redirected.

use iolab_testkit as common;
use iolab_testkit::stdout::Redirect;

use std::fs::File;
use std::io::{self, Read, Write};
use std::thread;

use iolab::Error;
use iolab_lab::write::{
    self, DestinationKind, Method, StdoutWriter, WriteOptions, default_buffer_size, probe_stdout,
    write_zeros,
};

/// Runs `f` with descriptor 1 on a fresh pipe drained by a thread; returns `f`'s result,
/// the bytes the thread read and whether they were all zero.
fn through_pipe<T>(f: impl FnOnce() -> T) -> (T, u64, bool) {
    let (mut reader, writer) = io::pipe().unwrap();
    let counter = thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        let (mut total, mut zeros) = (0u64, true);
        loop {
            let n = reader.read(&mut buf).unwrap();
            if n == 0 {
                return (total, zeros);
            }
            total += n as u64;
            zeros &= buf[..n].iter().all(|&b| b == 0);
        }
    });
    let result = {
        let _redirect = Redirect::to(&writer);
        drop(writer);
        f()
    };
    let (total, zeros) = counter.join().unwrap();
    (result, total, zeros)
}

const BUFFER: usize = 4096;

fn sizes() -> Vec<u64> {
    let b = BUFFER as u64;
    vec![
        0,
        1,
        2,
        b - 1,
        b,
        b + 1,
        5 * b - 1,
        5 * b + 1,
        100_003,
        1 << 20,
    ]
}

#[test]
fn write_methods_and_the_stdout_writer_into_real_descriptors() {
    let dir = common::scratch();
    let options = WriteOptions::new().buffer_size(BUFFER);
    // In turn: each redirects descriptor 1, which is the process's.
    into_regular_files(&dir, &options);
    into_pipes(&options);
    default_buffer_and_pipe_size();
    stdout_writer_into_a_pipe();
    stdout_writer_with_any_piece_sizes(&dir);
    a_full_device(&options);
    a_write_that_took_nothing_fails();
    a_failed_write_all_keeps_nothing_of_its_piece(&dir);
    a_pipe_without_a_reader(&options);
    a_read_only_descriptor(&dir, &options);
}

/// Into a regular file: every method but vmsplice, exact and all zeros.
fn into_regular_files(dir: &tempfile::TempDir, options: &WriteOptions) {
    for method in Method::ALL {
        for bytes in sizes() {
            let path = dir.path().join(format!("{method}-{bytes}"));
            let file = File::create(&path).unwrap();
            let result = {
                let _redirect = Redirect::to(&file);
                write_zeros(method, bytes, options)
            };
            if method == Method::Vmsplice {
                let e = result.unwrap_err();
                assert!(e.is_unavailable(), "{e}");
                assert!(e.to_string().contains("not a pipe"), "{e}");
                continue;
            }
            let done = result.unwrap_or_else(|e| panic!("{method} {bytes}: {e}"));
            assert_eq!(done.bytes, bytes);
            assert_eq!(done.buffer_size, BUFFER);
            assert_eq!(done.destination.kind, DestinationKind::RegularFile);
            let content = std::fs::read(&path).unwrap();
            assert_eq!(content.len() as u64, bytes, "{method} {bytes}");
            assert!(content.iter().all(|&b| b == 0), "{method} {bytes}");
        }
    }
}

/// Into a pipe with a counting reader: every method, vmsplice included.
fn into_pipes(options: &WriteOptions) {
    for method in Method::ALL {
        for bytes in sizes() {
            let (result, total, zeros) = through_pipe(|| write_zeros(method, bytes, options));
            let done = result.unwrap_or_else(|e| panic!("{method} {bytes}: {e}"));
            assert_eq!(done.bytes, bytes, "{method}");
            assert_eq!(total, bytes, "{method} {bytes}");
            assert!(zeros, "{method} {bytes}");
            assert_eq!(done.destination.kind, DestinationKind::Pipe);
            assert!(done.destination.pipe_capacity.unwrap() >= 4096);
        }
    }
}

/// The default buffer follows the rule; a requested pipe size is applied.
fn default_buffer_and_pipe_size() {
    let (result, total, _) = through_pipe(|| {
        write_zeros(
            Method::RawFd,
            12_345,
            &WriteOptions::new().pipe_capacity(256 << 10),
        )
    });
    let done = result.unwrap();
    assert_eq!(total, 12_345);
    assert_eq!(done.destination.pipe_capacity, Some(256 << 10));
    assert_eq!(done.buffer_size, default_buffer_size(&done.destination));
}

/// The library writer: small pieces, not line-buffered, flushed on drop.
fn stdout_writer_into_a_pipe() {
    let (capacity, total, zeros) = through_pipe(|| {
        let mut out = StdoutWriter::new().unwrap();
        // Into a pipe it lends its pages by default (write_lend.rs), in a quarter of the
        // pipe it enlarged; else the rule's buffer.
        let expected = match out.why().contains("vmsplice") {
            true => write::vmsplice::default_chunk(&probe_stdout().unwrap()),
            false => default_buffer_size(&probe_stdout().unwrap()),
        };
        assert_eq!(out.capacity(), expected, "{}", out.why());
        for _ in 0..10_000 {
            out.write_all(&[0u8; 99]).unwrap();
        }
        let capacity = out.capacity();
        drop(out);
        capacity
    });
    assert!(capacity >= write::MIN_DEFAULT_BUFFER_SIZE);
    assert_eq!(total, 990_000);
    assert!(zeros);
    // …and with finish(), which reports what it wrote.
    let (result, total, _) = through_pipe(|| {
        let mut out = StdoutWriter::with_capacity(1000).unwrap();
        writeln!(out, "{}", "x".repeat(2500)).unwrap();
        out.write_all(b"tail").unwrap();
        let before = out.written();
        out.finish().map(|()| before)
    });
    // The 2500-byte line is larger than the buffer, so it went out directly; the newline
    // and "tail" waited in the buffer for finish().
    assert_eq!(result.unwrap(), 2500);
    assert_eq!(total, 2505);
}

/// The writer's own buffer: any mix of piece sizes, through `write` and `write_all`,
/// comes out whole and in order, and `written` never runs ahead of what was given.
fn stdout_writer_with_any_piece_sizes(dir: &tempfile::TempDir) {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move |below: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % below
    };
    for case in 0..300 {
        let capacity = 1 + next(300) as usize;
        let path = dir.path().join(format!("pieces-{case}"));
        let file = File::create(&path).unwrap();
        let mut expected = Vec::new();
        let written_before_finish = {
            let _redirect = Redirect::to(&file);
            let mut out = StdoutWriter::with_capacity(capacity).unwrap();
            for _ in 0..40 {
                let len = next(3 * capacity as u64 + 2) as usize;
                let piece: Vec<u8> = (expected.len()..expected.len() + len)
                    .map(|i| (i % 251) as u8)
                    .collect();
                if next(2) == 0 {
                    out.write_all(&piece).unwrap();
                } else {
                    let mut rest = &piece[..];
                    while !rest.is_empty() {
                        let n = out.write(rest).unwrap();
                        assert!(n > 0, "case {case}: write took nothing");
                        rest = &rest[n..];
                    }
                }
                expected.extend_from_slice(&piece);
                assert!(out.written() <= expected.len() as u64, "case {case}");
            }
            let written = out.written();
            out.finish().unwrap();
            written
        };
        let content = std::fs::read(&path).unwrap();
        assert_eq!(
            content.len(),
            expected.len(),
            "case {case} (capacity {capacity})"
        );
        assert!(content == expected, "case {case}: bytes out of order");
        assert!(
            expected.len() as u64 - written_before_finish < capacity as u64,
            "case {case}: more than a buffer was held back"
        );
    }
}

/// A full device: ENOSPC, classified, for every method that can write there.
fn a_full_device(options: &WriteOptions) {
    let full = File::options().write(true).open("/dev/full").unwrap();
    for method in [Method::RawFd, Method::Bufwriter, Method::Stdout] {
        let result = {
            let _redirect = Redirect::to(&full);
            // 1 MiB in 4 KiB pieces: std's stdout passes pieces larger than its 1 KiB
            // buffer straight through, so nothing stays buffered in it after the failure.
            write_zeros(method, 1 << 20, options)
        };
        let e = result.unwrap_err();
        assert!(
            matches!(e, Error::StdoutNoSpace { written: 0, .. }),
            "{method}: {e:?}"
        );
        assert!(e.to_string().contains("No space left on device"), "{e}");
    }
    let (write_error, finish_error) = {
        let _redirect = Redirect::to(&full);
        let mut out = StdoutWriter::with_capacity(4096).unwrap();
        let write_error = out.write_all(&[0u8; 10_000]).unwrap_err();
        (write_error, out.finish())
    };
    assert_eq!(write_error.kind(), io::ErrorKind::StorageFull);
    assert!(
        write_error
            .to_string()
            .starts_with("cannot write to standard output: No space left on device"),
        "{write_error}"
    );
    // The write was larger than the buffer, so it bypassed it: nothing is left to flush.
    assert!(finish_error.is_ok(), "{finish_error:?}");
}

/// `write` fails only when it took nothing: a buffer it completed that cannot be
/// written stays buffered, the next call reports it, and so does `finish`.
fn a_write_that_took_nothing_fails() {
    let full = File::options().write(true).open("/dev/full").unwrap();
    let (first, second, third, finished) = {
        let _redirect = Redirect::to(&full);
        let mut out = StdoutWriter::with_capacity(10).unwrap();
        let first = out.write(b"abcdefgh").unwrap();
        let second = out.write(b"ijkl").unwrap();
        let third = out.write(b"kl").unwrap_err();
        (first, second, third, out.finish())
    };
    assert_eq!(
        (first, second),
        (8, 2),
        "the second write completes the buffer"
    );
    assert_eq!(third.kind(), io::ErrorKind::StorageFull, "{third}");
    assert!(
        matches!(finished, Err(Error::StdoutNoSpace { written: 0, .. })),
        "{finished:?}"
    );
}

/// `write_all` that fails while writing out the buffer it topped up keeps nothing of its
/// piece: what was buffered before still goes out later, the piece does not.
fn a_failed_write_all_keeps_nothing_of_its_piece(dir: &tempfile::TempDir) {
    let full = File::options().write(true).open("/dev/full").unwrap();
    let path = dir.path().join("given-back");
    let file = File::create(&path).unwrap();
    let (mut out, failed) = {
        let _redirect = Redirect::to(&full);
        let mut out = StdoutWriter::with_capacity(10).unwrap();
        out.write_all(b"abcd").unwrap();
        let failed = out.write_all(b"efghijkl").unwrap_err();
        (out, failed)
    };
    assert_eq!(failed.kind(), io::ErrorKind::StorageFull, "{failed}");
    {
        let _redirect = Redirect::to(&file);
        out.flush().unwrap();
    }
    drop(out);
    assert_eq!(std::fs::read(&path).unwrap(), b"abcd");
}

/// A pipe without a reader: EPIPE, classified (Rust ignores SIGPIPE).
fn a_pipe_without_a_reader(options: &WriteOptions) {
    for method in Method::ALL {
        let (reader, writer) = io::pipe().unwrap();
        drop(reader);
        let result = {
            let _redirect = Redirect::to(&writer);
            write_zeros(method, 1 << 20, options)
        };
        let e = result.unwrap_err();
        assert!(e.is_broken_pipe(), "{method}: {e:?}");
    }
    {
        let (reader, writer) = io::pipe().unwrap();
        drop(reader);
        let _redirect = Redirect::to(&writer);
        let mut out = StdoutWriter::with_capacity(10).unwrap();
        let e = out.write_all(b"more than ten bytes").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
        drop(out); // flush on drop must not panic on EPIPE
    }
}

/// Descriptor 1 open for reading only: refused before anything is written.
fn a_read_only_descriptor(dir: &tempfile::TempDir, options: &WriteOptions) {
    let read_only = File::open(dir.path().join("raw-fd-1")).unwrap();
    let results: Vec<Result<_, Error>> = {
        let _redirect = Redirect::to(&read_only);
        let mut results: Vec<Result<(), Error>> = Method::ALL
            .into_iter()
            .map(|m| write_zeros(m, 10, options).map(|_| ()))
            .collect();
        results.push(StdoutWriter::new().map(|_| ()));
        results
    };
    for r in results {
        let e = r.unwrap_err();
        assert!(matches!(e, Error::StdoutClosed { .. }), "{e:?}");
        assert!(e.to_string().contains("open for reading only"), "{e}");
    }
}
