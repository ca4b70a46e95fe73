//! What a crash could do to the files the command meant to keep, read from the order of
//! its calls (ALICE, OSDI '14: the same sequences, the same rules):
//!
//! - `rename-before-sync`: a file renamed (over another, or to its final name) while data
//!   written to it had not been synced: the rename may reach the disk before the data, so
//!   after a crash the name holds an empty or partly written file.
//! - `unsynced-directory`: a file made or renamed, its data synced, but its directory never
//!   synced after: the data is durable, its name is not (after a crash the file, or the
//!   rename, may be gone).
//! - `rewrite-in-place`: an existing file truncated (`O_TRUNC`, `ftruncate`) and written
//!   again, then synced: between the truncate and the sync a crash leaves it empty or half
//!   written; a new file renamed over it keeps the old or the new whole.
//!
//! A program that syncs nothing makes no durability claim and gets no `unsynced-directory`
//! nor `rewrite-in-place`; a rename is a claim of its own (it replaces a file whole). Files
//! on a file system that keeps nothing across a crash (tmpfs, ramfs) and files that are
//! gone when the command ends (a journal deleted at commit) get none. The rules: docs/trace.md,
//! "Durability".

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{FindingKind, Group, Pattern};
use crate::model::{Change, Kind, TargetKey, Trace};

/// File systems whose files do not outlive a crash (`statfs`'s `f_type`).
const VOLATILE: [i64; 2] = [0x0102_1994 /* tmpfs */, 0x8584_58f6 /* ramfs */];

/// Whether the folder holding `path` keeps its files across a crash: not tmpfs or ramfs
/// (asked of its nearest folder that still exists: a scratch folder may be gone by now).
fn durable_place(path: &str) -> bool {
    let mut dir = Path::new(path).parent();
    while let Some(d) = dir {
        let Ok(c) = std::ffi::CString::new(d.as_os_str().as_encoded_bytes()) else {
            return true;
        };
        // SAFETY: a zeroed statfs is valid for the call to fill.
        let mut s: libc::statfs = unsafe { std::mem::zeroed() };
        // SAFETY: `c` is a NUL-terminated path and `s` ours to fill.
        if unsafe { libc::statfs(c.as_ptr(), &mut s) } == 0 {
            return !VOLATILE.contains(&(s.f_type as i64));
        }
        dir = d.parent();
    }
    true
}

/// Whether the file `key` is at `path` now (not deleted, not renamed away).
fn still_there(path: &str, key: TargetKey) -> bool {
    std::fs::symlink_metadata(path)
        .is_ok_and(|m| TargetKey::from_stat(m.dev(), m.ino()).ino == key.ino)
}

fn parent(path: &str) -> String {
    Path::new(path)
        .parent()
        .map_or_else(|| "/".into(), |p| p.to_string_lossy().into_owned())
}

/// A name made in a directory that is waiting for the directory's sync.
struct Entry {
    file: TargetKey,
    /// The path the name gives.
    path: String,
    /// How it came: "made" or "renamed from …".
    how: String,
}

/// The targets as the replay of the changes needs them: each file's (each life's) target
/// and group, and the lives a path named when first seen.
struct Index<'a> {
    trace: &'a Trace,
    groups: &'a [Group],
    target_of: HashMap<TargetKey, usize>,
    group_of: HashMap<TargetKey, usize>,
    by_path: HashMap<&'a str, Vec<TargetKey>>,
}

impl<'a> Index<'a> {
    fn new(trace: &'a Trace, groups: &'a [Group]) -> Index<'a> {
        let mut target_of = HashMap::new();
        let mut group_of = HashMap::new();
        let mut by_path: HashMap<&str, Vec<TargetKey>> = HashMap::new();
        for (g, group) in groups.iter().enumerate() {
            for &m in &group.members {
                let t = &trace.targets[m];
                if let Some(k) = t.key {
                    target_of.insert(k, m);
                    group_of.insert(k, g);
                    by_path.entry(t.path.as_str()).or_default().push(k);
                }
            }
        }
        Index {
            trace,
            groups,
            target_of,
            group_of,
            by_path,
        }
    }

    /// The path of the file `k` when first seen: where it was made, for a file made.
    fn path_of(&self, k: TargetKey) -> Option<String> {
        self.target_of
            .get(&k)
            .map(|&i| self.trace.targets[i].path.clone())
    }

    fn is_dir(&self, k: TargetKey) -> bool {
        self.group_of
            .get(&k)
            .is_some_and(|&g| self.groups[g].target.kind == Some(Kind::Directory))
    }

    /// Bytes written to the file `k` in its life.
    fn written(&self, k: TargetKey) -> u64 {
        self.target_of
            .get(&k)
            .map_or(0, |&i| self.trace.targets[i].write.bytes)
    }
}

