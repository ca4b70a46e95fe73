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

use iolab_lab::append::Strategy as AppendStrategy;
use iolab_lab::random::{Method as RandomMethod, Pattern};
use iolab_lab::write::Method as WriteMethod;
use iolab_results::{RESULTS_DIR, Results, Row, Verdict, newest_run};

use super::{Figure, Need, SyncCall};
use crate::model::Kind;

/// Loaded results.
pub struct Bench {
    /// The file read.
    pub path: PathBuf,
    results: Results,
    label: String,
}

/// Bytes for a basis: `5 B`, `64 B`, `4.0 KiB`.
fn size(bytes: u64) -> String {
    iolab_lab::units::format_bytes(bytes)
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
            Some(p) => iolab_results::load::results_file(p),
            None => newest_run(Path::new(RESULTS_DIR))
                .map(|d| d.join("results.json"))
                .ok_or_else(|| format!("no iolab bench results under ./{RESULTS_DIR}"))?,
        };
        let results = iolab_results::load(&file).map_err(|e| e.to_string())?;
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
            let p = r.payload_bytes().unwrap_or(1).max(1) as f64;
            ((p / size.max(1) as f64).ln().abs() * 1000.0) as u64
        };
        let candidates: Vec<&Row> = self
            .rows("append")
            .filter(|r| methods.contains(&r.method.as_str()))
            .filter(|r| r.sync_policy() == Some(policy))
            .filter(|r| r.ns_per_record().is_some())
            .collect();
        let best = candidates.iter().map(distance).min()?;
        candidates
            .into_iter()
            .filter(|r| distance(r) == best)
            .min_by(|a, b| {
                let (x, y) = (
                    a.ns_per_record().unwrap_or(f64::MAX),
                    b.ns_per_record().unwrap_or(f64::MAX),
                );
                x.total_cmp(&y)
            })
    }

    fn per_record(&self, row: &Row, what: &str) -> Figure {
        let ns = row.ns_per_record().unwrap_or(0.0);
        let payload = row.payload_bytes().unwrap_or(0);
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
                let row =
                    self.append_row(&[AppendStrategy::WritePerRecord.name()], "none", *size)?;
                Some(self.per_record(row, ", one write(2) each"))
            }
            Need::BufferedWrite {
                kind: Kind::File,
                size,
            } => {
                let row = self.append_row(
                    &[
                        AppendStrategy::AppendFile.name(),
                        AppendStrategy::BufWriter64k.name(),
                    ],
                    "none",
                    *size,
                )?;
                let mut f = self.per_record(row, "");
                if let Some(v) = self.verdict("append", "tiny") {
                    f.library = Some(v.library.clone());
                }
                Some(f)
            }
            Need::BufferedWrite {
                kind: Kind::Pipe, ..
            } => self.pipe_write(),
            Need::BigRead => self.per_byte_winner(
                "count",
                "warm",
                |r| r.cache.as_deref() == Some("warm"),
                |row, per_byte| {
                    format!(
                        "count, warm cache, {}: {} (line counting included)",
                        row.method,
                        super::rate(1.0 / per_byte)
                    )
                },
            ),
            Need::RandomRead { cold, .. } => self.random_read(*cold),
            Need::BestRandomRead { cold, .. } => self.best_random_read(*cold),
            Need::Sync {
                call: SyncCall::Fdatasync,
                every: 1,
                record,
                ..
            } => {
                let row = self.append_row(
                    &[AppendStrategy::WritePerRecord.name()],
                    "every-record",
                    *record,
                )?;
                Some(self.per_record(row, ", fdatasync after each (the bench's data folder)"))
            }
            Need::Sync {
                every: 1000,
                record,
                ..
            } => {
                let names = [
                    AppendStrategy::WritePerRecord.name(),
                    AppendStrategy::BufWriter8k.name(),
                    AppendStrategy::BufWriter64k.name(),
                    AppendStrategy::WritevBatch.name(),
                    AppendStrategy::AppendFile.name(),
                ];
                let row = self.append_row(&names, "every-K", *record)?;
                let mut f =
                    self.per_record(row, ", one fdatasync per 1000 (the bench's data folder)");
                if let Some(v) = self.verdict("append", "synced every 1000") {
                    f.library = Some(v.library.clone());
                }
                Some(f)
            }
            Need::InPlaceEdit => self.in_place_edit(),
            _ => None,
        }
    }

    /// The default `StdoutWriter` into a pipe: its time per byte.
    fn pipe_write(&self) -> Option<Figure> {
        let row = self.rows("write").find(|r| {
            r.method == WriteMethod::Bufwriter.name()
                && r.sink() == Some("splice-reader")
                && r.is_default()
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

    /// `pread` at depth 1 in the `cold` (or warm) state: its time per read.
    fn random_read(&self, cold: bool) -> Option<Figure> {
        let state = |r: &Row| {
            let s = r.state().or(r.cache.as_deref()).unwrap_or("");
            if cold { s != "warm" } else { s == "warm" }
        };
        let row = self.rows("random").find(|r| {
            r.method == RandomMethod::Pread.name()
                && r.queue_depth() == Some(1)
                && r.threads().unwrap_or(1) == 1
                && r.pattern() == Some(Pattern::Uniform.name())
                && state(r)
        })?;
        let t = row.median_s?;
        Some(Figure::new(
            t,
            0.0,
            format!(
                "iolab bench {}: random, pread at depth 1, {}: {} per read",
                self.label,
                row.state().unwrap_or("warm"),
                super::seconds(t)
            ),
        ))
    }

    /// The random verdict's winner in the `cold` (or warm) state: its time per read.
    fn best_random_read(&self, cold: bool) -> Option<Figure> {
        let v = if cold {
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

    /// The edit verdict's replace winner, warm: its time per byte.
    fn in_place_edit(&self) -> Option<Figure> {
        self.per_byte_winner(
            "edit",
            "replace",
            |r| r.op() == Some("replace") && r.cache.as_deref() == Some("warm") && !r.baseline,
            |row, per_byte| {
                format!(
                    "edit replace, {}: {} for {}",
                    row.method,
                    super::seconds(per_byte * row.bytes.max(1) as f64),
                    size(row.bytes)
                )
            },
        )
    }

    /// The time per byte of the row of `suite`'s `condition` verdict that `row_of` picks,
    /// with the verdict's fix; `basis` says what it is.
    fn per_byte_winner(
        &self,
        suite: &str,
        condition: &str,
        row_of: impl Fn(&Row) -> bool,
        basis: impl Fn(&Row, f64) -> String,
    ) -> Option<Figure> {
        let v = self.verdict(suite, condition)?;
        let row = self.verdict_row(v, row_of)?;
        let per_byte = row.median_s? / row.bytes.max(1) as f64;
        let basis = format!("iolab bench {}: {}", self.label, basis(row, per_byte));
        Some(Self::with_fix(Figure::new(0.0, per_byte, basis), v))
    }
}
