//! The `count` suite's rows: a job's runs checked against the known answer (or, for a
//! user's file, against the other methods'), its timings and residency.

use super::measure::{FileBench, FileSample, Measured};
use crate::cache_state::CacheState;
use crate::results::Row;
use crate::rounds::{Tally, set_times};

/// The rows of `jobs`' tallies in `cache_state`; without a known answer, checked
/// against each other.
pub(super) fn rows(
    bench: &FileBench<'_>,
    jobs: &[Measured],
    tallies: Vec<Tally<FileSample>>,
    cache_state: CacheState,
) -> Vec<Row> {
    let mut rows: Vec<Row> = jobs
        .iter()
        .zip(tallies)
        .map(|(m, t)| to_row(bench, m, t, cache_state))
        .collect();
    if bench.expected.is_none() {
        check_agreement(&mut rows);
    }
    rows
}

fn to_row(
    bench: &FileBench<'_>,
    m: &Measured,
    t: Tally<FileSample>,
    cache_state: CacheState,
) -> Row {
    let mut row = Row {
        suite: bench.suite.to_string(),
        method: m.job.name.clone(),
        cache: Some(cache_state.name().to_string()),
        baseline: m.job.baseline,
        version: m.version.clone(),
        bytes: bench.bytes,
        extra: m.extra.clone(),
        ..Row::default()
    };
    if let Some(reason) = t.unavailable {
        row.unavailable = Some(reason);
        return row;
    }
    row.error = t.error.clone();
    set_times(&mut row, t.counted.iter().map(|s| s.times));
    row.notes.extend(t.stopped_note());
    // Every counted result, and the warm-up ones that were wrong (warm-up runs still must
    // be right).
    let is_expected = |r: &String| bench.expected.as_ref().is_none_or(|e| e == r);
    let results: Vec<&String> = t
        .warmup
        .iter()
        .map(|s| &s.result)
        .filter(|r| !is_expected(r))
        .chain(t.counted.iter().map(|s| &s.result))
        .collect();
    // Against the known answer, or, without one, against the row's own first result (the
    // rows are then checked against each other, see check_agreement).
    let expected = bench.expected.as_ref().or(results.first().copied());
    let wrong: Vec<&String> = results
        .iter()
        .copied()
        .filter(|r| Some(*r) != expected)
        .collect();
    row.verified = !t.counted.is_empty() && wrong.is_empty();
    row.result = results.last().map(|r| r.to_string());
    if let (Some(bad), Some(expected)) = (wrong.first(), expected) {
        row.error
            .get_or_insert(format!("wrong result: printed {bad}, expected {expected}"));
    }
    row.set_residency(
        cache_state,
        t.counted.iter().filter_map(|s| s.residency).collect(),
    );
    if bench.bytes == 0 {
        row.notes.push(EMPTY_NOTE.to_string());
    }
    row
}

/// The note of a row measured on an empty input.
pub const EMPTY_NOTE: &str = "an empty file: its cache state and its share of a ceiling are n/a (no page to cache, no byte to read)";

/// Without a known answer, the methods verify each other: the result most rows printed
/// (every run of a row printed the same, or it already failed) is taken as right, and a
/// row that printed another is wrong.
fn check_agreement(rows: &mut [Row]) {
    let mut votes: Vec<(String, usize)> = Vec::new();
    for r in rows.iter().filter(|r| r.verified) {
        let result = r.result.clone().unwrap_or_default();
        match votes.iter_mut().find(|(v, _)| *v == result) {
            Some((_, n)) => *n += 1,
            None => votes.push((result, 1)),
        }
    }
    let Some((agreed, _)) = votes.into_iter().max_by_key(|(_, n)| *n) else {
        return;
    };
    for r in rows.iter_mut().filter(|r| r.verified) {
        if r.result.as_deref() != Some(agreed.as_str()) {
            r.verified = false;
            r.error = Some(format!(
                "disagrees with the other methods: printed {}, most printed {agreed}",
                r.result.as_deref().unwrap_or("nothing")
            ));
        }
    }
}
