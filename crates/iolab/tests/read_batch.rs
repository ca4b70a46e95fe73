//! `RandomAccessFile::read_batch`, through the stable surface only: every block lent is the
//! file's bytes (a file whose bytes are a function of their position, at unaligned offsets
//! and lengths, across and past its end, longer than a ring buffer holds), under every
//! backing forced (a backing this machine or file system refuses is skipped with the
//! reason printed) and the measured one; each request answered exactly once; an empty
//! list; many more requests than the queue depth; a file truncated between open and batch;
//! a batch started from inside another's callback; two threads sharing one file; and a
//! property test over request sets.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use iolab::{BatchBacking, RandomAccessFile, RandomAccessOptions};
use proptest::prelude::*;

/// The file's length: 3 MiB and 777 bytes, so its end is not aligned and a request can be
/// longer than a ring buffer (1 MiB).
const LEN: usize = (3 << 20) + 777;

/// The byte at `position`: differs from its neighbours and from the byte one page away, so
/// a read at the wrong offset cannot pass.
fn byte_at(position: usize) -> u8 {
    let p = position as u64;
    (p.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8 ^ (p >> 12) as u8
}

/// The file, written once per test binary on a real file system (not tmpfs, which refuses
/// `O_DIRECT`), and its bytes.
fn shared_file() -> (&'static Path, &'static [u8]) {
    static FILE: OnceLock<(tempfile::TempDir, PathBuf, Vec<u8>)> = OnceLock::new();
    let (_, path, content) = FILE.get_or_init(|| {
        let dir = iolab_testkit::scratch();
        let (path, content) = write_file(dir.path(), "blocks");
        (dir, path, content)
    });
    (path, content)
}

/// Writes a file of [`LEN`] position-dependent bytes named `name` in `dir`.
fn write_file(dir: &Path, name: &str) -> (PathBuf, Vec<u8>) {
    let content: Vec<u8> = (0..LEN).map(byte_at).collect();
    let path = dir.join(name);
    fs::write(&path, &content).unwrap();
    (path, content)
}

/// The backings to force, and the measured default (`None`).
const BACKINGS: [Option<BatchBacking>; 5] = [
    Some(BatchBacking::Pread),
    Some(BatchBacking::Uring),
    Some(BatchBacking::UringDirect),
    Some(BatchBacking::Map),
    None,
];

/// Opens `path` to batch by `backing` at queue depth `depth` (the measured one when
/// `None`).
fn open(path: &Path, backing: Option<BatchBacking>, depth: Option<usize>) -> RandomAccessFile {
    let mut options = RandomAccessOptions::new();
    if let Some(b) = backing {
        options = options.batch_backing(b);
    }
    if let Some(d) = depth {
        options = options.queue_depth(d);
    }
    options.open(path).unwrap()
}

/// What request `(offset, len)` of a file whose bytes are `content` must lend.
fn expected(content: &[u8], (offset, len): (u64, usize)) -> &[u8] {
    let start = usize::try_from(offset)
        .unwrap_or(usize::MAX)
        .min(content.len());
    &content[start..start.saturating_add(len).min(content.len())]
}

/// Runs the batch; `Ok(None)` when the backing cannot run here (the reason printed), else
/// every request's bytes checked against `content`, each answered once.
fn check(
    file: &RandomAccessFile,
    content: &[u8],
    requests: &[(u64, usize)],
) -> Result<Option<()>, String> {
    let mut seen = vec![0u32; requests.len()];
    let mut wrong = Vec::new();
    let outcome = file.read_batch(requests, |i, block| {
        seen[i] += 1;
        match block {
            Ok(block) if block == expected(content, requests[i]) => {}
            Ok(block) => wrong.push(format!("{:?}: {} bytes, wrong", requests[i], block.len())),
            Err(e) => wrong.push(format!("{:?}: {e}", requests[i])),
        }
    });
    match outcome {
        Err(e) if e.is_unavailable() => {
            eprintln!("skipped: {e}");
            return Ok(None);
        }
        Err(e) => return Err(format!("the batch failed: {e}")),
        Ok(()) => {}
    }
    if let Some(i) = seen.iter().position(|&n| n != 1) {
        return Err(format!("request {i} answered {} times", seen[i]));
    }
    if !wrong.is_empty() {
        return Err(format!(
            "{} of {}: {:?}",
            wrong.len(),
            requests.len(),
            &wrong[..wrong.len().min(5)]
        ));
    }
    Ok(Some(()))
}

/// `n` requests from a small generator: unaligned offsets over the file and a little past
/// it, lengths from 0 to 20 000 bytes, and some of every edge.
fn requests(n: usize, seed: u64) -> Vec<(u64, usize)> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out: Vec<(u64, usize)> = (0..n)
        .map(|_| (next() % (LEN as u64 + 8192), (next() % 20_001) as usize))
        .collect();
    let len = LEN as u64;
    out.extend([
        (0, 4096),
        (len - 100, 4096),     // across the end
        (len, 10),             // at the end
        (len + 5000, 4096),    // past it
        (4095, 2),             // across a page boundary
        (12_345, 0),           // no bytes
        (1000, (1 << 20) + 5), // longer than a ring buffer
        (u64::MAX - 10, 4096), // at the edge of offsets
    ]);
    out
}

