//! `whole-file-rewrite`: a file read whole and then replaced whole — by a new file renamed
//! over it (`sed -i`), or truncated and written again, or made anew under the same path —
//! in that order: a file written and then read (`seq > f; wc -l f`) is no rewrite.
//!
//! The fix fits the edit. The same size: change the bytes in place (the file keeps its
//! inode; a crash leaves some bytes changed, not a lost file). Another size: a streamed
//! rewrite in big pieces into a new file, synced and renamed over the old one (a crash
//! leaves the old file or the new one); truncating the file and writing it again loses it
//! if the program or the machine stops midway, and the finding says so.

use std::os::unix::fs::MetadataExt;

use super::{
    Estimate, FIX_BLOCK, FIX_BUFFER, FindingKind, Group, MIN_REWRITE, Pattern, SEQUENTIAL,
    calls_text,
};
use crate::costs::{Costs, Need, seconds};
use crate::model::{Kind, Target, TargetKey};
use iolab_lab::snippet::{self, Edit};

/// Share of a file that counts as all of it.
const WHOLE: f64 = 0.99;

fn whole(part: u64, all: u64) -> bool {
    all > 0 && part as f64 >= WHOLE * all as f64
}

/// Whether `w` was written whole, starting no earlier than `r` began to be read.
fn written_after(w: &Target, r: &Target) -> bool {
    let after = match (r.read.first_ns, w.write.first_ns) {
        (Some(read), Some(write)) => write >= read,
        _ => false,
    };
    after && whole(w.write.bytes, w.size)
}

/// The group holding the inode the path of `r` names now, if it is not one of `r`'s own.
/// An inode number freed and given to a new file during the run names two targets (the
/// eBPF backend tells them apart by the inode's generation): the file there now is the
/// one used last.
fn replacement(groups: &[Group], g: usize) -> Option<usize> {
    let r = &groups[g].target;
    let now = std::fs::metadata(&r.path).ok()?;
    let key = TargetKey::from_stat(now.dev(), now.ino());
    if groups[g].target.key.is_some_and(|k| k.same_inode(&key)) {
        return None;
    }
    let last_used = |t: &Target| t.read.last_ns.max(t.write.last_ns);
    groups
        .iter()
        .enumerate()
        .filter(|(_, w)| {
            w.target.kind == Some(Kind::File) && w.target.key.is_some_and(|k| k.same_inode(&key))
        })
        .max_by_key(|(_, w)| last_used(&w.target))
        .map(|(w, _)| w)
        .filter(|&w| w != g)
}

pub(super) fn detect(groups: &[Group], out: &mut Vec<Pattern>) {
    for (g, group) in groups.iter().enumerate() {
        let r = &group.target;
        if r.kind != Some(Kind::File) || r.read.bytes < MIN_REWRITE {
            continue;
        }
        // A new file renamed over it, written whole after the reading began.
        if whole(r.read.bytes, r.size)
            && let Some(w) = replacement(groups, g)
            && written_after(&groups[w].target, r)
        {
            let mut p = Pattern::new(FindingKind::WholeFileRewrite, g);
            p.partners.push(w);
            out.push(p);
            continue;
        }
        // Truncated (or made anew under its path) and written whole after it was read.
        let replaced = r.open_flags.trunc > 0 || group.members.len() > 1;
        if replaced && r.read.sequential_share() >= SEQUENTIAL && written_after(r, r) {
            out.push(Pattern::new(FindingKind::WholeFileRewrite, g));
        }
    }
}

/// The old file, the new one (itself when rewritten in place), and whether the size kept.
fn sides<'a>(p: &Pattern, groups: &'a [Group]) -> (&'a Target, &'a Target, bool) {
    let r = &groups[p.group].target;
    match p.partners.first() {
        Some(&w) => {
            let w = &groups[w].target;
            (r, w, w.size == r.size)
        }
        None => (r, r, r.write.bytes == r.read.bytes),
    }
}

pub(super) fn needs(p: &Pattern, groups: &[Group]) -> Vec<Need> {
    let (_, _, same) = sides(p, groups);
    if same {
        vec![Need::InPlaceEdit]
    } else {
        vec![
            Need::BigRead,
            Need::BufferedWrite {
                kind: Kind::File,
                size: FIX_BUFFER,
            },
        ]
    }
}

pub(super) fn estimate<'a>(p: &Pattern, groups: &[Group], costs: &'a Costs) -> Estimate<'a> {
    let (r, w, same) = sides(p, groups);
    let renamed = !p.partners.is_empty();
    let (reads, writes) = (&r.read, &w.write);
    let how = if renamed {
        format!("into a new file ({}) renamed over it", w.path)
    } else if r.open_flags.trunc > 0 {
        "in place, after truncating it".to_string()
    } else {
        "into a file made anew under its path".to_string()
    };
    let size = w.size;
    let mut e = Estimate {
        calls: reads.calls + writes.calls,
        bytes: reads.bytes + writes.bytes,
        evidence: format!(
            "the whole file ({}) read in {} and then written again{} in {} {how}, {} in the calls",
            iolab_lab::units::format_bytes(r.size.max(reads.bytes)),
            calls_text(reads.calls, "read", reads.bytes),
            if same {
                String::new()
            } else {
                format!(
                    " at another size ({})",
                    iolab_lab::units::format_bytes(size)
                )
            },
            calls_text(writes.calls, "write", writes.bytes),
            seconds((reads.ns + writes.ns) as f64 * 1e-9)
        ),
        measured_ns: reads.ns + writes.ns,
        measured_calls: reads.calls + writes.calls,
        calibrated: None,
        bounded: false,
        fixed: None,
        figures: Vec::new(),
        warnings: Vec::new(),
        fix: String::new(),
        cli: String::new(),
        library: String::new(),
    };
    if same {
        let edit = costs.get(&Need::InPlaceEdit);
        e.fixed = edit.map(|f| f.cost(0, size));
        e.figures.extend(edit);
        e.fix = "edit in place: the size stays, so rewrite only the bytes that change (the file keeps its inode; a crash midway leaves some bytes changed, not a lost file)".into();
        e.cli = edit
            .and_then(|f| f.cli.clone())
            .unwrap_or_else(|| "iolab edit replace --from X --to Y FILE".into());
        e.library = edit.and_then(|f| f.library.clone()).unwrap_or_else(|| {
            snippet::edit(
                Edit::Replace {
                    from: b',',
                    to: b';',
                },
                None,
                true,
            )
        });
    } else {
        let read = costs.get(&Need::BigRead);
        let write = costs.get(&Need::BufferedWrite {
            kind: Kind::File,
            size: FIX_BUFFER,
        });
        e.fixed = match (read, write) {
            (Some(a), Some(b)) => {
                Some(a.cost(0, reads.bytes) + b.cost(size.div_ceil(FIX_BUFFER), size))
            }
            _ => None,
        };
        e.figures.extend([read, write].into_iter().flatten());
        e.fix = format!(
            "the size changes, so the file is rewritten from the first change on: stream it in pieces of {} into a new file, sync it, and rename it over the old one (a crash then leaves the old file or the new one)",
            iolab_lab::units::format_bytes(FIX_BLOCK)
        );
        e.cli = "iolab bench edit".into();
        e.library = snippet::streamed_rewrite(FIX_BLOCK);
    }
    if !renamed && r.open_flags.trunc > 0 {
        e.warnings.push(
            "the file was truncated before it was written again: if the program or the machine stops midway, its contents are lost; write a new file, sync it and rename it over the old one".into(),
        );
    }
    e
}
