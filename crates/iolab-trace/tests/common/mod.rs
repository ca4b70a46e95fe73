//! What the tests of real programs share: the backends that can trace here, and a trace of
//! a command under one of them, uncalibrated, one at a time.

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use iolab_testkit::trace as kit;
use iolab_trace::backend::Choice;
use iolab_trace::engine;
use iolab_trace::report::Report;

/// The backends that can trace here (the skip line printed for the others).
pub fn backends() -> Vec<Choice> {
    kit::backends([Choice::Bpf, Choice::Ptrace], engine::availability)
}

/// The report of `w` traced under `choice`, without a calibration.
pub fn report(choice: Choice, w: &[&str]) -> Report {
    let options = iolab_trace::Options {
        backend: choice,
        calibrate: false,
        ..iolab_trace::Options::default()
    };
    kit::locked(choice, w, |words| iolab_trace::trace(words, &options))
}

/// `tests/c/NAME.c` built with `cc -g OPT` into `dir`, or `None` (skipped, the line
/// printed) without a compiler.
#[allow(dead_code)] // Not every test file that shares this module builds C.
pub fn build_c(dir: &Path, name: &str, opt: &str) -> Option<PathBuf> {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/c/{name}.c"));
    let exe = dir.join(name);
    match Process::new("cc")
        .args(["-g", opt, "-o"])
        .arg(&exe)
        .arg(&source)
        .status()
    {
        Ok(s) if s.success() => Some(exe),
        Ok(s) => panic!("cc failed on {}: {s}", source.display()),
        Err(e) => {
            iolab_testkit::skip(format!("no C compiler (cc: {e})"));
            None
        }
    }
}
