//! A folder of many small text files shaped like a source tree, for counting many files
//! (`iolab gen tree --files N`).
//!
//! Files go [`FILES_PER_DIR`] to a folder, folders [`DIRS_PER_DIR`] to a parent
//! (`d000/d007/f00042.txt`), and their sizes are log-uniform from [`MIN_FILE`] to
//! [`MAX_FILE`] (mean about 3.1 KiB, as in a source tree: many small files, a few large),
//! each file's content being [`write_lines`] text with its own seed. The same seed gives
//! the same tree.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::rng::WyRand;
use super::{Error, GenerateError, LinesSpec, Result, Summary, write_lines};

/// Files per folder: 100.
pub const FILES_PER_DIR: usize = 100;
/// Folders per parent folder: 100.
pub const DIRS_PER_DIR: usize = 100;
/// The smallest file: 100 bytes.
pub const MIN_FILE: u64 = 100;
/// The largest file: 16 KiB.
pub const MAX_FILE: u64 = 16 << 10;
/// Mean line length of the files: 40 bytes, source-code-like.
pub const MEAN_LINE_LEN: u64 = 40;

/// The most files a tree can hold: its folder layout (`d999/d099/…`) names no more.
pub const MAX_FILES: usize = 1000 * DIRS_PER_DIR * FILES_PER_DIR;

/// The space a file of the tree takes on average on a file system of 4 KiB blocks: its
/// sizes are log-uniform from 100 B to 16 KiB, so it fills 1.47 blocks on average; 6 KiB.
pub const SPACE_PER_FILE: u64 = 6 << 10;

/// What a tree holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tree {
    /// How many files, named `file_path(root, 0..files)`.
    pub files: usize,
    /// Bytes and lines of all files together.
    pub summary: Summary,
}

/// The path of file `i` under `root`.
pub fn file_path(root: &Path, i: usize) -> PathBuf {
    let dir = i / FILES_PER_DIR;
    root.join(format!("d{:03}", dir / DIRS_PER_DIR))
        .join(format!("d{:03}", dir % DIRS_PER_DIR))
        .join(format!("f{i:06}.txt"))
}

/// The size of file `i`: log-uniform in [`MIN_FILE`]..=[`MAX_FILE`].
fn file_size(rng: &mut WyRand) -> u64 {
    let unit = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let (lo, hi) = ((MIN_FILE as f64).ln(), (MAX_FILE as f64).ln());
    ((lo + unit * (hi - lo)).exp() as u64).clamp(MIN_FILE, MAX_FILE)
}

/// Writes `files` files (at least one) under `root` (created; it must not hold files of
/// the same names unless `force`).
///
/// A failed file operation names the file or folder it happened to
/// ([`GenerateError::path`]): the caller knows only `root`.
///
/// Before anything is made, the count is checked against [`MAX_FILES`] and the file
/// system's free space and inodes against what the tree needs ([`SPACE_PER_FILE`] a
/// file): a count that cannot fit is one error, not a disk filled to the brim.
pub fn write_tree(root: &Path, files: usize, seed: u64, force: bool) -> Result<Tree> {
    if files == 0 {
        return Err(GenerateError::InvalidSpec(
            "a tree needs at least 1 file".to_string(),
        ));
    }
    if files > MAX_FILES {
        return Err(GenerateError::InvalidSpec(format!(
            "a tree holds at most {MAX_FILES} files (its folder layout names no more); {files} asked"
        )));
    }
    check_room(root, files)?;
    let mut rng = WyRand::new(seed);
    let mut total = Summary { bytes: 0, lines: 0 };
    for i in 0..files {
        let path = file_path(root, i);
        if i % FILES_PER_DIR == 0 {
            let dir = path.parent().unwrap_or(root);
            fs::create_dir_all(dir).map_err(|e| Error::io("cannot create a folder", e).at(dir))?;
        }
        let spec = LinesSpec {
            size: file_size(&mut rng),
            mean_line_len: MEAN_LINE_LEN,
            seed: rng.next_u64(),
        };
        let s = write_file(&path, &spec, force).map_err(|e| e.at(&path))?;
        total.bytes += s.bytes;
        total.lines += s.lines;
    }
    Ok(Tree {
        files,
        summary: total,
    })
}

