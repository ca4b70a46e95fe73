//! What the tests of real programs share: the backends that can trace here, and a trace of
//! a command under one of them, uncalibrated, one at a time.

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
