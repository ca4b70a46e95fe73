//! Loading a run back: `results.json` from a file or a run folder, the newest run under a
//! folder of runs, refusing what cannot be read faithfully (another `schema_version`,
//! times no run can have produced).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::results::{Results, Row, SCHEMA_VERSION};

/// The folder `iolab bench` writes its runs into by default, one folder per run named by
/// its UTC start time.
pub const RESULTS_DIR: &str = "iolab-results";

/// Why a run could not be loaded; the message names the file.
#[derive(Debug)]
pub enum LoadError {
    /// The file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not `iolab bench` results of this schema.
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Io { path, source } => write!(
                f,
                "{}: cannot read results: {}",
                path.display(),
                iolab_lab::error::describe_io(source)
            ),
            LoadError::Invalid { path, reason } => {
                write!(f, "{}: not iolab results: {reason}", path.display())
            }
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Io { source, .. } => Some(source),
            LoadError::Invalid { .. } => None,
        }
    }
}

/// The newest run folder under `dir` that holds a `results.json` (run folders are named
/// by their UTC start time, so the newest sorts last).
pub fn newest_run(dir: &Path) -> Option<PathBuf> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("results.json").is_file())
        .collect();
    runs.sort();
    runs.pop()
}

/// The files `iolab bench` writes into a results folder that hold the run itself (every
/// format but the HTML report, which is rendered from them and may be rendered again).
pub const RUN_FILES: &[&str] = &["results.json", "results.md", "results.csv"];

/// The `results.json` that [`load`] reads for `path`: `path` itself, or the file of that
/// name inside it when it is a folder.
pub fn results_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("results.json")
    } else {
        path.to_path_buf()
    }
}

/// Loads results from a `results.json` file or a results folder that contains one.
///
/// Fails with [`LoadError::Invalid`] (which names the file) when the file is not JSON of
/// the results format, has another `schema_version` than [`SCHEMA_VERSION`], or holds a
/// negative or non-finite time or rate. Results from before the verdict keep an empty
/// `verdict` (the harness decides it again).
pub fn load(path: &Path) -> Result<Results, LoadError> {
    let file = results_file(path);
    let text = std::fs::read_to_string(&file).map_err(|source| LoadError::Io {
        path: file.clone(),
        source,
    })?;
    let invalid = |reason: String| LoadError::Invalid {
        path: file.clone(),
        reason,
    };
    // The version first: a file of another layout may fail to parse, or parse into
    // something it does not mean, and either way the version is the cause to report.
    #[derive(Deserialize)]
    struct Version {
        schema_version: Option<serde_json::Value>,
    }
    if let Ok(Version {
        schema_version: Some(version),
    }) = serde_json::from_str::<Version>(&text)
        && version.as_u64() != Some(u64::from(SCHEMA_VERSION))
    {
        return Err(invalid(format!(
            "schema_version is {version}, but this iolab ({}) reads only schema_version {SCHEMA_VERSION}; use the iolab that wrote it",
            env!("CARGO_PKG_VERSION")
        )));
    }
    let results: Results = serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
    check_figures(&results).map_err(invalid)?;
    Ok(results)
}

/// Checks that every time and rate is a finite number, not below zero: the first one that is
/// not, as a reason naming the row and the key.
fn check_figures(results: &Results) -> std::result::Result<(), String> {
    for (i, row) in results.rows.iter().enumerate() {
        check_row(row).map_err(|(key, value)| {
            let cache = row.cache.as_deref().map(|c| format!(", {c}")).unwrap_or_default();
            format!(
                "row {} ({} {}{cache}): {key} is {value}, which no run can measure (corrupt results?)",
                i + 1,
                row.suite,
                row.method
            )
        })?;
    }
    for v in &results.verdict {
        for (key, value) in [
            ("median_s", v.median_s),
            ("ratio_to_best_baseline", v.ratio_to_best_baseline),
            ("of_limit", v.of_limit),
        ] {
            if let Some(x) = value
                && !plausible(x)
            {
                return Err(format!(
                    "verdict ({} {}): {key} is {x}, which no run can measure (corrupt results?)",
                    v.suite, v.condition
                ));
            }
        }
    }
    Ok(())
}

/// The first implausible figure of `row`, as (key, value).
fn check_row(row: &Row) -> std::result::Result<(), (&'static str, f64)> {
    let check = |key: &'static str, value: Option<f64>| match value {
        Some(x) if !plausible(x) => Err((key, x)),
        _ => Ok(()),
    };
    check("median_s", row.median_s)?;
    for &run in &row.runs {
        check("runs", Some(run))?;
    }
    check("throughput_bytes_per_s", row.throughput_bytes_per_s)?;
    check("user_s", row.user_s)?;
    check("sys_s", row.sys_s)?;
    if let Some(s) = &row.stats {
        check("stats.median", Some(s.median))?;
        check("stats.min", Some(s.min))?;
        check("stats.max", Some(s.max))?;
        check("stats.mean", Some(s.mean))?;
        check("stats.stddev", Some(s.stddev))?;
        check("stats.mad", Some(s.mad))?;
    }
    Ok(())
}

/// Whether `x` can be a measured time, rate or ratio: finite and not negative.
fn plausible(x: f64) -> bool {
    x.is_finite() && x >= 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
        let mut doc = serde_json::json!({
            "schema_version": SCHEMA_VERSION, "iolab_version": "0", "command": [],
            "started_at": "", "finished_at": "", "partial": false, "config": {},
            "sysinfo": serde_json::to_value(iolab_lab::sysinfo::collect(Path::new("."))).unwrap(),
            "rows": [{"suite": "count", "method": "mmap", "cache": "warm", "bytes": 100,
                      "runs": [1.0, 1.0], "median_s": 1.0, "verified": true}],
            "warnings": [], "notes": []
        });
        edit(&mut doc);
        let path = dir.join("results.json");
        std::fs::write(&path, doc.to_string()).unwrap();
        path
    }

    #[test]
    fn loads_results_of_this_schema() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), |_| {});
        assert_eq!(load(dir.path()).unwrap().rows.len(), 1);
    }

    #[test]
    fn refuses_another_schema_version() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), |d| d["schema_version"] = 999.into());
        let e = load(&path).unwrap_err().to_string();
        assert!(e.contains("results.json") && e.contains("999"), "{e}");
        assert!(
            e.contains(&format!("schema_version {SCHEMA_VERSION}")),
            "{e}"
        );
    }

    #[test]
    fn refuses_negative_times() {
        let dir = tempfile::tempdir().unwrap();
        for key in ["median_s", "user_s", "throughput_bytes_per_s"] {
            let path = write(dir.path(), |d| d["rows"][0][key] = (-0.5).into());
            let e = load(&path).unwrap_err().to_string();
            assert!(e.contains(key) && e.contains("-0.5"), "{e}");
        }
        let path = write(dir.path(), |d| {
            d["rows"][0]["runs"] = serde_json::json!([1.0, -2])
        });
        assert!(load(&path).is_err());
    }
}
