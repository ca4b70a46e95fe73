//! The crash states a [`Model`] allows for a [`Journal`], each tried once.
//!
//! For every crash point (before the first entry, and after each one), the states are:
//! - **posix**: every entry up to the point persisted (the prefix); the prefix without
//!   one entry that no sync has made durable yet (each such entry in turn); and, for a
//!   write not yet durable that spans a block boundary, the prefix with that write cut at
//!   its first and at its last block boundary (torn).
//! - **ext4-ordered**: the changes to names (and truncations) form a journal that persists
//!   as a prefix, at least up to the last sync: each such prefix with every write up to the
//!   point, and each prefix without one write not yet durable (a write is durable once
//!   its file is synced, or when a kept rename that replaced a file renamed it).
//!
//! A state is the set of entries applied (in their order) and the bytes the program had
//! printed by its crash point. States with the same set are built once; states whose
//! folders hold the same names and bytes and the same printed bytes are checked once.
//! Only one change is dropped at a time (as ALICE does): a failure that needs two
//! independent losses is not looked for.

use std::collections::{BTreeSet, HashSet};

use crate::fs::Fs;
use crate::journal::{Ino, Journal, Op};
use crate::model::Model;

/// Block size for torn writes: 4 KiB, the page and the usual file-system block.
pub const BLOCK: u64 = 4096;

/// One crash state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrashState {
    /// The crash came after this entry (`None`: before the first).
    pub after: Option<usize>,
    /// Entries up to the crash point that did not persist.
    pub lost: Vec<usize>,
    /// An entry (a write) of which only the first `.1` bytes persisted.
    pub torn: Option<(usize, usize)>,
    /// What the folder holds in this state.
    pub fs: Fs,
    /// The bytes the program had printed by the crash point.
    pub stdout: Vec<u8>,
}

impl CrashState {
    /// The entries up to the crash point that persisted, whole or torn.
    pub fn persisted(&self) -> Vec<usize> {
        let end = self.after.map_or(0, |a| a + 1);
        (0..end).filter(|i| !self.lost.contains(i)).collect()
    }
}

/// What one state applies: the crash point, the entries left out, a torn entry.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Plan {
    after: Option<usize>,
    lost: BTreeSet<usize>,
    torn: Option<(usize, usize)>,
}

/// Every distinct crash state `model` allows for `journal`, run from `initial`, with
/// repetitions folded ([`crate::fold`]).
pub fn explore(initial: &Fs, journal: &Journal, model: Model) -> Vec<CrashState> {
    explore_with(initial, journal, model, true)
}

/// [`explore`], folding repetitions or not (`fold: false`: every crash point in full).
pub fn explore_with(initial: &Fs, journal: &Journal, model: Model, fold: bool) -> Vec<CrashState> {
    let mut seen_plans = HashSet::new();
    let mut seen_states = HashSet::new();
    let zeros = zero_writes(journal);
    let mut states = Vec::new();
    for plan in plans(initial, journal, model, fold) {
        if !seen_plans.insert(plan.clone()) {
            continue;
        }
        let state = build(initial, journal, &zeros, plan);
        if seen_states.insert((state.fs.digest(), state.stdout.clone())) {
            states.push(state);
        }
    }
    states
}

/// How many different states [`explore_with`] builds (before it checks each distinct
/// content once): the cost of an exploration.
pub fn planned(initial: &Fs, journal: &Journal, model: Model, fold: bool) -> usize {
    plans(initial, journal, model, fold)
        .into_iter()
        .collect::<HashSet<_>>()
        .len()
}

fn plans(initial: &Fs, journal: &Journal, model: Model, fold: bool) -> Vec<Plan> {
    let full = if fold {
        crate::fold::explored_fully(journal)
    } else {
        vec![true; journal.entries.len()]
    };
    match model {
        Model::Posix => posix_plans(journal, &full),
        Model::Ext4Ordered => ext4_plans(initial, journal, &full),
    }
}

