//! `auto`: [`crate::file::RandomAccessFile::open`], the library's default, read as a
//! method, so that `iolab bench random` judges its measured backing against the others;
//! at a queue depth above 1, its batch call ([`crate::file::RandomAccessFile::read_batch`]),
//! handed [`CALL_DEPTHS`] × the depth requests per call, as a storage engine with many
//! lookups to serve would.
//!
//! **System calls**: those of the backing serving each read (`pread`, a copy from a map,
//! or an `O_DIRECT` `pread`), and the turns among them ([`crate::file::measured`]).
//! **Buffers**: page-aligned, as a storage engine's block buffers are, so an `O_DIRECT`
//! read of a whole block needs no bounce copy.

use std::path::Path;
use std::time::Instant;

use super::{Plan, Source, Tally, run_threads};
use crate::buf::AlignedBuf;
use crate::file::{RandomAccessFile, RandomAccessOptions};
use iolab::Result;

/// Requests per batch call, in queue depths: 32. The ring drains at the end of each call
/// (its last reads have fewer beside them), so a call holds many depths' worth.
pub const CALL_DEPTHS: usize = 32;

/// The page alignment of the readers' buffers.
const ALIGN: usize = 4096;

/// A file opened as the library opens it by default.
pub(crate) struct LibraryDefault(RandomAccessFile);

impl LibraryDefault {
    pub(crate) fn open(path: &Path) -> Result<LibraryDefault> {
        Ok(LibraryDefault(RandomAccessFile::open(path)?))
    }

    /// Which backing served last and why.
    pub(crate) fn why(&self) -> String {
        self.0.why()
    }
}

impl Source for LibraryDefault {
    fn buffer(&self, block: usize) -> AlignedBuf {
        AlignedBuf::new(block, ALIGN)
    }

    fn read<'a>(&self, offset: u64, want: usize, buf: &'a mut [u8]) -> Result<&'a [u8]> {
        let n = self.0.read_at(offset, &mut buf[..want])?;
        Ok(&buf[..n])
    }
}

/// `path` opened as the library opens it by default, its batches `depth` deep.
pub(crate) fn open_batched(path: &Path, depth: usize) -> Result<RandomAccessFile> {
    RandomAccessOptions::new().queue_depth(depth).open(path)
}

/// Reads the plan's blocks through `file`'s batch call on every thread: each thread hands
/// it [`CALL_DEPTHS`] × the queue depth requests at a time and checks each block lent.
pub(crate) fn run_batches(plan: &Plan<'_>, file: &RandomAccessFile) -> Result<Vec<Tally>> {
    let depth = plan.options.queue_depth;
    run_threads(plan, |t| {
        let (mut left, mut sampler) = plan.share(t);
        let mut tally = Tally::new(plan);
        let deadline = plan.deadline(Instant::now());
        let mut requests = Vec::with_capacity(depth * CALL_DEPTHS);
        // When each of the last `depth` blocks landed: a block's read went in when the
        // one `depth` places before it freed its slot.
        let mut landed = vec![Instant::now(); depth];
        loop {
            let n = left.map_or(depth * CALL_DEPTHS, |l| {
                l.min((depth * CALL_DEPTHS) as u64) as usize
            });
            if n == 0 {
                return Ok(tally);
            }
            requests.clear();
            requests.extend((0..n).map(|_| plan.extent(sampler.next_block())));
            let start = Instant::now();
            let mut count = 0;
            let mut failed = None;
            file.read_batch(&requests, |i, block| {
                let now = Instant::now();
                let since = if count < depth {
                    start
                } else {
                    landed[count % depth]
                };
                landed[count % depth] = now;
                count += 1;
                let (offset, want) = requests[i];
                match block {
                    Ok(block) => tally.record(offset, want, block, (now - since).as_nanos() as u64),
                    Err(e) => drop(failed.get_or_insert(e)),
                }
            })?;
            if let Some(e) = failed {
                return Err(e);
            }
            if let Some(l) = &mut left {
                *l -= n as u64;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(tally);
            }
        }
    })
}
