//! `iolab bench [SUITE...]`: the main job.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use iolab_bench::export::terminal;
use iolab_bench::results::Results;
use iolab_bench::run::RunError;
use iolab_bench::runner::ProcessExecutor;
use iolab_bench::{CacheState, Config, DEFAULT_RUNS, DEFAULT_WARMUP, SUITES};

/// The help of the SUITE argument: the names from the suite table.
fn suites_help() -> String {
    format!(
        "Suites to run (default: all of them): {}",
        iolab_bench::suites::names().join(", ")
    )
}

/// Arguments of `iolab bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    // The help lists the suite table's names (suites_help).
    #[arg(value_name = "SUITE", value_parser = parse_suite, help = suites_help())]
    suites: Vec<String>,
    /// Folder for results.json, results.md, results.csv and report.html; none of them may
    /// exist there yet [default: ./iolab-results/<timestamp>].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Folder for the generated data sets [default: $XDG_CACHE_HOME/iolab or ~/.cache/iolab].
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// Size of the main data set, e.g. 1G or 22G [default: 1G; 64M with --quick].
    #[arg(long, value_name = "SIZE", value_parser = parse_size, allow_hyphen_values = true)]
    size: Option<u64>,
    /// Counted runs per row.
    #[arg(long, default_value_t = DEFAULT_RUNS, value_parser = parse_runs, allow_hyphen_values = true)]
    runs: usize,
    /// Warm-up rounds (not counted) per cache state.
    #[arg(long, default_value_t = DEFAULT_WARMUP, value_parser = parse_warmup, allow_hyphen_values = true)]
    warmup: usize,
    /// Cache states to measure.
    #[arg(long, value_delimiter = ',', default_value = "warm,cold", value_parser = parse_cache)]
    cache: Vec<CacheState>,
    /// Also write /proc/sys/vm/drop_caches before cold runs (only as root; never via sudo).
    #[arg(long)]
    drop_caches: bool,
    /// Only these methods (comma-separated names).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    methods: Option<Vec<String>>,
    /// Skip external baselines (wc -l, …).
    #[arg(long)]
    no_baselines: bool,
    /// A smoke run: small data (64 MiB), 2 runs, no warm-up; under 30 seconds.
    #[arg(long)]
    quick: bool,
    /// Measure on this file instead of generated data (repeatable; suites count and edit).
    /// It is only read: count opens it read-only and evicts it with posix_fadvise alone;
    /// edit works on copies in the data folder. Methods verify each other's answers.
    #[arg(long = "file", value_name = "PATH")]
    files: Vec<PathBuf>,
    /// The whole grid: every buffer size of the write sweep, every probe point, and every
    /// row with all its runs (by default a row more than 2× slower than the fastest stops
    /// after one counted run, and the sweep stays near the defaults).
    #[arg(long)]
    sweep: bool,
    /// Print every row of every section, and the notes (by default the terminal shows the
    /// verdict and the sections it was drawn from, shortened; the files have everything).
    #[arg(short, long)]
    verbose: bool,
}

fn parse_suite(s: &str) -> Result<String, String> {
    iolab_bench::suites::named(s)
        .map(|suite| suite.name.to_string())
        .map_err(|e| e.to_string())
}

fn parse_runs(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=1000).contains(&n) => Ok(n),
        _ => Err("expected a number of runs from 1 to 1000".into()),
    }
}

/// The most warm-up rounds: as many as counted runs may be (`--runs`); a larger figure is
/// a typo that would keep the benchmark busy for good.
const MAX_WARMUP: usize = 1000;

fn parse_warmup(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n <= MAX_WARMUP => Ok(n),
        _ => Err(format!(
            "expected a number of warm-up rounds from 0 to {MAX_WARMUP}"
        )),
    }
}

/// The smallest main data set: 1 MiB (below it the rows measure process start-up, and an
/// empty one has no throughput at all).
const MIN_SIZE: u64 = 1 << 20;

