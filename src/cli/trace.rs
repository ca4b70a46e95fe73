//! `iolab trace [OPTIONS] -- CMD [ARGS…]`: runs CMD, follows its I/O system calls, and
//! prints on stderr where it does I/O the slow way, with this machine's measured fix
//! (`iolab_trace`). CMD's standard input, output and error are its own; `iolab trace`
//! exits with CMD's status (128 + N when signal N killed it).

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{Seek, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use iolab_trace::backend::Choice;
use iolab_trace::report::{json, summary};

/// Arguments of `iolab trace`.
#[derive(Debug, clap::Args)]
#[command(override_usage = "iolab trace [OPTIONS] -- CMD [ARGS]...")]
#[command(after_help = "The summary goes to stderr; CMD's output is untouched. \
    Backends: bpf (eBPF through bpftrace: root or CAP_BPF+CAP_PERFMON, tracefs, BTF) \
    and ptrace (a seccomp filter stops CMD only on its I/O calls). See docs/trace.md.")]
pub struct Args {
    /// Also write the summary, with every target and finding, as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Take the costs from these `iolab bench` results (a results.json, a run folder, or
    /// a folder of runs: its newest) [default: the newest run under ./iolab-results].
    #[arg(long, value_name = "DIR")]
    results: Option<PathBuf>,
    /// The tracer: auto (eBPF where allowed, else ptrace), bpf or ptrace.
    #[arg(long, default_value = "auto", value_parser = super::parse_named::<Choice>)]
    backend: Choice,
    /// Stream every traced call to FILE, one line each (the ptrace backend).
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Estimate only from `iolab bench` results: never run the calibration.
    #[arg(long)]
    no_calibrate: bool,
    /// The command to trace and its arguments (after `--`).
    #[arg(
        value_name = "CMD",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    command: Vec<OsString>,
}

/// The JSON file, opened before the command runs so that a path that cannot be written
/// is refused first; removed again if the trace fails and it did not exist before.
struct JsonFile {
    file: File,
    path: PathBuf,
    created: bool,
}

impl JsonFile {
    fn open(path: PathBuf) -> Result<JsonFile> {
        let created = !path.exists();
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        Ok(JsonFile {
            file,
            path,
            created,
        })
    }

    fn write(mut self, value: &serde_json::Value) -> Result<()> {
        let text = serde_json::to_string_pretty(value)?;
        let context = || format!("cannot write {}", self.path.display());
        self.file.set_len(0).with_context(context)?;
        self.file.rewind().with_context(context)?;
        writeln!(self.file, "{text}").with_context(context)?;
        Ok(())
    }

    fn abandon(self) {
        if self.created {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Traces the command; returns its exit status.
pub fn run(args: Args) -> Result<i32> {
    if args.command.is_empty() {
        super::report(&iolab_trace::Error::NoCommand.to_string());
        return Ok(2);
    }
    let json_file = args.json.map(JsonFile::open).transpose()?;
    let options = iolab_trace::Options {
        backend: args.backend,
        results: args.results,
        log: args.log,
        calibrate: !args.no_calibrate,
        // Rust's runtime opened /dev/null on a closed standard descriptor; the command
        // must find it closed, as it would untraced.
        closed_std_fds: (0..3)
            .filter(|&fd| super::closed_at_start(fd))
            .map(i32::from)
            .collect(),
        // Rust's runtime ignored SIGPIPE; the command gets what iolab started with.
        inherited_signals: super::signals_at_start(),
    };
    let report = match iolab_trace::trace(&args.command, &options) {
        Ok(report) => report,
        Err(e) => {
            if let Some(j) = json_file {
                j.abandon();
            }
            super::report(&e.to_string());
            return Ok(e.exit_code());
        }
    };
    eprint!("{}", summary::render(&report));
    if let Some(j) = json_file {
        j.write(&json::render(&report))?;
    }
    Ok(report.exit_code())
}
