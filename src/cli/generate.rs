//! `iolab gen`: writes a deterministic data set (text lines, numeric CSV or offset-derived
//! blocks) to a file.
//!
//! A regular file is written atomically (temporary file, fsync, rename; see
//! [`iolab_lab::generate::atomic`]) and an existing one is only replaced with `--force`.
//! `--out -` writes to standard output, and an existing device or FIFO (`/dev/null`) is
//! written directly, since renaming over it would replace it. A one-line summary (bytes,
//! lines, time, rate) goes to stderr.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Result, anyhow};
use iolab_lab::generate::csv::DEFAULT_ROWS;
use iolab_lab::generate::lines::DEFAULT_MEAN_LINE_LEN;
use iolab_lab::generate::{
    self, AtomicOptions, CsvSpec, DEFAULT_SEED, GenerateError, LinesSpec, Summary, rows_for_size,
    write_file_atomically,
};
use iolab_lab::units::{format_bytes, format_duration, format_rate, parse_size};

/// The data sets `iolab gen` can write.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Text lines of printable ASCII words, exactly --size bytes, ending with a newline.
    Lines(LinesArgs),
    /// Numeric CSV without a header: --rows lines of --cols comma-separated numbers.
    Csv(CsvArgs),
    /// Offset-derived bytes, exactly --size bytes, for `iolab random` (every read checkable).
    Blocks(BlocksArgs),
    /// A folder of --files small text files shaped like a source tree (100 B to 16 KiB,
    /// 100 to a folder), for counting many files.
    Tree(TreeArgs),
}

/// Arguments of `iolab gen tree`.
#[derive(Debug, clap::Args)]
pub struct TreeArgs {
    /// How many files (at least 1).
    #[arg(long, value_name = "N")]
    files: usize,
    /// The folder to create them in.
    #[arg(short, long, value_name = "DIR")]
    out: PathBuf,
    /// PRNG seed: the same seed and count give the same tree on every machine.
    #[arg(long, value_name = "S", default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// Replace files of the same names.
    #[arg(short, long)]
    force: bool,
}

/// Arguments of `iolab gen blocks`.
#[derive(Debug, clap::Args)]
pub struct BlocksArgs {
    /// Exact size: bytes, or with a unit like 64K, 1G.
    #[arg(short, long, value_name = "SIZE", allow_hyphen_values = true)]
    size: String,
    #[command(flatten)]
    output: OutputArgs,
}

/// Arguments of `iolab gen lines`.
#[derive(Debug, clap::Args)]
pub struct LinesArgs {
    /// Exact size: bytes, or with a unit like 64K, 1.5G, 22G (K = 1024 as in `truncate -s`;
    /// KB = 1000).
    #[arg(short, long, value_name = "SIZE", allow_hyphen_values = true)]
    size: String,
    /// Mean line length in bytes, newline included; lengths vary from half to 1.5 times it.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MEAN_LINE_LEN)]
    mean_line_length: u64,
    #[command(flatten)]
    output: OutputArgs,
}

/// Arguments of `iolab gen csv`.
#[derive(Debug, clap::Args)]
pub struct CsvArgs {
    /// Number of rows (lines).
    #[arg(short, long, value_name = "R", required_unless_present = "size")]
    rows: Option<u64>,
    /// Instead of --rows: as many rows as make about SIZE bytes (within ~1%).
    #[arg(
        short,
        long,
        value_name = "SIZE",
        conflicts_with = "rows",
        allow_hyphen_values = true
    )]
    size: Option<String>,
    /// Number of columns (fields per row).
    #[arg(short, long, value_name = "C")]
    cols: u32,
    #[command(flatten)]
    output: OutputArgs,
}

/// Where and how to write, shared by every data set.
#[derive(Debug, clap::Args)]
struct OutputArgs {
    /// The file to write; `-` for standard output.
    #[arg(short, long, value_name = "FILE")]
    out: PathBuf,
    /// PRNG seed: the same seed and options give the same bytes on every machine.
    #[arg(long, value_name = "S", default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// Replace FILE if it already exists.
    #[arg(short, long)]
    force: bool,
}

