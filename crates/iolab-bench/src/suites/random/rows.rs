//! The suite's rows (medians over the rounds), the fio comparison and the winners handed
//! to [`iolab_lab::file::RandomAccessFile`].

use serde_json::{Value, json};

use super::{RandomJob, SUITE, Sample, State, keys};
use crate::context::Context;
use crate::results::Row;
use crate::rounds::Tally;
use crate::stats::Summary;
use iolab_lab::profile;
use iolab_lab::profile::Record as _;
use iolab_lab::random::{DEFAULT_BLOCK, Pattern};

/// A row that could not run, with the reason.
pub(super) fn unavailable(
    method: &str,
    state: State,
    pattern: Pattern,
    at: (usize, usize),
    bytes: u64,
    reason: String,
) -> Row {
    let mut row = Row::unavailable(SUITE, method, reason);
    row.cache = Some(state.name().into());
    row.bytes = bytes;
    row.extra = keys(pattern, state, at);
    row
}

fn median(samples: &[Sample], f: impl Fn(&Sample) -> f64) -> f64 {
    let v: Vec<f64> = samples.iter().map(f).collect();
    Summary::of(&v).map_or(0.0, |s| s.median)
}

/// One row per job. `median_s` is the time per read (1 / IOPS) and `bytes` the block
/// size, so the tables' throughput column is the MB/s of the reads.
pub(super) fn rows(
    jobs: &[RandomJob],
    tallies: Vec<Tally<Sample>>,
    state: State,
    file_bytes: u64,
) -> Vec<Row> {
    jobs.iter()
        .zip(tallies)
        .map(|(j, t)| {
            let mut row = Row {
                suite: SUITE.into(),
                method: j.method.clone(),
                cache: Some(state.name().into()),
                baseline: j.job.baseline,
                version: j.version.clone(),
                bytes: DEFAULT_BLOCK as u64,
                extra: keys(j.pattern, state, (j.queue_depth, j.threads)),
                ..Row::default()
            };
            row.extra.insert("file_bytes".into(), json!(file_bytes));
            let variant: Vec<String> = [("qd", j.queue_depth), ("threads", j.threads)]
                .into_iter()
                .filter(|&(_, n)| n > 1)
                .map(|(k, n)| format!("{k}={n}"))
                .collect();
            if let Some(why) = narrower(j, state) {
                row.extra
                    .insert(crate::results::keys::NARROWER.into(), json!(why));
            }
            if !variant.is_empty() {
                row.extra.insert("variant".into(), json!(variant.join(" ")));
            }
            if let Some(reason) = t.unavailable {
                row.unavailable = Some(reason);
                return row;
            }
            if let Some(error) = t.error {
                row.error = Some(error);
                return row;
            }
            let samples = t.counted;
            if samples.is_empty() {
                return row;
            }
            let per_read: Vec<f64> = samples.iter().map(|s| 1.0 / s.iops.max(1e-9)).collect();
            row.set_timings(&per_read, &[], &[]);
            let iops = median(&samples, |s| s.iops);
            for (key, value) in [
                ("iops", iops),
                ("p50_us", median(&samples, |s| s.p50_us)),
                ("p99_us", median(&samples, |s| s.p99_us)),
                ("p999_us", median(&samples, |s| s.p999_us)),
                ("cpu_us_per_read", median(&samples, |s| s.cpu_us_per_read)),
            ] {
                row.extra.insert(key.into(), json!(value));
            }
            row.verified = samples.iter().all(|s| s.verified);
            if !row.verified {
                row.error = Some("a read returned wrong bytes (wrong offset or torn)".into());
            }
            if row.baseline {
                row.notes
                    .push("fio does not check the bytes it reads".into());
            }
            if let Some(cdf) = samples.last().map(|s| &s.cdf_us).filter(|c| !c.is_empty()) {
                row.extra.insert("cdf_us".into(), json!(cdf));
            }
            if let Some(why) = samples.last().and_then(|s| s.why.as_ref()) {
                row.extra.insert("why".into(), json!(why));
            }
            row
        })
        .collect()
}

/// Why job `j` does a narrower job than the default row of `state`, if it does: more
/// threads than the default's one, or, warm (where the default reads one block per call),
/// more reads in flight. Cold and beyond memory the default is the batch call
/// (`RandomAccessFile::read_batch`), which keeps [`super::DEEP_QUEUE`] in flight too.
fn narrower(j: &RandomJob, state: State) -> Option<String> {
    let in_flight = j.queue_depth * j.threads;
    if j.threads > 1 {
        return Some(format!(
            "it reads on {} threads ({in_flight} reads in flight); the default reads on one",
            j.threads
        ));
    }
    (j.queue_depth > 1
        && state == State::Warm
        && j.method != iolab_lab::random::Method::Auto.name())
    .then(|| {
        format!(
            "it keeps {in_flight} reads in flight, which the warm default, one block per \
                 call, does not"
        )
    })
}

