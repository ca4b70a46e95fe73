//! `iolab crash --check CHECK [OPTIONS] -- PROGRAM [ARGS…]`: runs PROGRAM once, recording
//! every change it makes under a folder (`iolab_trace::journal`), then rebuilds each crash
//! state a persistence model allows (`iolab_crash`) in a scratch folder and runs CHECK
//! there. Exits 0 when every state passes, 1 when some fail, 2 when it could not run.
//! Models, sources and limits: docs/crash.md.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use iolab_crash::{CrashState, Fs, Ino, Journal, Model, Op};
use iolab_trace::journal::{DroppedSync, Recording};
use iolab_trace::program::Program;
use iolab_trace::rules::FindingKind;
use iolab_trace::rules::programs::durability_fix;

/// Arguments of `iolab crash`.
#[derive(Debug, clap::Args)]
#[command(
    override_usage = "iolab crash --check CHECK [OPTIONS] -- PROGRAM [ARGS]...\n       \
                      iolab crash replay RUN:STATE DIR",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
#[command(after_help = "CHECK runs with `sh -c` in each crash state's folder; \
    $IOLAB_CRASH_STDOUT names a file holding what PROGRAM had printed by that crash. \
    See docs/crash.md.")]
pub struct Args {
    /// The shell command that says whether a crash state is good (exit 0) or not.
    #[arg(long, value_name = "CHECK")]
    check: Option<String>,
    /// The folder whose changes are recorded and replayed [default: the current one].
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// What the file system promises: posix (only what the syncs promise) or
    /// ext4-ordered.
    #[arg(long, default_value = "posix", value_parser = parse_model)]
    model: Model,
    /// A file of the folder whose bytes need not survive a crash, so that writing it
    /// through a shared map is allowed (and not replayed): SQLite's `*-shm`. A leading or
    /// trailing `*` matches any start or end of the name; repeatable.
    #[arg(long, value_name = "PATTERN")]
    volatile: Vec<String>,
    /// Take these syncs out of PROGRAM (they return success and do nothing), to see that
    /// CHECK and the model notice a missing sync: fsync, fdatasync (of files), dir-fsync
    /// (fsync or fdatasync of a folder), o-dsync (O_DSYNC and O_SYNC cleared from opens).
    /// Comma-separated or repeated; x86-64 only.
    #[arg(long, value_name = "SYNC", value_delimiter = ',', value_parser = parse_drop)]
    drop: Vec<DroppedSync>,
    /// Checks run at once [default: the CPUs].
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Also write the results as JSON to FILE, a new file (`-`: stdout).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// The program and its arguments (after `--`).
    #[arg(
        value_name = "PROGRAM",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    program: Vec<OsString>,
    #[command(subcommand)]
    action: Option<Action>,
}

/// What else `iolab crash` does.
#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Rebuild one crash state of an earlier run (RUN:STATE, as its report prints) in DIR,
    /// a new folder, to look at it or debug there.
    Replay {
        /// The state, RUN:N.
        #[arg(value_name = "RUN:STATE")]
        state: String,
        /// The folder to make and rebuild it in (it must not exist).
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
}

fn parse_model(s: &str) -> Result<Model, String> {
    s.parse()
}

fn parse_drop(s: &str) -> Result<DroppedSync, String> {
    s.parse()
}

/// One state's check.
struct Checked {
    /// Its place among the states explored.
    index: usize,
    state: CrashState,
    passed: bool,
    output: String,
}

/// Runs `iolab crash`: its exit code (2, with the error's line, when it could not run).
pub fn run(args: Args) -> Result<i32> {
    match crash(args) {
        Ok(code) => Ok(code),
        Err(e) => {
            super::report(&super::one_line(&e));
            Ok(2)
        }
    }
}