/// The renames of one group's files while written since their last sync.
struct Unsynced {
    group: usize,
    /// How many (one per rename).
    times: u64,
    /// Bytes the files renamed had been written in their lives.
    bytes: u64,
    /// The last one's old and new names.
    from: String,
    to: String,
}

/// The state of the files as the changes are replayed in order.
#[derive(Default)]
struct Replay {
    /// Written since their last sync.
    dirty: HashSet<TargetKey>,
    /// Synced at least once (the program means to keep them).
    synced: HashSet<TargetKey>,
    /// Truncated while holding data, and whether written again since.
    truncated: HashMap<TargetKey, bool>,
    /// Names made or renamed in each folder since its last sync.
    waiting: HashMap<String, Vec<Entry>>,
    /// The file each path names, as the replay has seen it made and renamed.
    names: HashMap<String, TargetKey>,
    /// Files made during the run.
    made: HashSet<TargetKey>,
    /// Renames of files written since their last sync.
    renamed_unsynced: Vec<Unsynced>,
    /// Groups truncated, written again and synced.
    rewritten: Vec<usize>,
    /// Inodes renamed.
    renamed: HashSet<TargetKey>,
}

impl Replay {
    fn rewrote(&mut self, ix: &Index<'_>, k: &TargetKey) {
        if let Some(&g) = ix.group_of.get(k)
            && !self.rewritten.contains(&g)
        {
            self.rewritten.push(g);
        }
    }

    fn apply(&mut self, ix: &Index<'_>, change: &Change) {
        match change {
            Change::Created { file } => {
                // A new file (a new life: the backends tell an inode number given again
                // apart, and one seen again starts clean all the same).
                self.dirty.remove(file);
                self.synced.remove(file);
                self.truncated.remove(file);
                self.renamed.remove(file);
                self.made.insert(*file);
                if let Some(path) = ix.path_of(*file) {
                    self.names.insert(path.clone(), *file);
                    self.waiting.entry(parent(&path)).or_default().push(Entry {
                        file: *file,
                        path,
                        how: "made".into(),
                    });
                }
            }
            Change::Truncated { file } => {
                self.truncated.insert(*file, false);
            }
            Change::Dirtied { file } => {
                self.dirty.insert(*file);
                if let Some(w) = self.truncated.get_mut(file) {
                    *w = true;
                }
            }
            Change::Synced { file } if ix.is_dir(*file) => {
                if let Some(p) = ix.path_of(*file) {
                    self.waiting.remove(&p);
                }
            }
            Change::Synced { file } => {
                self.dirty.remove(file);
                self.synced.insert(*file);
                // Truncated, written again, synced: rewritten in place.
                if self.truncated.remove(file) == Some(true) {
                    self.rewrote(ix, file);
                }
            }
            Change::SyncedAll { device } => self.synced_all(ix, *device),
            Change::Renamed { from, to } => self.renamed(ix, from, to),
        }
    }

    /// `sync` (or `syncfs` of a file system): every file and folder (of it) made durable:
    /// nothing dirty, no name waiting; a file truncated and written again was rewritten in
    /// place until then.
    fn synced_all(&mut self, ix: &Index<'_>, device: Option<(u32, u32)>) {
        let on = |k: &TargetKey| device.is_none_or(|d| (k.major, k.minor) == d);
        let rewritten: Vec<TargetKey> = self
            .truncated
            .iter()
            .filter(|(k, written)| **written && on(k))
            .map(|(k, _)| *k)
            .collect();
        for k in &rewritten {
            self.rewrote(ix, k);
        }
        self.truncated.retain(|k, _| !on(k));
        self.synced
            .extend(self.dirty.iter().filter(|k| on(k)).copied());
        self.dirty.retain(|k| !on(k));
        self.waiting.retain(|_, entries| {
            entries.retain(|e| !on(&e.file));
            !entries.is_empty()
        });
    }

