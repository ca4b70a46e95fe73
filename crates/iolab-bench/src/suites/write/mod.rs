//! The `write` suite: every write method, at its default and over buffer sizes, and the
//! baselines `yes`, `fyes`, `dd` and `pv`, writing zeros into pipes, `/dev/null` and a file.
//!
//! How it measures (data sets, rows, baselines, budget): docs/suites.md#write.

mod baselines;
pub mod chart;
mod jobs;
mod measure;
mod rows;
mod sinkfile;
mod sinks;
pub(crate) mod verdict;

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use measure::measure;
pub use measure::reported_bytes;
use rows::{sink_row, to_row};
use sinkfile::SinkFile;
use sinks::{ConsumerKind, Sink};

use crate::context::Context;
use crate::error::Result;
use crate::interrupt;
use crate::results::Row;
use crate::runner::{self, CpuPlacement, Job};
use crate::suite::Sizes;
use crate::suite::{Column, Format, MethodInfo, Output, Place, Suite};
use iolab_lab::profile::Strategies;
use iolab_lab::units::format_bytes;
use iolab_lab::write::{self, Destination, Method};

const SUITE: &str = "write";

/// This suite's entry in the suite table (`crate::suites::SUITES`).
pub const ENTRY: Suite = Suite {
    name: SUITE,
    description: "Writing to stdout (`iolab write`)",
    sizes: SIZES,
    takes_files: false,
    methods: || {
        iolab_lab::write::Method::ALL
            .into_iter()
            .map(|m| MethodInfo {
                requirement: m.requirement(),
                ..MethodInfo::new(m.name(), m.availability())
            })
            .collect()
    },
    baselines: &["yes", "fyes", "pv", "dd"],
    section_keys: &["sink", "role"],
    identity_keys: &[
        "sink",
        "auto_buffer",
        "buffer_bytes",
        "pipe_capacity_bytes",
        "cpus",
        "record_bytes",
    ],
    columns: &[Column {
        key: "buffer_bytes",
        header: "buffer",
        place: Place::AfterMethod,
        format: Format::Bytes,
    }],
    charts: chart::charts,
    verdict: verdict::verdicts,
    is_default,
    default_rows: None,
    run,
};

/// Bytes per run: 64 MiB. The development VM moves 1–10 GB/s into a pipe or a file
/// depending on the method, so a run takes 6–60 ms (a 1 KiB buffer up to 150 ms): long
/// against the process start (about 1.5 ms), short enough for 6 rounds of about 170 rows in
/// ~40 s on 2 cores. Into `/dev/null` the large buffers' runs are then mostly the process
/// start: a `write` there costs nothing but the system call, which is the point of that
/// table.
pub const BYTES: u64 = 64 << 20;
/// Bytes per run with `--quick`.
pub const QUICK_BYTES: u64 = 8 << 20;
/// Bytes per run, for the suite table; `--size` does not apply to this suite.
pub const SIZES: Sizes = Sizes {
    full: BYTES,
    quick: QUICK_BYTES,
    follows_size_option: false,
};

/// The buffer sizes swept: 1 KiB to 1 MiB, powers of two (the stdout write-up's range).
pub const SWEEP: [usize; 11] = [
    1 << 10,
    2 << 10,
    4 << 10,
    8 << 10,
    16 << 10,
    32 << 10,
    64 << 10,
    128 << 10,
    256 << 10,
    512 << 10,
    1 << 20,
];
/// `dd`'s block size: 128 KiB, as the baseline (`pv`'s choice for a 4 KiB
/// `st_blksize`).
const DD_BLOCK: u64 = 128 << 10;

/// One row to measure.
struct Entry {
    job: Job,
    version: Option<String>,
    buffer: Option<usize>,
    /// Never stops by itself: the pipe's reader stops it after `N` bytes.
    endless: bool,
    method: Option<Method>,
}

/// What is known about the machine for the marks and the rule.
struct Facts {
    l1d: Option<u64>,
    pipe_default: Option<usize>,
    pipe_max: Option<usize>,
    available_bytes: Option<u64>,
}

