//! What `iolab bench` prints on a terminal, within a given width (the terminal's, or 120
//! columns in a log): the verdict first, ties shortened (`tie: auto ≈ mmap (+3)`); then how
//! to use each winner (the command, the library call and its example, each on its own
//! lines); then the compact tables, whose notes are numbered footnotes under each table.
//! A table wider than the terminal drops its least useful columns first (where the cache
//! stood, the CPU times), then shortens its longest cells with `…`. The files
//! (`results.md`, `results.json`, `report.html`) keep everything.

use std::fmt::Write;

use super::table::{self, Markup, Table};
use crate::results::{Results, Verdict};
use crate::suite::Suite;

/// The width used when standard output is no terminal and `COLUMNS` is not set.
pub const DEFAULT_WIDTH: usize = 120;

/// The narrowest width the output is fitted to; a narrower terminal wraps it.
pub const MIN_WIDTH: usize = 40;

/// Columns a section table drops first when it is too wide, in order (by heading): each is
/// in the files, and the columns left (the method, its median, rate and ratio) still say
/// which is fastest.
const DROPPABLE: &[&str] = &[
    "cached before",
    "sys",
    "user",
    "p99.9 µs",
    "syscalls/record",
    "throughput",
    "p99 µs",
];

/// The widest the usage list's condition column grows; a longer name gets its own line.
const MAX_NAME_COLUMN: usize = 24;

/// Columns the verdict drops first when it is too wide: a share of a ceiling is measured
/// for one workload only.
const VERDICT_DROPPABLE: &[&str] = &["of limit"];

/// The whole terminal report of `results`, every line at most `width` columns; `verbose`
/// prints every section's table and every note instead of the compact ones.
pub fn render(results: &Results, suites: &[Suite], width: usize, verbose: bool) -> String {
    let width = width.max(MIN_WIDTH);
    let mut out = String::new();
    out.push_str(&verdict_block(results, width));
    out.push('\n');
    out.push_str(&usage_list(&results.verdict, width));
    let tables = if verbose {
        table::tables(results, suites)
    } else {
        table::compact_tables(results, suites).tables
    };
    for t in &tables {
        out.push_str(&with_footnotes(t, width, verbose));
        out.push('\n');
    }
    if verbose {
        for (i, n) in results.notes.iter().enumerate() {
            for line in wrap(n, width, &format!("note {}: ", i + 1), "  ") {
                let _ = writeln!(out, "{line}");
            }
        }
        return out;
    }
    let other = table::compact_tables(results, suites).other_sections;
    if !other.is_empty() {
        let text = format!(
            "also measured (in results.md and report.html, or --verbose): {}",
            other.join("; ")
        );
        for line in wrap(&text, width, "", "  ") {
            let _ = writeln!(out, "{line}");
        }
    }
    if !results.notes.is_empty() {
        let _ = writeln!(
            out,
            "{} notes in results.md (or --verbose)",
            results.notes.len()
        );
    }
    out
}

/// A tie's cell, short: the fastest, the next, and how many more are within the noise —
/// naming `auto` among them, since the command handed over is then `auto`'s.
pub fn winner_cell(v: &Verdict) -> String {
    match (&v.winner, v.tied.as_slice()) {
        (Some(w), _) => w.clone(),
        (None, [a, b, rest @ ..]) if !rest.is_empty() => {
            if rest.iter().any(|m| m == "auto") {
                format!("tie: {a} ≈ {b} (+{}, auto too)", rest.len())
            } else {
                format!("tie: {a} ≈ {b} (+{})", rest.len())
            }
        }
        _ => v.winner_cell(),
    }
}

/// The verdict: a table when it fits `width` (without its "of limit" column if need be),
/// else two lines per condition, the winner on the first.
fn verdict_block(results: &Results, width: usize) -> String {
    let mut out = verdict_rows(results, width);
    for note in results.verdict.iter().filter_map(Verdict::default_note) {
        for line in wrap(&note, width, "", "  ") {
            let _ = writeln!(out, "{line}");
        }
    }
    out
}

