//! Recording for `iolab crash`: runs a command under the ptrace backend and writes the
//! journal of every change it makes under one folder (`engine::ptrace::journal` says how).

use std::ffi::OsString;
use std::path::Path;

use iolab_crash::{Entry, Journal};

use crate::backend::{Choice, JournalTo, RunOptions};
use crate::error::{Error, Result};
use crate::launch::Command;
use crate::model::Exit;
use crate::{engine, signals};

pub use crate::backend::DroppedSync;
pub use crate::engine::ptrace::mutate::AVAILABLE as DROPS_AVAILABLE;

/// How [`record`] runs the command.
#[derive(Clone, Debug, Default)]
pub struct Recording {
    /// Files of the folder whose bytes need not survive a crash (`*-shm`): they may be
    /// written through shared maps.
    pub volatile: Vec<String>,
    /// Syncs taken out of the command ([`DroppedSync`]; x86-64 only, [`DROPS_AVAILABLE`]).
    pub drops: Vec<DroppedSync>,
}

/// Runs `words` (the command and its arguments), its standard streams its own, and writes
/// the journal of its changes under `dir` to `out`, as `how` says. Returns how it ended.
pub fn record(words: &[OsString], dir: &Path, out: &Path, how: &Recording) -> Result<Exit> {
    let dir = std::fs::canonicalize(dir)
        .map_err(|e| Error::io(format!("cannot resolve {}", dir.display()), e))?;
    let command = Command::resolve(words)?;
    let _signals = signals::Guard::install();
    let outcome = engine::run(
        &command,
        Choice::Ptrace,
        &RunOptions {
            log: None,
            journal: Some(JournalTo {
                dir,
                out: out.to_path_buf(),
                volatile: how.volatile.clone(),
                drops: how.drops.clone(),
            }),
        },
    )?;
    Ok(outcome.exit)
}

/// Reads a journal [`record`] wrote.
pub fn load(path: &Path) -> Result<Journal> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
    let mut entries = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let entry: Entry = serde_json::from_str(line).map_err(|e| {
            Error::io(
                format!("{} line {}", path.display(), n + 1),
                std::io::Error::other(e),
            )
        })?;
        entries.push(entry);
    }
    Ok(Journal { entries })
}
