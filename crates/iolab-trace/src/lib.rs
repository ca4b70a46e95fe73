//! The tracer behind `iolab trace`: it runs a command, follows every thread and child, sees
//! its I/O system calls and what each descriptor is, aggregates them per target, and finds
//! the write-ups' pitfalls (small writes, a sync per record, small or scattered reads, a
//! whole file rewritten for a small change) with an estimate of their cost here and of the
//! fix's, from this machine's `iolab bench` results or a short calibration.
//!
//! ```no_run
//! let words = iolab_trace::launch::words(["dd", "if=/dev/zero", "of=/dev/null", "bs=512", "count=1000"]);
//! let report = iolab_trace::trace(&words, &iolab_trace::Options::default())?;
//! eprint!("{}", iolab_trace::report::summary::render(&report));
//! # Ok::<(), iolab_trace::Error>(())
//! ```
//!
//! Layers, bottom up (`docs/trace.md` has the whole story):
//!
//! | module | what |
//! |---|---|
//! | [`model`], [`syscalls`], [`error`] | what a trace holds; the followed calls; errors |
//! | [`procfs`], [`launch`], [`signals`], [`backend`] | naming descriptors; starting the command; Ctrl-C; the backends' vocabulary |
//! | [`engine`] | the backends: iolab's own eBPF program ([`engine::bpf`]), ptrace with a seccomp filter ([`engine::ptrace`]) |
//! | [`costs`] | the figures: `iolab bench` results, or a calibration |
//! | [`rules`] | the findings and their estimates |
//! | [`report`] | the terminal summary and the JSON |
//! | [`session`] | one trace, start to end |
#![deny(missing_docs)]

pub mod backend;
pub mod costs;
pub mod engine;
pub mod error;
pub mod journal;
pub mod launch;
pub mod model;
pub mod origin;
pub mod procfs;
pub mod program;
pub mod report;
pub mod rules;
pub mod session;
pub mod signals;
/// Sampled user stacks named with function, file and line of the main executable.
pub mod stacks;
pub mod syscalls;

pub use error::Error;
pub use session::{Options, trace};
