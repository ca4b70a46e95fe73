//! `iolab write`: N zero bytes to standard output, by one of the write methods.
//!
//! Exit status: 0 when every byte was written, and also when the reader went away first
//! (`iolab write … | head -c 10`: a producer whose consumer is done has nothing to report;
//! nothing is printed unless `--verbose`). 1 with one `iolab: …` line for a closed standard
//! output, a full disk or another write error; 2 for bad arguments.

use anyhow::Result;
use iolab_lab::units::{format_bytes, parse_size};
use iolab_lab::write::{self, DestinationKind, Method, WriteOptions};

/// The most `--bytes` accepted: 1 PiB. At 10 GB/s that is more than a day of writing, so a
/// larger figure is a typo rather than a plan (`yes` is the tool for "forever").
const MAX_BYTES: u64 = 1 << 50;

/// Arguments of `iolab write`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The write method (see `iolab methods write`): stdout, raw-fd, bufwriter or
    /// vmsplice (vmsplice needs standard output to be a pipe).
    #[arg(short, long, value_parser = super::parse_named::<Method>)]
    method: Method,
    /// Bytes per system call (stdout, raw-fd, vmsplice) or the buffer's capacity
    /// (bufwriter), e.g. 64K [default: into a pipe, 8K per write, or the pipe's capacity
    /// while the reader shares our CPU, seen from our involuntary context switches
    /// (vmsplice: the pipe enlarged to 1M, 256K per call); else 32 × st_blksize, within
    /// 64K..1M].
    #[arg(long, value_name = "SIZE", value_parser = parse_buffer, allow_hyphen_values = true)]
    buffer: Option<usize>,
    /// How many bytes to write, e.g. 4096, 64M, 1G.
    #[arg(
        long,
        value_name = "N",
        default_value = "1G",
        value_parser = parse_bytes,
        allow_hyphen_values = true
    )]
    bytes: u64,
    /// Resize the pipe on standard output first (F_SETPIPE_SZ), e.g. 1M; ignored when
    /// standard output is not a pipe.
    #[arg(long, value_name = "SIZE", value_parser = parse_pipe_size, allow_hyphen_values = true)]
    pipe_size: Option<usize>,
    /// Say on stderr what was written, how, and where to.
    #[arg(short, long)]
    verbose: bool,
}

fn parse_bytes(s: &str) -> Result<u64, String> {
    let n = parse_size(s).map_err(|e| e.to_string())?;
    if n > MAX_BYTES {
        return Err(format!(
            "{s} is too many bytes to write: the limit is {} (use `yes` for an endless stream)",
            format_bytes(MAX_BYTES)
        ));
    }
    Ok(n)
}

fn parse_buffer(s: &str) -> Result<usize, String> {
    let n = parse_size(s).map_err(|e| e.to_string())?;
    match usize::try_from(n) {
        Ok(0) => Err("the buffer must hold at least 1 byte".into()),
        Ok(n) if n <= write::MAX_BUFFER_SIZE => Ok(n),
        _ => Err(format!(
            "a buffer of {s} is too large: the limit is {}",
            format_bytes(write::MAX_BUFFER_SIZE as u64)
        )),
    }
}

fn parse_pipe_size(s: &str) -> Result<usize, String> {
    let n = parse_size(s).map_err(|e| e.to_string())?;
    match usize::try_from(n) {
        Ok(0) => Err("a pipe must hold at least 1 byte".into()),
        Ok(n) if n <= i32::MAX as usize => Ok(n),
        _ => Err(format!("a pipe of {s} is too large")),
    }
}

/// Runs `iolab write`.
pub fn run(args: Args) -> Result<i32> {
    drop(super::stdout()?);
    let mut options = WriteOptions::new();
    if let Some(bytes) = args.buffer {
        options = options.buffer_size(bytes);
    }
    if let Some(bytes) = args.pipe_size {
        options = options.pipe_capacity(bytes);
    }
    match write::write_zeros(args.method, args.bytes, &options) {
        Ok(done) => {
            if args.verbose {
                let d = &done.destination;
                let into = match (d.kind, d.pipe_capacity) {
                    (DestinationKind::Pipe, Some(cap)) => {
                        format!("a pipe of {}", format_bytes(cap as u64))
                    }
                    (kind, _) => kind.describe().to_string(),
                };
                // The adaptive part is read back by `iolab bench write` (`reported_sizes`).
                let adaptive = done.adaptive.map_or(String::new(), |[(s, sb), (l, lb)]| {
                    let pct = |b: u64| (b * 100).checked_div(sb + lb).unwrap_or(0);
                    format!(
                        "; adaptive writes: {s} bytes for {}%, {l} for {}%",
                        pct(sb),
                        pct(lb)
                    )
                });
                // Read back by `iolab bench write` too (`lent pages`).
                let lent = match done.lent {
                    0 => String::new(),
                    n => format!("; lent pages: {n} bytes by vmsplice"),
                };
                super::report(&format!(
                    "wrote {} bytes with {}, buffer {}, into {into}{adaptive}{lent}",
                    done.bytes,
                    done.method,
                    format_bytes(done.buffer_size as u64)
                ));
                if args.buffer.is_none() && args.method != write::Method::Vmsplice && done.lent == 0
                {
                    super::report(&format!("buffer: {}", write::default_buffer(d).1));
                }
            }
            Ok(0)
        }
        Err(e) if e.is_broken_pipe() => {
            if args.verbose {
                super::report(&e.to_string());
            }
            Ok(0)
        }
        Err(iolab::Error::Io { source, .. })
            if args.pipe_size.is_some() && source.raw_os_error() == Some(libc::EPERM) =>
        {
            // F_SETPIPE_SZ is the only step that fails with EPERM: past the limit.
            let size = format_bytes(args.pipe_size.unwrap_or(0) as u64);
            let max = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .map_or("/proc/sys/fs/pipe-max-size".to_string(), |m| {
                    format!("/proc/sys/fs/pipe-max-size ({})", format_bytes(m))
                });
            anyhow::bail!(
                "--pipe-size {size}: the kernel refused to resize the pipe on standard output: beyond {max} or the user's pipe quota (pick a smaller size)"
            )
        }
        Err(e) => Err(e.into()),
    }
}
