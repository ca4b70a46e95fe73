//! The durable section's peer: PostgreSQL's `pg_test_fsync` (Debian `postgresql-15`), the
//! tool PostgreSQL users run to choose `wal_sync_method`. It is run on a file beside ours
//! (`-f FILE -s 1`: one second per test), stopped once its "one 8kB write" block is printed,
//! and that block's `(test, ops/s)` lines become rows named `pg_test_fsync <test>`.
//!
//! System calls: it spawns the tool and reads its standard output through a pipe; the tool
//! itself writes and syncs the file (`open_datasync`, `fdatasync`, `fsync`, …).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Where Debian installs `pg_test_fsync`.
pub(super) const PG_TEST_FSYNC_PATHS: [&str; 3] = [
    "/usr/lib/postgresql/17/bin/pg_test_fsync",
    "/usr/lib/postgresql/16/bin/pg_test_fsync",
    "/usr/lib/postgresql/15/bin/pg_test_fsync",
];
/// Counted rounds of `pg_test_fsync` at most (about 5 s each), without a warm-up: the
/// first rounds of the schedule, each paired with our runs of the same round for the goals.
pub(super) const PG_ROUNDS: usize = 3;
/// The method name of `pg_test_fsync`'s rows: `pg_test_fsync <its test>`.
pub const PG_TEST_FSYNC: &str = "pg_test_fsync";

/// The installed `pg_test_fsync`, if any.
pub(super) fn find() -> Option<PathBuf> {
    PG_TEST_FSYNC_PATHS
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// Runs `pg_test_fsync` for one second per test on `path` and stops it once its "one 8kB
/// write" block is printed (the rest of its tests take another ten seconds and are not
/// compared); returns that block's results as (test, ops/s).
pub(super) fn run_pg_test_fsync(exe: &Path, path: &Path) -> Result<Vec<(String, f64)>, String> {
    let mut child = Command::new(exe)
        .arg("-f")
        .arg(path)
        .args(["-s", "1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let mut stdout = String::new();
    let mut blocks = 0;
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let Ok(line) = line else { break };
        if line.starts_with("Compare") {
            blocks += 1;
            if blocks == 2 {
                break;
            }
        }
        stdout.push_str(&line);
        stdout.push('\n');
    }
    let _ = child.kill();
    let status = child.wait().map_err(|e| e.to_string())?;
    let parsed = parse_pg_test_fsync(&stdout);
    if parsed.is_empty() {
        let mut stderr = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut stderr);
        }
        return Err(format!(
            "{PG_TEST_FSYNC} gave no 8kB-write figures ({status}): {}",
            stderr.trim()
        ));
    }
    Ok(parsed)
}

/// The `(test, ops/s)` lines of `pg_test_fsync`'s "one 8kB write" block.
fn parse_pg_test_fsync(stdout: &str) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in stdout.lines() {
        if line.starts_with("Compare") {
            inside = line.contains("one 8kB write");
            continue;
        }
        if !inside {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if let Some(k) = words.iter().position(|w| *w == "ops/sec")
            && k >= 2
            && let Ok(ops) = words[k - 1].parse::<f64>()
        {
            out.push((words[0].to_string(), ops));
        }
    }
    out
}

/// `pg_test_fsync --version`'s line.
pub(super) fn pg_version(exe: &Path) -> Option<String> {
    let out = Command::new(exe).arg("--version").output().ok()?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string()).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pg_test_fsync_output_is_parsed() {
        let out = "\
Compare file sync methods using one 8kB write:
(in wal_sync_method preference order, except fdatasync is Linux's default)
        open_datasync                      8917.123 ops/sec     112 usecs/op
        fdatasync                          8000.456 ops/sec     125 usecs/op
        fsync_writethrough                              n/a

Compare file sync methods using two 8kB writes:
        open_datasync                      4000.000 ops/sec     250 usecs/op
";
        assert_eq!(
            parse_pg_test_fsync(out),
            vec![
                ("open_datasync".to_string(), 8917.123),
                ("fdatasync".to_string(), 8000.456)
            ]
        );
    }
}
