//! `report.html`: the self-contained report with charts ([`crate::report::html`]).

use super::Exporter;
use crate::bench::results::Results;

/// The HTML exporter.
pub struct Html;

impl Exporter for Html {
    fn file_name(&self) -> &'static str {
        "report.html"
    }

    fn render(&self, results: &Results) -> String {
        crate::report::html::render(results)
    }
}
