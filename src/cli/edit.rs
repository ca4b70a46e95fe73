//! `iolab edit`: in-place edits of one file: keep its first line, or replace a byte.
//!
//! On success it prints one line saying what changed (or that nothing needed to), and
//! exits 0 only once the result is durable, unless `--no-sync` was given. `--timings`
//! adds the strategy, the replace kernel, each step's duration and the process's peak
//! memory; `--timings-json` prints all of that as one JSON object instead (the benchmark
//! reads it).
//!
//! A byte argument (`--from`, `--to`) is one of:
//! - a single ASCII character: `,` `;` `a` `0` (a digit is the digit character);
//! - `0x` and one or two hexadecimal digits: `0x2c`, `0xFF`;
//! - an escape: `\n`, `\r`, `\t`, `\0`, `\\`, or `\x` and two hexadecimal digits.
//!
//! Anything else (an empty string, several characters, a non-ASCII character such as `é`,
//! which is two bytes in UTF-8) is refused with one line saying so.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use iolab::Kernel;
use iolab::{EditOp, EditOptions, EditOutcome, EditReport, EditStrategy};
use iolab_lab::units::{format_bytes, format_duration};

/// The edits `iolab edit` can make.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Keep only the first line: cut the file after its first newline (a file without one
    /// is left unchanged).
    TruncateFirstLine(TruncateArgs),
    /// Replace every occurrence of one byte by another, in place.
    Replace(ReplaceArgs),
}

/// Arguments of `iolab edit truncate-first-line`.
#[derive(Debug, clap::Args)]
pub struct TruncateArgs {
    #[command(flatten)]
    common: Common,
}

/// Arguments of `iolab edit replace`.
#[derive(Debug, clap::Args)]
pub struct ReplaceArgs {
    /// The byte to replace: a character (`,`), hex (`0x2c`) or an escape (`\n`, `\x2c`).
    #[arg(long, value_name = "BYTE", value_parser = parse_byte, allow_hyphen_values = true)]
    from: u8,
    /// Its replacement, written the same way.
    #[arg(long, value_name = "BYTE", value_parser = parse_byte, allow_hyphen_values = true)]
    to: u8,
    /// The replace kernel: scalar, avx2 or avx512 [default: the fastest this CPU has].
    #[arg(long, value_name = "KERNEL", value_parser = super::parse_named::<Kernel>)]
    kernel: Option<Kernel>,
    #[command(flatten)]
    common: Common,
}

/// What every edit takes.
#[derive(Debug, clap::Args)]
struct Common {
    /// How to edit: mmap, std-whole or std-stream (see `iolab methods edit`) [default: the
    /// library's: mmap to replace, std-stream to truncate].
    #[arg(short, long, value_name = "STRATEGY", value_parser = super::parse_named::<EditStrategy>)]
    strategy: Option<EditStrategy>,
    /// Skip the final msync/fdatasync: faster, but a crash may lose the edit.
    #[arg(long)]
    no_sync: bool,
    /// The buffer std-stream reads and writes with, e.g. 256K or 1M (other strategies
    /// ignore it) [default: 1M].
    #[arg(long, value_name = "SIZE", value_parser = parse_buffer_size)]
    buffer_size: Option<usize>,
    /// Also print the strategy, the kernel, and how long each step took.
    #[arg(long)]
    timings: bool,
    /// Print one JSON object (outcome, kernel, seconds per step) instead of the summary.
    #[arg(long, conflicts_with = "timings")]
    timings_json: bool,
    /// The file to edit.
    #[arg(value_name = "FILE")]
    file: PathBuf,
}

