//! Reading results back: loading `results.json`, comparing two runs, rendering reports.
//!
//! The HTML report is one of the formats `iolab bench` writes, so it lives with the other
//! exporters ([`crate::bench::export::html`]); it is re-exported here for `iolab report`.

pub mod compare;

pub use crate::bench::export::html;
pub use crate::bench::export::html::svg;

use std::path::{Path, PathBuf};

use crate::bench::results::Results;
use crate::error::{Error, Result};

/// Loads results from a `results.json` file or a results folder that contains one.
pub fn load(path: &Path) -> Result<Results> {
    let file: PathBuf = if path.is_dir() {
        path.join("results.json")
    } else {
        path.to_path_buf()
    };
    let text = std::fs::read_to_string(&file).map_err(|e| Error::io("cannot read results", e))?;
    let mut results: Results = serde_json::from_str(&text).map_err(|e| Error::InvalidResults {
        path: file,
        reason: e.to_string(),
    })?;
    if results.verdict.is_empty() {
        // Results from before the verdict: decide it now, from the same rows.
        results.verdict = results.decide();
    }
    Ok(results)
}
