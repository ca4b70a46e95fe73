//! The benchmark harness behind `iolab bench`.
//!
//! It makes the seed write-ups' measurement flaws impossible:
//! - cache state is prepared and **verified outside the timer** before every run
//!   ([`iolab_lab::cache`]), and the residency measured goes into the results;
//! - every method and baseline runs as a child process, timed the same way
//!   ([`runner`]), in **interleaved rounds** after a warm-up round;
//! - every run's result is **checked** against the data set's known answer, and a mismatch
//!   fails the run loudly ([`results::Row::verified`]);
//! - statistics come with their spread and outliers ([`stats`]);
//! - tables, JSON, Markdown and CSV are rendered from the same rows ([`export`]), so
//!   text and table cannot disagree.

pub mod cache_state;
pub mod chart;
pub mod context;
pub mod data;
pub mod error;
pub mod export;
pub mod interrupt;
pub mod peers;
pub mod probes;
pub mod profile;
pub mod progress;
pub mod report;
pub mod results;
pub mod rounds;
pub mod run;
pub mod runner;
pub mod stats;
pub mod suite;
pub mod suites;
pub mod verdict;
mod workdir;

pub use cache_state::{COLD_MAX_RESIDENCY, CacheState, WARM_MIN_RESIDENCY};
pub use context::{Config, Context, DEFAULT_RUNS, DEFAULT_WARMUP};
pub use run::run;
/// The suites that exist, in the order a full run takes them: the one table.
pub use suites::SUITES;
