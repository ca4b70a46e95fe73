//! `iolab trace [OPTIONS] -- CMD [ARGS…]`: runs CMD, follows its I/O system calls, and
//! prints on stderr where it does I/O the slow way, with this machine's measured fix
//! (`iolab_trace`). CMD's standard input, output and error are its own; `iolab trace`
//! exits with CMD's status (128 + N when signal N killed it).

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use iolab_lab::generate::{AtomicOptions, GenerateError, write_file_atomically};
use iolab_trace::backend::Choice;
use iolab_trace::report::{json, summary};

/// Arguments of `iolab trace`.
#[derive(Debug, clap::Args)]
#[command(override_usage = "iolab trace [OPTIONS] -- CMD [ARGS]...")]
#[command(after_help = "The summary goes to stderr; CMD's output is untouched. \
    Backends: bpf (iolab's eBPF program: root or CAP_BPF+CAP_PERFMON, BTF) \
    and ptrace (a seccomp filter stops CMD only on its I/O calls). See docs/trace.md.")]
pub struct Args {
    /// Also write the summary, with every target and finding, as JSON to FILE (`-`:
    /// stdout, after the command's own output). A regular file is replaced whole.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Take the costs from these `iolab bench` results (a results.json, a run folder, or
    /// a folder of runs: its newest) [default: the newest run under ./iolab-results].
    #[arg(long, value_name = "DIR")]
    results: Option<PathBuf>,
    /// The tracer: auto (the one that cost this command less in this folder the last times;
    /// eBPF for a new command where allowed, else ptrace), bpf or ptrace.
    #[arg(long, default_value = "auto", value_parser = super::parse_named::<Choice>)]
    backend: Choice,
    /// Stream every traced call to FILE, one line each (the ptrace backend).
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Estimate only from `iolab bench` results: never run the calibration.
    #[arg(long)]
    no_calibrate: bool,
    /// Also say how the backend traces and the whole reason it was chosen (under its
    /// line), and list every process the command ran, with its calls, bytes and time.
    #[arg(short, long)]
    verbose: bool,
    /// The command to trace and its arguments (after `--`).
    #[arg(
        value_name = "CMD",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    command: Vec<OsString>,
}

/// Kernel pseudo file systems (`statfs` magic, `linux/magic.h`) where a JSON file is
/// never wanted: their files are the kernel's, and a write changes a setting or fails.
const PSEUDO_FILE_SYSTEMS: &[(u32, &str)] = &[
    (0x9fa0, "procfs"),
    (0x6265_6572, "sysfs"),
    (0x0027_e0eb, "cgroup"),
    (0x6367_7270, "cgroup2"),
    (0x6462_6720, "debugfs"),
    (0x7472_6163, "tracefs"),
    (0x7363_6673, "securityfs"),
    (0xcafe_4a11, "bpf"),
];

/// `/dev/full`'s device number (`devices.txt`: char 1:7): every write to it fails.
const DEV_FULL: (u32, u32) = (1, 7);

/// Where `--json` goes, checked before the command runs so that a path that cannot be
/// written is refused first (the command must not run for nothing).
enum JsonOutput {
    /// `-`: iolab's standard output, once the command has ended.
    Stdout,
    /// A pipe, terminal or device (`/dev/stdout` into a pipe, `/dev/null`), opened before
    /// the command runs and written as a stream: it cannot be truncated or renamed over.
    Stream { file: File, shown: String },
    /// A regular file, or a new one: written into a temporary file in the same folder
    /// and renamed over it, so that it holds this run or, when writing fails, the
    /// previous one intact.
    Replace { target: PathBuf, shown: String },
}

/// The name of the file system holding `path` when it is a kernel pseudo file system.
fn pseudo_file_system(path: &Path) -> Option<&'static str> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut buf = std::mem::MaybeUninit::<libc::statfs>::zeroed();
    // SAFETY: `c` is a NUL-terminated path and `buf` writable memory of the size and
    // layout statfs(2) fills.
    if unsafe { libc::statfs(c.as_ptr(), buf.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: statfs returned 0, so it filled `buf` (zeroed before anyway).
    // Magic numbers are 32-bit; `f_type`'s width and signedness differ between ABIs.
    let magic = unsafe { buf.assume_init() }.f_type as u32;
    PSEUDO_FILE_SYSTEMS
        .iter()
        .find(|&&(m, _)| m == magic)
        .map(|&(_, name)| name)
}

/// Why a file of this metadata cannot take the JSON, if it cannot.
fn unfit(meta: &std::fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let kind = meta.file_type();
    if kind.is_dir() {
        Some("it is a directory")
    } else if kind.is_char_device()
        && (libc::major(meta.rdev()), libc::minor(meta.rdev())) == DEV_FULL
    {
        Some("every write to /dev/full fails (No space left on device)")
    } else {
        None
    }
}

/// Whether `meta` is the file iolab's stdout or stderr writes to (`--json /dev/stdout`
/// with stdout sent to a file): replacing it would lose the command's output.
fn is_own_output(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    [1u8, 2].into_iter().any(|fd| {
        !super::closed_at_start(fd)
            && std::fs::metadata(format!("/proc/self/fd/{fd}"))
                .is_ok_and(|m| (m.dev(), m.ino()) == (meta.dev(), meta.ino()))
    })
}

/// A name for a temporary file beside `target`, hidden, with this process's id.
fn temporary_beside(target: &Path, attempt: u32) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // SAFETY: getpid cannot fail.
    let pid = unsafe { libc::getpid() };
    target.with_file_name(format!(".{name}.iolab-{pid}-{attempt}.tmp"))
}

/// Creates a new temporary file beside `target` (a fresh name if one is taken).
fn create_beside(target: &Path) -> io::Result<(File, PathBuf)> {
    let mut attempt = 0;
    loop {
        let path = temporary_beside(target, attempt);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .open(&path)
        {
            Ok(file) => return Ok((file, path)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(e) => return Err(e),
        }
    }
}

impl JsonOutput {
    /// Checks that `arg` can take the JSON, and opens it when it is a stream.
    fn prepare(arg: &Path) -> Result<JsonOutput> {
        if arg == Path::new("-") {
            if super::closed_at_start(1) {
                bail!(
                    "cannot write the JSON to stdout: standard output is closed (file descriptor 1)"
                );
            }
            let meta = File::open("/proc/self/fd/1")
                .and_then(|f| f.metadata())
                .or_else(|_| std::fs::metadata("/dev/stdout"));
            if let Ok(meta) = meta
                && let Some(why) = unfit(&meta)
            {
                bail!("cannot write the JSON to stdout: {why}");
            }
            return Ok(JsonOutput::Stdout);
        }
        let shown = arg.display().to_string();
        let cause = |e: &io::Error| iolab_lab::error::describe_io(e);
        match std::fs::metadata(arg) {
            Ok(meta) => {
                if let Some(why) = unfit(&meta) {
                    bail!("cannot write the JSON to {shown}: {why}");
                }
                if let Some(fs) = pseudo_file_system(arg) {
                    bail!(
                        "cannot write the JSON to {shown}: it is on {fs}, whose files are the kernel's"
                    );
                }
                if meta.is_file() && is_own_output(&meta) {
                    // `/dev/stdout` sent to a file: after the command's output, not over it.
                    let file = OpenOptions::new()
                        .append(true)
                        .open(arg)
                        .map_err(|e| anyhow::anyhow!("cannot write {shown}: {}", cause(&e)))?;
                    Ok(JsonOutput::Stream { file, shown })
                } else if meta.is_file() {
                    let c = std::ffi::CString::new(arg.as_os_str().as_bytes())?;
                    // SAFETY: `c` is a NUL-terminated path; access only reads it.
                    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
                        bail!(
                            "cannot write {shown}: {}",
                            cause(&io::Error::last_os_error())
                        );
                    }
                    // A link is followed: the file it names is replaced, not the link.
                    let target = std::fs::canonicalize(arg)
                        .with_context(|| format!("cannot write {shown}"))?;
                    probe_folder(&target, &shown)?;
                    Ok(JsonOutput::Replace { target, shown })
                } else {
                    let file = OpenOptions::new()
                        .write(true)
                        .custom_flags(libc::O_NOCTTY)
                        .open(arg)
                        .map_err(|e| anyhow::anyhow!("cannot write {shown}: {}", cause(&e)))?;
                    Ok(JsonOutput::Stream { file, shown })
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let Some(name) = arg.file_name() else {
                    bail!("cannot create {shown}: it names a folder, not a file");
                };
                let folder = match arg.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p,
                    _ => Path::new("."),
                };
                match std::fs::metadata(folder) {
                    Ok(m) if m.is_dir() => {}
                    Ok(_) => bail!(
                        "cannot create {shown}: {} is not a folder",
                        folder.display()
                    ),
                    Err(e) => bail!("cannot create {shown}: {}", cause(&e)),
                }
                if let Some(fs) = pseudo_file_system(folder) {
                    bail!(
                        "cannot write the JSON to {shown}: it is on {fs}, whose files are the kernel's"
                    );
                }
                let target = std::fs::canonicalize(folder)
                    .with_context(|| format!("cannot create {shown}"))?
                    .join(name);
                probe_folder(&target, &shown)?;
                Ok(JsonOutput::Replace { target, shown })
            }
            Err(e) => bail!("cannot write {shown}: {}", cause(&e)),
        }
    }

    /// Writes `text`; an error is one line naming the output (the caller reports it and
    /// keeps the command's status). A reader that went away (`EPIPE`) is not an error, as
    /// for every other output of iolab.
    fn write(self, text: &str) -> Result<()> {
        let quiet_pipe = |r: io::Result<()>| match r {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            other => other,
        };
        match self {
            JsonOutput::Stdout => {
                let mut out = io::stdout().lock();
                quiet_pipe(out.write_all(text.as_bytes()).and_then(|()| out.flush()))
                    .context("cannot write the JSON to stdout")
            }
            JsonOutput::Stream { mut file, shown } => quiet_pipe(file.write_all(text.as_bytes()))
                .with_context(|| format!("cannot write the JSON to {shown}")),
            JsonOutput::Replace { target, shown } => replace(&target, text).map_err(|e| {
                let kept = if target.exists() {
                    "it still holds the previous run"
                } else {
                    "nothing was written"
                };
                anyhow::anyhow!("cannot write the JSON to {shown}: {e}; {kept}")
            }),
        }
    }
}

/// Creates and removes a temporary file beside `target`: the folder exists, is writable,
/// and is not on a read-only file system.
fn probe_folder(target: &Path, shown: &str) -> Result<()> {
    let (file, path) = create_beside(target).map_err(|e| {
        anyhow::anyhow!(
            "cannot create {shown}: {}",
            iolab_lab::error::describe_io(&e)
        )
    })?;
    drop(file);
    let _ = std::fs::remove_file(&path);
    Ok(())
}

/// Writes `text` in place of `target`, whole or not at all: a temporary file beside it,
/// with the old file's permissions, synced, renamed over it, the folder synced; on failure
/// the temporary file is removed and `target` is untouched.
fn replace(target: &Path, text: &str) -> std::result::Result<(), GenerateError> {
    let options = AtomicOptions::new().overwrite(true).keep_permissions(true);
    write_file_atomically(target, &options, |out| {
        out.write_all(text.as_bytes())
            .map_err(|e| iolab::Error::io("cannot write", e).into())
    })
}

/// Writes on stderr; a closed or broken stderr is not worth a panic or an error (the
/// command's status is what iolab reports).
fn to_stderr(text: &str) {
    let _ = io::stderr().lock().write_all(text.as_bytes());
}

/// Traces the command; returns its exit status.
pub fn run(args: Args) -> Result<i32> {
    if args.command.is_empty() {
        super::report(&iolab_trace::Error::NoCommand.to_string());
        return Ok(2);
    }
    let json = args.json.as_deref().map(JsonOutput::prepare).transpose()?;
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
            super::report(&e.to_string());
            return Ok(e.exit_code());
        }
    };
    // The JSON first: a reader of stderr that goes away (`2>&1 | head`) must not cost it.
    if let Some(output) = json {
        let written = serde_json::to_string_pretty(&json::render(&report))
            .map_err(anyhow::Error::from)
            .and_then(|text| output.write(&(text + "\n")));
        if let Err(e) = written {
            super::report(&super::one_line(&e));
        }
    }
    to_stderr(&summary::render_with(&report, args.verbose));
    if args.verbose {
        to_stderr(&summary::processes(&report));
    }
    // Whatever happened to iolab's own output, the status is the command's.
    Ok(report.exit_code())
}
