//! Progress output on stderr: a bar when stderr is a terminal; otherwise, so that a CI log
//! or `| tee` still shows life and where the time went, one line per finished section
//! (`count warm: 17 rows in 12.4 s`) and nothing else (hyperfine hides its bar there too).

use std::io::IsTerminal;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar over a known number of runs, or nothing.
pub struct Progress {
    bar: ProgressBar,
    title: String,
    /// For a section: its rows, reported in the line printed at the end without a terminal.
    rows: Option<usize>,
    /// Print that line.
    line: bool,
    started: Instant,
}

impl Progress {
    /// A bar of `total` steps titled `title`; hidden unless stderr is a terminal and
    /// `enabled` is set.
    pub fn new(title: &str, total: u64, enabled: bool) -> Progress {
        let terminal = std::io::stderr().is_terminal();
        let bar = if enabled && terminal {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{prefix:>12} [{bar:30}] {pos}/{len} {wide_msg}")
                    .expect("the template is valid")
                    .progress_chars("=> "),
            );
            bar
        } else {
            ProgressBar::hidden()
        };
        bar.set_prefix(title.to_string());
        Progress {
            bar,
            title: title.to_string(),
            rows: None,
            line: enabled && !terminal,
            started: Instant::now(),
        }
    }

    /// The bar of a section of `rows` rows measured in `total` steps (`title` is
    /// `<suite> <section>`); without a terminal, [`Progress::finish`] prints
    /// `<title>: N rows in X s`.
    pub fn section(title: &str, total: u64, rows: usize, enabled: bool) -> Progress {
        Progress {
            rows: Some(rows),
            ..Progress::new(title, total, enabled)
        }
    }

    /// Shows what runs now.
    pub fn set_message(&self, message: String) {
        self.bar.set_message(message);
    }

    /// One step done.
    pub fn inc(&self) {
        self.bar.inc(1);
    }

    /// `n` steps done.
    pub fn inc_by(&self, n: u64) {
        self.bar.inc(n);
    }

    /// Removes the bar; without a terminal, prints a section's line.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
        if let (true, Some(rows)) = (self.line, self.rows) {
            eprintln!(
                "{}",
                section_line(&self.title, rows, self.started.elapsed().as_secs_f64())
            );
        }
    }
}

/// Prints a section's line as [`Progress::finish`] does, for sections measured together (in
/// one interleaved schedule) and told apart afterwards: only when `enabled` and stderr is not
/// a terminal.
pub fn print_section_line(enabled: bool, title: &str, rows: usize, seconds: f64) {
    if enabled && !std::io::stderr().is_terminal() {
        eprintln!("{}", section_line(title, rows, seconds));
    }
}

/// `count warm: 17 rows in 12.4 s`.
pub fn section_line(title: &str, rows: usize, seconds: f64) -> String {
    format!(
        "{title}: {rows} row{} in {seconds:.1} s",
        if rows == 1 { "" } else { "s" }
    )
}

#[cfg(test)]
mod tests {
    use super::section_line;

    #[test]
    fn a_section_line_names_the_section_its_rows_and_its_time() {
        assert_eq!(
            section_line("count warm", 17, 12.44),
            "count warm: 17 rows in 12.4 s"
        );
        assert_eq!(
            section_line("write pipe", 1, 0.05),
            "write pipe: 1 row in 0.1 s"
        );
    }
}
