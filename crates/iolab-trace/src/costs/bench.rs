//! Figures from `iolab bench` results: which rows answer which [`Need`].
//!
//! | need | rows |
//! |---|---|
//! | small write to a file | `append`, `write-per-record`, `sync_policy` `none`, the payload nearest the traced size: `ns_per_record` |
//! | buffered, to a file | `append`, the faster of `append-file` and `bufwriter-64k` at that payload |
//! | buffered, to a pipe | `write`, sink `splice-reader`, `bufwriter` default row (`StdoutWriter::new()`): seconds per byte |
//! | big reads | the `count` verdict `warm`: its row's seconds per byte (line counting included) |
//! | random read (`pread`, depth 1) | `random`, `pread`, `queue_depth` 1, `uniform`, `warm` or (cold) `cold`/`beyond-memory`: seconds per read |
//! | best random read | the `random` verdict for that state |
//! | `fdatasync` per record | `append`, `write-per-record`, `every-record`: `ns_per_record` |
//! | `fdatasync` per 1000 records | `append`, `every-K`: the fastest `ns_per_record` |
//! | in-place edit | the `edit` verdict `replace`: its row's seconds per byte |
//!
//! The rest has no bench row and is calibrated: the empty system call, small writes to
//! pipes and terminals, small reads, `O_DIRECT` writes, `fsync` and `O_DSYNC` records,
//! folder syncs.

use std::path::{Path, PathBuf};

use iolab_bench::results::{Results, Row, Verdict};
use serde_json::Value;

use super::{Figure, Need, SyncCall};
use crate::model::Kind;

/// Where `iolab bench` writes its runs by default.
pub const RESULTS_DIR: &str = "iolab-results";

/// Loaded results.
pub struct Bench {
    /// The file read.
    pub path: PathBuf,
    results: Results,
    label: String,
}

/// The newest run folder under `dir` that holds a `results.json` (run folders are named
/// by their UTC start time, so the newest sorts last).
fn newest_run(dir: &Path) -> Option<PathBuf> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("results.json").is_file())
        .collect();
    runs.sort();
    runs.pop()
}

fn extra_u64(row: &Row, key: &str) -> Option<u64> {
    row.extra.get(key).and_then(Value::as_u64)
}

fn extra_f64(row: &Row, key: &str) -> Option<f64> {
    row.extra.get(key).and_then(Value::as_f64)
}

fn extra_str<'a>(row: &'a Row, key: &str) -> Option<&'a str> {
    row.extra.get(key).and_then(Value::as_str)
}

/// Bytes for a basis: `5 B`, `64 B`, `4.0 KiB`.
fn size(bytes: u64) -> String {
    iolab::lab::units::format_bytes(bytes)
}