/// [`verdict_block`]'s table or lines.
fn verdict_rows(results: &Results, width: usize) -> String {
    let mut table = verdict_table(results);
    table.title = wrap(&table.title, width, "", "  ").join("\n");
    for name in VERDICT_DROPPABLE {
        if table_width(&table) <= width {
            break;
        }
        table = fit(&table, usize::MAX, &[]);
        if let Some(col) = table.headers.iter().position(|h| h == name) {
            table.headers.remove(col);
            for row in &mut table.rows {
                row.remove(col);
            }
        }
    }
    if table_width(&table) <= width {
        return table.render(Markup::Plain);
    }
    let mut out = format!("{}\n", table.title);
    for v in &results.verdict {
        let head = format!("{} {}: {}", v.suite, v.condition, winner_cell(v));
        let mut figures = vec![v.figure.clone(), v.ratio_cell()];
        if v.of_limit.is_some() {
            figures.push(format!("{} of limit", v.limit_cell()));
        }
        if v.default.is_some() {
            figures.push(format!("default {}", v.default_cell()));
        }
        figures.retain(|f| !f.is_empty() && f != "—");
        for line in wrap(&head, width, "", "    ") {
            let _ = writeln!(out, "{line}");
        }
        for line in wrap(&figures.join(", "), width, "    ", "    ") {
            let _ = writeln!(out, "{line}");
        }
    }
    out
}

/// The verdict as a table without its commands (they are listed under it).
fn verdict_table(results: &Results) -> Table {
    Table {
        title: "Verdict: the fastest way here (a winner beats the runner-up beyond the noise)"
            .into(),
        headers: [
            "workload",
            "winner",
            "figure",
            "vs best baseline",
            "of limit",
            "default",
        ]
        .map(String::from)
        .to_vec(),
        rows: results
            .verdict
            .iter()
            .map(|v| {
                vec![
                    format!("{} {}", v.suite, v.condition),
                    winner_cell(v),
                    v.figure.clone(),
                    v.ratio_cell(),
                    v.limit_cell(),
                    v.default_cell(),
                ]
            })
            .collect(),
    }
}

/// Under the verdict: per workload, its example, then per condition (conditions with the
/// same use share an entry) the command and the library call, each on its own lines.
fn usage_list(verdicts: &[Verdict], width: usize) -> String {
    if verdicts.is_empty() {
        return String::new();
    }
    let mut out = String::from("How to use each winner:\n");
    let mut suites: Vec<&str> = Vec::new();
    for v in verdicts {
        if !suites.contains(&v.suite.as_str()) {
            suites.push(&v.suite);
        }
    }
    for suite in suites {
        let of_suite: Vec<&Verdict> = verdicts.iter().filter(|v| v.suite == suite).collect();
        let example = of_suite
            .iter()
            .find(|v| !v.example.is_empty())
            .map(|v| &v.example);
        let head = match example {
            Some(e) => format!("{suite} (example: cargo run --release --example {e} -- FILE)"),
            None => suite.to_string(),
        };
        for line in wrap(&head, width, "", "  ") {
            let _ = writeln!(out, "{line}");
        }
        // Conditions with the same command and call, named together.
        let mut entries: Vec<(Vec<&str>, &str, &str)> = Vec::new();
        for v in &of_suite {
            match entries
                .iter_mut()
                .find(|e| e.1 == v.cli && e.2 == v.library)
            {
                Some(e) => e.0.push(&v.condition),
                None => entries.push((vec![&v.condition], &v.cli, &v.library)),
            }
        }
        // The condition, then its command; the library call under the command.
        // (Conditions hold commas: `durable, 8 writers, 512 B`.) A name longer than the
        // column gets a line of its own.
        let names: Vec<String> = entries.iter().map(|e| e.0.join("; ")).collect();
        let column = names.iter().map(|n| n.chars().count()).max().unwrap_or(0) + 4;
        let column = column.min(width / 3).min(MAX_NAME_COLUMN);
        for ((_, cli, library), name) in entries.iter().zip(&names) {
            let first = format!("  {name:<w$}", w = column - 2);
            let indent = " ".repeat(column);
            let first = if first.chars().count() > column {
                let _ = writeln!(out, "{}", first.trim_end());
                indent.clone()
            } else {
                first
            };
            for line in wrap(cli, width, &first, &format!("{indent}  ")) {
                let _ = writeln!(out, "{line}");
            }
            // The snippet line by line, each keeping its own indentation.
            for code in library.lines() {
                let lead = format!("{indent}{}", &code[..code.len() - code.trim_start().len()]);
                for line in wrap(code.trim_start(), width, &lead, &format!("{lead}  ")) {
                    let _ = writeln!(out, "{line}");
                }
            }
        }
    }
    out.push('\n');
    out
}

