//! The `count` suite: every line-counting method and the installed peers over one
//! generated text file, warm and cold.

use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{FileBench, Measured, measure};
use crate::bench::results::Row;
use crate::bench::runner::{Job, Outcome, parse_count};
use crate::bench::{CacheState, Context, data};
use crate::error::Result;
use crate::read::Method;
use crate::sys::fiemap;

/// The data set's size by default: 1 GiB, big enough that a warm run takes tens of
/// milliseconds even at memory speed, small enough for the whole suite in about 2 minutes.
pub const DEFAULT_SIZE: u64 = 1 << 30;
/// The data set's size for `--quick`.
pub const QUICK_SIZE: u64 = 64 << 20;

const SUITE: &str = "count";

/// External line counters, timed like iolab's methods when installed: (row name,
/// program, arguments before the file, how to ask its version).
const BASELINES: &[(&str, &str, &[&str], &[&str])] = &[
    ("wc -l", "wc", &["-l"], &["--version"]),
    ("fwc -l", "fwc", &["-l"], &["--version"]),
];

/// Runs the suite.
pub fn run(ctx: &mut Context<'_>) -> Result<Vec<Row>> {
    let config = ctx.config;
    let size = config.size.unwrap_or(if config.quick {
        QUICK_SIZE
    } else {
        DEFAULT_SIZE
    });
    let dataset = data::lines(&config.data_dir, size, config.progress)?;
    check_layout(ctx, &dataset.path);

    let mut rows = Vec::new();
    let mut jobs = Vec::new();
    for method in Method::ALL {
        if !config.wants(method.name()) {
            continue;
        }
        match method.availability() {
            Ok(()) => jobs.push(Measured {
                job: Job::new(
                    method.name(),
                    &config.iolab_exe,
                    [
                        OsString::from("count"),
                        "--method".into(),
                        method.name().into(),
                        dataset.path.clone().into(),
                    ],
                    false,
                ),
                version: None,
            }),
            Err(reason) => {
                for cache in &config.caches {
                    let mut row = Row::unavailable(SUITE, method.name(), reason.clone());
                    row.cache = Some(cache.name().to_string());
                    row.bytes = dataset.bytes;
                    rows.push(row);
                }
            }
        }
    }
    if config.baselines {
        for &(name, program, args, version_args) in BASELINES {
            match which(program) {
                Some(path) => {
                    let mut full: Vec<OsString> = args.iter().map(OsString::from).collect();
                    full.push(dataset.path.clone().into());
                    jobs.push(Measured {
                        version: version_line(&path, version_args),
                        job: Job::new(name, path, full, true),
                    });
                }
                None => ctx.notes.push(format!(
                    "baseline `{name}` skipped: `{program}` is not installed"
                )),
            }
        }
    }

    let bench = FileBench {
        suite: SUITE,
        input: &dataset.path,
        bytes: dataset.bytes,
        expected: dataset.lines.to_string(),
        parse: parse_lines,
    };
    for &cache in &config.caches {
        if let Some(reason) = impossible(cache, &dataset.path, dataset.bytes) {
            for m in &jobs {
                let mut row = Row::unavailable(SUITE, &m.job.name, reason.clone());
                row.cache = Some(cache.name().to_string());
                row.baseline = m.job.baseline;
                row.bytes = dataset.bytes;
                rows.push(row);
            }
            continue;
        }
        rows.extend(measure(ctx, &bench, &jobs, cache)?);
    }
    Ok(rows)
}

fn parse_lines(outcome: &Outcome) -> Option<String> {
    parse_count(&outcome.stdout).map(|n| n.to_string())
}

/// Why `cache` cannot be reached for this file, if it cannot.
fn impossible(cache: CacheState, path: &Path, bytes: u64) -> Option<String> {
    match cache {
        CacheState::Cold if crate::sysinfo::is_tmpfs(path.parent()?) => {
            Some("the data set is on tmpfs: it cannot be evicted".into())
        }
        CacheState::Warm => {
            let available = crate::sysinfo::mem_available_bytes()?;
            (bytes > available / 10 * 8).then(|| {
                format!(
                    "the data set ({}) does not fit in 80% of available memory ({})",
                    crate::units::format_bytes(bytes),
                    crate::units::format_bytes(available)
                )
            })
        }
        _ => None,
    }
}

/// Warns when the file's extents are compressed or encrypted: then a cold read can be
/// "faster than the disk", as in the write-up's btrfs surprise.
fn check_layout(ctx: &mut Context<'_>, path: &Path) {
    let Ok(file) = File::open(path) else { return };
    match fiemap::summarize(&file) {
        Ok(s) if s.encoded_bytes > 0 => ctx.warnings.push(format!(
            "{}: {} of its extents' bytes are compressed or encrypted on disk (FIEMAP \
             ENCODED): cold reads may beat the device's bandwidth",
            path.display(),
            crate::units::format_bytes(s.encoded_bytes)
        )),
        Ok(_) => {}
        Err(e) => ctx.notes.push(format!(
            "could not check {} for compressed extents (FIEMAP: {e})",
            path.display()
        )),
    }
}

/// The path of `program` on `$PATH`, if any.
pub fn which(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The first line a program prints when asked its version.
pub fn version_line(program: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    let text = if out.stdout.is_empty() {
        out.stderr
    } else {
        out.stdout
    };
    String::from_utf8_lossy(&text)
        .lines()
        .next()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
}
