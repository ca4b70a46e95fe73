//! The append suite's `durable` section: what an acknowledged record costs. Each job opens
//! a fresh [`Log`](iolab_lab::durable::Log) (preallocated outside the timer), starts `writers`
//! threads that share [`RECORDS_PER_RUN`] records (at least [`MIN_PER_WRITER`] each) with
//! [`append_durable`](iolab_lab::durable::Log::append_durable), and times from the first
//! append to the last acknowledgement; every call's latency is kept for p50 / p99. Then the
//! log is read back with [`read_records`] and must hold exactly every record, intact.
//!
//! **Grid**: every [`LogPolicy`] × record size ([`RECORD_SIZES`]) × writers ([`WRITERS`]) with
//! group commit, and each policy at [`ALONE_WRITERS`] writers and 512-byte records
//! *without* group commit (each writer syncs alone: the baseline group commit must beat).
//! That whole grid is `--sweep`'s; by default the section measures what the verdict needs
//! (512-byte records from 8 writers, grouped and alone; 8 KiB records and 8 KiB frames
//! from one; about 25 s), and `--quick` keeps 512-byte records, 1 and 8 writers.
//!
//! **Peer**: PostgreSQL's `pg_test_fsync` (when installed; Debian `postgresql-15`), run on
//! a file in the same folder in the same interleaved schedule: its "one 8kB write" rows
//! (`open_datasync`, `fdatasync`, …), which overwrite a preallocated file.
//!
//! All jobs run in one interleaved schedule (the round driver, [`crate::rounds`]).

mod goals;
mod jobs;
mod measure;
mod pg_test_fsync;
mod rows;

use jobs::Grid;
use pg_test_fsync::PG_TEST_FSYNC;

use crate::context::Context;
use crate::error::Result;
use crate::results::Row;
use crate::workdir::WorkDir;
use iolab_lab::durable::LogPolicy;

/// Record payload sizes: a tiny record, a typical one, and PostgreSQL's 8 KiB page.
pub const RECORD_SIZES: [usize; 3] = [8, 512, 8 << 10];
/// Writer threads (`--sweep`; by default 8 for 512-byte records and 1 for 8 KiB).
pub const WRITERS: [usize; 5] = [1, 2, 4, 8, 16];
/// Frame size of the single-writer rows matched to `pg_test_fsync`'s 8 KiB write: a
/// payload of 8 KiB less the frame header, so each record is one 8 KiB write as the
/// peer's (an 8 KiB payload frames to 8 200 bytes, which spans three 4 KiB blocks).
pub const PEER_FRAME_BYTES: usize = 8 << 10;
/// Writers of the rows without group commit.
pub const ALONE_WRITERS: usize = 8;
/// Records per run, shared by the writers: about 0.1 s at one writer on a fast virtual
/// disk, long enough that a run is not one unlucky moment of the device.
pub const RECORDS_PER_RUN: u64 = 1000;
/// Records each writer appends at least (so 16 writers append 1 600).
pub const MIN_PER_WRITER: u64 = 60;
/// `--quick`: records per run, and per writer at least.
const QUICK_RECORDS_PER_RUN: u64 = 100;
const QUICK_MIN_PER_WRITER: u64 = 10;
/// Records appended before the timer starts, by a writer of their own.
const WARMUP_RECORDS: u64 = 10;
/// The warm-up records' writer number (no timed writer has it).
const WARMUP_WRITER: usize = 255;
/// Runs the section in `work`; returns its rows, of suite `suite`.
pub(super) fn section(ctx: &mut Context<'_>, work: &mut WorkDir, suite: &str) -> Result<Vec<Row>> {
    let config = ctx.config;
    let policies: Vec<LogPolicy> = LogPolicy::ALL
        .into_iter()
        .filter(|p| config.wants(p.name()))
        .collect();
    let pg = if config.baselines && config.wants(PG_TEST_FSYNC) {
        let found = pg_test_fsync::find();
        if found.is_none() {
            ctx.notes.push(
                "append durable: peer `pg_test_fsync` skipped: not installed \
                 (apt-get install postgresql-15)"
                    .into(),
            );
        }
        found
    } else {
        None
    };
    let (per_run, min_per_writer) = if config.quick {
        (QUICK_RECORDS_PER_RUN, QUICK_MIN_PER_WRITER)
    } else {
        (RECORDS_PER_RUN, MIN_PER_WRITER)
    };
    let per_writer = |writers: usize| (per_run / writers as u64).max(min_per_writer);
    let grid = if config.quick {
        Grid::Quick
    } else if config.sweep {
        Grid::Sweep
    } else {
        Grid::Answer
    };
    let jobs = jobs::jobs(grid, &policies, pg.is_some());
    let tallies = measure::measure(ctx, work, &jobs, pg.as_deref(), per_writer)?;
    let version = pg.as_deref().and_then(pg_test_fsync::pg_version);
    let rows = rows::rows_with_sections(config.progress, &jobs, tallies, |job, t| {
        rows::rows(suite, job, t, per_writer, version.as_deref())
    });
    ctx.notes.extend(goals::goals(&rows));
    Ok(rows)
}