/// Notes the compact tables leave to `results.md` and `--verbose`: what a column already
/// says (`buffer 8.00 KiB`) and the edit's per-step times.
fn detail_only(note: &str) -> bool {
    note.starts_with("phases: ") || note.starts_with("buffer ")
}

/// `t` fitted to `width`, its `notes` column turned into numbered footnotes under it (one
/// number per distinct note; with `all` false, not the [`detail_only`] ones).
fn with_footnotes(t: &Table, width: usize, all: bool) -> String {
    let mut t = t.clone();
    let mut notes: Vec<String> = Vec::new();
    if let Some(col) = t.headers.iter().position(|h| h == "notes") {
        t.headers.remove(col);
        for row in &mut t.rows {
            let note = row.remove(col);
            let mut marks = Vec::new();
            for part in note
                .split("; ")
                .filter(|p| !p.is_empty() && (all || !detail_only(p)))
            {
                let n = match notes.iter().position(|x| x == part) {
                    Some(i) => i + 1,
                    None => {
                        notes.push(part.to_string());
                        notes.len()
                    }
                };
                marks.push(format!("[{n}]"));
            }
            if !marks.is_empty() {
                row[0] = format!("{} {}", row[0], marks.concat());
            }
        }
    }
    t.title = wrap(&t.title, width, "", "  ").join("\n");
    let mut out = fit(&t, width, DROPPABLE).render(Markup::PlainCompact);
    for (i, note) in notes.iter().enumerate() {
        for line in wrap(note, width, &format!("[{}] ", i + 1), "    ") {
            let _ = writeln!(out, "{line}");
        }
    }
    out
}

/// The width of a table's widest line.
fn table_width(t: &Table) -> usize {
    let widths = column_widths(t);
    widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1)
}

