//! [`RandomAccessFile::read_batch`](super::RandomAccessFile::read_batch): many point reads
//! in one call, each block lent to the caller as it lands, in any order, with its
//! request's index — what a storage engine with a batch of lookups to serve needs, at the
//! queue depth the device rewards.
//!
//! **Which backing** ([`BatchBacking`], [`super::RandomAccessFile::batch_why`] says which
//! and why), asked of the file's cache state at its first batch and every
//! [`RECHECK_CALLS`] batches after (`cachestat(2)` of 16 windows, as at open), and again
//! when the requests' share of repeats crosses a quarter:
//! - `map`, a file at least [`super::auto::RESIDENT`] in the page cache that the
//!   [`super::RandomAccessFile`] has a map of: each block copied from the map under the
//!   `SIGBUS` guard into a buffer the call owns, no system call;
//! - `uring-direct`, a file that is not, read evenly: io_uring `READ_FIXED`s with
//!   `O_DIRECT` into aligned registered buffers, past the page cache (the winner of the
//!   random suite's cold and beyond-memory conditions, and at 1.0× fio there:
//!   docs/findings/random.md);
//! - `uring`, buffered io_uring reads: for a file that is not cached but whose requests
//!   come back to recent blocks at least a quarter of the time (a hot set, a
//!   Zipf access: the page cache keeps the hot blocks; `file/locality.rs`), where
//!   `O_DIRECT` is refused (tmpfs), or where a cached file has no map;
//! - `pread`, a loop of `pread(2)`s, where io_uring cannot run here (an old kernel, a
//!   seccomp filter, `kernel.io_uring_disabled`).
//!
//! **When it wins**: cold or beyond memory, where one call keeps the device's depth busy:
//! 200 000 random 4 KiB lookups of a 4 GiB file, cold, through `examples/random_batch.rs`
//! ran at 1.00× `fio --ioengine=io_uring --iodepth=32 --direct=1` (medians of 8 interleaved
//! rounds, 28 Nov: docs/findings/random.md). Warm, it copies from the map as `read` does,
//! one call for many. Hand it many requests per call (hundreds or more): the ring drains
//! at each call's end.
//!
//! **Queue depth**: the one [`super::RandomAccessOptions::queue_depth`] asks, else the
//! depth `iolab bench random --sweep` measured fastest on this machine for the file's size
//! class, else [`super::auto::DEFAULT_QUEUE_DEPTH`] (32). The ring is one per thread,
//! made lazily and kept (`file/batch_ring.rs`).
//!
//! **Every byte is the file's**: a block is `len` bytes at `offset`, fewer where the file
//! ended at open, none (an empty slice) for a request at or past that end. Under
//! `O_DIRECT` the covering aligned range is read and the block is its sub-slice, so any
//! offset and length work. A file that shrank since open yields short or empty blocks
//! (the reads end where the file now does), or, from a map, [`Error::FileShrank`]; never
//! another file's bytes or zeros.
//!
//! **Limits**: a request longer than 1 MiB (`batch_ring::MAX_SPAN`) is read by
//! `pread` before the others; the blocks lent are valid only during the callback (copy
//! what is kept). Errors of one read are that request's `Err`, naming the file; the call's
//! own `Err` (a ring that cannot be set up, a failed submission) means the requests not
//! yet answered get no call.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::{Mutex, OnceLock};

use super::batch_ring::{self, MAX_SPAN, Reads};
use super::direct::DirectReader;
use super::locality::{self, Locality};
use super::{Error, Result};
use crate::sys::uring as ring_support;

/// Batches between two looks at the file's cache state: 64.
pub const RECHECK_CALLS: u64 = 64;

crate::named_enum! {
    /// How [`crate::RandomAccessFile::read_batch`] reads, by its kebab-case name.
    #[non_exhaustive]
    pub enum BatchBacking: "batch backing" {
        /// Copies from the file's guarded map: no system call.
        Map = "map",
        /// One `pread(2)` per request.
        Pread = "pread",
        /// io_uring `READ`s through the page cache, up to the queue depth in flight.
        Uring = "uring",
        /// io_uring `READ_FIXED`s with `O_DIRECT` into aligned registered buffers.
        UringDirect = "uring-direct",
    }
}

/// A copy of up to a buffer's bytes at an offset into it: how many.
pub(crate) type ReadInto<'a> = dyn Fn(u64, &mut [u8]) -> Result<usize> + 'a;

/// What a batch reads: the file, its end at open, a copy from its map (when it has one)
/// and its own `O_DIRECT` reader (when it opened one).
pub(crate) struct Target<'a> {
    pub file: &'a File,
    pub end: u64,
    pub map: Option<&'a ReadInto<'a>>,
    pub direct: Option<&'a DirectReader>,
}

/// A file's batch reads: what was asked, and what was chosen and why.
#[derive(Debug)]
pub(crate) struct Batcher {
    asked: Option<BatchBacking>,
    depth: Option<usize>,
    len: u64,
    /// An `O_DIRECT` reader opened for the batches, when the file has none of its own.
    direct: OnceLock<std::result::Result<DirectReader, String>>,
    /// The measured depths of `uring` and `uring-direct`, looked up once.
    depths: [OnceLock<(usize, String)>; 2],
    state: Mutex<Choice>,
}

