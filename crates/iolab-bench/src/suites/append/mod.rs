//! The `append` suite: N tiny appends to a file, five ways, with and without `fdatasync`,
//! and C++ `std::fstream` as the baseline — the append write-up's experiment, verified and with
//! the system calls counted.
//!
//! How it measures (data sets, rows, baselines, budget): docs/suites.md#append.

pub mod chart;
mod data;
pub mod durable;
mod fstream;
mod jobs;
mod measure;
mod rows;
pub(crate) mod verdict;
mod verify;

use crate::context::Context;
use crate::error::Result;
use crate::interrupt;
use std::path::Path;

use crate::results::Row;
use crate::suite::Sizes;
use crate::suite::{Column, MethodInfo, Output, Place, Suite};
use iolab_lab::profile::Strategies;

pub use data::Records;
/// The strategies measured, from the library (kept here for the old path).
pub use iolab_lab::append::{Strategy, WRITEV_BATCH};

const SUITE: &str = "append";

/// This suite's entry in the suite table (`crate::suites::SUITES`).
pub const ENTRY: Suite = Suite {
    name: SUITE,
    description: "Small appends and durable appends (`iolab::AppendFile`, `iolab::Log`)",
    sizes: SIZES,
    takes_files: false,
    methods: || {
        let strategies = iolab_lab::append::Strategy::ALL
            .into_iter()
            .map(|s| MethodInfo::new(s.name(), s.availability()));
        let policies = iolab_lab::durable::LogPolicy::ALL
            .into_iter()
            .map(|p| MethodInfo::new(p.name(), p.availability()));
        strategies.chain(policies).collect()
    },
    baselines: &["fstream", "pg_test_fsync"],
    section_keys: &["payload_bytes", "sync_policy", "section", "record_bytes"],
    identity_keys: &[
        "variant",
        "payload_bytes",
        "sync_policy",
        "section",
        "policy",
        "record_bytes",
        "writers",
        "group_commit",
    ],
    columns: &[
        Column::significant("ns_per_record", "ns/record", Place::AfterThroughput),
        Column::significant(
            "syscalls_per_record",
            "syscalls/record",
            Place::AfterThroughput,
        ),
        Column::significant("writers", "writers", Place::AfterMethod),
        Column::significant("records_per_s", "records/s", Place::AfterThroughput),
        Column::significant("p50_us", "p50 µs", Place::AfterThroughput),
        Column::significant("p99_us", "p99 µs", Place::AfterThroughput),
    ],
    charts: chart::charts,
    verdict: verdict::verdicts,
    is_default,
    default_rows: None,
    run,
};

/// `AppendFile` buffer sizes measured beside its default in the tiny-record section (5-byte
/// records, no sync): the fastest, when it beats the default beyond the noise, becomes
/// this machine's `AppendFile` buffer (the profile's `append` `buffer` entry).
pub const BUFFER_SWEEP: [usize; 3] = [16 << 10, 256 << 10, 1 << 20];
/// Records per run with sync policy `none`: the append write-up's 1 M (capped by [`MAX_RUN_BYTES`]).
pub const DEFAULT_RECORDS: u64 = 1_000_000;
/// Payload sizes swept with sync policy `none`; the first is the append write-up's 5 bytes, used
/// by the sync sections too.
pub const PAYLOADS: [usize; 4] = [5, 64, 512, 4096];
/// Bytes per run at most: 16 MiB keeps each big-record run about as short as the 5-byte
/// one (and well inside the page cache), so the whole suite takes about 30 s.
pub const MAX_RUN_BYTES: u64 = 16 << 20;
/// `every-K`: records per `fdatasync` (a group commit of 1000 records).
pub const SYNC_EVERY_K: u64 = 1000;
/// `every-K`: records per run, i.e. 50 `fdatasync`s.
pub const EVERY_K_RECORDS: u64 = 50_000;
/// `every-record`: records per run, each followed by an `fdatasync` (milliseconds each on
/// a virtual disk).
pub const EVERY_RECORD_RECORDS: u64 = 50;
/// `--quick`: records per run with sync `none`.
const QUICK_RECORDS: u64 = 100_000;
/// `--quick`: bytes per run at most.
const QUICK_MAX_RUN_BYTES: u64 = 1 << 20;
/// Bytes per run at most, for the suite table; `--size` does not apply to this suite.
pub const SIZES: Sizes = Sizes {
    full: MAX_RUN_BYTES,
    quick: QUICK_MAX_RUN_BYTES,
    follows_size_option: false,
};
/// `--quick`: records per `every-K` run (5 syncs).
const QUICK_EVERY_K_RECORDS: u64 = 5_000;
/// `--quick`: records per `every-record` run.
const QUICK_EVERY_RECORD_RECORDS: u64 = 10;

/// When the records are made durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncPolicy {
    /// Never: the records end in the page cache (the append write-up's experiment).
    None,
    /// `fdatasync` after every [`SYNC_EVERY_K`] records.
    EveryK,
    /// `fdatasync` after every record.
    EveryRecord,
}

impl SyncPolicy {
    /// `none`, `every-K` or `every-record`: the rows' `sync_policy`.
    pub fn name(self) -> &'static str {
        match self {
            SyncPolicy::None => "none",
            SyncPolicy::EveryK => "every-K",
            SyncPolicy::EveryRecord => "every-record",
        }
    }

    /// Records per `fdatasync`, if any.
    pub fn interval(self) -> Option<u64> {
        match self {
            SyncPolicy::None => None,
            SyncPolicy::EveryK => Some(SYNC_EVERY_K),
            SyncPolicy::EveryRecord => Some(1),
        }
    }

    /// The `fdatasync` calls of a run of `records` records: one per interval, and one
    /// for a partial last interval.
    pub(crate) fn syncs(self, records: u64) -> u64 {
        self.interval().map_or(0, |k| records.div_ceil(k))
    }
}

