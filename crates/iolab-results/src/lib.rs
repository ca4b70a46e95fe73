//! The results of `iolab bench`, as `results.json` holds them: the rows, the verdict, the
//! limit probes' points, their statistics; loading a run and finding the newest one. The
//! harness (`iolab-bench`) writes them, the tracer (`iolab-trace`) reads them; the format
//! is documented in `docs/results-format.md`.

pub mod cache;
pub mod load;
pub mod probe;
pub mod random_run;
pub mod results;
pub mod stats;

pub use load::{LoadError, RESULTS_DIR, load, newest_run};
pub use random_run::{RandomCheck, RandomRun};
pub use results::{Results, Row, SCHEMA_VERSION, SuiteError, Verdict};
