//! `results.md`: the verdict first, then the machine summary, warnings, one table per suite
//! and section (every row), and the notes.

use std::fmt::Write;

use super::Exporter;
use super::table::{self, Markup};
use crate::results::Results;
use crate::suite::Suite;

/// The Markdown exporter.
pub struct Markdown;

impl Exporter for Markdown {
    fn file_name(&self) -> &'static str {
        "results.md"
    }

    fn render(&self, results: &Results, suites: &[Suite]) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# iolab results\n");
        out.push_str(&table::verdict_table(results, true).render(Markup::Markdown));
        for note in results.verdict.iter().filter_map(|v| v.default_note()) {
            out.push_str(&format!("\n- {note}"));
        }
        out.push('\n');
        for failed in &results.errors {
            let _ = writeln!(
                out,
                "**Partial run: the {} suite failed: {}**\n",
                failed.suite, failed.error
            );
        }
        if results.partial && results.errors.is_empty() {
            let _ = writeln!(
                out,
                "**Partial run: interrupted before every row was measured.**\n"
            );
        }
        let _ = writeln!(
            out,
            "iolab {} · started {} · `{}`\n",
            results.iolab_version,
            results.started_at,
            results.command.join(" ")
        );
        for line in results.sysinfo.summary_lines() {
            let _ = writeln!(out, "- {line}");
        }
        out.push('\n');
        for w in &results.warnings {
            let _ = writeln!(out, "> **Warning:** {w}\n");
        }
        for t in table::tables(results, suites) {
            out.push_str(&t.render(Markup::Markdown));
            out.push('\n');
        }
        for n in &results.notes {
            let _ = writeln!(out, "- {n}");
        }
        out
    }
}
