//! `iolab report RESULTS --html FILE`: the self-contained HTML report of a run.
//!
//! The outputs are new files, except the run's own `report.html` (the default output, which
//! `iolab bench` wrote): a file named with `--html` or `--count-svg` that exists is
//! replaced only with `--force`, and never
//! when it is one of the run's own files (`results.json`, `results.md`, `results.csv`), a
//! directory, or a symbolic link (renaming over a link would replace the link, writing
//! through it would change a file the user did not name). Each output is written to a
//! temporary file beside it and renamed into place ([`iolab_lab::generate::atomic`]), so a
//! failure leaves the old file, or nothing, never half a report.

use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use iolab_bench::report;
use iolab_bench::results::Results;
use iolab_lab::generate::{AtomicOptions, GenerateError, write_file_atomically};

/// Arguments of `iolab report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A results folder or its results.json.
    #[arg(value_name = "RESULTS")]
    results: PathBuf,
    /// Where to write the report [default: report.html beside the results, which the
    /// bench wrote and which is replaced]. A FILE given here must not exist unless --force
    /// is given.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Also write the count suite's chart alone as an SVG file (as in docs/findings/count.md). Must not
    /// exist unless --force is given.
    #[arg(long, value_name = "FILE")]
    count_svg: Option<PathBuf>,
    /// Replace output files that already exist (regular files only; never the run's own
    /// results.json, results.md or results.csv).
    #[arg(short, long)]
    force: bool,
}

/// Writes the report and says where.
pub fn run(args: Args) -> Result<i32> {
    let results = load(&args.results)?;
    let html_path = args.html.clone().unwrap_or_else(|| {
        report::results_file(&args.results)
            .parent()
            .map(PathBuf::from)
            .unwrap_or_default()
            .join("report.html")
    });
    // Everything is checked and rendered before anything is written, so a refusal or a
    // missing chart leaves no file behind.
    let inputs = run_files(&args.results);
    // The run's own report.html is iolab's to rewrite; a file the user names is theirs.
    let html_force = args.force || args.html.is_none();
    check_output(&html_path, html_force, &inputs)?;
    let html = iolab_bench::export::html::render(&results, iolab_bench::SUITES);
    let svg = match &args.count_svg {
        Some(path) => {
            check_output(path, args.force, &inputs)?;
            if same_file(path, &html_path) {
                bail!(
                    "{}: given as both --html and --count-svg; choose two files",
                    path.display()
                );
            }
            let chart =
                iolab_bench::suites::count::chart::standalone_svg(&results).with_context(|| {
                    format!(
                        "{}: the results have no count rows to chart",
                        report::results_file(&args.results).display()
                    )
                })?;
            Some((path, chart))
        }
        None => None,
    };
    write_output(&html_path, html.as_bytes(), html_force)?;
    super::report(&format!("report written to {}", html_path.display()));
    if let Some((path, chart)) = svg {
        write_output(path, chart.as_bytes(), args.force)?;
        super::report(&format!("count chart written to {}", path.display()));
    }
    Ok(0)
}

/// Loads the results of a folder or `results.json`; the error is one line naming the file.
pub(super) fn load(path: &Path) -> Result<Results> {
    report::load(path).map_err(|e| match e {
        // Names the file already.
        e @ iolab_bench::error::Error::InvalidResults { .. } => anyhow!(e),
        e => anyhow!(e).context(report::results_file(path).display().to_string()),
    })
}

/// The run's own files that exist (the `results.json` read and its sibling formats), as
/// (device, inode): an output must not be one of them, under any name.
fn run_files(results: &Path) -> Vec<(u64, u64)> {
    let json = report::results_file(results);
    let dir = json.parent().unwrap_or(Path::new(""));
    std::iter::once(json.clone())
        .chain(report::RUN_FILES.iter().map(|name| dir.join(name)))
        .filter_map(|path| fs::metadata(path).ok())
        .map(|meta| (meta.dev(), meta.ino()))
        .collect()
}

/// Refuses an output path that is one of `inputs` (even with `force`), a directory, or an
/// existing file or link without `force`.
fn check_output(path: &Path, force: bool, inputs: &[(u64, u64)]) -> Result<()> {
    let label = path.display();
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(anyhow!(e).context(format!("{label}: cannot inspect"))),
    };
    // Through a link too: the file the name resolves to.
    if let Ok(target) = fs::metadata(path)
        && inputs.contains(&(target.dev(), target.ino()))
    {
        bail!(
            "{label}: is one of the run's own results files; iolab report never replaces it, not even with --force (choose another output file)"
        );
    }
    if meta.is_dir() {
        bail!("{label}: is a directory (give a file name)");
    }
    if !force {
        bail!("{label}: already exists (use --force to replace it)");
    }
    if meta.file_type().is_symlink() {
        bail!(
            "{label}: is a symbolic link; iolab replaces only regular files, even with --force (remove the link or give the file itself)"
        );
    }
    Ok(())
}

/// Whether `a` and `b` name the same file: the same existing file, or the same name in the
/// same folder however spelt.
fn same_file(a: &Path, b: &Path) -> bool {
    if let (Ok(ma), Ok(mb)) = (fs::metadata(a), fs::metadata(b)) {
        return (ma.dev(), ma.ino()) == (mb.dev(), mb.ino());
    }
    // The folder as the system resolves it, and the name in it.
    let place = |p: &Path| {
        let dir = match p.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        fs::canonicalize(dir)
            .ok()
            .zip(p.file_name().map(ToOwned::to_owned))
    };
    a == b || place(a).is_some_and(|place_a| Some(place_a) == place(b))
}

/// Writes `contents` to `path` through a temporary file and a rename; without `force` the
/// rename refuses, atomically, to replace a file that appeared since the check.
fn write_output(path: &Path, contents: &[u8], force: bool) -> Result<()> {
    let options = AtomicOptions::new()
        .expected_size(contents.len() as u64)
        .overwrite(force);
    write_file_atomically(path, &options, |out| {
        out.write_all(contents)
            .map_err(|e| iolab::Error::io("cannot write", e).into())
    })
    .map_err(|e| match e {
        GenerateError::File(iolab::Error::Exists) => {
            anyhow!(
                "{}: already exists (use --force to replace it)",
                path.display()
            )
        }
        e => anyhow!("{}: {e}", path.display()),
    })
}
