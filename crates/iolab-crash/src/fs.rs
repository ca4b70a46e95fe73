//! A small model of a file system: inodes (files with their bytes, folders with their
//! names, symbolic links) and a root folder. A crash state is the folder's first state
//! ([`Fs::load`]) with some of the recorded changes applied in their order ([`Fs::apply`]),
//! written out to a scratch folder ([`Fs::write_to`]); [`Fs::digest`] tells states with the
//! same names and bytes apart from different ones.
//!
//! A change that cannot apply in a state, because a change it needs was lost (a write to a
//! file whose creation was lost still reaches the file, which has no name; a rename of a
//! name that was never made), is skipped, as the file system would: what has no name is not
//! in the folder after the crash.

use std::collections::{BTreeMap, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::bytes::Bytes;
use crate::journal::{Ino, Op};

/// One inode.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// A regular file and its bytes.
    File(Bytes),
    /// A folder: its names, in order.
    Dir(BTreeMap<String, Ino>),
    /// A symbolic link and its target.
    Symlink(String),
}

/// A folder's tree, in memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fs {
    nodes: HashMap<Ino, Node>,
    root: Ino,
}

impl Fs {
    /// An empty folder whose inode is `root`.
    pub fn empty(root: Ino) -> Fs {
        Fs {
            nodes: HashMap::from([(root, Node::Dir(BTreeMap::new()))]),
            root,
        }
    }

    /// The tree under `dir`, read from disk: files with their bytes, folders, symbolic
    /// links, each by its inode number. Other kinds (FIFOs, sockets, devices) are refused.
    pub fn load(dir: &Path) -> io::Result<Fs> {
        let root = std::fs::symlink_metadata(dir)?.ino();
        let mut fs = Fs::empty(root);
        fs.load_dir(dir, root)?;
        Ok(fs)
    }

