//! `iolab count`: line counts like `wc -l`, with a choice of read method.

use super::count_output as output;

use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use iolab::Input;
use iolab_lab::read::CountHint;
use iolab_lab::read::auto;
use iolab_lab::read::many::{FileCount, count_files};
use iolab_lab::read::{CountMethod, ReadOptions, count_input};

/// Arguments of `iolab count`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The read method (see `iolab methods count`).
    #[arg(short, long, default_value = "auto", value_parser = super::parse_named::<CountMethod>)]
    method: CountMethod,
    /// Say on stderr which method and kernel counted each file, and why.
    #[arg(short, long)]
    verbose: bool,
    /// Threads for mmap-parallel and pread-parallel, 1 to 1024 [default: the available
    /// cores].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    threads: Option<u64>,
    /// Reads in flight for uring-direct, 1 to 4096 [default: 8].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=4096))]
    queue_depth: Option<u64>,
    /// Bytes per read buffer or block, e.g. 64K or 1M, at most 1 GiB [default: per
    /// method].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    buffer: Option<u64>,
    /// Access hints, comma-separated: sequential, willneed, hugepage, populate, readahead.
    /// `auto` passes on those that belong to the method it chooses; a method named with
    /// --method refuses one that does not belong to it.
    #[arg(long, value_delimiter = ',', value_name = "HINTS", value_parser = super::parse_named::<CountHint>)]
    hint: Vec<CountHint>,
    /// Read the files to count from F, names separated by NUL bytes (`find -print0`), as
    /// GNU `wc --files0-from`; `-` reads the names from standard input.
    #[arg(long, value_name = "F", conflicts_with = "files")]
    files0_from: Option<PathBuf>,
    /// Files to count; `-` (or none) reads standard input.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
}

fn parse_size(s: &str) -> Result<u64, String> {
    match iolab_lab::units::parse_size(s) {
        Ok(0) => Err("must be at least 1 byte".into()),
        Ok(n) if n <= iolab_lab::read::MAX_BUFFER_SIZE as u64 => Ok(n),
        Ok(_) => Err(format!(
            "a buffer of {s} is too large: the limit is {}",
            iolab_lab::units::format_bytes(iolab_lab::read::MAX_BUFFER_SIZE as u64)
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// `iolab count FILE...` with nothing but file names, the form `wc -l` users type, parsed
/// without building the whole command-line parser: on a tiny file, setting up clap's full
/// command tree costs more than counting. Anything else (an option, `--`, no file) returns
/// `None` and goes through clap as usual.
pub fn fast_path(argv: &[std::ffi::OsString]) -> Option<Args> {
    let (command, files) = argv.get(1..)?.split_first()?;
    if command != "count" || files.is_empty() {
        return None;
    }
    let plain = |f: &std::ffi::OsString| f == "-" || !f.as_bytes().starts_with(b"-");
    files.iter().all(plain).then(|| Args {
        method: CountMethod::Auto,
        verbose: false,
        threads: None,
        queue_depth: None,
        buffer: None,
        hint: Vec::new(),
        files0_from: None,
        files: files.iter().map(PathBuf::from).collect(),
    })
}

/// Counts every file, reporting failures per file and going on with the others; prints
/// the counts in the order given, in `wc -l`'s format (see [`output::width`]).
pub fn run(args: Args) -> Result<i32> {
    let mut failed = false;
    // `invalid`: names of the list that cannot be used; `wc` still counts them as operands
    // (for the total line and the column width).
    let (files, invalid, streamed) = match &args.files0_from {
        Some(list) => {
            let list = output::read_files0(list)?;
            for line in &list.invalid {
                super::report(line);
            }
            failed |= !list.invalid.is_empty();
            (list.names, list.invalid.len(), list.streamed)
        }
        None if args.files.is_empty() => (vec![PathBuf::from("-")], 0, false),
        None => (args.files.clone(), 0, false),
    };
    // Standard input given as no operand at all: `wc` prints its count without a name.
    let unnamed = args.files0_from.is_none() && args.files.is_empty();
    let mut options = ReadOptions::new();
    if let Some(n) = args.threads {
        options = options.threads(n as usize);
    }
    if let Some(n) = args.queue_depth {
        options = options.queue_depth(n as usize);
    }
    if let Some(bytes) = args.buffer {
        options = options.buffer_size(bytes as usize);
    }
    for hint in &args.hint {
        options = options.hint(*hint);
    }
    // Many files with the default method: counted in parallel across files. Otherwise
    // (a chosen method, --verbose) one after the other, each as asked.
    let mut results: Vec<iolab::Result<FileCount>> =
        if args.method == CountMethod::Auto && !args.verbose && files.len() > 1 {
            count_files(&files, &options)
        } else {
            files
                .iter()
                .map(|path| count_one(path, args.method, &options, args.verbose))
                .collect()
        };
    if super::closed_at_start(0) {
        // What was read there is the empty `/dev/null` Rust's runtime opened in its place.
        for (path, result) in files.iter().zip(&mut results) {
            if path.as_os_str() == "-" {
                *result = Err(iolab::Error::io(
                    "cannot use standard input",
                    io::Error::from_raw_os_error(libc::EBADF),
                ));
            }
        }
    }
    let width = output::width(&files, &results, invalid, streamed);
    let mut out = io::BufWriter::with_capacity(64 << 10, super::stdout()?);
    let mut total = 0u64;
    let written = (|| -> io::Result<()> {
        for (path, result) in files.iter().zip(&results) {
            match result {
                Ok(count) => {
                    total += count.lines;
                    output::row(
                        &mut out,
                        width,
                        count.lines,
                        (!unnamed).then_some(path.as_path()),
                    )?;
                }
                Err(e) => {
                    out.flush()?;
                    super::report(&format!("{}: {e}", output::shown(path)));
                    failed = true;
                    // `wc` opens a directory, fails to read it, and still prints its 0.
                    if matches!(e, iolab::Error::IsDirectory) {
                        output::row(&mut out, width, 0, (!unnamed).then_some(path.as_path()))?;
                    }
                }
            }
        }
        if files.len() + invalid > 1 {
            writeln!(out, "{total:>width$} total")?;
        }
        out.flush()
    })();
    if args.verbose
        && let Some(peak) = iolab_lab::sysinfo::peak_rss_bytes()
    {
        super::report(&format!("peak memory (VmHWM): {peak} bytes"));
    }
    match written {
        // A reader that went away (`iolab count … | head -1`) is not an error of ours.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
        other => other.context("cannot write to stdout")?,
    }
    Ok(i32::from(failed))
}

fn count_one(
    path: &Path,
    method: CountMethod,
    options: &ReadOptions,
    verbose: bool,
) -> iolab::Result<FileCount> {
    let input = if path.as_os_str() == "-" {
        Input::stdin()?
    } else {
        Input::open(path)?
    };
    if verbose && method == CountMethod::Auto {
        let choice = auto::choose(&input, options);
        super::report(&format!(
            "{}: auto chose {}: {}",
            output::shown(path),
            choice.method,
            choice.reason
        ));
    }
    let regular = input.kind() == iolab::FileKind::Regular;
    let size = input.reported_len();
    let count = count_input(method, &input, options)?;
    if verbose {
        super::report(&format!(
            "{}: {} bytes, {} lines with {} (kernel {})",
            output::shown(path),
            count.bytes,
            count.lines,
            count.method,
            count.kernel
        ));
    }
    Ok(FileCount {
        lines: count.lines,
        size,
        regular,
    })
}
