//! Writing results: one file per format behind a small [`Exporter`] trait, and the
//! tables shared by the terminal and Markdown outputs.

pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod table;
pub mod terminal;

use std::path::Path;

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

/// Writes every format into `dir` (created if needed); each file is written to a temporary
/// name of this process's own (created with `O_EXCL`, so no file of anyone else's is ever
/// written or removed) and renamed, so a reader never sees half a file.
pub fn write_all(
    results: &Results,
    suites: &[Suite],
    dir: &Path,
) -> Result<Vec<std::path::PathBuf>> {
    use std::io::Write;
    std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create the results folder", e))?;
    let mut written = Vec::new();
    for exporter in all() {
        let path = dir.join(exporter.file_name());
        let tmp = dir.join(format!(
            ".{}.{}.tmp",
            exporter.file_name(),
            std::process::id()
        ));
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| Error::io("cannot write results", e))?;
        file.write_all(exporter.render(results, suites).as_bytes())
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                Error::io("cannot write results", e)
            })?;
        written.push(path);
    }
    Ok(written)
}
