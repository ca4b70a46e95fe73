//! [`run`]: the configured suites in order, then the verdict.

use std::collections::BTreeMap;
use std::io::IsTerminal;

use serde_json::json;

use crate::context::{Config, Context};
use crate::error::Result;
use crate::results::{Results, SCHEMA_VERSION, SuiteError};
use crate::runner::Executor;
use crate::{interrupt, progress, suites};

/// Runs the configured suites and returns the results.
///
/// `after_each` receives the results so far after every suite (hyperfine's habit: the files
/// are written as the run goes, so a failure or an interruption loses nothing measured).
/// A suite that fails does not stop the run: its error is kept in `errors` and the run is
/// marked `partial`, as an interrupted one is. The machine facts are collected for
/// `config.data_dir`.
pub fn run(
    config: &Config,
    executor: &mut dyn Executor,
    command: Vec<String>,
    after_each: &mut dyn FnMut(&Results) -> Result<()>,
) -> std::result::Result<Results, RunError> {
    interrupt::install();
    let started_at = iolab_lab::sysinfo::now_rfc3339();
    std::fs::create_dir_all(&config.data_dir)
        .map_err(|e| RunError::Data(crate::error::Error::io("cannot create the data folder", e)))?;
    let sysinfo = iolab_lab::sysinfo::collect(&config.data_dir);
    let mut ctx = Context {
        config,
        executor,
        warnings: Vec::new(),
        notes: Vec::new(),
    };
    if sysinfo.storage.is_tmpfs {
        ctx.warnings.push(format!(
            "the data folder {} is on tmpfs: its files live in memory, so a cold cache is impossible",
            config.data_dir.display()
        ));
    }
    let mut results = Results {
        schema_version: SCHEMA_VERSION,
        iolab_version: env!("CARGO_PKG_VERSION").to_string(),
        command,
        started_at,
        finished_at: String::new(),
        partial: false,
        config: config_map(config),
        sysinfo,
        rows: Vec::new(),
        warnings: Vec::new(),
        notes: Vec::new(),
        ceilings: None,
        verdict: Vec::new(),
        errors: Vec::new(),
    };
    for suite in &config.suites {
        if interrupt::interrupted() {
            break;
        }
        let started = std::time::Instant::now();
        match suites::run(suite, &mut ctx) {
            Ok(output) => {
                let measured = output.rows;
                if output.ceilings.is_some() {
                    results.ceilings = output.ceilings;
                }
                if config.progress && !std::io::stderr().is_terminal() {
                    // The suite's whole time: its sections, data sets, probes and copies.
                    let line = progress::section_line(
                        &format!("{suite} (all)"),
                        measured.len(),
                        started.elapsed().as_secs_f64(),
                    );
                    eprintln!("{line}");
                }
                results.rows.extend(measured);
            }
            Err(e) => results.errors.push(SuiteError {
                suite: suite.clone(),
                error: e.to_string(),
            }),
        }
        settle(&mut results, &ctx);
        after_each(&results).map_err(RunError::Write)?;
    }
    settle(&mut results, &ctx);
    Ok(results)
}

/// Why a run stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The data folder could not be made.
    #[error(transparent)]
    Data(crate::error::Error),
    /// `after_each` failed (the results could not be written).
    #[error(transparent)]
    Write(crate::error::Error),
}

/// Brings `results` up to date with the run so far: its end time, whether it is partial,
/// the context's warnings and notes, and the verdict of the rows so far.
fn settle(results: &mut Results, ctx: &Context<'_>) {
    results.finished_at = iolab_lab::sysinfo::now_rfc3339();
    results.partial = interrupt::interrupted() || !results.errors.is_empty();
    results.warnings = ctx.warnings.clone();
    results.notes = ctx.notes.clone();
    results.verdict = suites::decide(results);
}

/// The settings of the run as `results.json` records them.
fn config_map(config: &Config) -> BTreeMap<String, serde_json::Value> {
    let mut map = BTreeMap::new();
    map.insert("suites".into(), json!(config.suites));
    map.insert("data_dir".into(), json!(config.data_dir));
    map.insert("size".into(), json!(config.size));
    map.insert("runs".into(), json!(config.runs));
    map.insert("warmup".into(), json!(config.warmup));
    map.insert(
        "caches".into(),
        json!(config.caches.iter().map(|c| c.name()).collect::<Vec<_>>()),
    );
    map.insert("drop_caches".into(), json!(config.drop_caches));
    map.insert("quick".into(), json!(config.quick));
    map
}
