//! Reading results back: loading `results.json` and comparing two runs. The HTML report is
//! one of the formats `iolab bench` writes, so it lives with the other exporters
//! ([`crate::export::html`]).
//!
//! Loading is [`iolab_results::load`]'s; [`load`] adds the verdict to results from
//! before it.

pub mod compare;

use std::path::Path;

use crate::error::{Error, Result};
use crate::results::Results;
pub use iolab_results::load::{RUN_FILES, results_file};

/// Loads results from a `results.json` file or a results folder that contains one
/// ([`iolab_results::load::load`]), deciding the verdict of results from before it.
///
/// Fails with [`Error::InvalidResults`] (which names the file) when the file is not
/// results of this schema.
pub fn load(path: &Path) -> Result<Results> {
    let mut results = iolab_results::load::load(path).map_err(|e| match e {
        iolab_results::load::LoadError::Io { source, .. } => {
            Error::io("cannot read results", source)
        }
        iolab_results::load::LoadError::Invalid { path, reason } => {
            Error::InvalidResults { path, reason }
        }
    })?;
    if results.verdict.is_empty() {
        // Results from before the verdict: decide it now, from the same rows.
        results.verdict = crate::suites::decide(&results);
    }
    Ok(results)
}
