//! Faults while reading: files that shrink or grow under a reader, and memory bounds.

use iolab_testkit as common;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use assert_cmd::cargo::CommandCargoExt;
use iolab::{Error, Input};
use iolab_lab::read::{self, CountMethod, ReadOptions};
use iolab_lab::task::Task;

fn write_file(path: &Path, len: usize) {
    let mut f = File::create(path).unwrap();
    let line = b"0123456789abcdefghijklmnopqrstuvwxyz\n";
    let mut left = len;
    while left > 0 {
        let n = left.min(line.len());
        f.write_all(&line[..n]).unwrap();
        left -= n;
    }
}

/// A task that truncates its own input to zero bytes on the first chunk, then reads the
/// chunk: with a mapped reader, the pages it touches no longer exist (SIGBUS).
struct TruncateThenRead {
    file: File,
    sum: u64,
}

impl Task for TruncateThenRead {
    fn feed(&mut self, chunk: &[u8]) {
        self.file.set_len(0).unwrap();
        self.sum += chunk.iter().map(|&b| u64::from(b)).sum::<u64>();
    }
}

#[test]
fn a_mapped_file_truncated_during_the_scan_is_an_error_not_a_crash() {
    let dir = common::scratch();
    for method in [
        CountMethod::Mmap,
        CountMethod::MmapAvx2,
        CountMethod::MmapAvx512,
        CountMethod::MmapParallel,
    ] {
        if method.availability().is_err() {
            continue;
        }
        let path = dir.path().join(method.name());
        write_file(&path, 4 << 20);
        let input = Input::open(&path).unwrap();
        let mut task = TruncateThenRead {
            file: OpenOptions::new().write(true).open(&path).unwrap(),
            sum: 0,
        };
        let result = read::run(method, &input, &ReadOptions::new(), &mut task);
        assert!(
            matches!(result, Err(Error::FileShrank)),
            "{method}: {result:?}"
        );
    }
}

/// The same through `count_lines`' split path and the CLI: a file shrinking while
/// `iolab count` maps it either gets counted (if the truncation came too late) or
/// reported; the process never dies of SIGBUS.
#[test]
fn iolab_count_survives_concurrent_truncation() {
    let dir = common::scratch();
    let path = dir.path().join("shrinking");
    for round in 0..6 {
        write_file(&path, 16 << 20);
        let child = Command::cargo_bin("iolab")
            .unwrap()
            .args(["count", "--method", "mmap"])
            .arg(&path)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_micros(200 * round));
        OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(4096)
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), None, "killed by a signal: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        if !out.status.success() {
            assert!(
                stderr.contains("shrank") || stderr.contains("is a"),
                "unexpected error: {stderr}"
            );
        }
    }
}

/// Methods that read by offset and expect the size seen at open report a file that
/// shrank before they got to its end.
#[test]
fn offset_readers_report_a_file_that_shrank() {
    let dir = common::scratch();
    let path = dir.path().join("f");
    for method in [
        CountMethod::Direct,
        CountMethod::Uring,
        CountMethod::UringReadv,
        CountMethod::PreadParallel,
        CountMethod::UringDirect,
    ] {
        if method.availability().is_err() {
            continue;
        }
        write_file(&path, 3 << 20);
        let input = Input::open(&path).unwrap();
        // Shrink it after it was opened (and its size recorded), before reading.
        OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(1 << 20)
            .unwrap();
        let result = read::count_input(method, &input, &ReadOptions::new());
        match result {
            Err(Error::FileShrank) => {}
            Err(e) if e.is_unavailable() => {}
            other => panic!("{method}: {other:?}"),
        }
    }
}