    /// The file `path` names: the one made or renamed there last, else the one file
    /// first seen there that was not made during the run (a file that was there before);
    /// none when that is not one file, or it is a folder.
    fn named(&self, ix: &Index<'_>, path: &str) -> Option<TargetKey> {
        if let Some(&k) = self.names.get(path) {
            return Some(k);
        }
        let mut before = ix
            .by_path
            .get(path)?
            .iter()
            .filter(|k| !self.made.contains(k) && !self.renamed.contains(k) && !ix.is_dir(**k));
        let one = *before.next()?;
        before.next().is_none().then_some(one)
    }

    /// `from` renamed to `to`: the file `from` named moves to `to` (the one `to` named
    /// ends); unsynced if written since its last sync; a name waiting for `to`'s folder.
    fn renamed(&mut self, ix: &Index<'_>, from: &str, to: &str) {
        let Some(k) = self.named(ix, from) else {
            // A folder, or a file this trace cannot name: no claim about it.
            self.names.remove(from);
            self.names.remove(to);
            return;
        };
        self.names.remove(from);
        self.names.insert(to.to_string(), k);
        if self.dirty.contains(&k)
            && let Some(&g) = ix.group_of.get(&k)
        {
            let bytes = ix.written(k);
            match self.renamed_unsynced.iter_mut().find(|r| r.group == g) {
                Some(r) => {
                    r.times += 1;
                    r.bytes += bytes;
                    r.from = from.to_string();
                    r.to = to.to_string();
                }
                None => self.renamed_unsynced.push(Unsynced {
                    group: g,
                    times: 1,
                    bytes,
                    from: from.to_string(),
                    to: to.to_string(),
                }),
            }
        }
        self.renamed.insert(k);
        self.truncated.remove(&k);
        self.waiting.entry(parent(to)).or_default().push(Entry {
            file: k,
            path: to.to_string(),
            how: format!("renamed from {from}"),
        });
    }
}

/// The durability patterns of `trace` (whose changes must all be there: a lost one could
/// make a synced file look dirty, and [`super::Analysis::new`] does not call this then).
pub(super) fn detect(trace: &Trace, groups: &[Group], out: &mut Vec<Pattern>) {
    let ix = Index::new(trace, groups);
    let mut r = Replay::default();
    for e in &trace.seen.events {
        r.apply(&ix, &e.change);
    }
    renames_before_sync(&r, out);
    unsynced_directories(&mut r, &ix, out);
    rewrites_in_place(&r, groups, out);
}

fn renames_before_sync(r: &Replay, out: &mut Vec<Pattern>) {
    for u in &r.renamed_unsynced {
        if !durable_place(&u.to) {
            continue;
        }
        let mut p = Pattern::new(FindingKind::RenameBeforeSync, u.group);
        p.count = u.times;
        p.note = if u.times > 1 {
            format!(
                "renamed {} to {} {} times, each time written since its last sync ({} written \
                 to those files), with no fsync or fdatasync of it between: the rename can \
                 reach the disk before the data",
                u.from,
                u.to,
                u.times,
                iolab_lab::units::format_bytes(u.bytes),
            )
        } else {
            format!(
                "wrote {} to {} and renamed it to {} with no fsync or fdatasync of it between: \
                 the rename can reach the disk before the data",
                iolab_lab::units::format_bytes(u.bytes),
                u.from,
                u.to,
            )
        };
        out.push(p);
    }
}

fn unsynced_directories(r: &mut Replay, ix: &Index<'_>, out: &mut Vec<Pattern>) {
    let mut dirs: Vec<(String, Vec<Entry>)> = r.waiting.drain().collect();
    dirs.sort_by(|a, b| a.0.cmp(&b.0));
    for (dir, entries) in dirs {
        // One per name, its last: a name made again and again is one name; what it names
        // now (by the replay and on disk) is what must be kept.
        let mut kept: Vec<&Entry> = Vec::new();
        for e in entries.iter().rev() {
            if kept.iter().any(|k| k.path == e.path) {
                continue;
            }
            kept.push(e);
        }
        kept.retain(|e| {
            r.synced.contains(&e.file)
                && r.names.get(&e.path) == Some(&e.file)
                && still_there(&e.path, e.file)
        });
        kept.reverse();
        let Some(first) = kept.first() else {
            continue;
        };
        let Some(&g) = ix.group_of.get(&first.file) else {
            continue;
        };
        if !durable_place(&first.path) {
            continue;
        }
        let mut p = Pattern::new(FindingKind::UnsyncedDirectory, g);
        p.count = kept.len() as u64;
        p.path = Some(first.path.clone());
        p.note = format!(
            "{} {}, synced its data, and never synced the directory {dir} after{}",
            match first.how.strip_prefix("renamed from ") {
                Some(from) => format!("renamed {from} to"),
                None => "made".into(),
            },
            first.path,
            match kept.len() {
                1 => String::new(),
                2 => " (and 1 more name in it)".into(),
                n => format!(" (and {} more names in it)", n - 1),
            }
        );
        out.push(p);
    }
}