/// Runs the suite.
pub fn run(ctx: &mut Context<'_>) -> Result<Output> {
    let config = ctx.config;
    let info = iolab_lab::sysinfo::collect(&config.data_dir);
    let facts = Facts {
        l1d: info.cpu.l1d_bytes,
        pipe_default: info
            .os
            .pipe_default_bytes
            .and_then(|b| usize::try_from(b).ok()),
        pipe_max: info.os.pipe_max_bytes.and_then(|b| usize::try_from(b).ok()),
        available_bytes: info.storage.available_bytes,
    };
    if !config.sweep {
        ctx.notes.push(
            "write: buffer sizes measured are each sink's default, half and twice it, 4 KiB and \
             1 MiB; --sweep measures every power of two from 1 KiB to 1 MiB"
                .into(),
        );
    }
    let bytes = SIZES.pick(config);

    ctx.notes.push(format!(
        "write: splice-reader, head and pv are consumer processes started as a shell starts \
         `WRITER | CONSUMER`, unpinned; the pipe-* sinks are diagnostics drained by {} with \
         both sides pinned",
        runner::PIPE_READER
    ));
    ctx.notes.push(format!(
        "write: L1d {}; pipe capacity {} by default, {} at most (pipe-max-size)",
        facts.l1d.map_or("unknown".into(), format_bytes),
        facts
            .pipe_default
            .map_or("unknown".into(), |b| format_bytes(b as u64)),
        facts
            .pipe_max
            .map_or("unknown".into(), |b| format_bytes(b as u64)),
    ));

    let mut sinks = Vec::new();
    for kind in ConsumerKind::ALL {
        if kind.process(config, bytes).is_some() {
            sinks.push(Sink::Consumer(kind));
        } else {
            ctx.notes.push(format!(
                "write: no {} rows: its consumer is not installed",
                Sink::Consumer(kind).name()
            ));
        }
    }
    let pipe = |capacity, resized, cpus| Sink::Pipe {
        capacity,
        resized,
        cpus,
    };
    sinks.push(pipe(facts.pipe_default, false, CpuPlacement::Shared));
    match resized_pipe(&facts) {
        Ok(capacity) => sinks.push(pipe(Some(capacity), true, CpuPlacement::Shared)),
        Err(reason) => ctx
            .notes
            .push(format!("write: no pipe-resized rows: {reason}")),
    }
    if std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2) {
        sinks.push(pipe(facts.pipe_default, false, CpuPlacement::Separate));
    } else {
        ctx.notes
            .push("write: no pipe-two-cpus rows: this process may use one CPU only".into());
    }
    sinks.push(Sink::Null);
    let file = SinkFile::create(&config.data_dir)?;
    sinks.push(Sink::File(file.path.clone()));

    let mut rows = Vec::new();
    for sink in sinks {
        if interrupt::interrupted() {
            break;
        }
        if let Sink::File(_) = sink
            && let Some(available) = facts.available_bytes
            && available < 4 * bytes
        {
            rows.push(sink_row(
                &sink,
                bytes,
                "file",
                None,
                false,
                Some(format!(
                    "only {} free in the data folder; the file sink needs {}",
                    format_bytes(available),
                    format_bytes(4 * bytes)
                )),
            ));
            continue;
        }
        rows.extend(run_sink(ctx, &sink, bytes, &facts)?);
    }
    drop(file);
    // The buffer `StdoutWriter::new()` then takes into a file (a tie: the rule's).
    let winner = verdict::file_buffer_winner(&rows, &config.data_dir);
    crate::profile::save(ctx, Strategies::Write, (SUITE, "file"), winner);
    Ok(rows.into())
}

/// Whether `row` is what a library call with no options makes: `bufwriter` at its own
/// default buffer, which is `StdoutWriter::new()` (every method has an `auto_buffer` row,
/// see `rows.rs`).
pub(crate) fn is_default(row: &Row) -> bool {
    row.method == Method::Bufwriter.name()
        && row.extra.get("auto_buffer") == Some(&serde_json::Value::Bool(true))
}

