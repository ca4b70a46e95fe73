//! Progress output on stderr, hidden when stderr is not a terminal (hyperfine's habit), so
//! logs and CI output stay clean.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar over a known number of runs, or nothing.
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar of `total` steps titled `title`; hidden unless stderr is a terminal and
    /// `enabled` is set.
    pub fn new(title: &str, total: u64, enabled: bool) -> Progress {
        let bar = if enabled && std::io::stderr().is_terminal() {
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
        Progress { bar }
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

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