/// The last choice: the backing, why, and batches since the cache was asked; the
/// requests' repeats, and whether the choice counted them as many.
#[derive(Debug, Default)]
struct Choice {
    calls: u64,
    cached: Option<f64>,
    serving: Option<BatchBacking>,
    why: String,
    locality: Locality,
    repeating: bool,
}

impl Batcher {
    /// A file of `len` bytes read by `asked` (else the measured choice) at queue depth
    /// `depth` (else the measured one).
    pub(crate) fn new(asked: Option<BatchBacking>, depth: Option<usize>, len: u64) -> Batcher {
        Batcher {
            asked,
            depth: depth.map(|d| d.clamp(1, super::auto::MAX_QUEUE_DEPTH)),
            len,
            direct: OnceLock::new(),
            depths: [OnceLock::new(), OnceLock::new()],
            state: Mutex::new(Choice::default()),
        }
    }

    /// Which backing the last batch read by, and why; `None` before the first.
    pub(crate) fn serving(&self) -> Option<BatchBacking> {
        self.lock().serving
    }

    /// The last batch's backing and why, in words.
    pub(crate) fn why(&self) -> String {
        let state = self.lock();
        match state.serving {
            None => "no batch read yet: the first asks the file's cache state".into(),
            Some(_) => state.why.clone(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Choice> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reads every request of `requests`, lending each block to `each` (see the module
    /// docs); errors are not yet tied to the path.
    pub(crate) fn read(
        &self,
        target: &Target<'_>,
        requests: &[(u64, usize)],
        each: &mut dyn FnMut(usize, Result<&[u8]>),
    ) -> Result<()> {
        if requests.is_empty() {
            return Ok(());
        }
        let backing = self.choose(target, requests)?;
        let direct = || self.direct_reader(target).expect("chosen only when open");
        match backing {
            BatchBacking::Map => {
                let map = target.map.expect("chosen only with a map");
                serve_copies(target.end, requests, &mut (0..requests.len()), map, each)
            }
            BatchBacking::Pread => {
                let pread = |offset, buf: &mut [u8]| super::pread_full(target.file, offset, buf);
                serve_copies(target.end, requests, &mut (0..requests.len()), &pread, each)
            }
            BatchBacking::Uring => self.serve_ring(target, None, requests, each),
            BatchBacking::UringDirect => self.serve_ring(target, Some(direct()), requests, each),
        }
    }

    /// The backing for this batch: the one asked (or why it cannot be had), else the
    /// measured choice, asking the cache state again every [`RECHECK_CALLS`] batches and
    /// when the requests' repeats cross a quarter.
    fn choose(&self, target: &Target<'_>, requests: &[(u64, usize)]) -> Result<BatchBacking> {
        let mut state = self.lock();
        if let Some(asked) = self.asked {
            if state.serving.is_none() {
                self.available(target, asked)?;
                state.why = self.describe(asked, "as the options asked");
                state.serving = Some(asked);
            }
            return Ok(asked);
        }
        state.locality.note(requests);
        let repeats = state.locality.repeat_share();
        let repeating = repeats.is_some_and(|r| r >= locality::REPEATS);
        let due = state.calls.is_multiple_of(RECHECK_CALLS) || repeating != state.repeating;
        state.calls += 1;
        if let (false, Some(serving)) = (due, state.serving) {
            return Ok(serving);
        }
        state.cached = crate::cache::residency_windows(target.file).ok();
        state.repeating = repeating;
        let (backing, reason) = self.measured_choice(target, state.cached, repeats);
        state.why = self.describe(backing, &reason);
        state.serving = Some(backing);
        Ok(backing)
    }

    /// The choice for a file `cached` in the page cache whose requests repeat recent blocks
    /// `repeats` of the time, and the reason.
    fn measured_choice(
        &self,
        target: &Target<'_>,
        cached: Option<f64>,
        repeats: Option<f64>,
    ) -> (BatchBacking, String) {
        let resident = cached.is_some_and(|f| f >= super::auto::RESIDENT);
        let state = match cached {
            Some(f) => format!("{:.0}% of the file in the page cache", f * 100.0),
            None => "the file's cache state unknown".into(),
        };
        if resident && target.map.is_some() {
            return (BatchBacking::Map, format!("{state}: copies from its map"));
        }
        if let Err(why) = uring_support() {
            return (
                BatchBacking::Pread,
                format!("{state}; io_uring unavailable: {why}"),
            );
        }
        if resident {
            return (
                BatchBacking::Uring,
                format!("{state}, and no map of it: buffered"),
            );
        }
        if let Some(r) = repeats.filter(|&r| r >= locality::REPEATS) {
            return (
                BatchBacking::Uring,
                format!(
                    "{state}, but {:.0}% of the last {} requests came back to a recent block: \
                     buffered, so the page cache keeps the hot ones",
                    r * 100.0,
                    locality::WINDOW
                ),
            );
        }
        match self.direct_reader(target) {
            Ok(_) => (
                BatchBacking::UringDirect,
                format!("{state}: past it with O_DIRECT"),
            ),
            Err(why) => (
                BatchBacking::Uring,
                format!("{state}; O_DIRECT refused ({why}): buffered"),
            ),
        }
    }

    /// `Ok` when `backing` can read this file here, else why not.
    fn available(&self, target: &Target<'_>, backing: BatchBacking) -> Result<()> {
        let unavailable = |reason: String| Error::Unavailable {
            method: "read_batch",
            reason,
        };
        match backing {
            BatchBacking::Pread => Ok(()),
            BatchBacking::Map if target.map.is_some() => Ok(()),
            BatchBacking::Map => Err(unavailable(
                "the file has no map (empty, not regular, no map slot, or a backing without \
                 one was asked)"
                    .into(),
            )),
            BatchBacking::Uring => uring_support().map_err(unavailable),
            BatchBacking::UringDirect => {
                uring_support().map_err(unavailable)?;
                self.direct_reader(target).map(drop).map_err(unavailable)
            }
        }
    }

    /// `backing` and `reason` in words, with the queue depth for a ring.
    fn describe(&self, backing: BatchBacking, reason: &str) -> String {
        match backing {
            BatchBacking::Uring | BatchBacking::UringDirect => {
                let (depth, why) = self.depth(backing == BatchBacking::UringDirect);
                format!("{backing} at queue depth {depth} ({why}): {reason}")
            }
            BatchBacking::Map | BatchBacking::Pread => format!("{backing}: {reason}"),
        }
    }

    /// The queue depth of a ring, direct or not, and why.
    fn depth(&self, direct: bool) -> (usize, String) {
        if let Some(depth) = self.depth {
            return (depth, "as the options asked".into());
        }
        let method = if direct { "uring-direct" } else { "uring" };
        self.depths[usize::from(direct)]
            .get_or_init(|| super::auto::queue_depth(method, self.len))
            .clone()
    }

    /// The file's `O_DIRECT` reader, or one opened for the batches, or why there is none.
    fn direct_reader<'a>(
        &'a self,
        target: &Target<'a>,
    ) -> std::result::Result<&'a DirectReader, String> {
        if let Some(direct) = target.direct {
            return Ok(direct);
        }
        self.direct
            .get_or_init(|| DirectReader::open(target.file).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Reads the requests through this thread's ring: buffered, or with `direct`. Requests
    /// whose span is over [`MAX_SPAN`] are read first, by `pread` (`O_DIRECT` with
    /// `direct`).
    fn serve_ring(
        &self,
        target: &Target<'_>,
        direct: Option<&DirectReader>,
        requests: &[(u64, usize)],
        each: &mut dyn FnMut(usize, Result<&[u8]>),
    ) -> Result<()> {
        let (depth, _) = self.depth(direct.is_some());
        let reads = match direct {
            Some(d) => Reads {
                fd: d.fd(),
                unit: d.alignment().offset,
                align: d.alignment().buffer_align(),
                end: target.end,
                depth,
            },
            None => Reads {
                fd: target.file.as_raw_fd(),
                unit: 1,
                align: 4096,
                end: target.end,
                depth,
            },
        };
        let oversized = |&i: &usize| reads.span_of(i, requests[i]).len > MAX_SPAN;
        if requests.iter().any(|&r| reads.span_of(0, r).len > MAX_SPAN) {
            let mut big = (0..requests.len()).filter(oversized);
            match direct {
                Some(d) => {
                    let read = |offset, buf: &mut [u8]| d.read_at(offset, buf, target.end);
                    serve_copies(target.end, requests, &mut big, &read, each)?;
                }
                None => {
                    let read = |offset, buf: &mut [u8]| super::pread_full(target.file, offset, buf);
                    serve_copies(target.end, requests, &mut big, &read, each)?;
                }
            }
        }
        let mut rest = (0..requests.len()).filter(|i| !oversized(i));
        batch_ring::serve(&reads, requests, &mut rest, each)
    }
}

/// Whether io_uring's `READ` and `READ_FIXED` work here, else why not.
fn uring_support() -> std::result::Result<(), String> {
    ring_support::require("IORING_OP_READ", |s| s.read)?;
    ring_support::require("IORING_OP_READ_FIXED", |s| s.read_fixed)
}

/// Serves the requests `todo` names one at a time: `read` copies up to a block's bytes
/// into a buffer the call owns, which is lent to `each`.
fn serve_copies(
    end: u64,
    requests: &[(u64, usize)],
    todo: &mut dyn Iterator<Item = usize>,
    read: &ReadInto<'_>,
    each: &mut dyn FnMut(usize, Result<&[u8]>),
) -> Result<()> {
    let mut buf = Vec::new();
    for i in todo {
        let (offset, len) = requests[i];
        let want = usize::try_from(end.saturating_sub(offset))
            .unwrap_or(usize::MAX)
            .min(len);
        if buf.len() < want {
            buf.resize(want, 0);
        }
        match read(offset, &mut buf[..want]) {
            Ok(n) => each(i, Ok(&buf[..n])),
            Err(e) => each(i, Err(e)),
        }
    }
    Ok(())
}
