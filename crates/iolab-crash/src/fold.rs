//! Folding a loop: a program that commits 100 transactions makes the same calls 100 times.
//! Every state of every repetition is not worth a check: the entries are cut into windows,
//! each ending at a sync or at a write to standard output (an acknowledgement), and the
//! crash points of a window are explored in full only for the first two windows of each
//! shape and for the last one; the others get their prefix states only (every change up
//! to the point persisted).
//!
//! A window's shape is its entries' kinds and calls, the names of what they change
//! (digits folded, so `wal-17` is `wal-#`) and the sizes of their writes, not the bytes or
//! the offsets. A repetition that does something else (a page split, a checkpoint) has
//! another shape and is explored in full. What folding misses: a failure that only a
//! crash inside a middle repetition, identical in shape to the others, can show.

use std::collections::HashMap;

use crate::journal::{Ino, Journal, Op};

/// Full windows per shape at the start (the last window of a shape is full too).
pub const FIRST_FULL: usize = 2;

/// For each entry, whether the crash point after it is explored in full.
pub fn explored_fully(journal: &Journal) -> Vec<bool> {
    let names = names_of_files(journal);
    let mut windows: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    for (i, e) in journal.entries.iter().enumerate() {
        if matches!(e.op, Op::Sync { .. } | Op::SyncAll | Op::Stdout { .. }) {
            windows.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < journal.entries.len() {
        windows.push((start, journal.entries.len()));
    }
    let shapes: Vec<Vec<String>> = windows
        .iter()
        .map(|&(a, b)| {
            journal.entries[a..b]
                .iter()
                .map(|e| shape(&e.op, &e.call, &names))
                .collect()
        })
        .collect();
    let mut seen: HashMap<&[String], usize> = HashMap::new();
    let mut last: HashMap<&[String], usize> = HashMap::new();
    for (w, s) in shapes.iter().enumerate() {
        last.insert(s.as_slice(), w);
    }
    let mut full = vec![true; journal.entries.len()];
    for (w, s) in shapes.iter().enumerate() {
        let n = seen.entry(s.as_slice()).or_insert(0);
        let keep = *n < FIRST_FULL || last[s.as_slice()] == w;
        *n += 1;
        if !keep {
            let (a, b) = windows[w];
            full[a..b].iter_mut().for_each(|f| *f = false);
        }
    }
    full
}

/// The name each file was first given in the run (for the shapes of writes to it).
fn names_of_files(journal: &Journal) -> HashMap<Ino, String> {
    let mut names = HashMap::new();
    for e in &journal.entries {
        if let Op::Create { path, ino, .. } | Op::Name { path, ino, .. } = &e.op {
            names.entry(*ino).or_insert_with(|| path.clone());
        }
    }
    names
}

/// `text` with every run of digits as `#`.
fn fold_digits(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !out.ends_with('#') {
                out.push('#');
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn shape(op: &Op, call: &str, names: &HashMap<Ino, String>) -> String {
    let file = |ino: &Ino| {
        names
            .get(ino)
            .map_or_else(|| "(a file of the folder)".to_string(), |n| fold_digits(n))
    };
    let what = match op {
        Op::Create { path, .. }
        | Op::Name { path, .. }
        | Op::Mkdir { path, .. }
        | Op::Unlink { path, .. }
        | Op::Rmdir { path, .. } => fold_digits(path),
        Op::Write { ino, data, .. } => format!("{} {}", file(ino), data.len()),
        Op::Truncate { ino, .. } | Op::Sync { ino, .. } | Op::Tmpfile { ino } => file(ino),
        Op::Rename { from, to, .. } | Op::Link { from, to, .. } => {
            format!("{} {}", fold_digits(from), fold_digits(to))
        }
        Op::SyncAll => String::new(),
        Op::Stdout { data } => data.len().to_string(),
        Op::Refused { why } => why.clone(),
    };
    format!("{call} {what}")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::journal::Entry;

    /// `n` transactions: write a record, sync, print "ok".
    pub(crate) fn transactions(n: usize, sync: bool) -> Journal {
        let mut entries = vec![Entry::new(
            Op::Create {
                path: "log".into(),
                ino: 2,
                parent: 1,
            },
            "openat",
        )];
        if sync {
            // The new name is durable once its folder is synced.
            entries.push(Entry::new(
                Op::Sync {
                    ino: 1,
                    data_only: false,
                },
                "fsync",
            ));
        }
        for t in 0..n {
            entries.push(Entry::new(
                Op::Write {
                    ino: 2,
                    offset: 8 * t as u64,
                    data: format!("rec{t:04}\n").into_bytes()[..8].to_vec(),
                },
                "write",
            ));
            if sync {
                entries.push(Entry::new(
                    Op::Sync {
                        ino: 2,
                        data_only: true,
                    },
                    "fdatasync",
                ));
            }
            entries.push(Entry::new(
                Op::Stdout {
                    data: b"ok\n".to_vec(),
                },
                "write",
            ));
        }
        Journal { entries }
    }

    #[test]
    fn the_first_two_and_the_last_repetitions_are_explored_in_full() {
        let journal = transactions(100, true);
        let full = explored_fully(&journal);
        // Windows: [create, sync], [write, sync], [ok], then [write, sync], [ok] × 99.
        let windows_full = full.iter().filter(|f| **f).count();
        assert!(
            windows_full <= 2 + 3 * 2 + 3,
            "{windows_full} entries in full"
        );
        assert!(full[0] && full[1] && full[2] && full[3]);
        assert!(!full[150]);
        assert!(full[full.len() - 1]);
    }

    #[test]
    fn digits_fold_and_a_different_repetition_stays_in_full() {
        assert_eq!(fold_digits("wal-17.tmp2"), "wal-#.tmp#");
        let mut journal = transactions(10, true);
        // The sixth transaction writes 16 bytes, not 8: another shape.
        if let Op::Write { data, .. } = &mut journal.entries[2 + 5 * 3].op {
            data.extend_from_slice(b"12345678");
        }
        let full = explored_fully(&journal);
        assert!(full[2 + 5 * 3]);
        assert!(!full[2 + 4 * 3]);
    }
}
