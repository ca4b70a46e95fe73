//! The `random` suite's verdict: one condition per state and pattern (`warm`, `cold`,
//! `beyond-memory`, `beyond-memory zipf`), and how to read that way.

use crate::results::{Results, Row};
use crate::verdict::{Usage, Verdict, decide_each, group, key};
use iolab_lab::random::Method;
use iolab_lab::snippet;

/// The suite's verdict rows, for the suite table.
pub(crate) fn verdicts(_results: &Results, rows: &[&Row]) -> Vec<Verdict> {
    decide_each(
        super::SUITE,
        super::ENTRY.section_keys,
        group(rows, |r| {
            let state = key(r, "state")?;
            Some(match key(r, "pattern") {
                Some("uniform") | None => state.to_string(),
                Some(pattern) => format!("{state} {pattern}"),
            })
        }),
        &usage,
        Some(&|r: &Row| {
            r.extra
                .get("iops")
                .and_then(serde_json::Value::as_f64)
                .map_or(String::new(), |iops| format!("{iops:.0} IOPS"))
        }),
    )
}

/// `iolab random --method M --queue-depth N FILE` and the library call ([`snippet::random`]).
fn usage(row: &Row) -> Usage {
    let qd = row
        .extra
        .get("queue_depth")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(1);
    let threads = row
        .extra
        .get("threads")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(1);
    let pattern = key(row, "pattern").unwrap_or("uniform");
    let block = row
        .extra
        .get("block_bytes")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(4096);
    let library = match row.method.parse::<Method>() {
        Ok(m) => snippet::random(m, block, qd, threads),
        _ => "—".into(),
    };
    Usage {
        cli: format!(
            "iolab random --method {} --queue-depth {qd}{} --pattern {pattern} FILE",
            row.method,
            if threads > 1 {
                format!(" --threads {threads}")
            } else {
                String::new()
            }
        ),
        library,
        // The batch call has an example of its own.
        example: if row.method == Method::Auto.name() && qd > 1 {
            "random_batch"
        } else {
            "random_reads"
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_lab::random::Pattern;

    #[test]
    fn the_batch_rows_library_call_is_the_stable_surfaces_batch_call() {
        let row = Row {
            method: "auto".into(),
            extra: super::super::keys(Pattern::Zipf, super::super::State::BeyondMemory, (32, 1)),
            ..Row::default()
        };
        let usage = usage(&row);
        assert!(
            usage.library.contains(".read_batch(&requests"),
            "{}",
            usage.library
        );
        assert!(!usage.library.contains("iolab_lab::"), "{}", usage.library);
        assert_eq!(usage.example, "random_batch");
        assert!(
            usage.cli.contains("--method auto --queue-depth 32"),
            "{}",
            usage.cli
        );
    }

    /// Whichever row wins, the call handed over reads the caller's blocks through the
    /// library, never the laboratory's driver.
    #[test]
    fn every_rows_library_call_is_the_stable_surface() {
        for m in Method::ALL {
            for (qd, threads) in [(1, 1), (32, 1), (32, 4)] {
                let row = Row {
                    method: m.name().into(),
                    extra: super::super::keys(
                        Pattern::Uniform,
                        super::super::State::Cold,
                        (qd, threads),
                    ),
                    ..Row::default()
                };
                let library = usage(&row).library;
                assert!(!library.contains("iolab_lab::"), "{m} {qd}: {library}");
                assert!(library.contains("iolab::Random"), "{m} {qd}: {library}");
            }
        }
    }
}