/// The state a crash after entry `after` leaves when the entries `lost` did not persist
/// and only the first `torn.1` bytes of entry `torn.0` did: a state [`explore`] gave,
/// rebuilt from what it records (`iolab crash replay`).
pub fn rebuild(
    initial: &Fs,
    journal: &Journal,
    after: Option<usize>,
    lost: &[usize],
    torn: Option<(usize, usize)>,
) -> CrashState {
    let plan = Plan {
        after,
        lost: lost.iter().copied().collect(),
        torn,
    };
    build(initial, journal, &zero_writes(journal), plan)
}

/// For each entry, whether it is a write of zeros only (a preallocation), which a state
/// applies without looking at its bytes.
fn zero_writes(journal: &Journal) -> Vec<bool> {
    (journal.entries.iter())
        .map(|e| matches!(&e.op, Op::Write { data, .. } if crate::bytes::all_zeros(data)))
        .collect()
}

/// Applies `plan` to a copy of `initial`.
/// `zeros[i]`: entry `i` writes only zeros ([`zero_writes`]).
fn build(initial: &Fs, journal: &Journal, zeros: &[bool], plan: Plan) -> CrashState {
    let mut fs = initial.clone();
    let mut stdout = Vec::new();
    let end = plan.after.map_or(0, |a| a + 1);
    for (i, entry) in journal.entries[..end].iter().enumerate() {
        if let Op::Stdout { data } = &entry.op {
            stdout.extend_from_slice(data);
        }
        if plan.lost.contains(&i) {
            continue;
        }
        match &entry.op {
            Op::Write { ino, offset, data } => {
                let kept = match plan.torn {
                    Some((t, keep)) if t == i => keep.min(data.len()),
                    _ => data.len(),
                };
                if zeros[i] {
                    fs.write_zeros(*ino, *offset, kept as u64);
                } else {
                    fs.write(*ino, *offset, &data[..kept]);
                }
            }
            op => {
                fs.apply(op);
            }
        }
    }
    CrashState {
        after: plan.after,
        lost: plan.lost.into_iter().collect(),
        torn: plan.torn,
        fs,
        stdout,
    }
}

/// The crash points: before the first entry, then after each.
fn crash_points(journal: &Journal) -> impl Iterator<Item = Option<usize>> {
    std::iter::once(None).chain((0..journal.entries.len()).map(Some))
}

/// Under posix, the entry that makes entry `i` durable (itself for a synced write), if
/// any: a sync of its file, of the folder of its (last) name, or of everything.
fn posix_durable_at(journal: &Journal, i: usize) -> Option<usize> {
    let entry = &journal.entries[i];
    if !entry.op.is_change() || entry.synced {
        return Some(i);
    }
    let target: Option<Ino> = match &entry.op {
        Op::Write { ino, .. } | Op::Truncate { ino, .. } => Some(*ino),
        op => op.parents().last().copied(),
    };
    journal.entries[i + 1..]
        .iter()
        .position(|e| match e.op {
            Op::SyncAll => true,
            Op::Sync { ino, .. } => Some(ino) == target,
            _ => false,
        })
        .map(|p| i + 1 + p)
}

/// The byte counts at which a write of `data` at `offset` may be cut: its first and its
/// last block boundary inside it.
fn tear_points(offset: u64, len: usize) -> Vec<usize> {
    let end = offset + len as u64;
    let first = (offset / BLOCK + 1) * BLOCK;
    if first >= end {
        return Vec::new();
    }
    let last = (end - 1) / BLOCK * BLOCK;
    let mut cuts = vec![(first - offset) as usize, (last - offset) as usize];
    cuts.dedup();
    cuts
}

