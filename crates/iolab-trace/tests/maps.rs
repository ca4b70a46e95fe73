//! A file written through a shared map and synced one record at a time: `c/msync_records.c`
//! writes 4 KiB records into a map of its file and syncs each record's own 4 KiB of the
//! map, `msync(base + k * 4096, 4096)`. Each msync is a sync of that file, under each
//! backend that can run here, though only its first names the address mmap returned: the
//! map that holds the address is the file's. Counts only, never a time.

mod common;

use std::path::Path;

use common::{backends, build_c, report};
use iolab_testkit::trace as kit;
use iolab_trace::rules::FindingKind;
use iolab_trace::syscalls::Sys;

/// Records written and synced.
const RECORDS: u64 = 2000;

#[test]
fn each_msync_of_a_part_of_a_shared_map_is_a_sync_of_its_file() {
    let bin = iolab_testkit::scratch();
    let Some(exe) = build_c(bin.path(), "msync_records", "-O1") else {
        return;
    };
    let dir = iolab_testkit::scratch();
    let file = dir.path().canonicalize().unwrap().join("records");
    for choice in backends() {
        let _ = std::fs::remove_file(&file);
        let r = report(
            choice,
            &[
                &exe.display().to_string(),
                &file.display().to_string(),
                &RECORDS.to_string(),
            ],
        );
        assert_eq!(r.exit_code(), 0, "{choice}");
        let t = kit::target(choice, &r.outcome.trace.targets, |t| &t.path, &file);
        assert_eq!(t.syncs, RECORDS, "{choice}: the file's syncs");
        assert_eq!(
            t.calls_of(Sys::Msync).calls,
            RECORDS,
            "{choice}: its msyncs"
        );
        assert_eq!((t.mmaps, t.mmap_bytes), (1, RECORDS * 4096), "{choice}");
        let f = r
            .findings
            .iter()
            .find(|f| f.kind == FindingKind::SyncPerRecord && Path::new(&f.path) == file)
            .unwrap_or_else(|| panic!("{choice}: no sync-per-record: {:#?}", r.findings));
        assert_eq!(f.calls, RECORDS, "{choice}: {f:?}");
        assert!(
            f.evidence.contains(&format!("{RECORDS} msync calls")),
            "{choice}: {}",
            f.evidence
        );
        // Its fix batches the msyncs (not a C program's fflush and fdatasync), and its
        // first stack is an msync's.
        assert!(
            f.fix.starts_with("msync the map once per batch"),
            "{choice}: {}",
            f.fix
        );
        assert_eq!(
            f.stacks.first().map(|s| s.call.as_str()),
            Some("msync"),
            "{choice}: {:?}",
            f.stacks.iter().map(|s| &s.call).collect::<Vec<_>>()
        );
        // The process that synced, with its msyncs.
        assert_eq!(f.processes.len(), 1, "{choice}: {:?}", f.processes);
        let p = &f.processes[0];
        assert!(p.exe.ends_with("/msync_records"), "{choice}: {p:?}");
        assert!(p.use_.calls >= RECORDS, "{choice}: {p:?}");
    }
}
