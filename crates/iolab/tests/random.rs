//! Random reads: every method returns verified blocks at random offsets of small generated
//! files (unaligned sizes, the last block, block sizes 512 B to 1 MiB), and a wrong
//! verification is caught. Structure only: no speed is asserted.

use iolab_testkit as common;

use std::path::Path;

use iolab::generate::blocks;
use iolab::random::{self, Method, Options, Pattern, Stop};

fn make(dir: &Path, size: u64) -> std::path::PathBuf {
    let path = dir.join(format!("blocks-{size}"));
    let mut f = std::fs::File::create(&path).unwrap();
    blocks::write_blocks(&mut f, size).unwrap();
    path
}

/// Runs `method`, or says why it cannot run here (`None`).
fn run(method: Method, path: &Path, options: &Options) -> Option<random::Report> {
    match random::run(method, path, options) {
        Ok(r) => Some(r),
        Err(e) if e.is_unavailable() => {
            common::skip(format!("{method}: {e}"));
            None
        }
        Err(e) => panic!("{method}: {e}"),
    }
}

#[test]
fn every_method_reads_verified_blocks_of_unaligned_files_at_every_block_size() {
    let dir = common::scratch();
    // Unaligned sizes: the last block is short; one file smaller than a block.
    for size in [3 * 4096 + 100, 1_000_003, 700] {
        let path = make(dir.path(), size);
        for block in [512, 4096, 65536, 1 << 20] {
            for method in Method::ALL {
                for pattern in Pattern::ALL {
                    let qd = if method.queues() { 4 } else { 1 };
                    let options = Options::new()
                        .block(block)
                        .queue_depth(qd)
                        .pattern(pattern)
                        .stop(Stop::Reads(300));
                    let Some(report) = run(method, &path, &options) else {
                        continue;
                    };
                    assert_eq!(report.reads, 300, "{method} {size} {block}");
                    assert!(
                        report.verified(),
                        "{method} size {size} block {block} {pattern}: {} wrong, first at {:?}",
                        report.mismatches,
                        report.first_mismatch
                    );
                    assert!(report.latency.len() == 300);
                }
            }
        }
    }
}

#[test]
fn two_threads_and_a_duration_also_verify() {
    let dir = common::scratch();
    let path = make(dir.path(), 1 << 20);
    if random::cores() < 2 {
        return common::skip("one core only");
    }
    for method in Method::ALL {
        let options = Options::new()
            .threads(2)
            .stop(Stop::Duration(std::time::Duration::from_millis(30)));
        if let Some(r) = run(method, &path, &options) {
            assert!(r.verified() && r.reads > 0, "{method}");
        }
    }
}

#[test]
fn a_wrong_verification_is_detected() {
    let mut data = Vec::new();
    blocks::write_blocks(&mut data, 5 * 4096 + 17).unwrap();
    let block = |k: usize| &data[k * 4096..((k + 1) * 4096).min(data.len())];
    assert!(blocks::verify(4096, block(1)));
    // Block k's bytes checked at block k+1's offset.
    assert!(!blocks::verify(2 * 4096, block(1)));
    // A torn read: the first half of block 2, the rest of block 3.
    let mut torn = block(2).to_vec();
    torn[2048..].copy_from_slice(&block(3)[2048..]);
    assert!(!blocks::verify(2 * 4096, &torn));
    // The short last block verifies; a zero-filled one does not.
    assert!(blocks::verify(5 * 4096, block(5)));
    assert!(!blocks::verify(0, &[0u8; 4096]));
    // A generated file whose blocks after the first were overwritten fails every read of
    // them in a run.
    let dir = common::scratch();
    let path = dir.path().join("spoilt");
    let mut spoilt = Vec::new();
    blocks::write_blocks(&mut spoilt, 1 << 16).unwrap();
    spoilt[4096..].fill(7);
    std::fs::write(&path, &spoilt).unwrap();
    let options = Options::new().stop(Stop::Reads(200));
    let report = random::run(Method::Pread, &path, &options).unwrap();
    assert_eq!(report.check, random::Check::Generated);
    assert_eq!(report.checked, 200);
    assert!(report.mismatches > 150, "{}", report.mismatches);
    assert!(report.first_mismatch.unwrap() >= 4096);
    assert!(!report.verified());
    // A file of someone else's bytes is sampled: one read in 64, compared with a second pread.
    let path = dir.path().join("sevens");
    std::fs::write(&path, vec![7u8; 1 << 16]).unwrap();
    let report = random::run(Method::Mmap, &path, &options).unwrap();
    assert_eq!(report.check, random::Check::Sampled);
    assert_eq!(report.checked, 4);
    assert!(report.verified());
}

#[test]
fn bad_options_are_refused_with_one_line() {
    let dir = common::scratch();
    let path = make(dir.path(), 8192);
    for (options, method, needle) in [
        (Options::new().block(3000), Method::Pread, "power of two"),
        (Options::new().block(256), Method::Pread, "power of two"),
        (Options::new().block(2 << 20), Method::Pread, "power of two"),
        (Options::new().queue_depth(0), Method::Uring, "queue depth"),
        (
            Options::new().queue_depth(257),
            Method::Uring,
            "queue depth",
        ),
        (
            Options::new().queue_depth(8),
            Method::Pread,
            "one read at a time",
        ),
        (Options::new().threads(0), Method::Pread, "threads"),
    ] {
        let e = random::run(method, &path, &options)
            .unwrap_err()
            .to_string();
        assert!(e.contains(needle) && !e.contains('\n'), "{e}");
    }
    let e = random::run(Method::Pread, dir.path(), &Options::new()).unwrap_err();
    assert_eq!(e.to_string(), "is a directory");
}

#[test]
fn random_access_file_open_says_which_backing_and_why() {
    let dir = common::scratch();
    let path = make(dir.path(), 1 << 16);
    let file = iolab::file::RandomAccessFile::open(&path).unwrap();
    let choice = file.choice().expect("open records its choice");
    assert!(["pread", "mmap", "mmap-random"].contains(&choice.method));
    // A map is used only when chosen (a chosen map may still fall back to pread). The
    // previous form, `mmap == (backing == Mmap || !mmap)`, failed whenever pread was
    // chosen, which depends on the machine's auto.json.
    assert!(choice.mmap || file.backing() != iolab::file::Backing::Mmap);
    assert!(format!("{file:?}").contains(&choice.reason));
    let mut scratch = [0u8; 4096];
    let got = file.read(8192, &mut scratch).unwrap();
    assert!(blocks::verify(8192, got));
}
