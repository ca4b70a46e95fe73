//! `iolab random`: random reads of any regular file — every read verified when `iolab gen
//! blocks` (or `bench random`) made it, a sample checked against a second `pread` otherwise;
//! prints IOPS, MB/s and latency percentiles, or one JSON object.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use iolab_lab::random::{self, Method, Options, Pattern, Stop};
use iolab_lab::units::format_bytes;
use iolab_results::{RandomCheck, RandomRun};

/// Arguments of `iolab random`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The read method (see `iolab methods random`).
    #[arg(short, long, value_parser = super::parse_named::<Method>)]
    method: Method,
    /// Bytes per read: a power of two from 512 to 1M [default: 4K].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    block: Option<usize>,
    /// Reads in flight per thread, 1 to 256 (uring and uring-direct; by default the depth
    /// `iolab bench random --sweep` measured fastest here, else 32; auto above 1 reads
    /// through the library's batch call, `RandomAccessFile::read_batch`; the others read one
    /// at a time).
    #[arg(long, value_name = "N")]
    queue_depth: Option<usize>,
    /// Threads, 1 to the available cores.
    #[arg(long, value_name = "T", default_value_t = 1)]
    threads: usize,
    /// Reads in all [default: 100000].
    #[arg(long, value_name = "N", conflicts_with = "seconds")]
    reads: Option<u64>,
    /// Read for this many seconds instead of a number of reads.
    #[arg(long, value_name = "S", value_parser = parse_seconds)]
    seconds: Option<f64>,
    /// How offsets are drawn: uniform, or zipf (θ = 0.99, as YCSB).
    #[arg(long, default_value = "uniform", value_parser = super::parse_named::<Pattern>)]
    pattern: Pattern,
    /// Print one JSON object instead of text (what `iolab bench random` reads).
    #[arg(long)]
    json: bool,
    /// Also say on stderr which backing `RandomAccessFile::open` chooses for FILE, and why.
    #[arg(short, long)]
    verbose: bool,
    /// The file to read.
    #[arg(value_name = "FILE")]
    file: PathBuf,
}

fn parse_size(s: &str) -> Result<usize, String> {
    let n = iolab_lab::units::parse_size(s).map_err(|e| e.to_string())?;
    usize::try_from(n).map_err(|_| "too large".to_string())
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x <= 86_400.0 => Ok(x),
        _ => Err("expected a number of seconds above 0 (at most 86400)".into()),
    }
}

/// The size of a read for the summary: the block, or, for a file smaller than one block,
/// what each read really returned (the whole file).
fn read_size(report: &random::Report, block: usize) -> String {
    let block_text = format_bytes(block as u64);
    if report.file_bytes < block as u64 {
        format!(
            "{} reads (the whole file: smaller than one {block_text} block)",
            format_bytes(report.file_bytes)
        )
    } else {
        block_text
    }
}

/// Says on stderr which backing the library call took and why, and the queue depth's
/// reason (`--verbose`).
fn explain(
    args: &Args,
    report: &random::Report,
    options: &Options,
    queue_depth: usize,
    depth_why: &str,
) -> Result<()> {
    let why = match &report.why {
        Some(why) => why.clone(),
        None => {
            // The first trial's reads, spread over the file, so that `why` says what it
            // measured.
            let file = iolab::RandomAccessFile::open(&args.file)?;
            let block = options.block_bytes();
            let mut scratch = vec![0u8; block];
            let reads = u64::from(iolab_lab::file::measured::TRIAL_READS);
            let blocks = file.len().div_ceil(block as u64).max(1);
            for i in 0..reads {
                file.read_at(i * blocks / reads * block as u64, &mut scratch)?;
            }
            file.why()
        }
    };
    let call = if queue_depth > 1 {
        "RandomAccessFile::read_batch"
    } else {
        "RandomAccessFile::open"
    };
    super::report(&format!("{}: {call}: {why}", args.file.display()));
    super::report(&format!("queue depth {queue_depth}: {depth_why}"));
    Ok(())
}