#[test]
fn every_backing_lends_the_files_bytes_at_unaligned_offsets_and_lengths() {
    let (path, content) = shared_file();
    let reqs = requests(2000, 7);
    for backing in BACKINGS {
        let file = open(path, backing, Some(8));
        match check(&file, content, &reqs) {
            Ok(Some(())) => {
                if let Some(b) = backing {
                    assert_eq!(file.batch_backing(), Some(b), "{}", file.batch_why());
                }
                let why = file.batch_why();
                let name = file.batch_backing().unwrap().to_string();
                assert!(why.starts_with(&name), "{why}");
                eprintln!("{backing:?}: {why}");
            }
            Ok(None) => assert!(backing.is_some(), "the measured choice always runs"),
            Err(e) => panic!("{backing:?}: {e}"),
        }
    }
}

#[test]
fn a_file_out_of_the_page_cache_is_read_past_it_by_default() {
    let dir = iolab_testkit::scratch();
    let (path, content) = write_file(dir.path(), "cold");
    let eviction = iolab_lab::cache::evict(&path, false).unwrap();
    if eviction.residency > 0.5 {
        eprintln!(
            "skipped: the file stayed {:.0}% cached",
            eviction.residency * 100.0
        );
        return;
    }
    let file = open(&path, None, None);
    check(&file, &content, &requests(500, 13)).unwrap().unwrap();
    let why = file.batch_why();
    let expected = if iolab_lab::random::Method::UringDirect
        .availability()
        .is_err()
    {
        BatchBacking::Pread
    } else if RandomAccessOptions::new()
        .backing(iolab::Backing::Direct)
        .open(&path)
        .is_ok()
    {
        BatchBacking::UringDirect
    } else {
        BatchBacking::Uring
    };
    assert_eq!(file.batch_backing(), Some(expected), "{why}");
    assert!(why.contains("in the page cache"), "{why}");
}

#[test]
fn a_cold_file_whose_requests_come_back_to_a_hot_set_is_read_through_the_page_cache() {
    let dir = iolab_testkit::scratch();
    let (path, content) = write_file(dir.path(), "hot");
    let eviction = iolab_lab::cache::evict(&path, false).unwrap();
    let direct = RandomAccessOptions::new()
        .backing(iolab::Backing::Direct)
        .open(&path)
        .is_ok();
    if eviction.residency > 0.5
        || !direct
        || iolab_lab::random::Method::UringDirect
            .availability()
            .is_err()
    {
        iolab_testkit::skip(format!(
            "the hot-set choice needs a cold file, O_DIRECT and io_uring (cached {:.0}%, \
             O_DIRECT {direct})",
            eviction.residency * 100.0
        ));
        return;
    }
    let file = open(&path, None, None);
    let blocks = (LEN / 4096) as u64;
    // Every block once: no repeats, so past the page cache.
    let spread: Vec<(u64, usize)> = (0..blocks).map(|b| (b * 4096, 4096)).collect();
    check(&file, &content, &spread).unwrap().unwrap();
    assert_eq!(
        file.batch_backing(),
        Some(BatchBacking::UringDirect),
        "{}",
        file.batch_why()
    );
    // Then eight hot blocks again and again, at unaligned offsets: buffered.
    let hot: Vec<(u64, usize)> = (0..2048u64)
        .map(|k| (k % 8 * 4096 * 3 + k % 100, 1000))
        .collect();
    check(&file, &content, &hot).unwrap().unwrap();
    let why = file.batch_why();
    assert_eq!(file.batch_backing(), Some(BatchBacking::Uring), "{why}");
    assert!(why.contains("came back to a recent block"), "{why}");
}

