//! The `write` suite's verdict: into a pipe and into a file, and how to write that way.

use crate::results::{Results, Row};
use crate::verdict::{Usage, Verdict, decide_each, group, key, size_arg};
use iolab::lab::snippet;
use iolab::lab::write::Method;

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