/// A row's figure.
pub(crate) fn figure(row: &Row, key: &str) -> Option<f64> {
    row.extra.get(key).and_then(Value::as_f64)
}

fn same_params(a: &Row, b: &Row) -> bool {
    ["pattern", "queue_depth", "threads", "block_bytes"]
        .iter()
        .all(|k| a.extra.get(*k) == b.extra.get(*k))
}

/// Notes: each method's IOPS against fio's with the same engine and parameters, and the
/// lab's best against fio's best, for one state.
pub(super) fn compare_with_fio(ctx: &mut Context<'_>, state: State, rows: &[Row]) {
    let mut ratios = Vec::new();
    for r in rows.iter().filter(|r| !r.baseline && r.verified) {
        let Ok(method) = r.method.parse::<iolab_lab::random::Method>() else {
            continue;
        };
        // The batch call's twin is fio's io_uring with O_DIRECT, what it reads by cold.
        let batch = method == iolab_lab::random::Method::Auto
            && figure(r, "queue_depth").is_some_and(|qd| qd > 1.0);
        let engine = if batch {
            Some(("io_uring", true))
        } else {
            super::fio::engine(method)
        };
        let Some((engine, direct)) = engine else {
            continue;
        };
        let twin = super::fio::name(engine, direct);
        if let Some(f) = rows
            .iter()
            .find(|f| f.baseline && f.method == twin && same_params(r, f))
            && let (Some(a), Some(b)) = (figure(r, "iops"), figure(f, "iops"))
        {
            let pattern = crate::chart::extra_str(r, "pattern").unwrap_or_default();
            let qd = figure(r, "queue_depth").unwrap_or(1.0);
            let threads = match figure(r, "threads") {
                Some(t) if t > 1.0 => format!(" ×{t} threads"),
                _ => String::new(),
            };
            ratios.push(format!(
                "{} {pattern} qd{qd}{threads} {:.2}×",
                r.method,
                a / b
            ));
        }
    }
    if ratios.is_empty() {
        return;
    }
    let best = |baseline: bool| {
        rows.iter()
            .filter(|r| r.baseline == baseline && r.verified)
            .filter_map(|r| figure(r, "iops").map(|i| (r, i)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    };
    let mut line = format!(
        "random {}: iolab / fio IOPS, same engine and parameters: {}",
        state.name(),
        ratios.join(", ")
    );
    if let (Some((lab, li)), Some((f, fi))) = (best(false), best(true)) {
        line.push_str(&format!(
            "; best: {} {:.0} IOPS against {} {:.0} ({:.2}×)",
            crate::chart::label(lab),
            li,
            crate::chart::label(f),
            fi,
            li / fi
        ));
    }
    ctx.notes.push(line);
}

/// Saves, per size class, the method with the most uniform-pattern IOPS at queue depth 1
/// (what a `RandomAccessFile` does), when it beats the runner-up beyond the noise; else the
/// simpler of the two. `fits` is the warm winner, `beyond-memory` the beyond-memory one.
pub(super) fn remember_winners(ctx: &mut Context<'_>, rows: &[Row], bytes: u64) {
    if crate::interrupt::interrupted() || ctx.config.methods.is_some() {
        return;
    }
    let winner = |state: State| {
        let mut candidates: Vec<(&Row, f64, f64)> = rows
            .iter()
            .filter(|r| !r.baseline && r.verified)
            .filter(|r| r.cache.as_deref() == Some(state.name()))
            .filter(|r| {
                r.extra.get("pattern") == Some(&json!("uniform"))
                    && r.extra.get("queue_depth") == Some(&json!(1))
                    && r.extra.get("threads") == Some(&json!(1))
            })
            .filter(|r| profile::RandomWinner::backing_of(&r.method).is_some())
            .filter_map(|r| {
                let s = r.stats.as_ref()?;
                Some((r, figure(r, "iops")?, s.mad / s.median.max(1e-12)))
            })
            .collect();
        candidates.sort_by(|a, b| b.1.total_cmp(&a.1));
        let (first, second) = (candidates.first()?, candidates.get(1));
        // Noise: the relative spread of the two; within it, prefer pread (no map, no SIGBUS).
        let pick = match second {
            Some(s) if first.1 / s.1 - 1.0 <= 2.0 * (first.2 + s.2) && s.0.method == "pread" => s,
            _ => first,
        };
        Some(profile::RandomWinner {
            size_class: state.name().to_string(),
            method: pick.0.method.clone(),
            iops: pick.1,
        })
    };
    let winners: Vec<profile::RandomWinner> = [State::Warm, State::BeyondMemory]
        .into_iter()
        .filter_map(winner)
        .collect();
    let said = winners
        .iter()
        .map(|w| format!("{} {}", w.size_class, w.method))
        .collect::<Vec<_>>()
        .join(", ");
    crate::profile::record(
        ctx,
        &format!("RandomAccessFile::open will follow these winners on this machine: {said}"),
        "the winners for RandomAccessFile",
        |p| p.record_random(bytes, winners),
    );
}
