//! The benchmark's data sets: generated once into the data folder, reused while intact.
//!
//! Each data file `NAME` has a manifest `NAME.manifest.json` written *after* the file is
//! complete (the file itself is put in place atomically by
//! [`iolab_lab::generate::write_file_atomically`]). A data set is reused only when its
//! manifest matches the requested spec and the file still has the recorded size and
//! modification time; anything else (a missing manifest, a file edited or truncated since,
//! a run killed mid-way that left only a temporary file) makes it be generated again. The
//! known line count in the manifest is what every benchmark run is verified against.
//!
//! Three kinds: [`lines`] (text, for the `count` suite), [`csv`] (numeric CSV, for the
//! `edit` suite) and [`blocks`] (offset-derived bytes, for the `random` suite).

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::interrupt;
use crate::error::{Error, Result};
use iolab_lab::generate::{self, AtomicOptions, CsvSpec, LinesSpec, write_file_atomically};

/// A generated file and what is known about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dataset {
    /// Where it is.
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// Its number of `\n` bytes.
    pub lines: u64,
}

/// What the manifest records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Manifest {
    /// `lines-v1`: the generator and format version, bumped if the generator's output changes.
    kind: String,
    size: u64,
    mean_line_len: u64,
    seed: u64,
    lines: u64,
    /// The file's modification time when the manifest was written, in nanoseconds.
    mtime_ns: i128,
}

const LINES_KIND: &str = "lines-v1";

/// The text-lines data set of `size` bytes in `dir`: reused when intact, else generated
/// (with a free-space check; Ctrl-C during generation leaves no file that could pass as
/// valid).
pub fn lines(dir: &Path, size: u64, show_progress: bool) -> Result<Dataset> {
    let spec = LinesSpec {
        size,
        ..LinesSpec::default()
    };
    let path = dir.join(format!(
        "lines-{size}-m{}-s{:x}.txt",
        spec.mean_line_len, spec.seed
    ));
    let manifest_path = manifest_path(&path);
    if let Some(found) = read_manifest(&manifest_path)
        && found.kind == LINES_KIND
        && found.size == size
        && found.mean_line_len == spec.mean_line_len
        && found.seed == spec.seed
        && mtime_ns(&path).is_some_and(|m| m == found.mtime_ns)
        && fs::metadata(&path).is_ok_and(|m| m.len() == size)
    {
        return Ok(Dataset {
            path,
            bytes: size,
            lines: found.lines,
        });
    }
    // Whatever is there is not a complete data set of this spec: regenerate it, if it is ours.
    claim(dir, &path, &manifest_path)?;
    let progress = super::progress::Progress::new("generating", size, show_progress);
    let options = AtomicOptions::new().expected_size(size).overwrite(true);
    let summary = write_file_atomically(&path, &options, |out| {
        let mut guarded = Guarded {
            inner: out,
            progress: &progress,
        };
        generate::write_lines(&mut guarded, &spec)
    })
    .map_err(|e| Error::Generate {
        path: path.clone(),
        source: e,
    })?;
    progress.finish();
    let manifest = Manifest {
        kind: LINES_KIND.into(),
        size,
        mean_line_len: spec.mean_line_len,
        seed: spec.seed,
        lines: summary.lines,
        mtime_ns: mtime_ns(&path).unwrap_or_default(),
    };
    write_manifest(&manifest_path, &manifest)?;
    Ok(Dataset {
        path,
        bytes: summary.bytes,
        lines: summary.lines,
    })
}

/// What a CSV data set's manifest records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct CsvManifest {
    /// `csv-v1`: the generator and format version, bumped if the generator's output changes.
    kind: String,
    rows: u64,
    cols: u32,
    seed: u64,
    /// The file's size (not known before it is generated: fields vary in length).
    bytes: u64,
    lines: u64,
    /// The file's modification time when the manifest was written, in nanoseconds.
    mtime_ns: i128,
}

const CSV_KIND: &str = "csv-v1";

