//! `iolab count`'s output as GNU `wc -l` writes it, and its `--files0-from` list.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use iolab::read::many::FileCount;

/// The width of the count column, as GNU `wc` sizes it (`compute_number_width`): 1 for a
/// single file (or when the first file could not be opened); else the digits of the sum
/// of the regular files' sizes, at least 7 when any file that was there is not regular (a
/// pipe, a device, a directory, whose count fails). Every count then fits, since a file has
/// no more lines than bytes.
pub fn width(results: &[iolab::Result<FileCount>]) -> usize {
    let there = |r: &iolab::Result<FileCount>| matches!(r, Ok(_) | Err(iolab::Error::IsDirectory));
    if results.len() <= 1 || !there(&results[0]) {
        return 1;
    }
    let counted = results.iter().filter_map(|r| r.as_ref().ok());
    let regular_total: u64 = counted.clone().filter(|c| c.regular).map(|c| c.size).sum();
    let other = results.iter().any(|r| {
        matches!(
            r,
            Ok(FileCount { regular: false, .. }) | Err(iolab::Error::IsDirectory)
        )
    });
    let minimum = if other { 7 } else { 1 };
    regular_total.to_string().len().max(minimum)
}

/// Writes one line of counts: the count right-aligned in `width`, a space, and the name's
/// own bytes, as `wc` prints them (not a lossy UTF-8 copy).
pub fn row(out: &mut impl Write, width: usize, lines: u64, path: &Path) -> std::io::Result<()> {
    write!(out, "{lines:>width$} ")?;
    out.write_all(path.as_os_str().as_bytes())?;
    out.write_all(b"\n")
}

/// The names in a `--files0-from` list (`-`: standard input), NUL-separated, and one
/// error line for each name that cannot be used (empty, or `-` in a list read from
/// standard input), worded as GNU `wc` words them.
pub fn read_files0(list: &Path) -> Result<(Vec<PathBuf>, Vec<String>)> {
    let from_stdin = list.as_os_str() == "-";
    let mut bytes = Vec::new();
    if from_stdin {
        std::io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .context("cannot read the file list from standard input")?;
    } else {
        bytes = std::fs::read(list)
            .with_context(|| format!("cannot read the file list {}", list.display()))?;
    }
    if bytes.last() == Some(&0) {
        bytes.pop();
    }
    let mut names = Vec::new();
    let mut bad = Vec::new();
    if bytes.is_empty() {
        return Ok((names, bad));
    }
    for (i, name) in bytes.split(|&b| b == 0).enumerate() {
        let at = format!("{}:{}", list.display(), i + 1);
        if name.is_empty() {
            bad.push(format!("{at}: invalid zero-length file name"));
        } else if from_stdin && name == b"-" {
            bad.push(format!(
                "{at}: when reading file names from standard input, no file name of '-' allowed"
            ));
        } else {
            names.push(PathBuf::from(OsString::from_vec(name.to_vec())));
        }
    }
    Ok((names, bad))
}