impl Bench {
    /// Loads the results at `path` (a `results.json`, a run folder, or a folder of runs:
    /// its newest), or the newest run under `./iolab-results`. `Err` says why there are
    /// none.
    pub fn load(path: Option<&Path>) -> Result<Bench, String> {
        let file = match path {
            // A folder of runs (such as ./iolab-results itself): its newest run.
            Some(p) if p.is_dir() && !p.join("results.json").exists() => newest_run(p)
                .map(|d| d.join("results.json"))
                .ok_or_else(|| format!("no results.json in {} or its run folders", p.display()))?,
            Some(p) => iolab_bench::report::results_file(p),
            None => newest_run(Path::new(RESULTS_DIR))
                .map(|d| d.join("results.json"))
                .ok_or_else(|| format!("no iolab bench results under ./{RESULTS_DIR}"))?,
        };
        let results = iolab_bench::report::load(&file).map_err(|e| e.to_string())?;
        let label = file
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| results.started_at.clone());
        Ok(Bench {
            path: file,
            results,
            label,
        })
    }

    fn rows<'a>(&'a self, suite: &'a str) -> impl Iterator<Item = &'a Row> + 'a {
        self.results
            .suite_rows(suite)
            .filter(|r| r.measured() && r.verified && r.error.is_none())
    }

    fn verdict(&self, suite: &str, condition: &str) -> Option<&Verdict> {
        self.results
            .verdict
            .iter()
            .find(|v| v.suite == suite && v.condition == condition && v.median_s.is_some())
    }

    /// The append rows of `method` with no sync, nearest `size` bytes per record (in
    /// log distance).
    fn append_row(&self, methods: &[&str], policy: &str, size: u64) -> Option<&Row> {
        let distance = |r: &&Row| {
            let p = extra_u64(r, "payload_bytes").unwrap_or(1).max(1) as f64;
            ((p / size.max(1) as f64).ln().abs() * 1000.0) as u64
        };
        let candidates: Vec<&Row> = self
            .rows("append")
            .filter(|r| methods.contains(&r.method.as_str()))
            .filter(|r| extra_str(r, "sync_policy") == Some(policy))
            .filter(|r| extra_f64(r, "ns_per_record").is_some())
            .collect();
        let best = candidates.iter().map(distance).min()?;
        candidates
            .into_iter()
            .filter(|r| distance(r) == best)
            .min_by(|a, b| {
                let (x, y) = (
                    extra_f64(a, "ns_per_record").unwrap_or(f64::MAX),
                    extra_f64(b, "ns_per_record").unwrap_or(f64::MAX),
                );
                x.total_cmp(&y)
            })
    }

    fn per_record(&self, row: &Row, what: &str) -> Figure {
        let ns = extra_f64(row, "ns_per_record").unwrap_or(0.0);
        let payload = extra_u64(row, "payload_bytes").unwrap_or(0);
        Figure::new(
            ns * 1e-9,
            0.0,
            format!(
                "iolab bench {}: append {}, {} records{what}: {} each",
                self.label,
                row.method,
                size(payload),
                super::seconds(ns * 1e-9)
            ),
        )
    }

    /// The verdict's fastest row of `suite` with the verdict's method.
    fn verdict_row<'a>(&'a self, v: &'a Verdict, filter: impl Fn(&Row) -> bool) -> Option<&'a Row> {
        let method = v.winner.as_deref().or(v.tied.first().map(String::as_str))?;
        self.rows(&v.suite)
            .filter(|r| r.method == method && filter(r))
            .min_by(|a, b| {
                let per_byte = |r: &Row| r.median_s.unwrap_or(f64::MAX) / r.bytes.max(1) as f64;
                per_byte(a).total_cmp(&per_byte(b))
            })
    }

    fn with_fix(mut f: Figure, v: &Verdict) -> Figure {
        f.cli = Some(v.cli.clone()).filter(|c| !c.starts_with('—'));
        f.library = Some(v.library.clone());
        f
    }

    /// The figure for `need`, if these results measured it.
    pub fn figure(&self, need: &Need) -> Option<Figure> {
        match need {
            Need::SmallWrite {
                kind: Kind::File,
                size,
            } => {
                let row = self.append_row(&["write-per-record"], "none", *size)?;
                Some(self.per_record(row, ", one write(2) each"))
            }
            Need::BufferedWrite {
                kind: Kind::File,
                size,
            } => {
                let row = self.append_row(&["append-file", "bufwriter-64k"], "none", *size)?;
                let mut f = self.per_record(row, "");
                if let Some(v) = self.verdict("append", "tiny") {
                    f.library = Some(v.library.clone());
                }
                Some(f)
            }
            Need::BufferedWrite {
                kind: Kind::Pipe, ..
            } => {
                let row = self.rows("write").find(|r| {
                    r.method == "bufwriter"
                        && extra_str(r, "sink") == Some("splice-reader")
                        && r.extra.get("default").and_then(Value::as_bool) == Some(true)
                })?;
                let t = row.median_s?;
                Some(Figure::new(
                    0.0,
                    t / row.bytes.max(1) as f64,
                    format!(
                        "iolab bench {}: write, StdoutWriter::new() into a pipe: {}",
                        self.label,
                        super::rate(row.bytes as f64 / t)
                    ),
                ))
            }
            Need::BigRead => {
                let v = self.verdict("count", "warm")?;
                let row = self.verdict_row(v, |r| r.cache.as_deref() == Some("warm"))?;
                let per_byte = row.median_s? / row.bytes.max(1) as f64;
                Some(Self::with_fix(
                    Figure::new(
                        0.0,
                        per_byte,
                        format!(
                            "iolab bench {}: count, warm cache, {}: {} (line counting included)",
                            self.label,
                            row.method,
                            super::rate(1.0 / per_byte)
                        ),
                    ),
                    v,
                ))
            }
            Need::RandomRead { cold, .. } => {
                let state = |r: &Row| {
                    let s = extra_str(r, "state").or(r.cache.as_deref()).unwrap_or("");
                    if *cold { s != "warm" } else { s == "warm" }
                };
                let row = self.rows("random").find(|r| {
                    r.method == "pread"
                        && extra_u64(r, "queue_depth") == Some(1)
                        && extra_u64(r, "threads").unwrap_or(1) == 1
                        && extra_str(r, "pattern") == Some("uniform")
                        && state(r)
                })?;
                let t = row.median_s?;
                Some(Figure::new(
                    t,
                    0.0,
                    format!(
                        "iolab bench {}: random, pread at depth 1, {}: {} per read",
                        self.label,
                        extra_str(row, "state").unwrap_or("warm"),
                        super::seconds(t)
                    ),
                ))
            }
            Need::BestRandomRead { cold, .. } => {
                let v = if *cold {
                    self.verdict("random", "cold")
                        .or_else(|| self.verdict("random", "beyond-memory"))?
                } else {
                    self.verdict("random", "warm")?
                };
                let t = v.median_s?;
                let method = v.winner.clone().or(v.tied.first().cloned())?;
                Some(Self::with_fix(
                    Figure::new(
                        t,
                        0.0,
                        format!(
                            "iolab bench {}: random, {}, {method}: {} per read",
                            self.label,
                            v.condition,
                            super::seconds(t)
                        ),
                    ),
                    v,
                ))
            }
            Need::Sync {
                call: SyncCall::Fdatasync,
                every: 1,
                record,
                ..
            } => {
                let row = self.append_row(&["write-per-record"], "every-record", *record)?;
                Some(self.per_record(row, ", fdatasync after each (the bench's data folder)"))
            }
            Need::Sync {
                every: 1000,
                record,
                ..
            } => {
                let names = [
                    "write-per-record",
                    "bufwriter-8k",
                    "bufwriter-64k",
                    "writev-batch",
                    "append-file",
                ];
                let row = self.append_row(&names, "every-K", *record)?;
                let mut f =
                    self.per_record(row, ", one fdatasync per 1000 (the bench's data folder)");
                if let Some(v) = self.verdict("append", "synced every 1000") {
                    f.library = Some(v.library.clone());
                }
                Some(f)
            }
            Need::InPlaceEdit => {
                let v = self.verdict("edit", "replace")?;
                let row = self.verdict_row(v, |r| {
                    extra_str(r, "op") == Some("replace")
                        && r.cache.as_deref() == Some("warm")
                        && !r.baseline
                })?;
                let per_byte = row.median_s? / row.bytes.max(1) as f64;
                Some(Self::with_fix(
                    Figure::new(
                        0.0,
                        per_byte,
                        format!(
                            "iolab bench {}: edit replace, {}: {} for {}",
                            self.label,
                            row.method,
                            super::seconds(row.median_s?),
                            size(row.bytes)
                        ),
                    ),
                    v,
                ))
            }
            _ => None,
        }
    }
}
