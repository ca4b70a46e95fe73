//! The command line: argument parsing and one module per subcommand.
//!
//! Errors are reported as one line, `iolab: <context>: <cause>`, with a non-zero exit;
//! a closed pipe on stdout ends the program quietly.

mod bench;
mod compare;
mod count;
mod count_output;
mod crash;
mod crash_replay;
mod drain;
mod edit;
mod generate;
mod methods;
mod random;
mod report;
mod sysinfo;
mod trace;
mod write;

use std::io::{self, Write};
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use anyhow::bail;
use clap::{Parser, Subcommand};

/// Which of descriptors 0, 1 and 2 were closed when the process started (bit `n` for
/// descriptor `n`). Rust's runtime opens `/dev/null` on a closed standard descriptor before
/// `main`, so `iolab count <&-` would read nothing and `iolab count FILE >&-` would print
/// into nothing, and both would succeed, where `wc -l` fails with `EBADF`. A `/dev/null`
/// the caller chose (`> /dev/null`, Python's `subprocess.DEVNULL`, which opens it
/// read-write) is another matter, and only a look before the runtime's tells them apart.
static CLOSED_AT_START: AtomicU8 = AtomicU8::new(0);

/// The signals ignored when the process started, and its blocked mask (kernel layout: bit
/// `n - 1` for signal `n`). Rust's runtime ignores `SIGPIPE` before `main`; `iolab trace`
/// gives the command these instead, as it would have them untraced.
static IGNORED_AT_START: AtomicU64 = AtomicU64::new(0);
static BLOCKED_AT_START: AtomicU64 = AtomicU64::new(0);

/// Notes the closed standard descriptors in [`CLOSED_AT_START`] and the signal state in
/// [`IGNORED_AT_START`] and [`BLOCKED_AT_START`]. The C runtime calls it from
/// `.init_array` before Rust's runtime starts and before any thread exists.
extern "C" fn note_start_state() {
    for fd in 0..3 {
        // SAFETY: F_GETFD only asks whether the descriptor is open; it changes nothing.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
            CLOSED_AT_START.fetch_or(1 << fd, Ordering::Relaxed);
        }
    }
    // Raw system calls only: nothing of Rust's runtime is needed.
    let signals = iolab_trace::signals::Inherited::of_this_process();
    IGNORED_AT_START.store(signals.ignored.bits(), Ordering::Relaxed);
    BLOCKED_AT_START.store(signals.blocked.bits(), Ordering::Relaxed);
}

#[used]
// SAFETY: `.init_array` holds functions the C runtime calls once at start-up with (argc,
// argv, envp); a function of no arguments may ignore them under the C calling convention,
// and this one only makes system calls (`fcntl`, `rt_sigaction`, `rt_sigprocmask`) and
// stores to atomics, needing nothing of Rust's runtime.
#[unsafe(link_section = ".init_array")]
static NOTE_START_STATE: extern "C" fn() = note_start_state;

/// Whether standard descriptor `fd` (0, 1 or 2) was closed when the process started.
pub(crate) fn closed_at_start(fd: u8) -> bool {
    CLOSED_AT_START.load(Ordering::Relaxed) & (1 << fd) != 0
}

/// The signals ignored and blocked when the process started, before Rust's runtime.
pub(crate) fn signals_at_start() -> iolab_trace::signals::Inherited {
    use iolab_trace::signals::SignalSet;
    iolab_trace::signals::Inherited {
        ignored: SignalSet::from_bits(IGNORED_AT_START.load(Ordering::Relaxed)),
        blocked: SignalSet::from_bits(BLOCKED_AT_START.load(Ordering::Relaxed)),
    }
}

/// Standard output, locked, for a command's results; an error when descriptor 1 was closed
/// when the process started (`>&-`), as `wc` fails there, instead of printing into the
/// `/dev/null` Rust's runtime put in its place.
pub(crate) fn stdout() -> anyhow::Result<io::StdoutLock<'static>> {
    if closed_at_start(1) {
        bail!("cannot write to stdout: standard output is closed (file descriptor 1)");
    }
    Ok(io::stdout().lock())
}

