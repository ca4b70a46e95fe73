//! The `count` suite's verdict: one condition per cache state (and per file, with
//! `--file`), and how to count lines with the winner.

use crate::cache_state::CacheState;
use crate::results::{Results, Row};
use crate::verdict::{Usage, Verdict, decide_each, group, key, size_arg};
use iolab_lab::read::CountMethod;
use iolab_lab::snippet::{self, CountSettings};
use iolab_lab::units::format_rate;

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
    if row.method != CountMethod::Auto.name() {
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
            .parse::<CountMethod>()
            .map_or_else(|_| "—".into(), |m| snippet::count(m, settings)),
        example: "count_lines",
    }
}

/// The run's one-line note for a cache state: the fastest method, its lead over `wc -l` and
/// the best installed peer, and how close it comes to the ceiling.
pub(super) fn note(cache: CacheState, rows: &[Row], ceiling: Option<f64>) -> Option<String> {
    let fastest = |baseline: bool| {
        rows.iter()
            .filter(|r| r.baseline == baseline && r.verified)
            .filter_map(|r| r.median_s.map(|m| (r, m)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    };
    let (best, best_s) = fastest(false)?;
    let label = |r: &Row| match r.extra.get("variant") {
        Some(serde_json::Value::String(v)) => format!("{} {v}", r.method),
        _ => r.method.clone(),
    };
    let mut line = format!(
        "{}: fastest is {} at {}",
        cache.name(),
        label(best),
        format_rate(best.throughput_bytes_per_s.unwrap_or(0.0))
    );
    let ratio_to = |name: &str| {
        rows.iter()
            .find(|r| r.baseline && r.method == name)
            .and_then(|r| r.median_s)
            .map(|m| m / best_s)
    };
    if let Some(x) = ratio_to("wc -l") {
        line.push_str(&format!(", {x:.2}× wc -l"));
    }
    if let Some((peer, peer_s)) = rows
        .iter()
        .filter(|r| r.baseline && r.method != "wc -l" && r.verified)
        .filter_map(|r| r.median_s.map(|m| (r, m)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
    {
        line.push_str(&format!(
            ", {:.2}× {} (the best peer)",
            peer_s / best_s,
            peer.method
        ));
    } else {
        line.push_str(", no other peer installed");
    }
    if let (Some(limit), Some(t)) = (ceiling, best.throughput_bytes_per_s) {
        let which = match cache {
            CacheState::Warm => "memory-scan",
            CacheState::Cold => "device-read",
        };
        line.push_str(&format!(
            "; {:.0}% of the {which} ceiling ({})",
            100.0 * t / limit,
            format_rate(limit)
        ));
        if cache == CacheState::Cold && t > limit {
            // Say why a row can beat "the device": the ceiling is what O_DIRECT reads get.
            line.push_str(
                " (above 100%: buffered reads with the kernel's read-ahead beat O_DIRECT reads \
                 here, as when the host or the device caches too)",
            );
        }
    }
    if let Some((peer, _)) = fastest(true)
        && peer.median_s < Some(best_s)
    {
        line.push_str(&format!(" — {} is faster", peer.method));
    }
    Some(line)
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