/// The capacity a resized pipe gets here, or why there is none.
fn resized_pipe(facts: &Facts) -> std::result::Result<usize, String> {
    let max = facts.pipe_max.ok_or("pipe-max-size is unknown")?;
    if facts.pipe_default.is_some_and(|d| d >= max) {
        return Err("the default pipe is already as large as pipe-max-size".into());
    }
    let (reader, _writer) = io::pipe().map_err(|e| e.to_string())?;
    write::destination::set_pipe_capacity_of(&reader, max)
        .map_err(|e| format!("F_SETPIPE_SZ to {} failed: {e}", format_bytes(max as u64)))
}

/// The jobs of one sink, measured in interleaved rounds.
fn run_sink(ctx: &mut Context<'_>, sink: &Sink, bytes: u64, facts: &Facts) -> Result<Vec<Row>> {
    let destination = destination_of(sink, facts);
    let (entries, mut rows) = jobs::jobs(ctx, sink, bytes, &destination);
    rows.extend(measure(ctx, sink, bytes, &entries, facts, &destination)?);
    Ok(rows)
}

/// What a writer finds on its standard output in `sink`, for the default rule and for
/// `vmsplice`'s refusal.
fn destination_of(sink: &Sink, facts: &Facts) -> Destination {
    let block_size = match sink {
        Sink::Pipe { .. } | Sink::Consumer(_) => pipe_block_size(),
        Sink::Null => blksize_of(Path::new("/dev/null")),
        Sink::File(path) => blksize_of(path.parent().unwrap_or(Path::new("."))),
    };
    Destination {
        kind: sink.kind(),
        block_size,
        pipe_capacity: sink.pipe_capacity(facts),
    }
}

fn blksize_of(path: &Path) -> u64 {
    fs::metadata(path).map_or(0, |m| m.blksize())
}

fn pipe_block_size() -> u64 {
    io::pipe()
        .ok()
        .and_then(|(reader, _)| {
            File::from(std::os::fd::OwnedFd::from(reader))
                .metadata()
                .ok()
        })
        .map_or(0, |m| m.blksize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sinks_are_named_and_the_pinned_pipes_are_diagnostics() {
        let names: Vec<&str> = ConsumerKind::ALL.map(|k| Sink::Consumer(k).name()).to_vec();
        assert_eq!(names, ["splice-reader", "head", "pv"]);
        assert!(
            ConsumerKind::ALL
                .iter()
                .all(|&k| !Sink::Consumer(k).diagnostic())
        );
        let pipe = |resized, cpus| Sink::Pipe {
            capacity: None,
            resized,
            cpus,
        };
        for (sink, name) in [
            (pipe(false, CpuPlacement::Shared), "pipe-same-cpu"),
            (pipe(true, CpuPlacement::Shared), "pipe-resized"),
            (pipe(false, CpuPlacement::Separate), "pipe-two-cpus"),
        ] {
            assert_eq!(sink.name(), name);
            assert!(sink.diagnostic(), "{name}");
        }
    }

    #[test]
    fn the_adaptive_split_is_read_back_from_the_writers_report() {
        let report = "iolab: wrote 64 bytes with raw-fd, buffer 64.0 KiB, into a pipe of \
                      64.0 KiB; adaptive writes: 8192 bytes for 97%, 65536 for 3%\n";
        assert_eq!(rows::reported_sizes(report), Some([(8192, 97), (65536, 3)]));
        assert_eq!(
            rows::reported_sizes("iolab: wrote 64 bytes with raw-fd"),
            None
        );
    }

    #[test]
    fn reported_bytes_reads_iolab_dd_and_pv() {
        assert_eq!(
            reported_bytes("iolab: wrote 4096 bytes with raw-fd, buffer 1 KiB, into /dev/null\n"),
            Some(4096)
        );
        assert_eq!(
            reported_bytes(
                "512+0 records in\n512+0 records out\n67108864 bytes (67 MB, 64 MiB) copied, 0.01 s, 5 GB/s\n"
            ),
            Some(67108864)
        );
        assert_eq!(reported_bytes("1000\n67108864\n"), Some(67108864));
        assert_eq!(reported_bytes("pv: oops\n"), None);
        assert_eq!(reported_bytes(""), None);
    }
}