/// Checks that the file system `root` is (or will be) on has room for `files` files and
/// their folders, looking at `root`'s nearest existing ancestor.
fn check_room(root: &Path, files: usize) -> Result<()> {
    let existing = root
        .ancestors()
        .find(|p| p.as_os_str().is_empty() || p.is_dir())
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .unwrap_or(Path::new("."));
    let dir = fs::File::open(existing).map_err(|e| Error::io("cannot open", e).at(existing))?;
    let (bytes, inodes) = crate::atomic::free_space(&dir)?;
    let need = files as u64 * SPACE_PER_FILE;
    if need > bytes {
        return Err(GenerateError::NotEnoughSpace {
            dir: existing.to_path_buf(),
            need,
            have: bytes,
        });
    }
    // A file system without an inode limit (btrfs, tmpfs with nr_inodes=0) reports 0.
    let need_inodes = files as u64 + files.div_ceil(FILES_PER_DIR) as u64 + 1;
    if inodes != 0 && need_inodes > inodes {
        return Err(GenerateError::NotEnoughInodes {
            dir: existing.to_path_buf(),
            need: need_inodes,
            have: inodes,
        });
    }
    Ok(())
}

/// Writes one file of the tree: a new one, or over an existing one when `force`.
fn write_file(path: &Path, spec: &LinesSpec, force: bool) -> Result<Summary> {
    let mut options = fs::OpenOptions::new();
    options.write(true);
    if force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    let mut file = options.open(path).map_err(|e| match e.kind() {
        io::ErrorKind::AlreadyExists => Error::Exists,
        _ => Error::io("cannot create a file", e),
    })?;
    write_lines(&mut file, spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_has_its_files_in_folders_and_counts_them() {
        let dir = iolab_testkit::scratch();
        let root = dir.path().join("tree");
        let tree = write_tree(&root, 250, 7, false).unwrap();
        assert_eq!(tree.files, 250);
        assert!(file_path(&root, 249).ends_with("d000/d002/f000249.txt"));
        let mut bytes = 0;
        let mut lines = 0;
        for i in 0..tree.files {
            let content = fs::read(file_path(&root, i)).unwrap();
            assert!((MIN_FILE..=MAX_FILE).contains(&(content.len() as u64)));
            bytes += content.len() as u64;
            lines += content.iter().filter(|&&b| b == b'\n').count() as u64;
        }
        assert_eq!(tree.summary, Summary { bytes, lines });
        // The same seed makes the same tree; existing files are refused without force, and
        // the error names the file.
        let e = write_tree(&root, 1, 7, false).unwrap_err();
        assert!(
            matches!(&e, GenerateError::File(Error::AtPath { path, source })
                if *path == root.join("d000/d000/f000000.txt") && matches!(**source, Error::Exists)),
            "{e:?}"
        );
        assert!(matches!(
            write_tree(&root, 0, 7, false),
            Err(GenerateError::InvalidSpec(_))
        ));
        let again = write_tree(&root, 250, 7, true).unwrap();
        assert_eq!(again.summary, tree.summary);
    }

    #[test]
    fn an_impossible_count_is_refused_before_anything_is_made() {
        let dir = iolab_testkit::scratch();
        let root = dir.path().join("huge");
        for files in [100_000_000_000, MAX_FILES + 1] {
            let e = write_tree(&root, files, 7, false).unwrap_err();
            assert!(matches!(e, GenerateError::InvalidSpec(_)), "{e}");
        }
        assert!(!root.exists(), "nothing was made");
        // Within the layout but beyond a small file system's room (1000 files need 6 MiB).
        match iolab_testkit::SmallFs::mount("1M") {
            Ok(small) => {
                let root = small.path().join("tree");
                let e = write_tree(&root, 1000, 7, false).unwrap_err();
                assert!(matches!(e, GenerateError::NotEnoughSpace { .. }), "{e}");
                assert!(!root.exists(), "nothing was made");
            }
            Err(reason) => iolab_testkit::skip(reason),
        }
    }
}
