//! Writing results: one file per format behind a small [`Exporter`] trait, and the
//! tables shared by the terminal and Markdown outputs.

pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod table;
pub mod terminal;

use std::path::Path;

use iolab_lab::generate::{AtomicOptions, write_file_atomically};

use crate::error::{Error, Result};
use crate::results::Results;
use crate::suite::Suite;

/// A results format.
pub trait Exporter {
    /// The file name it writes in the results folder.
    fn file_name(&self) -> &'static str;
    /// The file's contents; `suites` is the suite table (columns, sections, charts).
    fn render(&self, results: &Results, suites: &[Suite]) -> String;
}

/// Every format `iolab bench` writes.
pub fn all() -> Vec<Box<dyn Exporter>> {
    vec![
        Box::new(json::Json),
        Box::new(markdown::Markdown),
        Box::new(csv::Csv),
        Box::new(html::Html),
    ]
}

/// Writes every format into `dir` (created if needed); each file is written whole or not
/// at all ([`write_file_atomically`]: a temporary file of this process's own, synced and
/// renamed over the old one), so a reader never sees half a file.
pub fn write_all(
    results: &Results,
    suites: &[Suite],
    dir: &Path,
) -> Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create the results folder", e))?;
    let mut written = Vec::new();
    for exporter in all() {
        let path = dir.join(exporter.file_name());
        let text = exporter.render(results, suites);
        write_file_atomically(&path, &AtomicOptions::new().overwrite(true), |out| {
            out.write_all(text.as_bytes())
                .map_err(|e| iolab::Error::io("cannot write", e).into())
        })
        .map_err(|e| Error::Generate {
            path: path.clone(),
            source: e,
        })?;
        written.push(path);
    }
    Ok(written)
}
