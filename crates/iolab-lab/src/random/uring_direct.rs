//! `uring-direct`: io_uring `READ_FIXED`s with `O_DIRECT` into registered buffers, up to
//! the queue depth in flight per thread — fio's `io_uring` engine with `--direct=1
//! --fixedbufs`, and the CIDR 2022 paper's answer for data beyond memory.
//!
//! **System calls**: `statx(2)` for the `O_DIRECT` alignment, `open(2)` with `O_DIRECT`,
//! per thread `io_uring_setup(2)` and `io_uring_register(2)` of its buffers, then
//! `io_uring_enter(2)` calls that submit reads in batches whose size the ring measures as
//! it runs ([`super::batch`]), and waits that reap every completion there is.
//! **When it wins**: files beyond memory, or cold: no page cache, no eviction, no
//! read-ahead, and as many reads in flight as the device rewards. Warm it gains nothing,
//! since it never reads the cache.
//! **Limits and failures**: io_uring with `IORING_OP_READ_FIXED` and a file system that
//! takes `O_DIRECT`, with a block size that is a multiple of its alignment: otherwise
//! [`Error::Unavailable`](iolab::Error::Unavailable) with the reason. If registering buffers fails (a low
//! `RLIMIT_MEMLOCK` on old kernels), plain `READ`s into the same buffers are used.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

use io_uring::types;

use super::pread_direct::{aligned_buffer, check_block, open_aligned};
use super::uring::{RingPlan, run_ring};
use super::{Plan, Tally, run_threads};
use crate::sys::dio::DirectAlignment;
use crate::sys::uring as ring_support;
use iolab::Result;

const METHOD: &str = "uring-direct";

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
        method: METHOD,
    };
    run_threads(plan, |t| run_ring(plan, &ring_plan, t))
}