#[test]
fn an_empty_list_makes_no_call() {
    let (path, _) = shared_file();
    for backing in BACKINGS {
        let file = open(path, backing, None);
        file.read_batch(&[], |_, _| panic!("no request")).unwrap();
    }
}

#[test]
fn many_more_requests_than_the_queue_depth_are_each_answered_once() {
    let (path, content) = shared_file();
    let reqs: Vec<(u64, usize)> = (0..5000u64)
        .map(|k| ((k * 7919) % (LEN as u64 / 4096) * 4096, 4096))
        .collect();
    for backing in [
        Some(BatchBacking::Uring),
        Some(BatchBacking::UringDirect),
        None,
    ] {
        for depth in [1, 2, 32] {
            let file = open(path, backing, Some(depth));
            if let Err(e) = check(&file, content, &reqs) {
                panic!("{backing:?} at depth {depth}: {e}");
            }
        }
    }
}

#[test]
fn a_file_truncated_after_open_gives_short_blocks_or_an_error_naming_it() {
    let dir = iolab_testkit::scratch();
    for backing in BACKINGS {
        let (path, content) = write_file(dir.path(), "shrinks");
        let file = open(&path, backing, Some(4));
        let kept = LEN / 2 + 1000;
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(kept as u64)
            .unwrap();
        let reqs = requests(400, 11);
        let mut answered = 0;
        let outcome = file.read_batch(&reqs, |i, block| {
            answered += 1;
            match block {
                // What is lent is the file's bytes, ending no later than the file now does.
                Ok(block) => {
                    let whole = expected(&content, reqs[i]);
                    let now = expected(&content[..kept], reqs[i]);
                    assert!(block.len() <= whole.len(), "{:?}", reqs[i]);
                    assert!(block.len() >= now.len().min(block.len()));
                    assert_eq!(block, &whole[..block.len()], "{backing:?} {:?}", reqs[i]);
                }
                Err(e) => assert_eq!(e.path(), Some(path.as_path()), "{e}"),
            }
        });
        match outcome {
            Err(e) if e.is_unavailable() => eprintln!("skipped: {e}"),
            Err(e) => panic!("{backing:?}: {e}"),
            Ok(()) => assert_eq!(answered, reqs.len()),
        }
    }
}

#[test]
fn a_batch_inside_another_batchs_callback_reads_its_own_blocks() {
    let (path, content) = shared_file();
    let file = open(path, None, Some(4));
    let outer: Vec<(u64, usize)> = (0..16).map(|k| (k * 65_536 + 3, 5000)).collect();
    let inner = requests(50, 3);
    let mut calls = 0;
    file.read_batch(&outer, |i, block| {
        assert_eq!(block.unwrap(), expected(content, outer[i]));
        if i % 5 == 0 {
            check(&file, content, &inner).unwrap().unwrap();
        }
        calls += 1;
    })
    .unwrap();
    assert_eq!(calls, outer.len());
}

#[test]
fn two_threads_share_one_file() {
    let (path, content) = shared_file();
    let file = open(path, None, Some(16));
    std::thread::scope(|s| {
        for seed in [5, 9] {
            let file = &file;
            s.spawn(move || {
                for round in 0..5 {
                    check(file, content, &requests(300, seed + round))
                        .unwrap()
                        .unwrap();
                }
            });
        }
    });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_request_set_is_answered_with_the_files_bytes(
        reqs in proptest::collection::vec((0u64..LEN as u64 + 20_000, 0usize..70_000), 0..80),
        depth in 1usize..40,
        backing in proptest::sample::select(BACKINGS.to_vec()),
    ) {
        let (path, content) = shared_file();
        let file = open(path, backing, Some(depth));
        check(&file, content, &reqs).map_err(TestCaseError::fail)?;
    }
}