fn rewrites_in_place(r: &Replay, groups: &[Group], out: &mut Vec<Pattern>) {
    for &g in &r.rewritten {
        let t = &groups[g].target;
        // Renamed after (a temporary file reused: the replace was the rename), or gone.
        let moved = groups[g].keys.iter().any(|k| r.renamed.contains(k));
        let there = groups[g].keys.iter().any(|&k| still_there(&t.path, k));
        if moved || !there || !durable_place(&t.path) {
            continue;
        }
        let mut p = Pattern::new(FindingKind::RewriteInPlace, g);
        p.note = format!(
            "truncated {} (a file that existed) and wrote it again in place ({}), then synced it",
            t.path,
            iolab_lab::units::format_bytes(t.write.bytes)
        );
        out.push(p);
    }
}

/// What a crash could do, for the finding's `risk`.
pub(super) fn risk(kind: FindingKind) -> &'static str {
    match kind {
        FindingKind::RenameBeforeSync => {
            "after a crash the new name may hold an empty or partly written file instead of \
             either version (ext4's auto_da_alloc flushes a file renamed over another at the \
             rename; XFS, btrfs and ext4 with noauto_da_alloc do not)"
        }
        FindingKind::UnsyncedDirectory => {
            "after a crash the name may be missing (a new file gone, a rename undone) though the \
             data was synced: fsync of a file does not make its directory entry durable"
        }
        _ => {
            "a crash between the truncate and the sync leaves the file empty or half written: \
             neither the old contents nor the new"
        }
    }
}

