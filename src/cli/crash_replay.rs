//! `iolab crash replay RUN:STATE DIR`: rebuilds one crash state of an earlier `iolab
//! crash` run in a new folder, to look at it or run a debugger there.
//!
//! A run with failing states is kept in iolab's cache folder (`crash/RUN/`: the folder's
//! first state as files, their inode numbers, the journal, each state's crash point and
//! losses); the five newest runs are kept, and every run of the last ten minutes (so that a
//! run saved beside others can always be replayed right after). Replaying writes only into a folder that does
//! not exist yet.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use iolab_crash::{CrashState, Fs, Ino};
use serde::{Deserialize, Serialize};

/// Runs kept in the cache, besides those of the last [`RECENT`] seconds.
const KEPT: usize = 5;

/// A run this young is never removed.
const RECENT: u64 = 600;

/// What a state applied, as a run keeps it.
#[derive(Serialize, Deserialize)]
struct Plan {
    after: Option<usize>,
    lost: Vec<usize>,
    torn: Option<(usize, usize)>,
}

fn runs_dir() -> Result<PathBuf> {
    iolab_lab::profile::cache_dir()
        .map(|d| d.join("crash"))
        .context("no cache folder to keep the run in (neither XDG_CACHE_HOME nor HOME is set)")
}

/// Keeps the run (`initial`, the journal at `journal`, every state in order) for
/// `iolab crash replay`; its name.
pub fn save(initial: &Fs, journal: &Path, states: &[&CrashState]) -> Result<String> {
    let runs = runs_dir()?;
    std::fs::create_dir_all(&runs).with_context(|| format!("cannot make {}", runs.display()))?;
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let id = format!("{secs}-{}", std::process::id());
    let run = runs.join(&id);
    let files = run.join("initial");
    std::fs::create_dir_all(&files).with_context(|| format!("cannot make {}", files.display()))?;
    initial
        .write_to(&files)
        .with_context(|| format!("cannot write {}", files.display()))?;
    let mut inodes: HashMap<String, Ino> = initial
        .paths()
        .into_iter()
        .map(|(ino, path)| (path, ino))
        .collect();
    inodes.insert(String::new(), initial.root());
    let plans: Vec<Plan> = (states.iter())
        .map(|s| Plan {
            after: s.after,
            lost: s.lost.clone(),
            torn: s.torn,
        })
        .collect();
    let write = |name: &str, text: String| {
        let path = run.join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
    };
    write("inodes.json", serde_json::to_string(&inodes)?)?;
    write("states.json", serde_json::to_string(&plans)?)?;
    std::fs::copy(journal, run.join("journal.jsonl"))
        .with_context(|| format!("cannot copy the journal into {}", run.display()))?;
    prune(&runs, secs);
    Ok(id)
}

/// Removes the runs older than [`RECENT`] seconds beyond the [`KEPT`] newest.
fn prune(runs: &Path, now: u64) {
    let Ok(entries) = std::fs::read_dir(runs) else {
        return;
    };
    let mut names: Vec<(u64, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let secs = name.split('-').next()?.parse().ok()?;
            Some((secs, e.path()))
        })
        .collect();
    names.sort();
    let old = names.len().saturating_sub(KEPT);
    for (secs, path) in names.into_iter().take(old) {
        if secs + RECENT < now {
            let _ = std::fs::remove_dir_all(path);
        }
    }
}

/// Rebuilds state `which` (`RUN:N`) in the new folder `dir`.
pub fn replay(which: &str, dir: &Path) -> Result<i32> {
    let (id, n) = which
        .split_once(':')
        .and_then(|(id, n)| Some((id, n.parse::<usize>().ok()?)))
        .with_context(|| format!("{which}: not a state (RUN:N, as iolab crash prints it)"))?;
    if id.is_empty() || id.contains('/') || id.starts_with('.') {
        bail!("{which}: not a state (RUN:N, as iolab crash prints it)");
    }
    let run = runs_dir()?.join(id);
    if !run.is_dir() {
        bail!("{}: no such run kept (the five newest are)", run.display());
    }
    let read = |name: &str| {
        let path = run.join(name);
        std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))
    };
    let plans: Vec<Plan> = serde_json::from_str(&read("states.json")?)
        .with_context(|| format!("{}: states.json is not a run's", run.display()))?;
    let plan = plans
        .get(n)
        .with_context(|| format!("{which}: the run has states 0 to {}", plans.len() - 1))?;
    let inodes: HashMap<String, Ino> = serde_json::from_str(&read("inodes.json")?)
        .with_context(|| format!("{}: inodes.json is not a run's", run.display()))?;
    let loaded = Fs::load(&run.join("initial"))
        .with_context(|| format!("cannot read {}", run.join("initial").display()))?;
    let mut map: HashMap<Ino, Ino> = loaded
        .paths()
        .into_iter()
        .filter_map(|(ino, path)| Some((ino, *inodes.get(&path)?)))
        .collect();
    map.extend(inodes.get("").map(|&root| (loaded.root(), root)));
    let initial = loaded.renumber(&map);
    let journal = iolab_trace::journal::load(&run.join("journal.jsonl"))?;
    if plan.after.is_some_and(|a| a >= journal.entries.len()) {
        bail!("{}: states.json does not match its journal", run.display());
    }
    let state = iolab_crash::rebuild(&initial, &journal, plan.after, &plan.lost, plan.torn);
    // Only into a new folder: nothing of the user's is written over.
    std::fs::create_dir(dir)
        .with_context(|| format!("cannot make {} (it must not exist)", dir.display()))?;
    state
        .fs
        .write_to(dir)
        .with_context(|| format!("cannot write the state into {}", dir.display()))?;
    let stdout = run.join(format!("stdout-{n}"));
    std::fs::write(&stdout, &state.stdout)
        .with_context(|| format!("cannot write {}", stdout.display()))?;
    eprintln!(
        "iolab crash replay: state {which} is in {}; what the program had printed by then \
         ({} bytes) is in {} (the check's $IOLAB_CRASH_STDOUT)",
        dir.display(),
        state.stdout.len(),
        stdout.display()
    );
    Ok(0)
}
