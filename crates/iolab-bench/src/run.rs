//! [`run`]: the configured suites in order, then the verdict.

use std::collections::BTreeMap;
use std::io::IsTerminal;

use serde_json::json;

use crate::context::{Config, Context};
use crate::results::{Results, SCHEMA_VERSION};
use crate::runner::Executor;
use crate::{interrupt, progress, suites};
use iolab::error::Result;

/// Runs the configured suites and returns the results (also when interrupted: then
/// `partial` is set). The machine facts are collected for `config.data_dir`.
pub fn run(config: &Config, executor: &mut dyn Executor, command: Vec<String>) -> Result<Results> {
    interrupt::install();
    let started_at = iolab::sysinfo::now_rfc3339();
    std::fs::create_dir_all(&config.data_dir)
        .map_err(|e| iolab::Error::io("cannot create the data folder", e))?;
    let sysinfo = iolab::sysinfo::collect(&config.data_dir);
    let mut ctx = Context {
        config,
        executor,
        warnings: Vec::new(),
        notes: Vec::new(),
        ceilings: None,
    };
    if sysinfo.storage.is_tmpfs {
        ctx.warnings.push(format!(
            "the data folder {} is on tmpfs: its files live in memory, so a cold cache is impossible",
            config.data_dir.display()
        ));
    }
    let mut rows = Vec::new();
    for suite in &config.suites {
        if interrupt::interrupted() {
            break;
        }
        let started = std::time::Instant::now();
        let measured = suites::run(suite, &mut ctx)?;
        if config.progress && !std::io::stderr().is_terminal() {
            // The suite's whole time: its sections, plus data sets, probes and copies.
            let line = progress::section_line(
                &format!("{suite} (all)"),
                measured.len(),
                started.elapsed().as_secs_f64(),
            );
            eprintln!("{line}");
        }
        rows.extend(measured);
    }
    let mut config_map = BTreeMap::new();
    config_map.insert("suites".into(), json!(config.suites));
    config_map.insert("data_dir".into(), json!(config.data_dir));
    config_map.insert("size".into(), json!(config.size));
    config_map.insert("runs".into(), json!(config.runs));
    config_map.insert("warmup".into(), json!(config.warmup));
    config_map.insert(
        "caches".into(),
        json!(config.caches.iter().map(|c| c.name()).collect::<Vec<_>>()),
    );
    config_map.insert("drop_caches".into(), json!(config.drop_caches));
    config_map.insert("quick".into(), json!(config.quick));
    let mut results = Results {
        schema_version: SCHEMA_VERSION,
        iolab_version: env!("CARGO_PKG_VERSION").to_string(),
        command,
        started_at,
        finished_at: iolab::sysinfo::now_rfc3339(),
        partial: interrupt::interrupted(),
        config: config_map,
        sysinfo,
        rows,
        warnings: ctx.warnings,
        notes: ctx.notes,
        ceilings: ctx.ceilings,
        verdict: Vec::new(),
    };
    results.verdict = suites::decide(&results);
    Ok(results)
}