fn posix_plans(journal: &Journal, full: &[bool]) -> Vec<Plan> {
    let durable: Vec<Option<usize>> = (0..journal.entries.len())
        .map(|i| posix_durable_at(journal, i))
        .collect();
    let mut plans = Vec::new();
    for after in crash_points(journal) {
        plans.push(Plan {
            after,
            lost: BTreeSet::new(),
            torn: None,
        });
        let Some(k) = after.filter(|&k| full[k]) else {
            continue;
        };
        for (j, durable_at) in durable.iter().enumerate().take(k + 1) {
            if durable_at.is_some_and(|d| d <= k) {
                continue;
            }
            plans.push(Plan {
                after,
                lost: BTreeSet::from([j]),
                torn: None,
            });
            if let Op::Write { offset, data, .. } = &journal.entries[j].op {
                for keep in tear_points(*offset, data.len()) {
                    plans.push(Plan {
                        after,
                        lost: BTreeSet::new(),
                        torn: Some((j, keep)),
                    });
                }
            }
        }
    }
    plans
}

/// For each rename of the run that replaced a file, the file it renamed (what
/// `auto_da_alloc` writes out before the rename commits), told by running the journal on
/// `initial` as recorded.
fn replacing_renames(initial: &Fs, journal: &Journal) -> Vec<Option<Ino>> {
    let mut fs = initial.clone();
    journal
        .entries
        .iter()
        .map(|e| {
            let replaced = match &e.op {
                Op::Rename { from, to, .. } => {
                    let file = fs.lookup(from);
                    let existed = fs
                        .lookup(to)
                        .is_some_and(|t| matches!(fs.node(t), Some(crate::fs::Node::File(_))));
                    file.filter(|f| existed && fs.lookup(to) != Some(*f))
                }
                _ => None,
            };
            fs.apply(&e.op);
            replaced
        })
        .collect()
}

/// For each entry, whether it is a write that makes its file longer (an append), as the
/// run went.
fn extending_writes(initial: &Fs, journal: &Journal) -> Vec<bool> {
    let mut fs = initial.clone();
    journal
        .entries
        .iter()
        .map(|e| {
            let extends = match &e.op {
                Op::Write { ino, offset, data } => match fs.node(*ino) {
                    Some(crate::fs::Node::File(bytes)) => offset + data.len() as u64 > bytes.len(),
                    _ => true,
                },
                _ => false,
            };
            fs.apply(&e.op);
            extends
        })
        .collect()
}

fn ext4_plans(initial: &Fs, journal: &Journal, full: &[bool]) -> Vec<Plan> {
    let entries = &journal.entries;
    // The ordered journal: changes to names and sizes set by truncation. Writes persist on
    // their own (delayed allocation writes their blocks, and an append's size, later), but
    // an append never before the journal's earlier changes.
    let meta: Vec<bool> = entries
        .iter()
        .map(|e| e.op.is_namespace() || matches!(e.op, Op::Truncate { .. }))
        .collect();
    let replaced = replacing_renames(initial, journal);
    let extends = extending_writes(initial, journal);
    let mut plans = vec![Plan {
        after: None,
        lost: BTreeSet::new(),
        torn: None,
    }];
    for (k, &in_full) in full.iter().enumerate() {
        let after = Some(k);
        if !in_full {
            plans.push(Plan {
                after,
                lost: BTreeSet::new(),
                torn: None,
            });
            continue;
        }
        let metadata: Vec<usize> = (0..=k).filter(|&i| meta[i]).collect();
        // Every journal entry before the last sync is committed.
        let last_sync = (0..=k)
            .rev()
            .find(|&i| matches!(entries[i].op, Op::Sync { .. } | Op::SyncAll));
        let forced = last_sync.map_or(0, |s| metadata.iter().filter(|&&i| i < s).count());
        let writes: Vec<usize> = (0..=k)
            .filter(|&i| matches!(entries[i].op, Op::Write { .. }))
            .collect();
        for m in forced..=metadata.len() {
            let kept: BTreeSet<usize> = metadata[..m].iter().copied().collect();
            let mut dropped: BTreeSet<usize> = metadata[m..].iter().copied().collect();
            // An append's new size is journaled after the changes made before it: with
            // them cut, the appends after the cut are lost too.
            if let Some(&cut) = metadata.get(m) {
                dropped.extend(writes.iter().filter(|&&i| i > cut && extends[i]));
            }
            plans.push(Plan {
                after,
                lost: dropped.clone(),
                torn: None,
            });
            for &j in &writes {
                if dropped.contains(&j) || ext4_write_durable(journal, &replaced, j, k, &kept) {
                    continue;
                }
                let mut lost = dropped.clone();
                lost.insert(j);
                plans.push(Plan {
                    after,
                    lost,
                    torn: None,
                });
            }
        }
    }
    plans
}

