//! The `append` suite's baseline: C++ `std::fstream`, compiled at bench time with
//! `c++ -O2` from `append_fstream.cpp` (built into the binary) and run as a child process
//! that times its own loop the way [`super::measure`] does and prints the figures.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::Sample;
use super::Section;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::peers::{version_line, which};
use crate::rounds::Times;
use crate::runner::Job;
use crate::workdir::WorkDir;

/// C++ compilers tried for the `fstream` baseline, in order.
const CXX_COMPILERS: &[&str] = &["c++", "g++", "clang++"];
/// The baseline's source, built into the binary so the bench needs no source tree.
const FSTREAM_SOURCE: &str = include_str!("append_fstream.cpp");
/// The baseline's row name.
pub(super) const FSTREAM: &str = "fstream";

/// The compiled `fstream` baseline.
pub(super) struct Fstream {
    pub(super) program: PathBuf,
    pub(super) version: Option<String>,
}

/// Compiles the baseline into the work folder, or says why it cannot.
pub(super) fn build(work: &mut WorkDir) -> std::result::Result<Fstream, String> {
    let Some(compiler) = CXX_COMPILERS.iter().find_map(|c| which(c)) else {
        return Err(format!(
            "no C++ compiler ({}) on PATH",
            CXX_COMPILERS.join(", ")
        ));
    };
    let source = work.file("append_fstream.cpp");
    fs::write(&source, FSTREAM_SOURCE).map_err(|e| format!("cannot write its source: {e}"))?;
    let program = work.file("append_fstream");
    let out = Command::new(&compiler)
        .args(["-O2", "-std=c++17", "-o"])
        .arg(&program)
        .arg(&source)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", compiler.display()))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "`{} -O2` failed: {}",
            compiler.display(),
            stderr.lines().next().unwrap_or("no message")
        ));
    }
    Ok(Fstream {
        version: version_line(&compiler, &["--version"]).map(|v| format!("{v} (-O2)")),
        program,
    })
}

/// Runs the compiled baseline once through the executor and reads its own figures.
/// `Err` from the outer result only when the executor cannot run processes at all.
pub(super) fn run(
    ctx: &mut Context<'_>,
    fstream: &Fstream,
    path: &Path,
    section: &Section,
) -> Result<std::result::Result<Sample, String>> {
    let job = Job::new(
        FSTREAM,
        &fstream.program,
        [
            path.as_os_str().to_owned(),
            section.records.to_string().into(),
            section.payload.to_string().into(),
        ],
        true,
    );
    let outcome = ctx
        .executor
        .execute(&job)
        .map_err(|e| Error::io("cannot run a benchmark job", e))?;
    if !outcome.success() {
        return Ok(Err(outcome.failure_reason()));
    }
    Ok(parse_fstream(&outcome.stdout)
        .ok_or_else(|| format!("unreadable output: {}", outcome.stdout.trim())))
}

/// Reads `ns N syscw N user_ns N sys_ns N`.
fn parse_fstream(stdout: &str) -> Option<Sample> {
    let mut words = stdout.split_whitespace();
    let mut get = |key: &str| -> Option<i64> {
        (words.next()? == key).then_some(())?;
        words.next()?.parse().ok()
    };
    let ns = get("ns")?;
    let calls = get("syscw")?;
    let user = get("user_ns")?;
    let sys = get("sys_ns")?;
    Some(Sample {
        times: Times {
            wall_s: ns as f64 / 1e9,
            user_s: user as f64 / 1e9,
            sys_s: sys as f64 / 1e9,
        },
        write_calls: u64::try_from(calls).ok(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fstream_output_is_parsed_and_missing_counters_are_unknown() {
        let s = parse_fstream("ns 2000 syscw 7 user_ns 1000 sys_ns 0\n").unwrap();
        assert_eq!(s.times.wall_s, 2e-6);
        assert_eq!(s.write_calls, Some(7));
        let s = parse_fstream("ns 2000 syscw -1 user_ns 1000 sys_ns 0").unwrap();
        assert_eq!(s.write_calls, None);
        assert!(parse_fstream("garbage").is_none());
    }
}