/// The numeric CSV data set of `rows` × `cols` (see [`iolab_lab::generate::csv`]) in `dir`:
/// reused when intact, else generated, exactly as [`lines`] does.
pub fn csv(dir: &Path, rows: u64, cols: u32, show_progress: bool) -> Result<Dataset> {
    let spec = CsvSpec {
        rows,
        cols,
        ..CsvSpec::default()
    };
    let path = dir.join(format!("csv-{rows}x{cols}-s{:x}.csv", spec.seed));
    let manifest_path = manifest_path(&path);
    if let Some(found) = read_csv_manifest(&manifest_path)
        && found.kind == CSV_KIND
        && found.rows == rows
        && found.cols == cols
        && found.seed == spec.seed
        && mtime_ns(&path).is_some_and(|m| m == found.mtime_ns)
        && fs::metadata(&path).is_ok_and(|m| m.len() == found.bytes)
    {
        return Ok(Dataset {
            path,
            bytes: found.bytes,
            lines: found.lines,
        });
    }
    // Whatever is there is not a complete data set of this spec: regenerate it, if it is ours.
    claim(dir, &path, &manifest_path)?;
    let generate_error = |e| Error::Generate {
        path: path.clone(),
        source: e,
    };
    spec.validate().map_err(generate_error)?;
    let expected = spec.estimated_size();
    let progress = super::progress::Progress::new("generating", expected, show_progress);
    // The estimate is within 1% once there are a few thousand fields; the margin covers
    // smaller files too.
    let options = AtomicOptions::new()
        .expected_size(expected + expected / 50)
        .overwrite(true);
    let summary = write_file_atomically(&path, &options, |out| {
        let mut guarded = Guarded {
            inner: out,
            progress: &progress,
        };
        generate::write_csv(&mut guarded, &spec)
    })
    .map_err(generate_error)?;
    progress.finish();
    let manifest = CsvManifest {
        kind: CSV_KIND.into(),
        rows,
        cols,
        seed: spec.seed,
        bytes: summary.bytes,
        lines: summary.lines,
        mtime_ns: mtime_ns(&path).unwrap_or_default(),
    };
    write_manifest(&manifest_path, &manifest)?;
    Ok(Dataset {
        path,
        bytes: summary.bytes,
        lines: summary.lines,
    })
}

const BLOCKS_KIND: &str = "blocks-v1";

/// The offset-derived data set of `size` bytes in `dir` (see [`iolab_lab::generate::blocks`]),
/// for the `random` suite: reused when intact, else generated, exactly as [`lines`] does.
/// Its manifest is the lines manifest with no line length, seed or lines.
pub fn blocks(dir: &Path, size: u64, show_progress: bool) -> Result<Dataset> {
    let path = dir.join(format!("blocks-{size}.bin"));
    let manifest_path = manifest_path(&path);
    if let Some(found) = read_manifest(&manifest_path)
        && found.kind == BLOCKS_KIND
        && found.size == size
        && mtime_ns(&path).is_some_and(|m| m == found.mtime_ns)
        && fs::metadata(&path).is_ok_and(|m| m.len() == size)
    {
        return Ok(Dataset {
            path,
            bytes: size,
            lines: 0,
        });
    }
    claim(dir, &path, &manifest_path)?;
    let progress = super::progress::Progress::new("generating", size, show_progress);
    let options = AtomicOptions::new().expected_size(size).overwrite(true);
    write_file_atomically(&path, &options, |out| {
        let mut guarded = Guarded {
            inner: out,
            progress: &progress,
        };
        generate::blocks::write_blocks(&mut guarded, size)
    })
    .map_err(|e| Error::Generate {
        path: path.clone(),
        source: e,
    })?;
    progress.finish();
    let manifest = Manifest {
        kind: BLOCKS_KIND.into(),
        size,
        mean_line_len: 0,
        seed: 0,
        lines: 0,
        mtime_ns: mtime_ns(&path).unwrap_or_default(),
    };
    write_manifest(&manifest_path, &manifest)?;
    Ok(Dataset {
        path,
        bytes: size,
        lines: 0,
    })
}

/// Many copies of one small text data set, in a folder of their own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManyFiles {
    /// The files, in order.
    pub paths: Vec<PathBuf>,
    /// Their bytes, all together.
    pub bytes: u64,
    /// Their `\n` bytes, all together.
    pub lines: u64,
}

/// What the many-files manifest records: the source's line count and every copy's
/// modification time, so a copy changed since is noticed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct ManyManifest {
    kind: String,
    files: usize,
    size: u64,
    lines_each: u64,
    mtimes_ns: Vec<i128>,
}

const MANY_KIND: &str = "many-lines-v1";