    fn load_dir(&mut self, dir: &Path, ino: Ino) -> io::Result<()> {
        let mut names = BTreeMap::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let child = meta.ino();
            names.insert(name, child);
            if self.nodes.contains_key(&child) {
                continue; // a second name of a file already read
            }
            let kind = meta.file_type();
            if kind.is_dir() {
                self.nodes.insert(child, Node::Dir(BTreeMap::new()));
                self.load_dir(&path, child)?;
            } else if kind.is_file() {
                let bytes = std::fs::read(&path)?;
                self.nodes
                    .insert(child, Node::File(Bytes::from(bytes.as_slice())));
            } else if kind.is_symlink() {
                let target = std::fs::read_link(&path)?;
                let target = target.to_string_lossy().into_owned();
                self.nodes.insert(child, Node::Symlink(target));
            } else {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    format!("{} is neither a file, a folder nor a link", path.display()),
                ));
            }
        }
        self.nodes.insert(ino, Node::Dir(names));
        Ok(())
    }

    /// The inode a path (relative to the root, `/`-separated) names, if any.
    pub fn lookup(&self, path: &str) -> Option<Ino> {
        let mut ino = self.root;
        for part in path.split('/').filter(|p| !p.is_empty() && *p != ".") {
            match self.nodes.get(&ino)? {
                Node::Dir(names) => ino = *names.get(part)?,
                _ => return None,
            }
        }
        Some(ino)
    }

    /// The same tree with its inode numbers changed by `map` (numbers not in it kept): a
    /// folder written out and loaded again, numbered as the folder it was written from.
    pub fn renumber(&self, map: &HashMap<Ino, Ino>) -> Fs {
        let to = |ino: &Ino| map.get(ino).copied().unwrap_or(*ino);
        let nodes = (self.nodes.iter())
            .map(|(ino, node)| {
                let node = match node {
                    Node::Dir(names) => {
                        Node::Dir(names.iter().map(|(n, i)| (n.clone(), to(i))).collect())
                    }
                    other => other.clone(),
                };
                (to(ino), node)
            })
            .collect();
        Fs {
            nodes,
            root: to(&self.root),
        }
    }

    /// Writes `data` at `offset` of file `ino` (what applying a write does); false when
    /// `ino` is not a file here.
    pub fn write(&mut self, ino: Ino, offset: u64, data: &[u8]) -> bool {
        match self.nodes.get_mut(&ino) {
            Some(Node::File(bytes)) => {
                bytes.write(offset, data);
                true
            }
            _ => false,
        }
    }

    /// Writes `len` zeros at `offset` of file `ino` (what applying a write of zeros does,
    /// without its bytes); false when `ino` is not a file here.
    pub fn write_zeros(&mut self, ino: Ino, offset: u64, len: u64) -> bool {
        match self.nodes.get_mut(&ino) {
            Some(Node::File(bytes)) => {
                bytes.write_zeros(offset, len);
                true
            }
            _ => false,
        }
    }

    /// The folder's own inode.
    pub fn root(&self) -> Ino {
        self.root
    }

    /// The node of `ino`.
    pub fn node(&self, ino: Ino) -> Option<&Node> {
        self.nodes.get(&ino)
    }

    /// The folder that holds `path`'s last part, and that part.
    fn parent_of<'p>(&self, path: &'p str) -> Option<(Ino, &'p str)> {
        let path = path.trim_end_matches('/');
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        let parent = self.lookup(dir)?;
        matches!(self.nodes.get(&parent)?, Node::Dir(_)).then_some((parent, name))
    }

    fn names_mut(&mut self, dir: Ino) -> Option<&mut BTreeMap<String, Ino>> {
        match self.nodes.get_mut(&dir)? {
            Node::Dir(names) => Some(names),
            _ => None,
        }
    }

    /// Adds the name `path` for `ino` (made as `node` if it does not exist yet); false
    /// when its folder is missing or the name is taken.
    fn add_name(&mut self, path: &str, ino: Ino, node: Node) -> bool {
        let Some((parent, name)) = self.parent_of(path) else {
            return false;
        };
        let name = name.to_string();
        if self
            .names_mut(parent)
            .is_some_and(|n| n.contains_key(&name))
        {
            return false;
        }
        self.nodes.entry(ino).or_insert(node);
        self.names_mut(parent).map(|n| n.insert(name, ino));
        true
    }

    /// Applies one change; returns whether it applied (false: skipped, see the module
    /// docs). Syncs and standard output change nothing.
    pub fn apply(&mut self, op: &Op) -> bool {
        match op {
            Op::Create { path, ino, .. } => self.add_name(path, *ino, Node::File(Bytes::new())),
            Op::Mkdir { path, ino, .. } => self.add_name(path, *ino, Node::Dir(BTreeMap::new())),
            Op::Tmpfile { ino } => {
                self.nodes.entry(*ino).or_insert(Node::File(Bytes::new()));
                true
            }
            Op::Name { ino, path, .. } => match self.nodes.get(ino) {
                Some(Node::File(_)) => self.add_name(path, *ino, Node::File(Bytes::new())),
                _ => false,
            },
            Op::Write { ino, offset, data } => self.write(*ino, *offset, data),
            Op::Truncate { ino, size } => match self.nodes.get_mut(ino) {
                Some(Node::File(bytes)) => {
                    bytes.set_len(*size);
                    true
                }
                _ => false,
            },
            Op::Rename { from, to, .. } => self.rename(from, to),
            Op::Link { from, to, .. } => match self.lookup(from) {
                Some(ino) if matches!(self.nodes.get(&ino), Some(Node::File(_))) => {
                    self.add_name(to, ino, Node::File(Bytes::new()))
                }
                _ => false,
            },
            Op::Unlink { path, .. } => self.remove(path, false),
            Op::Rmdir { path, .. } => self.remove(path, true),
            Op::Sync { .. } | Op::SyncAll | Op::Stdout { .. } | Op::Refused { .. } => true,
        }
    }

    fn rename(&mut self, from: &str, to: &str) -> bool {
        let (Some((from_dir, from_name)), Some((to_dir, to_name))) =
            (self.parent_of(from), self.parent_of(to))
        else {
            return false;
        };
        let Some(ino) = self
            .names_mut(from_dir)
            .and_then(|n| n.get(from_name).copied())
        else {
            return false;
        };
        if let Some(old) = self.names_mut(to_dir).and_then(|n| n.get(to_name).copied()) {
            if old == ino {
                return true; // rename(2) of a name onto another name of the same file
            }
            if let Some(Node::Dir(names)) = self.nodes.get(&old)
                && !names.is_empty()
            {
                return false;
            }
        }
        self.names_mut(from_dir).map(|n| n.remove(from_name));
        self.names_mut(to_dir)
            .map(|n| n.insert(to_name.to_string(), ino));
        true
    }

    fn remove(&mut self, path: &str, dir: bool) -> bool {
        let Some((parent, name)) = self.parent_of(path) else {
            return false;
        };
        let Some(ino) = self.names_mut(parent).and_then(|n| n.get(name).copied()) else {
            return false;
        };
        match self.nodes.get(&ino) {
            Some(Node::Dir(names)) if dir && names.is_empty() => {}
            Some(Node::File(_) | Node::Symlink(_)) if !dir => {}
            _ => return false,
        }
        self.names_mut(parent).map(|n| n.remove(name));
        true
    }

    /// Every inode reachable from the root, with one of its paths.
    pub fn paths(&self) -> HashMap<Ino, String> {
        let mut out = HashMap::new();
        let mut stack = vec![(self.root, String::new())];
        while let Some((ino, path)) = stack.pop() {
            if let Some(Node::Dir(names)) = self.nodes.get(&ino) {
                for (name, child) in names {
                    let full = if path.is_empty() {
                        name.clone()
                    } else {
                        format!("{path}/{name}")
                    };
                    if !out.contains_key(child) {
                        out.insert(*child, full.clone());
                        stack.push((*child, full));
                    }
                }
            }
        }
        out
    }

    /// A digest of what the folder holds: every name reachable from the root, its kind and
    /// bytes (not the inode numbers, which a crash state does not show).
    pub fn digest(&self) -> u64 {
        let mut h = DefaultHasher::new();
        self.hash_node(self.root, &mut h, 0);
        h.finish()
    }

    fn hash_node(&self, ino: Ino, h: &mut DefaultHasher, depth: usize) {
        match self.nodes.get(&ino) {
            Some(Node::Dir(names)) if depth < 256 => {
                0u8.hash(h);
                names.len().hash(h);
                for (name, child) in names {
                    name.hash(h);
                    self.hash_node(*child, h, depth + 1);
                }
            }
            Some(node) => node.hash(h),
            None => 3u8.hash(h),
        }
    }

    /// Writes the tree out under `dir` (which must exist and be empty); files with two
    /// names are written as hard links.
    pub fn write_to(&self, dir: &Path) -> io::Result<()> {
        let mut written = HashMap::new();
        self.write_dir(self.root, dir, &mut written, 0)
    }

    fn write_dir(
        &self,
        ino: Ino,
        dir: &Path,
        written: &mut HashMap<Ino, std::path::PathBuf>,
        depth: usize,
    ) -> io::Result<()> {
        let Some(Node::Dir(names)) = self.nodes.get(&ino) else {
            return Ok(());
        };
        if depth > 256 {
            return Err(io::Error::other("folders nested more than 256 deep"));
        }
        for (name, child) in names {
            let path = dir.join(name);
            match self.nodes.get(child) {
                Some(Node::Dir(_)) => {
                    std::fs::create_dir(&path)?;
                    self.write_dir(*child, &path, written, depth + 1)?;
                }
                Some(Node::File(bytes)) => match written.get(child) {
                    Some(first) => std::fs::hard_link(first, &path)?,
                    None => {
                        write_sparse(&path, bytes)?;
                        written.insert(*child, path);
                    }
                },
                Some(Node::Symlink(target)) => std::os::unix::fs::symlink(target, &path)?,
                None => {}
            }
        }
        Ok(())
    }
}