fn parse_size(s: &str) -> Result<u64, String> {
    match iolab_lab::units::parse_size(s) {
        Ok(n) if n >= MIN_SIZE => Ok(n),
        Ok(_) => Err(format!(
            "a data set of {s} is too small: at least {}",
            iolab_lab::units::format_bytes(MIN_SIZE)
        )),
        Err(e) => Err(e.to_string()),
    }
}

fn parse_cache(s: &str) -> Result<CacheState, String> {
    match s {
        "warm" => Ok(CacheState::Warm),
        "cold" => Ok(CacheState::Cold),
        _ => Err("expected warm or cold".into()),
    }
}

/// Refuses a results folder that cannot take the results, before any measuring: one
/// that is not a writable folder, or that already holds a file of a results file's name
/// (the user's own `report.html`, or another run's results): iolab never replaces a file
/// it did not make in this run.
fn check_results_folder(dir: &std::path::Path) -> Result<()> {
    let label = dir.display();
    if let Ok(meta) = std::fs::symlink_metadata(dir)
        && !dir.is_dir()
    {
        bail!(
            "{label}: cannot create the results folder: it exists and is {}",
            if meta.file_type().is_symlink() {
                "a symbolic link to no folder"
            } else {
                "not a folder"
            }
        );
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{label}: cannot create the results folder"))?;
    for exporter in iolab_bench::export::all() {
        let path = dir.join(exporter.file_name());
        if std::fs::symlink_metadata(&path).is_ok() {
            bail!(
                "{}: already exists; iolab bench never replaces a file (choose a new --out folder, or move the old results away)",
                path.display()
            );
        }
    }
    // A folder the user may not write (or on a read-only file system) would lose the
    // results after minutes of measuring: try a file of our own now, and remove it.
    let probe = dir.join(format!(".iolab-bench-{}.probe", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .with_context(|| format!("{label}: cannot write the results there"))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Checks that a `--file` is a regular file with a real size (not /proc or /sys) this user
/// can read, without opening anything else (a FIFO is never opened: that would block, or
/// take a writer's data); returns its identity (device, inode).
fn check_user_file(path: &std::path::Path) -> Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).context("cannot read it")?;
    let kind = meta.file_type();
    let what = (!kind.is_file()).then(|| super::what_it_is(&kind));
    if let Some(what) = what {
        bail!("{what}: the bench measures regular files only");
    }
    let input = iolab::Input::open(path).context("cannot open it for reading")?;
    if !input.is_sized() {
        bail!(
            "its size is not its contents' (a /proc or /sys file): the bench measures files on a real file system"
        );
    }
    Ok((meta.dev(), meta.ino()))
}

/// The default data folder: iolab's cache folder.
fn default_data_dir() -> Result<PathBuf> {
    match iolab_lab::profile::cache_dir() {
        Some(dir) => Ok(dir),
        None => bail!("neither XDG_CACHE_HOME nor HOME is set: choose a data folder with --data"),
    }
}

/// The verdict, then the tables: compact (the verdict's sections, shortened), or every row
/// and the notes with `verbose`. Warnings go to stderr.
fn print_results(out: &mut impl Write, results: &Results, verbose: bool) -> io::Result<()> {
    let width = terminal_width();
    for w in &results.warnings {
        for line in terminal::wrap(&format!("iolab: warning: {w}"), width, "", "  ") {
            eprintln!("{line}");
        }
    }
    write!(out, "{}", terminal::render(results, SUITES, width, verbose))
}

/// The width every line printed must fit: `COLUMNS` when set, else the terminal's on
/// standard output, else (a pipe, a file, a CI log) 120.
pub(crate) fn terminal_width() -> usize {
    if let Some(columns) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok())
    {
        return columns;
    }
    // SAFETY: a zeroed winsize is a valid output buffer for TIOCGWINSZ, which only writes
    // it; on a descriptor that is no terminal it fails and leaves it zero.
    let cols = unsafe {
        let mut size: libc::winsize = std::mem::zeroed();
        if libc::ioctl(1, libc::TIOCGWINSZ, &mut size) == 0 {
            size.ws_col as usize
        } else {
            0
        }
    };
    if cols > 0 {
        cols
    } else {
        terminal::DEFAULT_WIDTH
    }
}

/// Runs the benchmark, prints the tables and writes the results files.
pub fn run(mut args: Args) -> Result<i32> {
    // The verdict is printed at the end: refuse before measuring, not after.
    drop(super::stdout()?);
    let suites = iolab_bench::suites::select::select(
        std::mem::take(&mut args.suites),
        args.methods.as_deref(),
        !args.files.is_empty(),
    )
    .map_err(anyhow::Error::msg)?;
    if !args.files.is_empty() {
        let mut seen: Vec<((u64, u64), PathBuf)> = Vec::new();
        let mut files = Vec::new();
        for path in std::mem::take(&mut args.files) {
            let id =
                check_user_file(&path).with_context(|| format!("--file {}", path.display()))?;
            match seen.iter().find(|(other, _)| *other == id) {
                // The same file twice (two names, or the same name): measured once.
                Some((_, first)) => super::report(&format!(
                    "--file {}: the same file as --file {}; measured once",
                    path.display(),
                    first.display()
                )),
                None => {
                    seen.push((id, path.clone()));
                    files.push(path);
                }
            }
        }
        args.files = files;
    }
    let data_dir = match args.data {
        Some(d) => d,
        None => default_data_dir()?,
    };
    let out_dir = args.out.unwrap_or_else(|| {
        PathBuf::from(iolab_results::RESULTS_DIR)
            .join(iolab_lab::sysinfo::now_rfc3339().replace(':', "-"))
    });
    // The results folder is made first: a name that cannot be one fails now, not after
    // minutes of measuring.
    check_results_folder(&out_dir)?;
    let config = Config {
        suites,
        data_dir: data_dir.clone(),
        size: args.size,
        runs: if args.quick {
            args.runs.min(2)
        } else {
            args.runs
        },
        warmup: if args.quick { 0 } else { args.warmup },
        caches: args.cache,
        drop_caches: args.drop_caches,
        methods: args.methods,
        baselines: !args.no_baselines,
        iolab_exe: std::env::current_exe().context("cannot find the iolab executable")?,
        progress: true,
        quick: args.quick,
        sweep: args.sweep,
        files: args.files,
    };
    let command: Vec<String> = std::env::args().collect();
    // The files are written after every suite, so a failure later loses nothing.
    let mut write = |results: &iolab_bench::results::Results| {
        iolab_bench::export::write_all(results, SUITES, &out_dir).map(drop)
    };
    let results = match iolab_bench::run(&config, &mut ProcessExecutor, command, &mut write) {
        Ok(results) => results,
        Err(RunError::Write(e)) => return Err(e).with_context(|| out_dir.display().to_string()),
        Err(RunError::Data(e)) => return Err(e).with_context(|| data_dir.display().to_string()),
    };
    let written = iolab_bench::export::write_all(&results, SUITES, &out_dir)
        .with_context(|| format!("{}", out_dir.display()))?;
    let mut out = super::stdout()?;
    print_results(&mut out, &results, args.verbose).context("cannot write to stdout")?;
    let names: Vec<String> = written
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    let line = format!("results in {}: {}", out_dir.display(), names.join(", "));
    for line in terminal::wrap(&line, terminal_width(), "", "  ") {
        writeln!(out, "{line}").context("cannot write to stdout")?;
    }
    out.flush().context("cannot write to stdout")?;
    for failed in &results.errors {
        // An error is one line, as every error of iolab's (the terminal folds it).
        super::report(&format!("suite {} FAILED: {}", failed.suite, failed.error));
    }
    if results.partial && results.errors.is_empty() {
        super::report("interrupted: the results written are partial");
        return Ok(130);
    }
    if !results.errors.is_empty() {
        // One line per failed suite (above); the other suites' rows are in the files.
        return Ok(1);
    }
    if results.has_failures() {
        super::report("some methods FAILED or printed a wrong result: see the tables above");
        return Ok(1);
    }
    Ok(0)
}
