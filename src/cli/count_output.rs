//! `iolab count`'s output as GNU `wc -l` writes it, and its `--files0-from` list.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use iolab_lab::read::many::FileCount;

/// The width of the count column, as GNU `wc` sizes it (`get_input_fstatus` and
/// `compute_number_width`): 1 for at most one operand, or for a list of names streamed from
/// a pipe (`streamed`); else the digits of the sum of the regular files' sizes, at least 7
/// when any operand that exists is not a regular file (a pipe, a device, a directory).
/// Like `wc`, a file that exists but cannot be read still counts by its `stat`, and one
/// that does not exist (or an invalid name in a list, of which there are `invalid`) adds
/// nothing. Every count then fits, since a file has no more lines than bytes.
pub fn width(
    operands: &[PathBuf],
    results: &[iolab::Result<FileCount>],
    invalid: usize,
    streamed: bool,
) -> usize {
    if streamed || operands.len() + invalid <= 1 {
        return 1;
    }
    let mut regular_total = 0u64;
    let mut minimum = 1;
    for (path, result) in operands.iter().zip(results) {
        let (regular, size) = match result {
            Ok(c) => (c.regular, c.size),
            Err(iolab::Error::IsDirectory) => (false, 0),
            // Not counted: `wc` still sizes it by `stat` (unreadable, yet there).
            Err(_) => match stat(path) {
                Some(found) => found,
                None => continue,
            },
        };
        if regular {
            regular_total += size;
        } else {
            minimum = 7;
        }
    }
    regular_total.to_string().len().max(minimum)
}

/// Whether `path` (`-`: standard input) is a regular file, and its size, if it can be
/// `stat`ed.
fn stat(path: &Path) -> Option<(bool, u64)> {
    let meta = if path.as_os_str() == "-" {
        // A duplicate of descriptor 0, closed again when dropped.
        let stdin = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
        std::fs::File::from(stdin).metadata().ok()?
    } else {
        std::fs::metadata(path).ok()?
    };
    Some((meta.is_file(), meta.len()))
}

/// Writes one line of counts: the count right-aligned in `width`, then, unless the input
/// is standard input given as no operand at all, a space and the name: its own bytes, as
/// `wc` prints them (not a lossy UTF-8 copy), shell-quoted if it holds a newline.
pub fn row(
    out: &mut impl Write,
    width: usize,
    lines: u64,
    path: Option<&Path>,
) -> std::io::Result<()> {
    write!(out, "{lines:>width$}")?;
    if let Some(path) = path {
        let name = path.as_os_str().as_bytes();
        out.write_all(b" ")?;
        if name.contains(&b'\n') {
            out.write_all(&shell_quoted(name))?;
        } else {
            out.write_all(name)?;
        }
    }
    out.write_all(b"\n")
}

/// `path` for a one-line message: shell-quoted when it holds a control character (a
/// newline would split the line), as `wc` quotes names in its messages.
pub fn shown(path: &Path) -> String {
    let name = path.as_os_str().as_bytes();
    if name.iter().any(|&b| is_control(b)) {
        String::from_utf8_lossy(&shell_quoted(name)).into_owned()
    } else {
        path.display().to_string()
    }
}

fn is_control(b: u8) -> bool {
    b < 0x20 || b == 0x7f
}