/// Writes `bytes` to a new file at `path`, leaving holes where they are zeros.
fn write_sparse(path: &Path, bytes: &Bytes) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::create_new(path)?;
    for (at, block) in bytes.stored() {
        file.write_all_at(block, at)?;
    }
    file.set_len(bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(path: &str, ino: Ino) -> Op {
        Op::Create {
            path: path.into(),
            ino,
            parent: 1,
        }
    }

    fn write(ino: Ino, offset: u64, data: &[u8]) -> Op {
        Op::Write {
            ino,
            offset,
            data: data.to_vec(),
        }
    }

    #[test]
    fn changes_apply_in_order_and_what_cannot_apply_is_skipped() {
        let mut fs = Fs::empty(1);
        assert!(fs.apply(&create("a.tmp", 10)));
        assert!(fs.apply(&write(10, 2, b"xy")));
        assert_eq!(fs.node(10), Some(&Node::File(Bytes::from(&b"\0\0xy"[..]))));
        let rename = Op::Rename {
            from: "a.tmp".into(),
            to: "a".into(),
            from_parent: 1,
            to_parent: 1,
        };
        assert!(fs.apply(&rename));
        assert_eq!(fs.lookup("a"), Some(10));
        assert_eq!(fs.lookup("a.tmp"), None);
        // The rename again: its old name is gone.
        assert!(!fs.apply(&rename));
        // A write to a file whose creation was lost reaches nothing named.
        let mut lost = Fs::empty(1);
        assert!(!lost.apply(&write(10, 0, b"x")));
        assert!(!lost.apply(&Op::Unlink {
            path: "a".into(),
            parent: 1
        }));
        assert!(lost.apply(&Op::Mkdir {
            path: "d".into(),
            ino: 5,
            parent: 1
        }));
        assert!(lost.apply(&create("d/f", 6)));
        assert!(!lost.apply(&Op::Rmdir {
            path: "d".into(),
            parent: 1
        }));
        assert!(!lost.apply(&create("missing/f", 7)));
    }

    #[test]
    fn the_digest_sees_names_and_bytes_not_inode_numbers() {
        let mut a = Fs::empty(1);
        a.apply(&create("f", 10));
        a.apply(&write(10, 0, b"one"));
        let mut b = Fs::empty(1);
        b.apply(&create("f", 99));
        b.apply(&write(99, 0, b"one"));
        assert_eq!(a.digest(), b.digest());
        b.apply(&write(99, 0, b"two"));
        assert_ne!(a.digest(), b.digest());
    }

    #[test]
    fn a_folder_loaded_and_written_out_holds_the_same_names_and_bytes() {
        let src = iolab_testkit::scratch();
        std::fs::create_dir(src.path().join("sub")).unwrap();
        std::fs::write(src.path().join("sub/f"), b"bytes").unwrap();
        std::fs::hard_link(src.path().join("sub/f"), src.path().join("g")).unwrap();
        std::os::unix::fs::symlink("sub/f", src.path().join("l")).unwrap();
        let fs = Fs::load(src.path()).unwrap();
        let out = iolab_testkit::scratch();
        fs.write_to(out.path()).unwrap();
        assert_eq!(std::fs::read(out.path().join("sub/f")).unwrap(), b"bytes");
        let (f, g) = (
            std::fs::metadata(out.path().join("sub/f")).unwrap(),
            std::fs::metadata(out.path().join("g")).unwrap(),
        );
        assert_eq!(f.ino(), g.ino());
        assert_eq!(
            std::fs::read_link(out.path().join("l")).unwrap(),
            Path::new("sub/f")
        );
        assert_eq!(Fs::load(out.path()).unwrap().digest(), fs.digest());
        let paths = fs.paths();
        let linked = std::fs::metadata(src.path().join("g")).unwrap().ino();
        assert!(["sub/f", "g"].contains(&paths[&linked].as_str()));
        // sub, the file (two names, one path), l.
        assert_eq!(paths.len(), 3);
    }
}
