//! `iolab count`'s output as GNU `wc -l` writes it, and its `--files0-from` list.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use iolab::read::many::FileCount;

/// The width of the count column, as GNU `wc` sizes it (`compute_number_width`): 1 for a
/// single file (or when the first file failed); else the digits of the sum of the regular
/// files' sizes, at least 7 when any counted file is not regular (a pipe, a device). Every
/// count then fits, since a file has no more lines than bytes.
pub fn width(results: &[iolab::Result<FileCount>]) -> usize {
    if results.len() <= 1 || results[0].is_err() {
        return 1;
    }
    let counted = results.iter().filter_map(|r| r.as_ref().ok());
    let regular_total: u64 = counted.clone().filter(|c| c.regular).map(|c| c.size).sum();
    let minimum = if counted.clone().any(|c| !c.regular) {
        7
    } else {
        1
    };
    regular_total.to_string().len().max(minimum)
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