/// `files` copies of the [`lines`] data set of `size` bytes, in the folder
/// `many-FILESxSIZE` of `dir` (manifest beside it): reused while every copy has its
/// recorded size and modification time, else made again (if the folder is ours).
pub fn many_lines(dir: &Path, files: usize, size: u64, show_progress: bool) -> Result<ManyFiles> {
    let source = lines(dir, size, false)?;
    let folder = dir.join(format!("many-{files}x{size}"));
    let manifest_path = manifest_path(&folder);
    let paths: Vec<PathBuf> = (0..files)
        .map(|i| folder.join(format!("{i:05}.txt")))
        .collect();
    let found = || -> Option<ManyFiles> {
        let m: ManyManifest = serde_json::from_slice(&fs::read(&manifest_path).ok()?).ok()?;
        let intact = m.kind == MANY_KIND
            && m.files == files
            && m.size == size
            && m.mtimes_ns.len() == files
            && paths.iter().zip(&m.mtimes_ns).all(|(p, &t)| {
                mtime_ns(p) == Some(t) && fs::metadata(p).is_ok_and(|md| md.len() == size)
            });
        intact.then(|| ManyFiles {
            paths: paths.clone(),
            bytes: size * files as u64,
            lines: m.lines_each * files as u64,
        })
    };
    if let Some(set) = found() {
        return Ok(set);
    }
    claim(dir, &folder, &manifest_path)?;
    fs::create_dir_all(&folder).map_err(|e| Error::io("cannot create the data folder", e))?;
    let progress = super::progress::Progress::new("generating", files as u64, show_progress);
    let mut mtimes_ns = Vec::with_capacity(files);
    for path in &paths {
        if interrupt::interrupted() {
            return Err(Error::io(
                "cannot copy the many-files data set",
                io::Error::other("interrupted by Ctrl-C"),
            ));
        }
        // Inside our own folder: any file there is a copy of ours.
        let _ = fs::remove_file(path);
        fs::copy(&source.path, path)
            .map_err(|e| Error::io("cannot copy the many-files data set", e))?;
        mtimes_ns.push(mtime_ns(path).unwrap_or_default());
        progress.inc();
    }
    progress.finish();
    let manifest = ManyManifest {
        kind: MANY_KIND.into(),
        files,
        size,
        lines_each: source.lines,
        mtimes_ns,
    };
    write_manifest(&manifest_path, &manifest)?;
    Ok(ManyFiles {
        paths,
        bytes: size * files as u64,
        lines: source.lines * files as u64,
    })
}

fn read_csv_manifest(path: &Path) -> Option<CsvManifest> {
    serde_json::from_slice(&fs::read(path).ok()?).ok()
}

/// Makes sure iolab may (re)write `path`: it must not exist, or have a manifest (ours).
/// Then marks it as being generated with a pending manifest, which never matches a spec,
/// so a run killed during generation leaves a name iolab still owns and regenerates.
fn claim(dir: &Path, path: &Path, manifest_path: &Path) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| Error::io("cannot create the data folder", e))?;
    if fs::symlink_metadata(path).is_ok() && fs::symlink_metadata(manifest_path).is_err() {
        return Err(Error::NotOurs {
            path: path.to_path_buf(),
        });
    }
    write_manifest(manifest_path, &serde_json::json!({ "kind": "pending" }))
}

fn manifest_path(data: &Path) -> PathBuf {
    let mut name = data.file_name().unwrap_or_default().to_os_string();
    name.push(".manifest.json");
    data.with_file_name(name)
}

fn read_manifest(path: &Path) -> Option<Manifest> {
    serde_json::from_slice(&fs::read(path).ok()?).ok()
}

fn write_manifest(path: &Path, manifest: &impl Serialize) -> Result<()> {
    let text = serde_json::to_vec_pretty(manifest).expect("a manifest serializes");
    write_file_atomically(path, &AtomicOptions::new().overwrite(true), |w| {
        w.write_all(&text)
            .map_err(|e| iolab::Error::io("cannot write", e).into())
    })
    .map_err(|e| Error::Generate {
        path: path.to_path_buf(),
        source: e,
    })
}

fn mtime_ns(path: &Path) -> Option<i128> {
    let m = fs::metadata(path).ok()?;
    Some(i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()))
}

/// A writer that stops with an error on Ctrl-C (so the temporary file is removed) and
/// advances the progress bar.
struct Guarded<'a> {
    inner: &'a mut dyn Write,
    progress: &'a super::progress::Progress,
}

impl Write for Guarded<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if interrupt::interrupted() {
            return Err(io::Error::other("interrupted by Ctrl-C"));
        }
        let n = self.inner.write(buf)?;
        self.progress.inc_by(n as u64);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
