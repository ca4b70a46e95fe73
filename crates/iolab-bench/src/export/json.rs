//! `results.json`: the whole [`Results`] document, pretty-printed.

use super::Exporter;
use crate::results::Results;
use crate::suite::Suite;

/// The JSON exporter.
pub struct Json;

impl Exporter for Json {
    fn file_name(&self) -> &'static str {
        "results.json"
    }

    fn render(&self, results: &Results, _suites: &[Suite]) -> String {
        let mut text = serde_json::to_string_pretty(results)
            .expect("results contain only strings, numbers and maps");
        text.push('\n');
        text
    }
}
