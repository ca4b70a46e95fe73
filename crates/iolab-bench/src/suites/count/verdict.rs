//! The `count` suite's verdict: one condition per cache state (and per file, with
//! `--file`), and how to count lines with the winner.

use crate::results::{Results, Row};
use crate::verdict::{Usage, Verdict, decide_each, group, key, size_arg};
use iolab::lab::read::Method;
use iolab::lab::snippet::{self, CountSettings};

/// The suite's verdict rows, for the suite table.
pub(crate) fn verdicts(_results: &Results, rows: &[&Row]) -> Vec<Verdict> {
    decide_each(
        super::SUITE,
        super::ENTRY.section_keys,
        group(rows, |r| {
            let cache = r.cache.clone()?;
            Some(match (key(r, "file"), key(r, "input")) {
                (Some(file), _) => format!("{cache}: {}", file_name(file)),
                // Warm only: the condition is the many files.
                (_, Some(_)) => "many files".into(),
                _ => cache,
            })
        }),
        &usage,
        None,
    )
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `iolab count --method M … FILE` and the library call ([`snippet::count`]), with the
/// row's settings.
pub(super) fn usage(row: &Row) -> Usage {
    let file = match (key(row, "file"), key(row, "input")) {
        (Some(file), _) => file,
        (_, Some(_)) => "FILE...",
        _ => "FILE",
    };
    let setting = |k: &str| row.extra.get(k).and_then(serde_json::Value::as_u64);
    let mut cli = String::from("iolab count");
    if row.method != Method::Auto.name() {
        cli.push_str(&format!(" --method {}", row.method));
    }
    if let Some(t) = setting("threads") {
        cli.push_str(&format!(" --threads {t}"));
    }
    if let Some(q) = setting("queue_depth") {
        cli.push_str(&format!(" --queue-depth {q}"));
    }
    if let Some(b) = setting("block_bytes") {
        cli.push_str(&format!(" --buffer {}", size_arg(b)));
    }
    cli.push_str(&format!(" {file}"));
    let settings = CountSettings {
        threads: setting("threads"),
        queue_depth: setting("queue_depth"),
        buffer_size: setting("block_bytes"),
    };
    Usage {
        cli,
        library: row
            .method
            .parse::<Method>()
            .map_or_else(|_| "—".into(), |m| snippet::count(m, settings)),
        example: "count_lines",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_names_the_method_and_its_settings() {
        let mut row = Row {
            method: "mmap-parallel".into(),
            ..Row::default()
        };
        row.extra.insert("threads".into(), serde_json::json!(2));
        let u = usage(&row);
        assert_eq!(u.cli, "iolab count --method mmap-parallel --threads 2 FILE");
        assert!(
            u.library
                .contains(".method(iolab::CountMethod::MmapParallel).threads(2)"),
            "{}",
            u.library
        );
        let auto = usage(&Row {
            method: "auto".into(),
            ..Row::default()
        });
        assert_eq!(auto.cli, "iolab count FILE");
    }
}