/// One table: a payload size, a record count and a sync policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Section {
    /// Bytes per record.
    pub payload: usize,
    /// Records per run.
    pub records: u64,
    /// When records are made durable.
    pub sync: SyncPolicy,
}

/// Whether `row` is what a library call with no options makes: `AppendFile` (its own
/// buffer) in the record sections; in the durable section, marked by `run` (`Log::open`'s
/// policy for the data folder's device, with group commit).
fn is_default(row: &Row) -> bool {
    match row.extra.get("section").and_then(serde_json::Value::as_str) {
        Some("durable") => row.is_default(),
        _ => {
            !row.baseline
                && row.method == iolab_lab::append::Strategy::AppendFile.name()
                && !row.extra.contains_key("variant")
        }
    }
}

/// The durable section's `rows` after saving the winner `Log::open` follows (measured in
/// `dir`), with the rows it makes without options marked `default`.
fn with_durable_default(ctx: &mut Context<'_>, mut rows: Vec<Row>, dir: &Path) -> Vec<Row> {
    use iolab_lab::durable::{PROFILE_CONDITIONS, default_policy};
    let refs: Vec<&Row> = rows.iter().collect();
    for v in verdict::durable_verdicts(&refs)
        .into_iter()
        .filter(|v| PROFILE_CONDITIONS.contains(&v.condition.as_str()))
    {
        crate::profile::remember(ctx, Strategies::Durable, &v, dir);
    }
    let (policy, _) = default_policy(&dir.join("log"));
    for row in rows.iter_mut().filter(|r| {
        !r.baseline
            && r.method == policy.name()
            && r.extra.get("group_commit") == Some(&serde_json::Value::Bool(true))
    }) {
        row.mark_default();
    }
    rows
}

/// One run's figures.
#[derive(Clone, Copy, Debug)]
struct Sample {
    times: crate::rounds::Times,
    /// Write-family system calls, when `/proc/thread-self/io` can be read.
    write_calls: Option<u64>,
}

/// A job of a section: one of ours, or the baseline.
#[derive(Clone, Copy)]
enum Contender<'a> {
    Ours(Strategy),
    /// `AppendFile` with a buffer of this many bytes ([`BUFFER_SWEEP`]).
    Sized(usize),
    Baseline(&'a fstream::Fstream),
}

impl Contender<'_> {
    fn name(&self) -> &'static str {
        match self {
            Contender::Ours(s) => s.name(),
            Contender::Sized(_) => Strategy::AppendFile.name(),
            Contender::Baseline(_) => fstream::FSTREAM,
        }
    }
}

/// Runs the suite.
pub fn run(ctx: &mut Context<'_>) -> Result<Output> {
    let config = ctx.config;
    let strategies: Vec<Strategy> = Strategy::ALL
        .into_iter()
        .filter(|s| config.wants(s.name()))
        .collect();
    let mut work = crate::workdir::WorkDir::create(&config.data_dir, ".append")?;
    let fstream = if config.baselines {
        match fstream::build(&mut work) {
            Ok(baseline) => Some(baseline),
            Err(reason) => {
                ctx.notes.push(format!(
                    "append: baseline `{}` skipped: {reason}",
                    fstream::FSTREAM
                ));
                None
            }
        }
    } else {
        None
    };
    let mut rows = Vec::new();
    for section in jobs::sections(config.quick) {
        if interrupt::interrupted() {
            break;
        }
        let baseline = fstream
            .as_ref()
            .filter(|_| section.sync == SyncPolicy::None);
        let tiny = section.payload == PAYLOADS[0] && section.sync == SyncPolicy::None;
        let sizes: &[usize] = if tiny && strategies.contains(&Strategy::AppendFile) {
            &BUFFER_SWEEP
        } else {
            &[]
        };
        rows.extend(measure::section(
            ctx,
            &mut work,
            &section,
            (&strategies, sizes),
            baseline,
        )?);
    }
    let (default_buffer, _) = iolab_lab::file::append::default_buffer(work.path());
    for row in rows.iter_mut().filter(|r| is_default(r)) {
        row.extra
            .insert("buffer_bytes".into(), serde_json::json!(default_buffer));
    }
    if !interrupt::interrupted() && strategies.contains(&Strategy::AppendFile) {
        let winner = verdict::buffer_winner(&rows, &config.data_dir);
        crate::profile::save(ctx, Strategies::Append, (SUITE, "buffer"), winner);
    }
    if !interrupt::interrupted() {
        let durable = durable::section(ctx, &mut work, SUITE)?;
        rows.extend(with_durable_default(ctx, durable, work.path()));
    }
    if measure::thread_write_calls().is_none() {
        ctx.notes.push(
            "append: /proc/thread-self/io is unreadable (no task I/O accounting in this kernel): \
             system calls per record were not measured"
                .into(),
        );
    }
    ctx.notes.extend(rows::explanations(&rows));
    Ok(rows.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_counts_include_a_partial_last_interval() {
        assert_eq!(SyncPolicy::None.syncs(10), 0);
        assert_eq!(SyncPolicy::EveryRecord.syncs(10), 10);
        assert_eq!(SyncPolicy::EveryK.syncs(2 * SYNC_EVERY_K), 2);
        assert_eq!(SyncPolicy::EveryK.syncs(2 * SYNC_EVERY_K + 1), 3);
    }
}
