//! Helpers of the tracer's tests: one trace at a time (the ptrace backend waits for any
//! child of the process), each backend skipped with the reason where it cannot run here,
//! and the programs they trace (coreutils, Python, dd, sh) found first.
#![allow(dead_code)]

use std::ffi::OsString;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use iolab_trace::backend::{Choice, Outcome, RunOptions};
use iolab_trace::launch::Command;
use iolab_trace::model::Target;
use iolab_trace::report::Report;

/// One trace at a time in this process.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Takes the lock (a test that panicked while holding it does not poison the others).
pub fn lock() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// The words of a command.
pub fn words(words: &[&str]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

/// Whether `choice` can trace here: `Err` with the reason when it cannot.
pub fn available(choice: Choice) -> Result<(), String> {
    match choice {
        Choice::Bpf => iolab_trace::engine::bpf::availability().map(|_| ()),
        _ => {
            let cmd = Command::resolve(&words(&["true"])).map_err(|e| e.to_string())?;
            let _guard = lock();
            iolab_trace::engine::run(&cmd, Choice::Ptrace, &RunOptions::default())
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
    }
}

/// The backends that can trace here; prints the skip line for the others.
pub fn backends() -> Vec<Choice> {
    [Choice::Bpf, Choice::Ptrace]
        .into_iter()
        .filter(|&c| match available(c) {
            Ok(()) => true,
            Err(reason) => {
                iolab_testkit::skip(format!("the {c} backend cannot trace here: {reason}"));
                false
            }
        })
        .collect()
}

/// Whether `program` is on `PATH`; prints the skip line when it is not.
pub fn have(program: &str) -> bool {
    let found = Command::resolve(&words(&[program])).is_ok();
    if !found {
        iolab_testkit::skip(format!("{program} is not installed"));
    }
    found
}

/// Traces `w` with `choice` and reports, calibrating only when asked, with the figures of
/// the `iolab bench` results at `results` if any.
pub fn report(choice: Choice, w: &[&str], calibrate: bool, results: Option<&Path>) -> Report {
    let options = iolab_trace::Options {
        backend: choice,
        results: results.map(Path::to_path_buf),
        log: None,
        calibrate,
        closed_std_fds: Vec::new(),
        ..iolab_trace::Options::default()
    };
    let _guard = lock();
    iolab_trace::trace(&words(w), &options).unwrap_or_else(|e| panic!("{choice}: {w:?}: {e}"))
}

/// Traces `words` with `choice`.
pub fn trace(choice: Choice, w: &[&str]) -> Outcome {
    let cmd = Command::resolve(&words(w)).expect("the command exists");
    let _guard = lock();
    iolab_trace::engine::run(&cmd, choice, &RunOptions::default())
        .unwrap_or_else(|e| panic!("{choice}: {w:?}: {e}"))
}

/// The target at `path` (canonical paths compared).
pub fn target<'a>(o: &'a Outcome, path: &Path) -> &'a Target {
    let want = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    o.trace
        .targets
        .iter()
        .find(|t| Path::new(&t.path) == want || Path::new(&t.path) == path)
        .unwrap_or_else(|| {
            let paths: Vec<&str> = o.trace.targets.iter().map(|t| t.path.as_str()).collect();
            panic!(
                "{}: no target {}; targets: {paths:?}",
                o.backend,
                path.display()
            )
        })
}

/// The first target whose path starts with `prefix` (`pipe:[`, `socket:[`).
pub fn target_like<'a>(o: &'a Outcome, prefix: &str, pick: impl Fn(&Target) -> bool) -> &'a Target {
    o.trace
        .targets
        .iter()
        .find(|t| t.path.starts_with(prefix) && pick(t))
        .unwrap_or_else(|| panic!("{}: no target like {prefix}", o.backend))
}

/// A file of `bytes` bytes of text lines in `dir`.
pub fn text_file(dir: &Path, name: &str, bytes: usize) -> std::path::PathBuf {
    let path = dir.join(name);
    let line = b"0123456789,abcdefghij,klmnopqrst,uvwxyz\n";
    let text: Vec<u8> = line.iter().copied().cycle().take(bytes).collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// The Python interpreter: the system's, not a shim that execs others.
pub fn python() -> Option<&'static str> {
    ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .or_else(|| {
            iolab_testkit::skip("python3 is not installed");
            None
        })
}
