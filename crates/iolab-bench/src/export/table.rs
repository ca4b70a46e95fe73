//! Tables of results, like the line-count write-up's "for the impatient" table: one per suite and
//! section (cache state, sink, …), fastest first, each row relative to the section's
//! reference baseline. Rendered as aligned text for the terminal or as Markdown.

use crate::results::{Results, Row};
use crate::suite::{Column, Place, Suite, find_in};
use iolab_lab::units::{format_duration, format_rate};

/// How a table is written out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Markup {
    /// Space-aligned columns for a terminal, the header underlined.
    Plain,
    /// Space-aligned columns without the underline: the compact terminal tables, where
    /// many sections share one screen.
    PlainCompact,
    /// A GitHub-flavoured Markdown table.
    Markdown,
}

/// A titled table of strings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// The heading above the table.
    pub title: String,
    /// Column headings.
    pub headers: Vec<String>,
    /// Cells, row by row.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// The table as text.
    pub fn render(&self, markup: Markup) -> String {
        if markup == Markup::Markdown {
            // Escape first, so the column widths are those of the text written.
            let escape = |cells: &[String]| -> Vec<String> {
                // A cell is one line: a snippet's lines are kept apart by `<br>`.
                cells
                    .iter()
                    .map(|c| c.replace('|', "\\|").replace('\n', "<br>"))
                    .collect()
            };
            let escaped = Table {
                title: self.title.clone(),
                headers: escape(&self.headers),
                rows: self.rows.iter().map(|r| escape(r)).collect(),
            };
            return escaped.render_escaped(markup);
        }
        self.render_escaped(markup)
    }

    fn render_escaped(&self, markup: Markup) -> String {
        let cols = self.headers.len();
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate().take(cols) {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let pad = |s: &str, w: usize| format!("{s}{}", " ".repeat(w - s.chars().count()));
        let mut out = String::new();
        match markup {
            Markup::Plain | Markup::PlainCompact => {
                out.push_str(&self.title);
                out.push('\n');
                let line = |cells: &[String]| {
                    cells
                        .iter()
                        .enumerate()
                        .map(|(i, c)| pad(c, widths[i]))
                        .collect::<Vec<_>>()
                        .join("  ")
                        .trim_end()
                        .to_string()
                };
                out.push_str(&line(&self.headers));
                out.push('\n');
                if markup == Markup::Plain {
                    out.push_str(
                        &widths
                            .iter()
                            .map(|w| "-".repeat(*w))
                            .collect::<Vec<_>>()
                            .join("  "),
                    );
                    out.push('\n');
                }
                for row in &self.rows {
                    out.push_str(&line(row));
                    out.push('\n');
                }
            }
            Markup::Markdown => {
                out.push_str(&format!("## {}\n\n", self.title));
                let line = |cells: &[String]| {
                    format!(
                        "| {} |",
                        cells
                            .iter()
                            .enumerate()
                            .map(|(i, c)| pad(c, widths[i]))
                            .collect::<Vec<_>>()
                            .join(" | ")
                    )
                };
                out.push_str(&line(&self.headers));
                out.push('\n');
                out.push_str(&format!(
                    "|{}|\n",
                    widths
                        .iter()
                        .map(|w| "-".repeat(w + 2))
                        .collect::<Vec<_>>()
                        .join("|")
                ));
                for row in &self.rows {
                    out.push_str(&line(row));
                    out.push('\n');
                }
            }
        }
        out
    }
}

/// The verdict as a table: per suite and condition, the winner, its figure, its lead over
/// the best baseline, its share of the ceiling and the command; `library` adds the
/// library call as a column.
pub fn verdict_table(results: &Results, library: bool) -> Table {
    let mut headers: Vec<String> = [
        "workload",
        "condition",
        "winner",
        "figure",
        "vs best baseline",
        "of limit",
        "default",
        "command",
    ]
    .map(String::from)
    .to_vec();
    if library {
        headers.push("library".into());
    }
    let rows = results
        .verdict
        .iter()
        .map(|v| {
            let mut cells = vec![
                v.suite.clone(),
                v.condition.clone(),
                v.winner_cell(),
                v.figure.clone(),
                v.ratio_cell(),
                v.limit_cell(),
                v.default_cell(),
                v.cli.clone(),
            ];
            if library {
                cells.push(v.library.clone());
            }
            cells
        })
        .collect();
    Table {
        title: "Verdict: the fastest way on this machine (a winner beats the runner-up beyond the noise)".into(),
        headers,
        rows,
    }
}