/// Whether write `j` is on disk at crash point `k` with the journal entries `kept`: it
/// went through `O_SYNC`/`O_DSYNC`, its file (or everything) was synced after it, or a
/// kept rename replacing a file renamed its file (`auto_da_alloc`).
fn ext4_write_durable(
    journal: &Journal,
    replaced: &[Option<Ino>],
    j: usize,
    k: usize,
    kept: &BTreeSet<usize>,
) -> bool {
    let entry = &journal.entries[j];
    let Op::Write { ino, .. } = entry.op else {
        return true;
    };
    entry.synced
        || (j + 1..=k).any(|r| match journal.entries[r].op {
            Op::SyncAll => true,
            Op::Sync { ino: s, .. } => s == ino,
            Op::Rename { .. } => kept.contains(&r) && replaced[r] == Some(ino),
            _ => false,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::Entry;

    fn entry(op: Op) -> Entry {
        Entry::new(op, "test")
    }

    fn create(path: &str, ino: Ino) -> Op {
        Op::Create {
            path: path.into(),
            ino,
            parent: 1,
        }
    }

    fn write(ino: Ino, data: &[u8]) -> Op {
        Op::Write {
            ino,
            offset: 0,
            data: data.to_vec(),
        }
    }

    fn rename(from: &str, to: &str) -> Op {
        Op::Rename {
            from: from.into(),
            to: to.into(),
            from_parent: 1,
            to_parent: 1,
        }
    }

    /// The replace-by-rename pattern: write a temporary file, optionally sync it and its
    /// folder, rename it over `config`.
    fn replace(sync: bool) -> (Fs, Journal) {
        let mut initial = Fs::empty(1);
        initial.apply(&create("config", 2));
        initial.apply(&write(2, b"old"));
        let mut entries = vec![entry(create("config.tmp", 3)), entry(write(3, b"new"))];
        if sync {
            entries.push(entry(Op::Sync {
                ino: 3,
                data_only: false,
            }));
        }
        entries.push(entry(rename("config.tmp", "config")));
        if sync {
            entries.push(entry(Op::Sync {
                ino: 1,
                data_only: false,
            }));
        }
        entries.push(entry(Op::Stdout {
            data: b"saved\n".to_vec(),
        }));
        (initial, Journal { entries })
    }

    fn config_of(state: &CrashState) -> Option<Vec<u8>> {
        match state.fs.node(state.fs.lookup("config")?)? {
            crate::fs::Node::File(bytes) => Some(bytes.to_vec()),
            _ => None,
        }
    }

    /// A state fails when `config` is neither the old nor the new bytes, or is not the
    /// new ones after "saved" was printed.
    fn fails(state: &CrashState) -> bool {
        let config = config_of(state);
        let acknowledged = state.stdout.starts_with(b"saved");
        match config.as_deref() {
            Some(b"new") => false,
            Some(b"old") => acknowledged,
            _ => true,
        }
    }

    #[test]
    fn a_rename_without_syncs_loses_the_bytes_under_posix_not_under_ext4_ordered() {
        let (initial, journal) = replace(false);
        let posix = explore(&initial, &journal, Model::Posix);
        let failing: Vec<_> = posix.iter().filter(|s| fails(s)).collect();
        assert!(!failing.is_empty());
        // The empty new file under the old name: the rename persisted, its write did not.
        assert!(
            failing
                .iter()
                .any(|s| config_of(s).as_deref() == Some(&b""[..]))
        );
        let ext4 = explore(&initial, &journal, Model::Ext4Ordered);
        // auto_da_alloc: the rename carries the bytes; but the acknowledgement may still
        // come before the rename is on disk.
        assert!(
            ext4.iter()
                .all(|s| config_of(s).as_deref() != Some(&b""[..]))
        );
    }

    #[test]
    fn with_the_file_and_its_folder_synced_every_state_passes_under_both_models() {
        let (initial, journal) = replace(true);
        for model in Model::ALL {
            let states = explore(&initial, &journal, model);
            assert!(states.len() >= 3, "{model}: {} states", states.len());
            for s in &states {
                assert!(!fails(s), "{model}: {s:?}");
            }
        }
    }

    #[test]
    fn a_write_across_blocks_is_torn_at_its_boundaries() {
        assert_eq!(tear_points(0, 4096), Vec::<usize>::new());
        assert_eq!(tear_points(100, 10), Vec::<usize>::new());
        assert_eq!(tear_points(0, 8192), vec![4096]);
        assert_eq!(tear_points(4000, 10_000), vec![96, 8288]);
        let mut initial = Fs::empty(1);
        initial.apply(&create("f", 2));
        let journal = Journal {
            entries: vec![entry(Op::Write {
                ino: 2,
                offset: 0,
                data: vec![7; 3 * 4096],
            })],
        };
        let states = explore(&initial, &journal, Model::Posix);
        let sizes: BTreeSet<usize> = states
            .iter()
            .filter_map(|s| match s.fs.node(2) {
                Some(crate::fs::Node::File(b)) => Some(b.len() as usize),
                _ => None,
            })
            .collect();
        assert_eq!(sizes, BTreeSet::from([0, 4096, 8192, 12288]));
    }

    #[test]
    fn states_with_the_same_bytes_and_output_are_tried_once() {
        let (initial, journal) = replace(true);
        let states = explore(&initial, &journal, Model::Posix);
        let keys: HashSet<_> = states
            .iter()
            .map(|s| (s.fs.digest(), s.stdout.clone()))
            .collect();
        assert_eq!(keys.len(), states.len());
    }

    #[test]
    fn a_rename_to_a_new_name_without_a_sync_may_leave_an_empty_file_on_ext4() {
        let mut initial = Fs::empty(1);
        initial.apply(&Op::Mkdir {
            path: "d".into(),
            ino: 9,
            parent: 1,
        });
        let journal = Journal {
            entries: vec![
                entry(create("tmp", 3)),
                entry(write(3, b"new")),
                entry(rename("tmp", "config")),
            ],
        };
        let states = explore(&initial, &journal, Model::Ext4Ordered);
        assert!(
            states
                .iter()
                .any(|s| config_of(s).as_deref() == Some(&b""[..]))
        );
        assert!(
            states
                .iter()
                .any(|s| config_of(s).as_deref() == Some(&b"new"[..]))
        );
    }

    fn arbitrary_op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        let name = prop::sample::select(vec!["a", "b", "c"]);
        prop_oneof![
            (name.clone(), 10u64..13).prop_map(|(n, ino)| Op::Create {
                path: n.into(),
                ino,
                parent: 1
            }),
            (10u64..13, 0u64..9000, 1usize..9000).prop_map(|(ino, offset, len)| Op::Write {
                ino,
                offset,
                data: vec![(offset % 251) as u8; len],
            }),
            (10u64..13, 0u64..9000).prop_map(|(ino, size)| Op::Truncate { ino, size }),
            (name.clone(), name.clone()).prop_map(|(f, t)| Op::Rename {
                from: f.into(),
                to: t.into(),
                from_parent: 1,
                to_parent: 1
            }),
            name.clone().prop_map(|n| Op::Unlink {
                path: n.into(),
                parent: 1
            }),
            (10u64..13).prop_map(|ino| Op::Sync {
                ino,
                data_only: true
            }),
            Just(Op::Stdout {
                data: b"ok\n".to_vec()
            }),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// After a final `sync`, a crash leaves exactly the run's end, under both models;
        /// and the states before the first entry are the folder as it was.
        #[test]
        fn after_a_final_sync_the_only_state_is_the_end_of_the_run(
            ops in proptest::collection::vec(arbitrary_op(), 0..12)
        ) {
            let mut entries: Vec<Entry> = ops.into_iter().map(entry).collect();
            entries.push(entry(Op::SyncAll));
            let journal = Journal { entries };
            let initial = Fs::empty(1);
            let mut end = initial.clone();
            for e in &journal.entries {
                end.apply(&e.op);
            }
            let last = journal.entries.len() - 1;
            for model in Model::ALL {
                let states = explore(&initial, &journal, model);
                let at_end: Vec<_> = states.iter().filter(|s| s.after == Some(last)).collect();
                for s in &at_end {
                    proptest::prop_assert_eq!(s.fs.digest(), end.digest());
                }
                let first = states.iter().find(|s| s.after.is_none()).unwrap();
                proptest::prop_assert_eq!(first.fs.digest(), initial.digest());
            }
        }
    }

    #[test]
    fn folding_a_hundred_transactions_costs_about_what_a_few_cost_and_misses_no_loss() {
        let synced = crate::fold::tests::transactions(100, true);
        let initial = Fs::empty(1);
        let unsynced = crate::fold::tests::transactions(100, false);
        for (journal, few) in [
            (&synced, crate::fold::tests::transactions(3, true)),
            (&unsynced, crate::fold::tests::transactions(3, false)),
        ] {
            let folded = planned(&initial, journal, Model::Posix, true);
            let unfolded = planned(&initial, journal, Model::Posix, false);
            let small = planned(&initial, &few, Model::Posix, false);
            // What stays: the prefix states of the folded repetitions (one per crash
            // point), and in the last repetition each change not yet durable dropped.
            assert!(folded < unfolded, "{folded} vs {unfolded}");
            assert!(folded <= small + 5 * 100, "{folded} vs {small} for 3");
        }
        // Without syncs, a record acknowledged may be lost: found folded or not.
        let lost_ack = |states: &[CrashState]| {
            states.iter().any(|s| {
                let acked = s.stdout.len() / 3;
                let kept = match s.fs.node(2) {
                    Some(crate::fs::Node::File(b)) => {
                        b.to_vec().iter().filter(|&&c| c == b'\n').count()
                    }
                    _ => 0,
                };
                kept < acked
            })
        };
        assert!(lost_ack(&explore(&initial, &unsynced, Model::Posix)));
        assert!(!lost_ack(&explore(&initial, &synced, Model::Posix)));
    }

    #[test]
    fn on_ext4_an_append_never_persists_before_an_earlier_change_to_names() {
        let mut initial = Fs::empty(1);
        initial.apply(&create("log", 2));
        let journal = Journal {
            entries: vec![
                entry(create("new", 3)),
                entry(Op::Write {
                    ino: 2,
                    offset: 0,
                    data: b"after".to_vec(),
                }),
            ],
        };
        let states = explore(&initial, &journal, Model::Ext4Ordered);
        for s in &states {
            let appended = matches!(s.fs.node(2), Some(crate::fs::Node::File(b)) if !b.is_empty());
            if appended {
                assert!(s.fs.lookup("new").is_some(), "{s:?}");
            }
        }
        // Under posix, it may.
        let posix = explore(&initial, &journal, Model::Posix);
        assert!(posix.iter().any(|s| s.fs.lookup("new").is_none()
            && matches!(s.fs.node(2), Some(crate::fs::Node::File(b)) if !b.is_empty())));
    }
}