/// A Linux file-I/O laboratory: finds the fastest way to do an I/O task on this machine.
#[derive(Debug, Parser)]
#[command(name = "iolab", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Benchmark every method against the baselines on generated data (the main job).
    Bench(bench::Args),
    /// Count lines (newline bytes) like `wc -l`.
    Count(count::Args),
    /// Write N bytes to stdout, fast (or as slowly as Rust's line-buffered stdout).
    Write(write::Args),
    /// Read random blocks of a file, every read verified: IOPS and latency percentiles.
    Random(random::Args),
    /// Edit a file in place: keep only its first line, or replace one byte by another.
    #[command(subcommand)]
    Edit(edit::Command),
    /// Write the self-contained HTML report (charts and tables) of a benchmark run.
    Report(report::Args),
    /// Compare two benchmark runs row by row; exits 1 on a regression beyond the noise.
    Compare(compare::Args),
    /// List the methods of a workload and whether each can run here.
    Methods(methods::Args),
    /// Generate a deterministic data set (text lines or numeric CSV).
    #[command(subcommand)]
    Gen(generate::Command),
    /// Show the facts about this machine that explain its I/O figures.
    Sysinfo(sysinfo::Args),
    /// Run a command and find where it does I/O the slow way, with this machine's fix.
    Trace(trace::Args),
    /// Run a program once, then check every crash state in which it could lose data.
    Crash(crash::Args),
    /// Splice standard input to /dev/null and print the byte count (the write benchmark's
    /// pipe reader).
    #[command(hide = true)]
    Drain(drain::Args),
}

/// Runs the CLI and returns the process exit code.
pub fn main() -> i32 {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(args) = count::fast_path(&argv) {
        return finish(count::run(args));
    }
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version: print as clap does.
            let _ = e.print();
            return 0;
        }
        Err(e) => {
            // One line, like every other error: clap's first line without its `error: `.
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            report(first.strip_prefix("error: ").unwrap_or(first));
            return 2;
        }
    };
    finish(match cli.command {
        Command::Bench(args) => bench::run(args),
        Command::Count(args) => count::run(args),
        Command::Methods(args) => methods::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Report(args) => report::run(args),
        Command::Write(args) => write::run(args),
        Command::Random(args) => random::run(args),
        Command::Edit(command) => edit::run(command),
        Command::Gen(command) => generate::run(command),
        Command::Sysinfo(args) => sysinfo::run(args),
        Command::Trace(args) => trace::run(args),
        Command::Crash(args) => crash::run(args),
        Command::Drain(args) => drain::run(args),
    })
}

/// The exit code for a command's result, reporting an error as one line.
fn finish(result: anyhow::Result<i32>) -> i32 {
    match result {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => 0,
        Err(e) => {
            report(&one_line(&e));
            1
        }
    }
}

/// The error and its causes as one line, `outer: inner: …`, leaving out a cause whose text
/// the message before it already contains (library errors spell out their cause).
pub(crate) fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = iolab_lab::error::describe_io(cause);
        if !line.contains(&text) {
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(&text);
        }
    }
    line
}

/// Prints one error line on stderr.
pub(crate) fn report(message: &str) {
    let _ = writeln!(io::stderr().lock(), "iolab: {message}");
}

/// Whether `e` is (or wraps) a write to a closed pipe.
pub(crate) fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Parses a name of `T` (a method, a strategy, a kernel, …) for clap, with the library's
/// one message on failure (``unknown method `x`; one of: …``).
pub(crate) fn parse_named<T: iolab_lab::named::Named>(s: &str) -> Result<T, String> {
    T::from_name(s).map_err(|e| e.to_string())
}

/// What a file of this type is, for messages: "a regular file", "a directory", "a FIFO",
/// "a socket", "a device" or "a file of another kind".
pub(crate) fn what_it_is(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_file() {
        "a regular file"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "a file of another kind"
    }
}
