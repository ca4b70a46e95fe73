//! Fitting the terminal summary into [`WIDTH`] columns: text wrapped at spaces under a
//! hanging indent, and a word too wide for any line (a long path, a long symbol) shortened
//! in the middle with `…`. Widths count characters, not bytes: the summary's own symbols
//! (`…`, `≈`, `←`, `µ`) take one column each.
//!
//! Everything the summary shortens is whole in the JSON (`--json`): the evidence, notes,
//! fixes and stacks of each finding, the targets' paths, the commands.

/// The widest line of the terminal summary, in columns.
pub const WIDTH: usize = 120;

/// The columns `text` takes: its characters.
pub fn width(text: &str) -> usize {
    text.chars().count()
}

/// `text` cut in the middle to `max` columns (at least 3): its head, `…`, its tail; the
/// tail is the longer half (a path's file name says more than its first folders).
pub fn middle(text: &str, max: usize) -> String {
    let n = width(text);
    if n <= max {
        return text.to_string();
    }
    let max = max.max(3);
    let head = (max - 1) * 2 / 5;
    let tail = max - 1 - head;
    let mut out: String = text.chars().take(head).collect();
    out.push('…');
    out.extend(text.chars().skip(n - tail));
    out
}

/// `text` cut at the end to `max` columns (at least 2), with `…`.
pub fn end(text: &str, max: usize) -> String {
    if width(text) <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.max(2) - 1).collect();
    out.push('…');
    out
}

/// The units the summary writes after a figure (`3.6 ms`, `16.7 MiB):`).
const UNITS: &[&str] = &[
    "ns", "µs", "ms", "s", "B", "KiB", "MiB", "GiB", "TiB", "GB/s", "MB/s", "KB/s",
];

/// `text`'s words, a figure and its unit kept together (`3.6 ms`): a line never ends with
/// the figure and the next begins with its unit.
fn pieces(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        let unit = UNITS.contains(&word.trim_end_matches([')', ',', ';', ':', '.']));
        match out.last_mut() {
            Some(figure) if unit && figure.ends_with(|c: char| c.is_ascii_digit()) => {
                figure.push(' ');
                figure.push_str(word);
            }
            _ => out.push(word.to_string()),
        }
    }
    out
}

/// `text` after `first` (the first line's label, such as `"   fix: "`), its words wrapped
/// to [`WIDTH`] columns; the lines after the first start with `indent` spaces. Each line
/// ends with a newline. Runs of white space become one space; a word wider than a whole
/// line is shortened in the middle ([`middle`]).
pub fn wrap(first: &str, indent: usize, text: &str) -> String {
    let room = WIDTH.saturating_sub(indent).max(8);
    let mut out = String::new();
    let mut line = first.to_string();
    // Whether `line` holds a word yet (the label alone does not count).
    let mut has_word = false;
    for word in pieces(text) {
        let word = word.as_str();
        let mut used = width(&line);
        let wanted = width(word) + usize::from(has_word);
        if used + wanted > WIDTH && (has_word || width(word) <= room) {
            out.push_str(line.trim_end());
            out.push('\n');
            line = " ".repeat(indent);
            used = indent;
            has_word = false;
        }
        if has_word {
            line.push(' ');
            used += 1;
        }
        line.push_str(&middle(word, WIDTH.saturating_sub(used).max(8)));
        has_word = true;
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        text.split_whitespace().collect()
    }

    #[test]
    fn wrapped_lines_fit_and_keep_every_word() {
        let path = format!("/{}", ["a-long-folder-name"; 5].join("/"));
        let text = format!(
            "20000 writes of 5 B (106 KiB) to {path} ≈ 16 ms in the calls, then {path} again {}",
            "and some more words ".repeat(12)
        );
        for (first, indent) in [("", 0), ("   ", 5), ("     basis: ", 12), ("x", 20)] {
            let wrapped = wrap(first, indent, &text);
            assert!(wrapped.lines().count() > 1, "{wrapped}");
            for (i, line) in wrapped.lines().enumerate() {
                assert!(width(line) <= WIDTH, "{}: {line}", width(line));
                if i == 0 {
                    assert!(line.starts_with(first.trim_end()), "{line}");
                } else {
                    assert!(line.starts_with(&" ".repeat(indent)), "{line}");
                    assert!(!line[indent..].starts_with(' '), "{line}");
                }
            }
            assert_eq!(words(&wrapped[first.len()..]), words(&text));
        }
    }

    #[test]
    fn a_word_wider_than_a_line_is_shortened_in_the_middle() {
        let path = format!("/{}/file.bin", ["a-long-folder-name"; 12].join("/"));
        let wrapped = wrap("   ", 5, &format!("writes to {path}: 5000 of them"));
        let lines: Vec<&str> = wrapped.lines().collect();
        assert_eq!(lines.len(), 3, "{wrapped}");
        assert_eq!(lines[0], "   writes to");
        assert_eq!(lines[2], "     5000 of them");
        let short = lines[1].trim_start();
        assert_eq!(width(lines[1]), WIDTH, "{wrapped}");
        assert!(short.contains('…'), "{short}");
        let (head, tail) = short.split_once('…').unwrap();
        assert!(path.starts_with(head), "{short}");
        assert!(format!("{path}:").ends_with(tail), "{short}");
        assert!(tail.ends_with("/file.bin:"), "{short}");
        // Alone on its first line, a word too wide for any line takes what is left there.
        let wrapped = wrap("at: ", 4, &path);
        assert_eq!(wrapped.lines().count(), 1, "{wrapped}");
        assert_eq!(width(wrapped.trim_end()), WIDTH, "{wrapped}");
    }

    #[test]
    fn a_figure_and_its_unit_stay_on_one_line() {
        // "(3.6" would end the first line at column 118, and "ms" begin the next.
        let text = format!("{} (3.6 ms each), 16.7 MiB): 5 B", "x".repeat(110));
        let wrapped = wrap("   ", 5, &text);
        let lines: Vec<&str> = wrapped.lines().collect();
        assert_eq!(lines.len(), 2, "{wrapped}");
        assert_eq!(lines[1], "     (3.6 ms each), 16.7 MiB): 5 B");
        assert_eq!(words(&wrapped), words(&text));
    }

    #[test]
    fn a_short_text_is_one_line_and_an_empty_one_its_label() {
        assert_eq!(wrap("note: ", 6, "a  short\ttext"), "note: a short text\n");
        assert_eq!(wrap("note: ", 6, ""), "note:\n");
        assert_eq!(middle("abcdefghij", 5), "a…hij");
        assert_eq!(end("abcdefghij", 5), "abcd…");
        assert_eq!(end("abc", 5), "abc");
    }
}