/// Runs `iolab edit`.
pub fn run(command: Command) -> Result<i32> {
    // Refused before the file is touched, not after it is edited.
    let mut out = super::stdout()?;
    let (common, report) = match command {
        Command::TruncateFirstLine(args) => {
            let c = args.common;
            let report = editor(&c).truncate_after_first_line(&c.file)?;
            (c, report)
        }
        Command::Replace(args) => {
            let c = args.common;
            let mut editor = editor(&c);
            if let Some(kernel) = args.kernel {
                editor = editor.kernel(kernel);
            }
            let report = editor.replace_byte(&c.file, args.from, args.to)?;
            (c, report)
        }
    };
    if common.timings_json {
        writeln!(out, "{}", to_json(&common.file, &report))
    } else {
        write_summary(&mut out, &common.file, &report).and_then(|()| {
            if common.timings {
                write_timings(&mut out, &report)
            } else {
                Ok(())
            }
        })
    }
    .context("cannot write to stdout")?;
    Ok(0)
}

fn editor(c: &Common) -> EditOptions {
    let mut editor = EditOptions::new().durable(!c.no_sync);
    if let Some(strategy) = c.strategy {
        editor = editor.strategy(strategy);
    }
    match c.buffer_size {
        Some(bytes) => editor.buffer_size(bytes),
        None => editor,
    }
}

/// What the edit did, in one word for the JSON (`truncated`, `replaced` or `unchanged`)
/// and in words for the summary line: the two always agree.
fn outcome(report: &EditReport) -> (&'static str, String) {
    let unchanged = |why: String, bytes: Option<u64>| {
        let size = bytes.map_or(String::new(), |b| format!(" ({b} bytes)"));
        ("unchanged", format!("{why}; left unchanged{size}"))
    };
    match (report.op, report.outcome) {
        (_, EditOutcome::NoNewline) if report.len_before == 0 => unchanged("empty".into(), None),
        (_, EditOutcome::NoNewline) => unchanged("no newline".into(), Some(report.len_before)),
        (_, EditOutcome::Truncated { kept }) if kept == report.len_before => {
            unchanged("the first line is the whole file".into(), Some(kept))
        }
        (_, EditOutcome::Truncated { kept }) => (
            "truncated",
            format!("kept the first line: {kept} of {} bytes", report.len_before),
        ),
        (EditOp::ReplaceByte { from, to }, EditOutcome::Replaced { .. }) if from == to => {
            unchanged(
                format!("--from and --to are the same byte ({})", show_byte(from)),
                None,
            )
        }
        (EditOp::ReplaceByte { from, .. }, EditOutcome::Replaced { changed: 0 }) => {
            unchanged(format!("no {} byte", show_byte(from)), None)
        }
        (EditOp::ReplaceByte { from, to }, EditOutcome::Replaced { changed }) => (
            "replaced",
            format!(
                "replaced {changed} {} byte{} with {}",
                show_byte(from),
                if changed == 1 { "" } else { "s" },
                show_byte(to)
            ),
        ),
        (op, outcome) => ("unchanged", format!("{}: {outcome:?}", op.name())),
    }
}

/// One line: what changed, or why nothing did.
fn write_summary(out: &mut dyn Write, file: &Path, report: &EditReport) -> io::Result<()> {
    let (_, what) = outcome(report);
    let sync = if report.durable {
        ""
    } else {
        " (not synced: --no-sync)"
    };
    writeln!(out, "{}: {what}{sync}", file.display())
}

/// The strategy, kernel and phases, one per line, for people.
fn write_timings(out: &mut dyn Write, report: &EditReport) -> io::Result<()> {
    let kernel = report
        .kernel
        .map_or(String::new(), |k| format!(", kernel {k}"));
    let durable = if report.durable {
        "durable"
    } else {
        "not synced"
    };
    writeln!(out, "strategy {}{kernel}, {durable}", report.strategy)?;
    writeln!(out, "  why: {}", report.why)?;
    let width = report
        .phases
        .iter()
        .map(|(name, _)| name.len())
        .max()
        .unwrap_or(0)
        .max("total".len());
    for &(name, d) in &report.phases {
        writeln!(
            out,
            "  {name:<width$}  {}",
            format_duration(d.as_secs_f64())
        )?;
    }
    writeln!(
        out,
        "  {:<width$}  {}",
        "total",
        format_duration(report.total.as_secs_f64())
    )?;
    match iolab_lab::sysinfo::peak_rss_bytes() {
        Some(bytes) => writeln!(out, "peak memory (RSS) {}", format_bytes(bytes)),
        None => Ok(()),
    }
}