fn crash(args: Args) -> Result<i32> {
    if let Some(Action::Replay { state, dir }) = &args.action {
        return super::crash_replay::replay(state, dir);
    }
    let Some(check) = args.check.as_deref() else {
        bail!("no --check: iolab crash --check CHECK -- PROGRAM [ARGS]...");
    };
    if args.program.is_empty() {
        bail!("no program to run: iolab crash --check CHECK -- PROGRAM [ARGS]...");
    }
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let dir = std::fs::canonicalize(&dir).with_context(|| format!("{}", dir.display()))?;
    if !dir.is_dir() {
        bail!("{}: not a folder", dir.display());
    }
    let initial = Fs::load(&dir).with_context(|| format!("cannot read {}", dir.display()))?;
    let work = Scratch::new()?;
    let journal_path = work.path().join("journal.jsonl");
    let started = Instant::now();
    if !args.drop.is_empty() && !iolab_trace::journal::DROPS_AVAILABLE {
        bail!("--drop: syncs can be taken out only on x86-64");
    }
    let how = Recording {
        volatile: args.volatile.clone(),
        drops: args.drop.clone(),
    };
    let exit = iolab_trace::journal::record(&args.program, &dir, &journal_path, &how)
        .context("cannot record the program")?;
    let journal = iolab_trace::journal::load(&journal_path)?;
    let refused: Vec<&str> = (journal.entries.iter())
        .filter_map(|e| match &e.op {
            Op::Refused { why } => Some(why.as_str()),
            _ => None,
        })
        .collect();
    if !refused.is_empty() {
        bail!("cannot replay this run: {}", refused.join("; "));
    }
    let model = args.model;
    let states = iolab_crash::explore(&initial, &journal, model);
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let checked = check_all(states, check, work.path(), jobs.max(1))?;
    let seconds = started.elapsed().as_secs_f64();
    let names = names(&initial, &journal);
    let failing: Vec<&Checked> = checked.iter().filter(|c| !c.passed).collect();
    eprintln!(
        "iolab crash: {} crash states of {} entries explored under {model} in {seconds:.1} s \
         (the program exited {}): {} failed",
        checked.len(),
        journal.entries.len(),
        exit.shell_code(),
        failing.len()
    );
    // Failing states are kept for `iolab crash replay`; a run that cannot be kept is
    // still reported.
    let run = match failing.is_empty() {
        true => None,
        false => {
            let states: Vec<&CrashState> = checked.iter().map(|c| &c.state).collect();
            match super::crash_replay::save(&initial, &journal_path, &states) {
                Ok(id) => Some(id),
                Err(e) => {
                    eprintln!("iolab crash: not kept for replay: {}", super::one_line(&e));
                    None
                }
            }
        }
    };
    let program = program_of(&args.program);
    print_groups(&failing, &journal, &names, program, run.as_deref());
    if let Some(path) = &args.json {
        let report = Report {
            model,
            checked: &checked,
            journal: &journal,
            names: &names,
            run: run.as_deref(),
            seconds,
        };
        write_json(path, &report)?;
    }
    Ok(if failing.is_empty() { 0 } else { 1 })
}

/// A scratch folder of this run, private (mode 0700, a name no one can guess), removed
/// on drop.
struct Scratch(tempfile::TempDir);

impl Scratch {
    fn new() -> Result<Scratch> {
        let dir = tempfile::Builder::new()
            .prefix("iolab-crash-")
            .tempdir()
            .context("cannot make a scratch folder in the temporary folder")?;
        Ok(Scratch(dir))
    }

    fn path(&self) -> &Path {
        self.0.path()
    }
}

/// Runs `check` in every state, `jobs` at a time; in the states' order.
fn check_all(
    states: Vec<CrashState>,
    check: &str,
    work: &Path,
    jobs: usize,
) -> Result<Vec<Checked>> {
    let next = AtomicUsize::new(0);
    // A bar on a terminal only.
    let bar = iolab_bench::progress::Progress::new("crash states", states.len() as u64, true);
    let failed = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Checked>>> =
        Mutex::new((0..states.len()).map(|_| None).collect());
    let error: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(states.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(state) = states.get(i) else { break };
                    match check_one(state, check, work, i) {
                        Ok((passed, output)) => {
                            if !passed {
                                let n = failed.fetch_add(1, Ordering::Relaxed) + 1;
                                bar.set_message(format!("{n} failed"));
                            }
                            bar.inc();
                            let c = Checked {
                                index: i,
                                state: state.clone(),
                                passed,
                                output,
                            };
                            results.lock().expect("no panic holds it")[i] = Some(c);
                        }
                        Err(e) => {
                            error.lock().expect("no panic holds it").get_or_insert(e);
                            break;
                        }
                    }
                }
            });
        }
    });
    bar.finish();
    if let Some(e) = error.into_inner().expect("no panic holds it") {
        return Err(e);
    }
    Ok(results
        .into_inner()
        .expect("no panic holds it")
        .into_iter()
        .flatten()
        .collect())
}