/// `name` in the quoting GNU tools use for a name with a newline (`shell-escape-always`):
/// runs of ordinary bytes in single quotes, a quote as `'\''`, and runs of control bytes
/// as `$'…'` with C escapes: `a\nb` becomes `'a'$'\n''b'`. (GNU's quoting also opens
/// with an empty `''` in some mixes of quotes and tabs; such names may print differently.)
pub fn shell_quoted(name: &[u8]) -> Vec<u8> {
    let mut out = vec![b'\''];
    let mut quoted = true;
    let mut i = 0;
    while i < name.len() {
        let b = name[i];
        if is_control(b) {
            if quoted {
                out.push(b'\'');
                quoted = false;
            }
            out.extend_from_slice(b"$'");
            while let Some(&c) = name.get(i).filter(|&&c| is_control(c)) {
                match c {
                    0x07 => out.extend_from_slice(b"\\a"),
                    0x08 => out.extend_from_slice(b"\\b"),
                    b'\t' => out.extend_from_slice(b"\\t"),
                    b'\n' => out.extend_from_slice(b"\\n"),
                    0x0b => out.extend_from_slice(b"\\v"),
                    0x0c => out.extend_from_slice(b"\\f"),
                    b'\r' => out.extend_from_slice(b"\\r"),
                    _ => out.extend_from_slice(format!("\\{c:03o}").as_bytes()),
                }
                i += 1;
            }
            out.push(b'\'');
            continue;
        }
        if !quoted {
            out.push(b'\'');
            quoted = true;
        }
        if b == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(b);
        }
        i += 1;
    }
    if quoted {
        out.push(b'\'');
    }
    out
}

/// A `--files0-from` list, read.
pub struct Files0 {
    /// The usable names, in order.
    pub names: Vec<PathBuf>,
    /// One error line for each name that cannot be used (empty, or `-` in a list read
    /// from standard input), worded as GNU `wc` words them.
    pub invalid: Vec<String>,
    /// Whether the list came from something other than a regular file of at most
    /// [`FILES0_IN_MEMORY`] bytes: GNU `wc` then streams the names and does not size the
    /// count column from the files (width 1).
    pub streamed: bool,
}

/// The largest list GNU `wc` reads whole before counting (10 MiB): a bigger one, or one
/// from a pipe, is streamed.
pub const FILES0_IN_MEMORY: u64 = 10 << 20;

/// The names in a `--files0-from` list (`-`: standard input), NUL-separated.
pub fn read_files0(list: &Path) -> Result<Files0> {
    let from_stdin = list.as_os_str() == "-";
    let mut bytes = Vec::new();
    if from_stdin {
        if super::closed_at_start(0) {
            anyhow::bail!(
                "cannot read the file list from standard input: file descriptor 0 is closed"
            );
        }
        std::io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .context("cannot read the file list from standard input")?;
    } else {
        bytes = std::fs::read(list)
            .with_context(|| format!("cannot read the file list {}", list.display()))?;
    }
    let in_memory = stat(list).is_some_and(|(regular, size)| regular && size <= FILES0_IN_MEMORY);
    if bytes.last() == Some(&0) {
        bytes.pop();
    }
    let mut names = Vec::new();
    let mut bad = Vec::new();
    if bytes.is_empty() {
        return Ok(Files0 {
            names,
            invalid: bad,
            streamed: !in_memory,
        });
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
    Ok(Files0 {
        names,
        invalid: bad,
        streamed: !in_memory,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_control_bytes_are_quoted_as_gnu_wc_quotes_them() {
        // Each expected form printed by GNU wc 9.1 (`wc -l NAME`).
        for (name, want) in [
            (&b"n\nl"[..], &b"'n'$'\\n''l'"[..]),
            (b"\nx", b"''$'\\n''x'"),
            (b"x\n", b"'x'$'\\n'"),
            (b"a\n\nb", b"'a'$'\\n\\n''b'"),
            (b"it's\nx", b"'it'\\''s'$'\\n''x'"),
            (b"a\tb\nc", b"'a'$'\\t''b'$'\\n''c'"),
            (b"\x01z\n", b"''$'\\001''z'$'\\n'"),
            (b"a b\nc", b"'a b'$'\\n''c'"),
        ] {
            assert_eq!(
                String::from_utf8_lossy(&shell_quoted(name)),
                String::from_utf8_lossy(want)
            );
        }
    }

    #[test]
    fn a_row_quotes_a_name_only_when_it_holds_a_newline() {
        let mut out = Vec::new();
        row(&mut out, 3, 7, Some(Path::new("a\tb"))).unwrap();
        row(&mut out, 3, 8, Some(Path::new("a\nb"))).unwrap();
        row(&mut out, 3, 9, None).unwrap();
        assert_eq!(out, b"  7 a\tb\n  8 'a'$'\\n''b'\n  9\n");
    }
}