/// Everything in the report as one JSON object; durations in seconds, and the phases in the
/// order they ran.
fn to_json(file: &Path, report: &EditReport) -> String {
    let (outcome, summary) = outcome(report);
    let changed = match report.outcome {
        EditOutcome::Replaced { changed } => Some(changed),
        _ => None,
    };
    let value = TimingsJson {
        file: file.display().to_string(),
        op: report.op.name(),
        strategy: report.strategy.name(),
        why: &report.why,
        kernel: report.kernel.map(|k| k.name()),
        durable: report.durable,
        bytes_before: report.len_before,
        bytes_after: report.len_after,
        outcome,
        summary,
        changed,
        phases: InOrder(&report.phases),
        total_s: report.total.as_secs_f64(),
        peak_rss_bytes: iolab_lab::sysinfo::peak_rss_bytes(),
    };
    serde_json::to_string(&value).expect("a report serializes")
}

/// The `--timings-json` document.
#[derive(serde::Serialize)]
struct TimingsJson<'a> {
    file: String,
    op: &'static str,
    strategy: &'static str,
    /// Why that strategy: chosen, measured here, or the rule.
    why: &'a str,
    kernel: Option<&'static str>,
    durable: bool,
    bytes_before: u64,
    bytes_after: u64,
    /// `truncated`, `replaced` or `unchanged`: what the summary line says.
    outcome: &'static str,
    /// The summary line's words.
    summary: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    changed: Option<u64>,
    phases: InOrder<'a>,
    total_s: f64,
    /// See [`iolab_lab::sysinfo::peak_rss_bytes`].
    peak_rss_bytes: Option<u64>,
}

/// Phases as a JSON object whose keys come in the order the steps ran (a JSON object's
/// order carries no meaning, but people read it).
struct InOrder<'a>(&'a [(&'static str, std::time::Duration)]);

impl serde::Serialize for InOrder<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        for &(name, d) in self.0 {
            map.serialize_entry(name, &d.as_secs_f64())?;
        }
        map.end()
    }
}

/// `','` for a printable ASCII byte, an escape for the usual control bytes, else `0xNN`.
fn show_byte(b: u8) -> String {
    match b {
        b'\n' => "'\\n'".into(),
        b'\r' => "'\\r'".into(),
        b'\t' => "'\\t'".into(),
        0x20..=0x7e => format!("'{}'", b as char),
        _ => format!("0x{b:02x}"),
    }
}

/// Parses a byte argument; see [`iolab_lab::units::parse_byte`] for the accepted forms.
fn parse_byte(s: &str) -> Result<u8, String> {
    iolab_lab::units::parse_byte(s)
}

/// The largest `--buffer-size`: 1 GiB, far past any gain, and still a sane allocation.
const MAX_BUFFER_SIZE: u64 = 1 << 30;

fn parse_buffer_size(s: &str) -> Result<usize, String> {
    match iolab_lab::units::parse_size(s) {
        Ok(0) => Err("the buffer size must be at least 1 byte".into()),
        Ok(n) if n > MAX_BUFFER_SIZE => Err("the buffer size must be at most 1G".into()),
        Ok(n) => Ok(n as usize),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_byte;

    #[test]
    fn byte_arguments() {
        for (text, byte) in [
            (",", b','),
            (";", b';'),
            ("0", b'0'),
            ("-", b'-'),
            ("0x2c", 0x2c),
            ("0X2C", 0x2c),
            ("0xff", 0xff),
            ("0x0", 0),
            ("\\n", b'\n'),
            ("\\t", b'\t'),
            ("\\r", b'\r'),
            ("\\0", 0),
            ("\\\\", b'\\'),
            ("\\x3b", b';'),
        ] {
            assert_eq!(parse_byte(text), Ok(byte), "{text:?}");
        }
        for text in [
            "", "ab", ",,", "é", "0x", "0x100", "0xg1", "\\x3", "\\q", "12",
        ] {
            let e = parse_byte(text).unwrap_err();
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