/// Builds state `i` in a scratch folder, runs `check` there; whether it passed, and its
/// output (the first 2 KiB).
fn check_one(state: &CrashState, check: &str, work: &Path, i: usize) -> Result<(bool, String)> {
    let folder = work.join(format!("state-{i}"));
    let stdout = work.join(format!("stdout-{i}"));
    std::fs::create_dir(&folder).with_context(|| format!("cannot make {}", folder.display()))?;
    state
        .fs
        .write_to(&folder)
        .with_context(|| format!("cannot build crash state {i} in {}", folder.display()))?;
    std::fs::write(&stdout, &state.stdout)
        .with_context(|| format!("cannot write {}", stdout.display()))?;
    let out = Process::new("sh")
        .arg("-c")
        .arg(check)
        .current_dir(&folder)
        .env("IOLAB_CRASH_STDOUT", &stdout)
        .stdin(Stdio::null())
        .output()
        .context("cannot run the check with sh")?;
    let _ = std::fs::remove_dir_all(&folder);
    let _ = std::fs::remove_file(&stdout);
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    let mut end = text.len().min(2048);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    Ok((out.status.success(), text))
}

/// What kind of program PROGRAM is (`iolab trace`'s recognition: a shell running one
/// program is that program), for its fixes.
fn program_of(words: &[OsString]) -> Program {
    let words: Vec<String> = (words.iter())
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    let unbuffered = std::env::var_os("PYTHONUNBUFFERED").is_some_and(|v| !v.is_empty());
    iolab_trace::program::recognise_command(&words, unbuffered).program
}

/// A path for every inode the run touched: where the folder had it, else where the run
/// made it.
fn names(initial: &Fs, journal: &Journal) -> HashMap<Ino, String> {
    let mut names = initial.paths();
    names.insert(initial.root(), "the folder".to_string());
    for e in &journal.entries {
        if let Op::Create { path, ino, .. }
        | Op::Name { path, ino, .. }
        | Op::Mkdir { path, ino, .. } = &e.op
        {
            names.entry(*ino).or_insert_with(|| path.clone());
        }
    }
    names
}

/// What a failing state lost: the entries' descriptions (or `none`: the run as made, cut
/// at that point).
fn cause(c: &Checked, journal: &Journal, names: &HashMap<Ino, String>) -> String {
    let name = |ino: Ino| {
        names
            .get(&ino)
            .cloned()
            .unwrap_or_else(|| format!("inode {ino}"))
    };
    let mut parts: Vec<String> = (c.state.lost.iter())
        .map(|&i| format!("lost {}", journal.entries[i].describe(&name)))
        .collect();
    if let Some((i, keep)) = c.state.torn {
        let entry = journal.entries[i].describe(&name);
        parts.push(format!("torn after {keep} bytes: {entry}"));
    }
    if parts.is_empty() {
        parts.push("nothing lost: the run as made, cut here".into());
    }
    parts.join("; ")
}

/// The entries a state lost, whole or torn.
fn lost_entries(c: &Checked) -> Vec<usize> {
    let mut lost = c.state.lost.clone();
    lost.extend(c.state.torn.map(|(i, _)| i));
    lost
}

/// The program's fix for a cause, in its own terms where `iolab trace` has them
/// (`rules::programs`), else in plain words.
fn fix(c: &Checked, journal: &Journal, program: Program) -> String {
    let own = |kind: FindingKind| durability_fix(program, kind);
    for i in lost_entries(c) {
        match &journal.entries[i].op {
            Op::Write { .. } | Op::Truncate { .. } => {
                let renamed_later =
                    (journal.entries[i + 1..].iter()).any(|e| matches!(e.op, Op::Rename { .. }));
                return match renamed_later.then(|| own(FindingKind::RenameBeforeSync)) {
                    Some(Some(fix)) => fix,
                    _ => "fsync (or fdatasync) the file before what depends on it: the \
                          rename, the next step, the acknowledgement"
                        .to_string(),
                };
            }
            op if op.is_namespace() => {
                return own(FindingKind::UnsyncedDirectory).unwrap_or_else(|| {
                    "fsync the folder after making, renaming or removing a name in it".into()
                });
            }
            _ => {}
        }
    }
    "make what is printed durable before printing it (sync first, then acknowledge)".into()
}