/// Every (suite, section) of a run with its rows, in order of first appearance.
fn sections<'a>(results: &'a Results, suites: &[Suite]) -> Vec<(String, String, Vec<&'a Row>)> {
    let mut out: Vec<(String, String, Vec<&Row>)> = Vec::new();
    for r in &results.rows {
        let keys = find_in(suites, &r.suite).map_or(&[][..], |s| s.section_keys);
        let section = r.section(keys);
        match out
            .iter_mut()
            .find(|(suite, s, _)| *suite == r.suite && *s == section)
        {
            Some((_, _, members)) => members.push(r),
            None => out.push((r.suite.clone(), section, vec![r])),
        }
    }
    out
}

/// All tables of a run, every row: per suite, per section; `suites` is the suite table
/// (a suite it does not know gets no columns of its own).
pub fn tables(results: &Results, suites: &[Suite]) -> Vec<Table> {
    sections(results, suites)
        .into_iter()
        .map(|(suite, section, members)| {
            section_table(find_in(suites, &suite), &suite, &section, &members)
        })
        .collect()
}

/// At most this many rows in a section of the compact tables.
pub const COMPACT_ROWS: usize = 12;
/// The fastest rows of iolab's own a compact section always shows.
pub const COMPACT_BEST: usize = 2;

/// The terminal's short form of the tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compact {
    /// The sections the verdict was drawn from, and any with a failure: their fastest
    /// rows, the defaults a user gets, the fastest baseline, and every failed or
    /// unavailable row.
    pub tables: Vec<Table>,
    /// The other sections' titles (their rows are in `results.md`, `report.html` and
    /// `--verbose`).
    pub other_sections: Vec<String>,
}

/// The compact tables of a run; `suites` is the suite table.
pub fn compact_tables(results: &Results, suites: &[Suite]) -> Compact {
    let mut tables = Vec::new();
    let mut other_sections = Vec::new();
    // An unavailable method is shown once per suite (its reason does not change).
    let mut unavailable_shown: Vec<(String, String)> = Vec::new();
    for (suite, section, members) in sections(results, suites) {
        let failed = |r: &&Row| {
            r.error.is_some() || r.unavailable.is_some() || (r.measured() && !r.verified)
        };
        let in_verdict = results
            .verdict
            .iter()
            .any(|v| v.suite == suite && v.section.as_deref() == Some(section.as_str()));
        let has_failure = members
            .iter()
            .any(|r| r.error.is_some() || (r.measured() && !r.verified));
        if !in_verdict && !has_failure {
            other_sections.push(if section.is_empty() {
                suite.clone()
            } else {
                format!("{suite} {section}")
            });
            continue;
        }
        let entry = find_in(suites, &suite);
        let is_default: fn(&Row) -> bool = entry.map_or(|_| false, |s| s.is_default);
        let mut sorted = members.clone();
        sort_by_median(&mut sorted);
        let best: Vec<&Row> = sorted
            .iter()
            .copied()
            .filter(|r| !r.baseline && r.measured() && r.verified)
            .take(COMPACT_BEST)
            .collect();
        // The fastest baseline (the verdict's "best baseline"); the others are in
        // results.md.
        let fastest_baseline = sorted.iter().find(|r| r.baseline && r.measured()).copied();
        let shown_baseline = |r: &Row| fastest_baseline.is_some_and(|b| std::ptr::eq(b, r));
        let kept: Vec<&Row> = sorted
            .iter()
            .copied()
            .filter(|r| {
                if r.unavailable.is_some() && r.error.is_none() {
                    let id = (suite.clone(), r.method.clone());
                    if unavailable_shown.contains(&id) {
                        return false;
                    }
                    unavailable_shown.push(id);
                    return true;
                }
                best.iter().any(|b| std::ptr::eq(*b, *r))
                    || is_default(r)
                    || shown_baseline(r)
                    || failed(r)
            })
            .take(COMPACT_ROWS)
            .collect();
        let mut table = section_table(entry, &suite, &section, &kept);
        if kept.len() < members.len() {
            table.title.push_str(&format!(
                " ({} of {} rows; all in results.md, or --verbose)",
                kept.len(),
                members.len()
            ));
        }
        tables.push(table);
    }
    Compact {
        tables,
        other_sections,
    }
}

