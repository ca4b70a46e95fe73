//! `StdoutWriter` lending its pages to a pipe (`vmsplice`, `write/lend.rs`): the bytes each
//! kind of reader gets are exactly the bytes written — records of 1 B to 1 MiB with random
//! content, hundreds of MiB so that the ring is reused thousands of times — and a reader
//! that leaves early is an `EPIPE` error, not a signal. Descriptor 1 is pointed at the pipe
//! (or a file) in this process; the reader is a thread.
//!
//! ONE test function on purpose, as in `write.rs`: libtest prints each finished test's
//! result on descriptor 1, which the test has redirected.

use iolab_testkit as common;
use iolab_testkit::corpus::Rng;
use iolab_testkit::stdout::Redirect;

use std::fs::File;
use std::hash::{DefaultHasher, Hasher};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::thread;
use std::time::Duration;

use iolab::{Error, StdoutWriter, WriteOptions};

/// What a reader got: its length and a hash of its bytes, in order.
#[derive(Debug, PartialEq, Eq)]
struct Got {
    bytes: u64,
    hash: u64,
}

/// A stream's length and hash, fed piece by piece (the hash does not depend on the cuts).
#[derive(Default)]
struct Tally {
    bytes: u64,
    hasher: DefaultHasher,
}

impl Tally {
    fn add(&mut self, piece: &[u8]) {
        self.bytes += piece.len() as u64;
        self.hasher.write(piece);
    }

    fn got(&self) -> Got {
        Got {
            bytes: self.bytes,
            hash: self.hasher.finish(),
        }
    }
}

/// Writes `total` bytes of records of random sizes (1 B to 1 MiB, most of them small:
/// the size's number of bits is uniform) and random bytes through `out`; returns what was
/// written, or the first error.
fn write_records(out: &mut StdoutWriter, total: u64, seed: u64) -> io::Result<Got> {
    let mut rng = Rng::new(seed);
    let mut record = vec![0u8; 1 << 20];
    let mut tally = Tally::default();
    while tally.bytes < total {
        let bits = 1 + rng.below(20);
        let len = (1 + rng.below(1 << bits) as usize).min((total - tally.bytes) as usize);
        for word in record[..len].chunks_mut(8) {
            let r = rng.next_u64().to_le_bytes();
            word.copy_from_slice(&r[..word.len()]);
        }
        out.write_all(&record[..len])?;
        tally.add(&record[..len]);
    }
    out.flush()?;
    Ok(tally.got())
}

/// A reader of the pipe: `read`s into 64 KiB, sleeping `pause` after each.
fn reading(pause: Duration) -> impl FnOnce(io::PipeReader) -> Got + Send + 'static {
    move |mut pipe| {
        let mut buf = vec![0u8; 64 << 10];
        let mut tally = Tally::default();
        loop {
            let n = pipe.read(&mut buf).unwrap();
            if n == 0 {
                return tally.got();
            }
            tally.add(&buf[..n]);
            if !pause.is_zero() {
                thread::sleep(pause);
            }
        }
    }
}

/// A reader that `splice`s the pipe into a file, then reads the file back.
fn splicing(file: File) -> impl FnOnce(io::PipeReader) -> Got + Send + 'static {
    move |pipe| {
        loop {
            // SAFETY: both descriptors are open for the call; no memory of ours is passed.
            let n = unsafe {
                libc::splice(
                    pipe.as_raw_fd(),
                    std::ptr::null_mut(),
                    file.as_raw_fd(),
                    std::ptr::null_mut(),
                    1 << 20,
                    0,
                )
            };
            assert!(n >= 0, "splice: {}", io::Error::last_os_error());
            if n == 0 {
                break;
            }
        }
        let mut tally = Tally::default();
        let mut back = File::open(format!("/proc/self/fd/{}", file.as_raw_fd())).unwrap();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = back.read(&mut buf).unwrap();
            if n == 0 {
                return tally.got();
            }
            tally.add(&buf[..n]);
        }
    }
}

/// Runs `write` with descriptor 1 on a fresh pipe read by `reader` in a thread.
fn through_pipe<T>(
    reader: impl FnOnce(io::PipeReader) -> Got + Send + 'static,
    write: impl FnOnce() -> T,
) -> (T, Got) {
    let (pipe, writer) = io::pipe().unwrap();
    let reader = thread::spawn(move || reader(pipe));
    let result = {
        let _redirect = Redirect::to(&writer);
        drop(writer);
        write()
    };
    (result, reader.join().unwrap())
}

