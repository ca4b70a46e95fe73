//! The `write` suite's verdict: into a pipe and into a file, and how to write that way.

use crate::results::{Results, Row};
use crate::verdict::{Usage, Verdict, decide_each, group, key, size_arg};
use iolab_lab::snippet;
use iolab_lab::write::Method;

/// The sinks with a verdict: where programs' output usually goes, a pipe read by a
/// consumer process (the splice reader, which never limits the writer) and a file. (`head`
/// and `pv` are the other consumers, `/dev/null` measures the system calls alone, the
/// pinned pipes are diagnostics: all in the tables and the report, kept off the verdict
/// so that `bench --quick` fits a screen.)
const CONDITIONS: &[&str] = &["splice-reader", "file"];

/// The suite's verdict rows, for the suite table.
pub(crate) fn verdicts(_results: &Results, rows: &[&Row]) -> Vec<Verdict> {
    decide_each(
        super::SUITE,
        super::ENTRY.section_keys,
        group(rows, |r| {
            key(r, "sink")
                .filter(|s| CONDITIONS.contains(s))
                .map(String::from)
        }),
        &usage,
        None,
    )
}

/// `iolab write --method M --buffer B` and the library's way to write like it.
fn usage(row: &Row) -> Usage {
    let buffer = row
        .extra
        .get("buffer_bytes")
        .and_then(serde_json::Value::as_u64);
    let default = row.extra.get("auto_buffer") == Some(&serde_json::Value::Bool(true));
    let mut cli = format!("iolab write --method {}", row.method);
    if let Some(b) = buffer.filter(|_| !default) {
        cli.push_str(&format!(" --buffer {}", size_arg(b)));
    }
    cli.push_str(match key(row, "sink") {
        Some("file") => " > FILE",
        _ => " | READER",
    });
    let library = row.method.parse::<Method>().map_or_else(
        |_| "—".into(),
        |m| snippet::write(m, buffer.filter(|_| !default)),
    );
    Usage {
        cli,
        library,
        example: "stdout_writer",
    }
}

/// The buffer `StdoutWriter::new()` takes into a file on this machine, from the `file`
/// rows of `bufwriter` (the default's, at its own size, and the sweep's around it): the
/// fastest size when it beats the default row beyond the noise, else `None` (the rule,
/// `st_blksize` × 32, holds). Measured on the device of `data_dir`.
pub(super) fn file_buffer_winner(
    rows: &[Row],
    data_dir: &std::path::Path,
) -> Option<iolab_lab::profile::StrategyWinner> {
    let usable = |r: &Row| {
        key(r, "sink") == Some("file")
            && r.method == Method::Bufwriter.name()
            && r.verified
            && r.error.is_none()
            && r.stats.is_some()
    };
    crate::profile::size_winner(rows, usable, super::is_default, "file", data_dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(buffer: Option<u64>, runs: &[f64]) -> Row {
        let mut r = Row {
            suite: "write".into(),
            method: "bufwriter".into(),
            bytes: 1 << 30,
            verified: true,
            ..Row::default()
        };
        r.extra.insert("sink".into(), json!("file"));
        match buffer {
            Some(b) => r.extra.insert("buffer_bytes".into(), json!(b)),
            None => r.extra.insert("auto_buffer".into(), json!(true)),
        };
        r.set_timings(runs, runs, runs);
        r
    }

    /// Whichever method wins, the call handed over writes the program's own bytes through
    /// the library (`vmsplice`'s through the writer that lends its pages), never the
    /// laboratory's zero writer.
    #[test]
    fn every_methods_library_call_writes_the_programs_bytes() {
        for m in Method::ALL {
            let mut r = row(Some(256 << 10), &[1.0]);
            r.method = m.name().into();
            let library = usage(&r).library;
            assert!(!library.contains("iolab_lab::"), "{m}: {library}");
            assert!(library.contains("write_all"), "{m}: {library}");
        }
        let mut r = row(None, &[1.0]);
        r.method = Method::Vmsplice.name().into();
        assert!(usage(&r).library.contains(".lend_pages(true)"));
    }

    #[test]
    fn a_file_buffer_is_saved_only_when_it_beats_the_default_beyond_the_noise() {
        let quiet = [1.0, 1.01, 0.99, 1.0, 1.0];
        let dir = std::env::temp_dir();
        let rows = [
            row(None, &quiet),
            row(Some(1 << 20), &quiet.map(|x| x * 0.7)),
            row(Some(64 << 10), &quiet.map(|x| x * 0.9)),
        ];
        let w = file_buffer_winner(&rows, &dir).expect("1 MiB beats the default");
        assert_eq!((w.condition.as_str(), w.bytes), ("file", Some(1 << 20)));
        assert!((w.lead - 1.0 / 0.7).abs() < 0.01, "{}", w.lead);
        let tie = [
            row(None, &quiet),
            row(Some(1 << 20), &quiet.map(|x| x * 0.98)),
        ];
        assert!(file_buffer_winner(&tie, &dir).is_none());
        // No default row (a run of other methods): nothing to judge against.
        assert!(file_buffer_winner(&rows[1..], &dir).is_none());
    }
}