fn print_groups(
    failing: &[&Checked],
    journal: &Journal,
    names: &HashMap<Ino, String>,
    program: Program,
    run: Option<&str>,
) {
    let mut groups: BTreeMap<String, Vec<&Checked>> = BTreeMap::new();
    for c in failing {
        groups.entry(cause(c, journal, names)).or_default().push(c);
    }
    let name = |ino: Ino| {
        names
            .get(&ino)
            .cloned()
            .unwrap_or_else(|| format!("inode {ino}"))
    };
    for (cause, states) in &groups {
        let first = states[0];
        let at = first
            .state
            .after
            .map_or("before the first change".to_string(), |a| {
                format!("after {}", journal.entries[a].describe(&name))
            });
        eprintln!("  {} state(s): {cause}", states.len());
        eprintln!("    e.g. crash {at}");
        if let Some(line) = first.output.lines().rev().find(|l| !l.trim().is_empty()) {
            eprintln!("    check said: {line}");
        }
        for i in lost_entries(first) {
            let e = &journal.entries[i];
            if !e.stack.is_empty() {
                let who = match e.tid {
                    t if t != e.pid && t != 0 => format!("process {} thread {t}", e.pid),
                    _ => format!("process {}", e.pid),
                };
                eprintln!("    {} by {who} at {}", e.call, e.stack.join(" ← "));
            }
        }
        eprintln!("    fix: {}", fix(first, journal, program));
        if let Some(run) = run {
            eprintln!("    replay: iolab crash replay {run}:{} DIR", first.index);
        }
    }
}

/// What `--json` writes.
struct Report<'a> {
    model: Model,
    checked: &'a [Checked],
    journal: &'a Journal,
    names: &'a HashMap<Ino, String>,
    /// The kept run, for `iolab crash replay`.
    run: Option<&'a str>,
    seconds: f64,
}

fn write_json(path: &Path, report: &Report<'_>) -> Result<()> {
    let Report {
        model,
        checked,
        journal,
        names,
        run,
        seconds,
    } = *report;
    let name = |ino: Ino| {
        names
            .get(&ino)
            .cloned()
            .unwrap_or_else(|| format!("inode {ino}"))
    };
    let describe = |i: &usize| journal.entries[*i].describe(&name);
    let failing: Vec<serde_json::Value> = (checked.iter())
        .filter(|c| !c.passed)
        .map(|c| {
            serde_json::json!({
                "after": c.state.after.map(|a| journal.entries[a].describe(&name)),
                "persisted": c.state.persisted().iter().map(describe).collect::<Vec<_>>(),
                "lost": c.state.lost.iter().map(describe).collect::<Vec<_>>(),
                "torn": c.state.torn.map(|(i, keep)| serde_json::json!({
                    "entry": describe(&i), "kept_bytes": keep })),
                "output": c.output,
                "state": run.map(|r| format!("{r}:{}", c.index)),
                "stacks": (lost_entries(c).iter())
                    .filter(|&&i| !journal.entries[i].stack.is_empty())
                    .map(|i| (describe(i), serde_json::json!(journal.entries[*i].stack)))
                    .collect::<serde_json::Map<_, _>>(),
            })
        })
        .collect();
    let doc = serde_json::json!({
        "model": model.name(),
        "entries": journal.entries.len(),
        "states": checked.len(),
        "failing": failing,
        "seconds": seconds,
    });
    let text = serde_json::to_string_pretty(&doc)? + "\n";
    if path == Path::new("-") {
        print!("{text}");
        return Ok(());
    }
    // A file iolab did not make is never overwritten.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("cannot create {} (it must not exist)", path.display()))?;
    std::io::Write::write_all(&mut file, text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}