/// The default writer into a pipe, `total` bytes: it must lend, and the reader must get
/// exactly what was written.
fn lent_exactly(
    what: &str,
    reader: impl FnOnce(io::PipeReader) -> Got + Send + 'static,
    total: u64,
) {
    let ((written, lent, why), got) = through_pipe(reader, || {
        let mut out = StdoutWriter::new().unwrap();
        let written = write_records(&mut out, total, total ^ 0x5eed).unwrap();
        let (lent, why) = (out.lent(), out.why().to_string());
        out.finish().unwrap();
        (written, lent, why)
    });
    assert!(why.contains("vmsplice"), "{what}: {why}");
    assert!(
        lent > total / 2,
        "{what}: only {lent} of {total} bytes lent ({why})"
    );
    assert_eq!(
        got, written,
        "{what}: the reader got other bytes than were written"
    );
}

#[test]
fn lent_pages_reach_every_reader_exactly() {
    let dir = common::scratch();
    // A reader as fast as it gets, reading: the ring (4 × the pipe) is reused ~60 times.
    lent_exactly("read", reading(Duration::ZERO), 256 << 20);
    // A slow reader: the pipe stays full, the writer waits on it, the ring wraps ~16 times.
    lent_exactly("slow read", reading(Duration::from_micros(300)), 64 << 20);
    // A reader that splices into a file: the pipe's pages go to the page cache.
    let file = File::create(dir.path().join("spliced")).unwrap();
    lent_exactly("splice to a file", splicing(file), 256 << 20);
    not_lent_into_a_file(&dir);
    not_lent_when_asked(&dir);
    a_reader_that_leaves_is_an_error();
}

/// Into a regular file: no lending, the writer copies as before, every byte there.
fn not_lent_into_a_file(dir: &tempfile::TempDir) {
    let path = dir.path().join("not-a-pipe");
    let file = File::create(&path).unwrap();
    let (written, lent, why) = {
        let _redirect = Redirect::to(&file);
        let mut out = StdoutWriter::new().unwrap();
        let written = write_records(&mut out, 32 << 20, 7).unwrap();
        let (lent, why) = (out.lent(), out.why().to_string());
        out.finish().unwrap();
        (written, lent, why)
    };
    assert_eq!(lent, 0, "{why}");
    assert!(!why.contains("lends"), "{why}");
    let mut tally = Tally::default();
    tally.add(&std::fs::read(&path).unwrap());
    assert_eq!(tally.got(), written);
}

/// `lend_pages(false)` into a pipe: copied, exactly.
fn not_lent_when_asked(dir: &tempfile::TempDir) {
    let _ = dir;
    let ((written, lent), got) = through_pipe(reading(Duration::ZERO), || {
        let mut out = WriteOptions::new().lend_pages(false).stdout().unwrap();
        let written = write_records(&mut out, 16 << 20, 11).unwrap();
        let lent = out.lent();
        out.finish().unwrap();
        (written, lent)
    });
    assert_eq!(lent, 0);
    assert_eq!(got, written);
}

/// A reader that reads 1 MiB and leaves: the writer's next lends fail with `EPIPE`, as an
/// error of kind `BrokenPipe` that classifies as [`Error::BrokenPipe`]; the process lives
/// (Rust programs ignore `SIGPIPE`, which `vmsplice` raises as `write` does).
fn a_reader_that_leaves_is_an_error() {
    let early = |mut pipe: io::PipeReader| {
        let mut buf = vec![0u8; 1 << 20];
        pipe.read_exact(&mut buf).unwrap();
        Got {
            bytes: 1 << 20,
            hash: 0,
        }
    };
    let ((error, lent), _) = through_pipe(early, || {
        let mut out = StdoutWriter::new().unwrap();
        let error = write_records(&mut out, 1 << 30, 3).unwrap_err();
        let lent = out.lent();
        (error, lent)
    });
    assert!(lent >= 1 << 20, "the first MiB was lent: {lent}");
    assert_eq!(error.kind(), io::ErrorKind::BrokenPipe, "{error}");
    let inner = error.into_inner().expect("a classified error");
    let error = inner.downcast::<Error>().expect("an iolab::Error");
    assert!(error.is_broken_pipe(), "{error}");
}
