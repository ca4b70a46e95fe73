//! `uring-direct`: io_uring `READ_FIXED`s with `O_DIRECT` into registered buffers, up to
//! the queue depth in flight per thread — fio's `io_uring` engine with `--direct=1
//! --fixedbufs`, and the CIDR 2022 paper's answer for data beyond memory.
//!
//! **System calls**: `statx(2)` for the `O_DIRECT` alignment, `open(2)` with `O_DIRECT`,
//! per thread `io_uring_setup(2)` and `io_uring_register(2)` of its buffers, then
//! `io_uring_enter(2)` calls that submit at most [`SUBMIT_BATCH`] reads each, and waits
//! that reap every completion there is.
//! **Why small batches**: with all 32 free slots submitted in one call, this virtual disk
//! served the reads as a burst and completed them together: the loop fell into lockstep
//! (a burst of 32 in flight, then none while they were reaped), 32 reads per
//! `io_uring_enter` (strace), p50 410 µs and about 73k IOPS at queue depth 32, where fio,
//! which submits each read as it is freed, reached 95k. Submitting 4 at a time keeps the
//! device fed: 6 interleaved rounds of 3 s at queue depth 32 gave 96.7k IOPS against fio's
//! 90.6k, where batches of 2 gave 93.6k, 8 gave 83.1k, and 32 gave 73.6k. Buffered `uring`
//! keeps whole batches: warm, its reads complete inline, and batches of 4 cost it 15%.
//! **When it wins**: files beyond memory, or cold: no page cache, no eviction, no
//! read-ahead, and as many reads in flight as the device rewards. Warm it gains nothing,
//! since it never reads the cache.
//! **Limits and failures**: io_uring with `IORING_OP_READ_FIXED` and a file system that
//! takes `O_DIRECT`, with a block size that is a multiple of its alignment: otherwise
//! [`Error::Unavailable`](crate::Error::Unavailable) with the reason. If registering buffers fails (a low
//! `RLIMIT_MEMLOCK` on old kernels), plain `READ`s into the same buffers are used.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

use io_uring::types;

use super::pread_direct::{aligned_buffer, check_block, open_aligned};
use super::uring::{RingPlan, run_ring};
use super::{Plan, Tally, run_threads};
use crate::error::Result;
use crate::sys::dio::DirectAlignment;
use crate::sys::uring as ring_support;

const METHOD: &str = "uring-direct";

/// Reads handed to the kernel per `io_uring_enter(2)` at most (see the module doc).
pub(crate) const SUBMIT_BATCH: usize = 4;

/// Whether io_uring with `IORING_OP_READ_FIXED` works here.
pub fn availability() -> Result<(), String> {
    ring_support::require("IORING_OP_READ_FIXED", |s| s.read_fixed)
}

/// The file opened with `O_DIRECT`, and its alignment.
pub(crate) struct Direct {
    file: File,
    align: DirectAlignment,
}

/// Opens `path` with `O_DIRECT`.
pub(crate) fn open(path: &Path, buffered: &File) -> Result<Direct> {
    let (file, align) = open_aligned(path, buffered, METHOD)?;
    Ok(Direct { file, align })
}

/// Runs `O_DIRECT` io_uring reads on every thread of the plan.
pub(crate) fn run(plan: &Plan<'_>, direct: &Direct) -> Result<Vec<Tally>> {
    check_block(&direct.align, plan.options.block_bytes(), METHOD)?;
    let align = direct.align;
    let ring_plan = RingPlan {
        fd: types::Fd(direct.file.as_raw_fd()),
        buffer: &move |block| aligned_buffer(&align, block),
        register: true,
        submit_batch: SUBMIT_BATCH,
        method: METHOD,
    };
    run_threads(plan, |t| run_ring(plan, &ring_plan, t))
}
