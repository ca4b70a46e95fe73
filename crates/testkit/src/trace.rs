//! The plain parts of the tracer's tests: one trace at a time (the ptrace backend waits for
//! any child of the process), each backend or program a test needs found first and, where
//! it is missing, named on the skip line with the reason.
//!
//! The tracer's own calls (`Command::resolve`, `engine::run`, `trace`) are handed in as
//! closures by the test (see the crate's doc for why).

use std::ffi::OsString;
use std::fmt::Display;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use crate::skip;

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

/// The backends of `choices` that can trace here by `available` (`Err` with the reason
/// when one cannot); prints the skip line for the others.
pub fn backends<C: Copy + Display>(
    choices: impl IntoIterator<Item = C>,
    available: impl Fn(C) -> Result<(), String>,
) -> Vec<C> {
    choices
        .into_iter()
        .filter(|&c| match available(c) {
            Ok(()) => true,
            Err(reason) => {
                skip(format!("the {c} backend cannot trace here: {reason}"));
                false
            }
        })
        .collect()
}

/// The backends `iolab trace` can trace with here, asked of the binary: `trace(backend)`
/// is its command line up to `--`, and a backend is kept when it traces `true`; prints the
/// skip line, with iolab's reason, for the others.
pub fn cli_backends(trace: impl Fn(&str) -> std::process::Command) -> Vec<&'static str> {
    backends(["bpf", "ptrace"], |b| {
        let out = trace(b).args(["--", "true"]).output().unwrap();
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
        }
    })
}

/// What `run` makes of the command `w`, under the lock; panics with `{what}: {w:?}: {error}`
/// when it fails.
pub fn locked<T, E: Display>(
    what: impl Display,
    w: &[&str],
    run: impl FnOnce(&[OsString]) -> Result<T, E>,
) -> T {
    let _guard = lock();
    run(&words(w)).unwrap_or_else(|e| panic!("{what}: {w:?}: {e}"))
}

/// Whether `program` is on `PATH` (it resolves by `resolve`); prints the skip line when it
/// is not.
pub fn have<C, E>(program: &str, resolve: impl FnOnce(&[OsString]) -> Result<C, E>) -> bool {
    let found = resolve(&words(&[program])).is_ok();
    if !found {
        skip(format!("{program} is not installed"));
    }
    found
}

/// The target of `targets` at `path` (canonical paths compared; `path_of` gives a target's
/// path); panics naming the `backend` and every path seen when there is none.
pub fn target<'a, T>(
    backend: impl Display,
    targets: &'a [T],
    path_of: impl Fn(&T) -> &str,
    path: &Path,
) -> &'a T {
    let want = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    targets
        .iter()
        .find(|t| Path::new(path_of(t)) == want || Path::new(path_of(t)) == path)
        .unwrap_or_else(|| {
            let paths: Vec<&str> = targets.iter().map(&path_of).collect();
            panic!(
                "{backend}: no target {}; targets: {paths:?}",
                path.display()
            )
        })
}

/// The Python interpreter: the system's, not a shim that execs others.
pub fn python() -> Option<&'static str> {
    ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .or_else(|| {
            skip("python3 is not installed");
            None
        })
}
