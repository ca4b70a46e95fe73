//! `sync-per-record`: a file synced after each small record (`fsync`, `fdatasync`,
//! `msync`, or each write through `O_SYNC`/`O_DSYNC`), or a folder synced after each file
//! made in it (SQLite's journal in its default mode syncs its folder once per
//! transaction).
//!
//! The syncs' measured time is what group commit removes (a sync waits for the device;
//! nothing else does that work); the fix costs one sync per [`GROUP`] records of the same
//! size, with the same call, in the same folder (calibrated), and the calibrated cost of a
//! sync per record is the check.

use super::{Estimate, FindingKind, GROUP, Group, MIN_SYNCS, Pattern, calls_text, folder, writes};
use crate::costs::{Costs, Need, SyncCall, seconds};
use crate::model::{Kind, Target};
use crate::syscalls::Sys;

pub(super) fn detect(groups: &[Group], out: &mut Vec<Pattern>) {
    for (g, group) in groups.iter().enumerate() {
        let t = &group.target;
        let file = t.kind_or_other() == Kind::File && writes::syncs_per_record(t);
        let folder = t.kind_or_other() == Kind::Directory && t.syncs >= MIN_SYNCS;
        if file || folder {
            out.push(Pattern::new(FindingKind::SyncPerRecord, g));
        }
    }
}

/// The call that made `t` durable most often.
fn call(t: &Target) -> SyncCall {
    let n = |s: Sys| t.calls_of(s).calls;
    let fsync = n(Sys::Fsync) + n(Sys::Msync) + n(Sys::Syncfs);
    let fdatasync = n(Sys::Fdatasync) + n(Sys::SyncFileRange);
    if t.write.synced > fsync.max(fdatasync) {
        SyncCall::Dsync
    } else if fsync > fdatasync {
        SyncCall::Fsync
    } else {
        SyncCall::Fdatasync
    }
}

/// Whether most of `t`'s syncs were `msync` of a map of it (its records written through
/// the map, not by calls).
fn by_msync(t: &Target) -> bool {
    2 * t.calls_of(Sys::Msync).calls > t.syncs
}

/// Bytes written per sync.
fn record(t: &Target) -> u64 {
    (t.write.bytes / t.sync_units().max(1)).max(1)
}

fn need(t: &Target, every: u64) -> Need {
    if t.kind_or_other() == Kind::Directory {
        return Need::DirSync {
            dir: std::path::PathBuf::from(&t.path),
        };
    }
    Need::Sync {
        dir: folder(&t.path),
        call: call(t),
        record: record(t),
        every,
    }
}

pub(super) fn needs(t: &Target) -> Vec<Need> {
    let mut n = vec![need(t, 1), need(t, GROUP)];
    n.dedup();
    n
}

pub(super) fn estimate<'a>(t: &Target, costs: &'a Costs) -> Estimate<'a> {
    let units = t.sync_units();
    let per_record = costs.get(&need(t, 1));
    let grouped = costs.get(&need(t, GROUP));
    let directory = t.kind_or_other() == Kind::Directory;
    // A folder's sync costs the same after one new file or a thousand: the fix makes one
    // per GROUP, each as dear as one now.
    let fixed = if directory {
        per_record.map(|f| f.cost(units.div_ceil(GROUP), 0))
    } else {
        grouped.map(|f| f.cost(units, 0))
    };
    // With O_DSYNC the write is the sync: its whole time goes.
    let synced_ns = if t.write.synced > 0 {
        (t.write.ns as f64 * t.write.synced as f64 / t.write.calls.max(1) as f64) as u64
    } else {
        0
    };
    let measured_ns = t.sync_ns + synced_ns;
    let evidence = if directory {
        format!(
            "{} syncs of the folder, {} in them ({} each): a sync per file made or renamed in it",
            t.syncs,
            seconds(t.sync_ns as f64 * 1e-9),
            seconds(t.sync_ns as f64 * 1e-9 / t.syncs.max(1) as f64)
        )
    } else if by_msync(t) {
        format!(
            "{} msync calls of a shared map of it ({} syncs in all), {} in them ({} each): a \
             sync per record written through the map",
            t.calls_of(Sys::Msync).calls,
            units,
            seconds(measured_ns as f64 * 1e-9),
            seconds(measured_ns as f64 * 1e-9 / units.max(1) as f64)
        )
    } else {
        let how = match call(t) {
            SyncCall::Dsync => format!("{} writes through O_SYNC/O_DSYNC", t.write.synced),
            c => format!("{units} syncs ({})", c.name()),
        };
        format!(
            "{how} for {}: a sync per {} written, {} in the syncs ({} each)",
            calls_text(t.write.calls, "write", t.write.bytes),
            iolab::lab::units::format_bytes(record(t)),
            seconds(measured_ns as f64 * 1e-9),
            seconds(measured_ns as f64 * 1e-9 / units.max(1) as f64)
        )
    };
    let fix = if by_msync(t) {
        format!(
            "msync the map once per batch of records ({GROUP} here), over the whole range the \
             batch wrote, not once per record; or write the records with write() and group \
             their fdatasync"
        )
    } else if directory {
        format!(
            "sync the folder once per batch, after the last file of the batch is made or renamed (one transaction for many records), not once per record: {GROUP} records per sync here"
        )
    } else {
        format!(
            "group commit: one sync for many records ({GROUP} here): a transaction around many records, or iolab::Log, which shares one sync among the writers waiting"
        )
    };
    Estimate {
        calls: units,
        bytes: t.write.bytes,
        evidence,
        measured_ns,
        measured_calls: t.syncs,
        calibrated: per_record.map(|f| f.cost(units, 0)),
        bounded: false,
        fixed,
        figures: [per_record, grouped].into_iter().flatten().collect(),
        warnings: Vec::new(),
        fix,
        cli: "iolab bench append (its synced rows and its durable section)".into(),
        library: grouped
            .and_then(|f| f.library.clone())
            .unwrap_or_else(|| iolab::lab::snippet::durable(None)),
    }
}