/// The fix, in general terms (the program's own: [`super::programs`]).
pub(super) fn fix(kind: FindingKind) -> &'static str {
    match kind {
        FindingKind::RenameBeforeSync => {
            "fsync (or fdatasync) the new file before renaming it over the old one, then fsync \
             the directory"
        }
        FindingKind::UnsyncedDirectory => {
            "after making or renaming the file, open its directory (O_RDONLY | O_DIRECTORY) and \
             fsync it"
        }
        _ => {
            "write the new contents to a temporary file in the same directory, fsync it, rename \
             it over the file, and fsync the directory"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Kind, Target};

    fn file(trace: &mut Trace, path: &str, ino: u64) -> TargetKey {
        let key = TargetKey {
            major: 254,
            minor: 0,
            ino,
            life: trace.targets.len() as u32,
        };
        trace
            .targets
            .push(Target::new(Some(key), Some(Kind::File), path));
        key
    }

    /// The durability patterns the rules find in `trace`.
    fn found(trace: &Trace) -> Vec<Pattern> {
        let a = super::super::Analysis::new(trace, false);
        a.patterns
            .into_iter()
            .filter(|p| p.kind.durability())
            .collect()
    }

    fn kinds(trace: &Trace) -> Vec<FindingKind> {
        found(trace).iter().map(|p| p.kind).collect()
    }

    #[test]
    fn a_journal_cut_and_synced_then_written_and_synced_is_no_rewrite() {
        // SQLite's journal_mode=TRUNCATE: the journal cut to 0 and synced, then the next
        // transaction's records written and synced: safe by its protocol.
        let mut trace = Trace::default();
        let j = file(&mut trace, "/nonexistent-dir/db-journal", 7);
        for (at, change) in [
            Change::Truncated { file: j },
            Change::Synced { file: j },
            Change::Dirtied { file: j },
            Change::Synced { file: j },
        ]
        .into_iter()
        .enumerate()
        {
            trace.seen.push(at as u64, 1, change);
        }
        assert!(kinds(&trace).is_empty(), "{:?}", kinds(&trace));
    }

    #[test]
    fn an_inode_number_given_again_starts_clean() {
        // A scratch file written (dirty) and deleted; a new file gets its inode number and
        // is renamed after being synced: no rename-before-sync.
        let mut trace = Trace::default();
        let a = file(&mut trace, "/nonexistent-dir/a.tmp", 9);
        for (at, change) in [
            Change::Dirtied { file: a },
            Change::Created { file: a },
            Change::Synced { file: a },
            Change::Renamed {
                from: "/nonexistent-dir/a.tmp".into(),
                to: "/nonexistent-dir/a".into(),
            },
        ]
        .into_iter()
        .enumerate()
        {
            trace.seen.push(at as u64, 1, change);
        }
        assert!(!kinds(&trace).contains(&FindingKind::RenameBeforeSync));
        // Written since its sync: found.
        trace.seen.events.insert(
            3,
            crate::model::Event {
                at_ns: 3,
                pid: 1,
                change: Change::Dirtied { file: a },
            },
        );
        assert_eq!(kinds(&trace), [FindingKind::RenameBeforeSync]);
        // A lost change: no judgement.
        trace.seen.events_lost = 1;
        assert!(kinds(&trace).is_empty());
    }

    fn replay(trace: &mut Trace, changes: Vec<Change>) -> Vec<Pattern> {
        for (at, change) in changes.into_iter().enumerate() {
            trace.seen.push(at as u64, 1, change);
        }
        found(trace)
    }

    #[test]
    fn a_lock_file_synced_before_its_rename_is_no_rename_before_sync_whatever_reuses_its_number() {
        // Git's and the loop: write f{i}.txt (never renamed); for index and master:
        // write NAME.lock, fsync it, rename it over NAME. Every file made gets the inode
        // number the rename-over freed last (a new life of it).
        let d = "/nonexistent-dir";
        let mut trace = Trace::default();
        let mut changes = Vec::new();
        for i in 0..40u64 {
            let f = file(&mut trace, &format!("{d}/f{i}.txt"), 100 + i % 2);
            changes.extend([Change::Created { file: f }, Change::Dirtied { file: f }]);
            for name in ["index", "master"] {
                let l = file(&mut trace, &format!("{d}/{name}.lock"), 100 + i % 2);
                changes.extend([
                    Change::Created { file: l },
                    Change::Dirtied { file: l },
                    Change::Synced { file: l },
                    Change::Renamed {
                        from: format!("{d}/{name}.lock"),
                        to: format!("{d}/{name}"),
                    },
                ]);
            }
        }
        let found = replay(&mut trace, changes);
        assert!(
            found
                .iter()
                .all(|p| p.kind != FindingKind::RenameBeforeSync),
            "{found:?}"
        );
    }

    #[test]
    fn a_replace_loop_without_sync_is_one_finding_counted_once_per_rename() {
        let d = "/nonexistent-dir";
        let mut trace = Trace::default();
        let mut changes = Vec::new();
        for i in 0..150u64 {
            let t = file(&mut trace, &format!("{d}/cfg.tmp"), 7 + i % 3);
            changes.extend([
                Change::Created { file: t },
                Change::Dirtied { file: t },
                Change::Renamed {
                    from: format!("{d}/cfg.tmp"),
                    to: format!("{d}/cfg.json"),
                },
            ]);
        }
        let found = replay(&mut trace, changes);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].kind, FindingKind::RenameBeforeSync);
        assert_eq!(found[0].count, 150);
        assert!(found[0].note.contains("150 times"), "{}", found[0].note);
    }

    #[test]
    fn a_folder_renamed_or_an_unknown_file_renamed_is_no_claim() {
        let d = "/nonexistent-dir";
        let mut trace = Trace::default();
        let dir = file(&mut trace, &format!("{d}/sub"), 3);
        trace.targets[0].kind = Some(Kind::Directory);
        let a = file(&mut trace, &format!("{d}/a"), 4);
        let b = file(&mut trace, &format!("{d}/a"), 4);
        let found = replay(
            &mut trace,
            vec![
                Change::Synced { file: dir },
                Change::Dirtied { file: a },
                Change::Dirtied { file: b },
                Change::Renamed {
                    from: format!("{d}/sub"),
                    to: format!("{d}/sub2"),
                },
                // Two lives first seen at one path, neither made here: which one moved is
                // not known, so nothing is said.
                Change::Renamed {
                    from: format!("{d}/a"),
                    to: format!("{d}/b"),
                },
            ],
        );
        assert!(found.is_empty(), "{found:?}");
    }
}
