//! The results of a benchmark run: [`iolab_results`], the crate the harness writes and
//! the tracer reads.

pub use iolab_results::results::keys;
pub use iolab_results::{Results, Row, SCHEMA_VERSION, SuiteError, Verdict};