/// Runs `iolab gen`.
pub fn run(command: Command) -> Result<i32> {
    match command {
        Command::Lines(args) => {
            let spec = LinesSpec {
                size: parse_size(&args.size)?,
                mean_line_len: args.mean_line_length,
                seed: args.output.seed,
            };
            spec.validate()?;
            emit(&args.output, spec.size, |out| {
                generate::write_lines(out, &spec)
            })
        }
        Command::Csv(args) => {
            let rows = match (&args.size, args.rows) {
                (Some(size), _) => rows_for_size(args.cols, parse_size(size)?),
                (None, rows) => rows.unwrap_or(DEFAULT_ROWS),
            };
            let spec = CsvSpec {
                rows,
                cols: args.cols,
                seed: args.output.seed,
            };
            spec.validate()?;
            emit(&args.output, spec.estimated_size(), |out| {
                generate::write_csv(out, &spec)
            })
        }
        Command::Tree(args) => {
            let start = Instant::now();
            let tree =
                iolab_lab::generate::tree::write_tree(&args.out, args.files, args.seed, args.force)
                    .map_err(|e| match e {
                        // The error names the file or folder under --out it happened to.
                        GenerateError::File(iolab::Error::AtPath { path, source }) => {
                            file_error(&path, GenerateError::File(*source))
                        }
                        e => file_error(&args.out, e),
                    })?;
            super::report(&format!(
                "{}: {} files, {} bytes, {} lines in {:.2} s",
                args.out.display(),
                tree.files,
                tree.summary.bytes,
                tree.summary.lines,
                start.elapsed().as_secs_f64()
            ));
            Ok(0)
        }
        Command::Blocks(args) => {
            let size = parse_size(&args.size)?;
            emit(&args.output, size, |out| {
                generate::blocks::write_blocks(out, size)
            })
        }
    }
}

/// How the output is reached.
enum Destination {
    /// A regular file, new or replaced: written atomically.
    File,
    /// Standard output, a device or a FIFO: written directly.
    Stream(File),
}

/// Writes a data set with `write_data` to the destination in `output` and prints the summary.
fn emit(
    output: &OutputArgs,
    expected_size: u64,
    write_data: impl FnOnce(&mut dyn Write) -> Result<Summary, GenerateError>,
) -> Result<i32> {
    let path = &output.out;
    let in_file = |e: GenerateError| file_error(path, e);
    let start = Instant::now();
    // When the data was all written, before the atomic write's fsync and rename.
    let mut generated_at = None;
    let result = match destination(path, output.force)? {
        Destination::Stream(mut file) => write_data(&mut file).map_err(in_file),
        Destination::File => {
            let options = AtomicOptions::new()
                .expected_size(expected_size)
                .overwrite(output.force);
            write_file_atomically(path, &options, |out| {
                let summary = write_data(out)?;
                generated_at = Some(Instant::now());
                Ok(summary)
            })
            .map_err(in_file)
        }
    };
    let summary = match result {
        Ok(summary) => summary,
        Err(e) if is_broken_pipe(&e) => return Ok(0),
        Err(e) => return Err(e),
    };
    let done = Instant::now();
    let generated_at = generated_at.unwrap_or(done);
    let generating = generated_at.duration_since(start).as_secs_f64();
    let syncing = done.duration_since(generated_at).as_secs_f64();
    let mut line = format!(
        "{}: {} bytes ({}), {} lines in {} ({})",
        path.display(),
        summary.bytes,
        format_bytes(summary.bytes),
        summary.lines,
        format_duration(generating),
        format_rate(summary.bytes as f64 / generating),
    );
    if syncing > 0.0 {
        line.push_str(&format!(
            ", then fsync and rename in {}",
            format_duration(syncing)
        ));
    }
    super::report(&line);
    Ok(0)
}

/// Decides how to reach `path`, refusing to replace an existing file without `--force`.
fn destination(path: &Path, force: bool) -> Result<Destination> {
    if path.as_os_str() == "-" {
        // Closed when iolab started (`>&-`): an error, not Rust's `/dev/null` in its place.
        drop(super::stdout()?);
        // A duplicate of descriptor 1 as a `File`: writes go straight to it, unbuffered.
        let stdout = io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| file_error(path, iolab::Error::io("cannot use stdout", e).into()))?;
        return Ok(Destination::Stream(File::from(stdout)));
    }
    match fs::metadata(path) {
        Ok(meta) if meta.is_file() && !force => Err(file_error(path, iolab::Error::Exists.into())),
        Ok(meta) if meta.is_file() || meta.is_dir() => Ok(Destination::File),
        // A device or FIFO (also through a symbolic link): write into it.
        Ok(_) => OpenOptions::new()
            .write(true)
            .open(path)
            .map(Destination::Stream)
            .map_err(|e| file_error(path, iolab::Error::io("cannot open", e).into())),
        Err(_) => Ok(Destination::File),
    }
}

/// The one-line error `FILE: cause`, with the CLI's hint where there is one.
///
/// The library error's message already includes its OS cause, so the error is formatted here
/// rather than wrapped with `context` (which would print the cause twice with `{:#}`).
fn file_error(path: &Path, e: GenerateError) -> anyhow::Error {
    let label = path.display();
    match e {
        GenerateError::File(iolab::Error::Exists) => {
            anyhow!("{label}: already exists (use --force to replace it)")
        }
        GenerateError::File(iolab::Error::Io { source, .. })
            if source.kind() == io::ErrorKind::BrokenPipe =>
        {
            anyhow::Error::new(source)
        }
        e => anyhow!("{label}: {e}"),
    }
}

/// Whether `e` is a write to a closed pipe (`iolab gen … --out - | head`), which ends quietly.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.downcast_ref::<io::Error>()
        .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
}