/// Fastest first; rows without timings last, by name.
fn sort_by_median(rows: &mut [&Row]) {
    rows.sort_by(|a, b| match (a.median_s, b.median_s) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.method.cmp(&b.method),
    });
}

fn section_table(entry: Option<&Suite>, suite: &str, section: &str, rows: &[&Row]) -> Table {
    let reference = rows.iter().find(|r| r.baseline && r.measured()).copied();
    let bytes = rows.iter().map(|r| r.bytes).max().unwrap_or(0);
    let title = if section.is_empty() {
        format!("{suite}: {}", iolab_lab::units::format_bytes(bytes))
    } else {
        format!(
            "{suite}: {section}, {}",
            iolab_lab::units::format_bytes(bytes)
        )
    };
    let vs = match reference {
        Some(r) => format!("vs {}", r.method),
        None => "vs baseline".to_string(),
    };
    // The suite's own columns ("of limit", "buffer", "ns/record", …), where rows have them.
    let columns: Vec<&Column> = entry
        .map_or(&[][..], |s| s.columns)
        .iter()
        .filter(|c| rows.iter().any(|r| r.extra.contains_key(c.key)))
        .collect();
    let placed = |place: Place| columns.iter().filter(move |c| c.place == place);
    let mut headers: Vec<String> = vec!["method".into()];
    headers.extend(placed(Place::AfterMethod).map(|c| c.header.to_string()));
    headers.extend(["median", "throughput"].map(String::from));
    headers.extend(placed(Place::AfterThroughput).map(|c| c.header.to_string()));
    headers.extend([vs.as_str(), "user", "sys", "cached before", "notes"].map(String::from));
    let mut sorted: Vec<&Row> = rows.to_vec();
    sort_by_median(&mut sorted);
    let body = sorted
        .iter()
        .map(|r| {
            let mut name = r.method.clone();
            if let Some(serde_json::Value::String(variant)) = r.extra.get("variant") {
                name = format!("{name} {variant}");
            }
            if r.baseline {
                name.push_str(" (baseline)");
            }
            let mut notes: Vec<String> = Vec::new();
            if let Some(reason) = &r.unavailable {
                notes.push(format!("unavailable: {reason}"));
            }
            if let Some(e) = &r.error {
                notes.push(format!("FAILED: {e}"));
            } else if r.measured() && !r.verified {
                notes.push("WRONG RESULT".into());
            }
            notes.extend(r.notes.iter().cloned());
            let dash = || "—".to_string();
            let ratio = match (reference.and_then(|b| b.median_s), r.median_s) {
                (Some(base), Some(m)) if m > 0.0 => format!("{:.2}×", base / m),
                _ => dash(),
            };
            let cell = |c: &&Column| {
                r.extra
                    .get(c.key)
                    .and_then(|v| c.cell(v))
                    .unwrap_or_else(dash)
            };
            let mut cells = vec![name];
            cells.extend(placed(Place::AfterMethod).map(cell));
            cells.extend([
                r.median_s.map(format_duration).unwrap_or_else(dash),
                r.throughput_bytes_per_s
                    .map(format_rate)
                    .unwrap_or_else(dash),
            ]);
            cells.extend(placed(Place::AfterThroughput).map(cell));
            cells.extend([
                ratio,
                r.user_s.map(format_duration).unwrap_or_else(dash),
                r.sys_s.map(format_duration).unwrap_or_else(dash),
                match r.residency_before {
                    Some(x) => format!("{:.0}%", x * 100.0),
                    // A measured row of a cache state without residency: an empty input.
                    None if r.measured() && r.cache.is_some() && r.bytes == 0 => "n/a".into(),
                    None => dash(),
                },
                notes.join("; "),
            ]);
            cells
        })
        .collect();
    Table {
        title,
        headers,
        rows: body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_escapes_pipes_and_keeps_columns_aligned() {
        let t = Table {
            title: "t".into(),
            headers: vec!["a".into(), "b".into()],
            rows: vec![
                vec!["x|y".into(), "1".into()],
                vec!["z".into(), "22".into()],
            ],
        };
        let md = t.render(Markup::Markdown);
        assert!(md.contains("x\\|y"));
        let lines: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(lines.len(), 4);
        assert!(
            lines
                .iter()
                .all(|l| l.chars().count() == lines[0].chars().count())
        );
        let plain = t.render(Markup::Plain);
        assert!(plain.contains("x|y"));
    }
}