fn column_widths(t: &Table) -> Vec<usize> {
    let mut widths: Vec<usize> = t.headers.iter().map(|h| h.chars().count()).collect();
    for row in &t.rows {
        for (i, cell) in row.iter().enumerate().take(widths.len()) {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    widths
}

/// `t` within `width` columns: the `droppable` columns go first, in order, then the widest
/// column is shortened, cell by cell, with `…`, down to 8 columns each.
pub fn fit(t: &Table, width: usize, droppable: &[&str]) -> Table {
    let mut t = t.clone();
    for name in droppable {
        if table_width(&t) <= width {
            break;
        }
        if let Some(col) = t.headers.iter().position(|h| h == name) {
            t.headers.remove(col);
            for row in &mut t.rows {
                if col < row.len() {
                    row.remove(col);
                }
            }
        }
    }
    while table_width(&t) > width {
        let widths = column_widths(&t);
        // The widest column is shortened, the method's name last: it says what a row is.
        let widest = |from: usize| {
            widths
                .iter()
                .enumerate()
                .skip(from)
                .filter(|(_, w)| **w > 8)
                .max_by_key(|(_, w)| **w)
        };
        let Some((col, &w)) = widest(1)
            .or_else(|| widest(0))
            .or_else(|| widths.iter().enumerate().max_by_key(|(_, w)| **w))
        else {
            break;
        };
        if w <= 8 {
            // Every column is as narrow as it may be: the rightmost of the less useful ones
            // goes (never the first two: what the row is and its median).
            if t.headers.len() <= 2 {
                break;
            }
            let last = t.headers.len() - 1;
            let col = (2..=last)
                .rev()
                .find(|&c| !t.headers[c].starts_with("vs "))
                .unwrap_or(last);
            t.headers.remove(col);
            for row in &mut t.rows {
                if col < row.len() {
                    row.remove(col);
                }
            }
            continue;
        }
        let target = w - (table_width(&t) - width).min(w - 8);
        for cell in t.rows.iter_mut().filter_map(|r| r.get_mut(col)) {
            *cell = shorten(cell, target);
        }
        t.headers[col] = shorten(&t.headers[col], target);
    }
    t
}

/// `s` cut to `width` characters, ending in `…` when cut.
fn shorten(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let mut out: String = s.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `text` in lines of at most `width` columns: the first starts with `first`, the others
/// with `indent`; breaks at spaces where it can, else anywhere.
pub fn wrap(text: &str, width: usize, first: &str, indent: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut fresh = true;
    for word in text.split(' ') {
        let mut word = word.to_string();
        loop {
            let room = width.saturating_sub(line.chars().count() + usize::from(!fresh));
            let len = word.chars().count();
            if len <= room {
                if !fresh {
                    line.push(' ');
                }
                line.push_str(&word);
                fresh = false;
                break;
            }
            if !fresh {
                lines.push(std::mem::replace(&mut line, indent.to_string()));
                fresh = true;
                continue;
            }
            // A word longer than a whole line: cut it before a `.` or after a `(` or `,`
            // where one fits (a call chain reads well so), else anywhere.
            let room = room.max(1);
            let chars: Vec<char> = word.chars().collect();
            let cut = (1..room.min(chars.len()))
                .rev()
                .find(|&i| chars[i] == '.' || matches!(chars[i - 1], '(' | ','))
                .unwrap_or(room);
            let head: String = chars[..cut].iter().collect();
            word = chars[cut..].iter().collect();
            line.push_str(&head);
            lines.push(std::mem::replace(&mut line, indent.to_string()));
        }
    }
    if !fresh || lines.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_lines_fit_and_keep_every_word() {
        let text = "iolab_lab::durable::LogOptions::new().policy(Policy::DirectDsync).open(path)?, then log.append_durable(record)? from every thread";
        for width in [40, 60, 80, 120] {
            let lines = wrap(text, width, "    ", "      ");
            assert!(
                lines.iter().all(|l| l.chars().count() <= width),
                "{lines:?}"
            );
            let joined: String = lines.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ");
            assert_eq!(joined.replace(' ', ""), text.replace(' ', ""), "{width}");
        }
    }

    #[test]
    fn a_wide_table_drops_columns_then_shortens_cells() {
        let t = Table {
            title: "t".into(),
            headers: ["method", "median", "user", "sys", "cached before"]
                .map(String::from)
                .to_vec(),
            rows: vec![
                [
                    "mmap-parallel threads=2 and a long label",
                    "1.0 ms",
                    "1 ms",
                    "2 ms",
                    "100%",
                ]
                .map(String::from)
                .to_vec(),
            ],
        };
        let fitted = fit(&t, 30, DROPPABLE);
        assert!(
            fitted
                .render(Markup::PlainCompact)
                .lines()
                .all(|l| l.chars().count() <= 30)
        );
        assert_eq!(fitted.headers[1], "median");
        assert!(!fitted.headers.contains(&"cached before".to_string()));
        assert!(fitted.rows[0][0].ends_with('…'));
    }

    #[test]
    fn a_long_tie_names_two_and_counts_the_rest() {
        let v = Verdict {
            suite: "count".into(),
            condition: "warm".into(),
            winner: None,
            tied: ["auto", "mmap", "readv", "stream"]
                .map(String::from)
                .to_vec(),
            median_s: Some(1.0),
            figure: String::new(),
            ratio_to_best_baseline: None,
            best_baseline: None,
            of_limit: None,
            cli: String::new(),
            library: String::new(),
            example: String::new(),
            ..Verdict::default()
        };
        assert_eq!(winner_cell(&v), "tie: auto ≈ mmap (+2)");
        let v = Verdict {
            tied: ["mmap", "readv", "stream", "auto"]
                .map(String::from)
                .to_vec(),
            ..v
        };
        assert_eq!(winner_cell(&v), "tie: mmap ≈ readv (+2, auto too)");
    }
}