/// Runs the reads and prints the figures; exits 1 when a read returned wrong bytes.
pub fn run(args: Args) -> Result<i32> {
    // Refused before measuring, not after.
    let mut out = super::stdout()?;
    let stop = match (args.reads, args.seconds) {
        (_, Some(s)) => Stop::Duration(Duration::from_secs_f64(s)),
        (Some(n), None) => Stop::Reads(n),
        (None, None) => Stop::Reads(random::DEFAULT_READS),
    };
    let (queue_depth, depth_why) = match args.queue_depth {
        Some(n) => (n, "as asked".to_string()),
        None if args.method.queues() => {
            let len = std::fs::metadata(&args.file).map_or(0, |m| m.len());
            random::depth_for(args.method.name(), len)
        }
        None => (1, "one read at a time".to_string()),
    };
    let options = Options::new()
        .block(args.block.unwrap_or(random::DEFAULT_BLOCK))
        .queue_depth(queue_depth)
        .threads(args.threads)
        .stop(stop)
        .pattern(args.pattern);
    let report = random::run(args.method, &args.file, &options)
        .with_context(|| args.file.display().to_string())?;
    // After the run, so that a file random reads refuse (a FIFO without a writer, whose
    // open would block) is refused before anything else opens it.
    if args.verbose {
        explain(&args, &report, &options, queue_depth, &depth_why)?;
    }
    let (p50, p99, p999) = (
        report.latency_us(0.5),
        report.latency_us(0.99),
        report.latency_us(0.999),
    );
    if args.json {
        let run = RandomRun {
            method: report.method.name().to_string(),
            pattern: args.pattern.name().to_string(),
            block_bytes: options.block_bytes(),
            bytes_per_read: report.bytes_per_read(),
            queue_depth,
            threads: args.threads,
            file_bytes: report.file_bytes,
            reads: report.reads,
            elapsed_s: report.elapsed.as_secs_f64(),
            iops: report.iops(),
            bytes_per_s: report.bytes_per_s(),
            p50_us: p50,
            p99_us: p99,
            p999_us: p999,
            cpu_us_per_read: report.cpu_us_per_read(),
            verified: report.verified(),
            mismatches: report.mismatches,
            check: match report.check {
                random::Check::Generated => RandomCheck::Generated,
                random::Check::Sampled => RandomCheck::Sampled,
            },
            checked: report.checked,
            cdf_us: report.cdf_us(),
            why: report.why.clone(),
        };
        let value = serde_json::to_string(&run).context("cannot encode the run as JSON")?;
        writeln!(out, "{value}").context("cannot write to stdout")?;
    } else {
        writeln!(
            out,
            "{} {} {} qd {} threads {}: {} reads in {:.3} s, {:.0} IOPS, {:.1} MB/s, \
             latency p50 {p50:.1} µs p99 {p99:.1} µs p99.9 {p999:.1} µs, {:.2} CPU µs/read, {}",
            report.method,
            args.pattern,
            read_size(&report, options.block_bytes()),
            queue_depth,
            args.threads,
            report.reads,
            report.elapsed.as_secs_f64(),
            report.iops(),
            report.bytes_per_s() / 1e6,
            report.cpu_us_per_read(),
            match (report.verified(), report.check) {
                (true, random::Check::Generated) => "every read verified".to_string(),
                (true, random::Check::Sampled) =>
                    format!("{} sampled reads matched a second pread", report.checked),
                (false, _) => format!("{} WRONG reads", report.mismatches),
            }
        )
        .context("cannot write to stdout")?;
    }
    if !report.verified() {
        super::report(&format!(
            "{}: {} of {} checked reads returned wrong bytes (first at offset {}; checked {}): \
             the file changed while it was read, or a read is broken",
            args.file.display(),
            report.mismatches,
            report.checked,
            report.first_mismatch.unwrap_or(0),
            report.check.describe()
        ));
        return Ok(1);
    }
    Ok(0)
}
