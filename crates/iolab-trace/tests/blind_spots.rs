//! The calls the rules were blind to, each on a real program that has the pattern and on
//! the same program without it, under each backend that can run here: the dynamic loader
//! probing a long `LD_LIBRARY_PATH` (`failed-opens`), a bash loop testing one file again
//! and again (`stat-storm`), `cat` reading a file twice (`read-twice`), and a Python
//! reading a cold file at random through a map with and without `MADV_RANDOM`
//! (`mmap-faults`, eBPF only: ptrace sees no page faults).

mod common;

use std::path::Path;

use common::{backends, report};
use iolab_testkit::trace::{self as kit, python};
use iolab_trace::backend::Choice;
use iolab_trace::engine;
use iolab_trace::launch::Command;
use iolab_trace::report::Report;
use iolab_trace::rules::FindingKind;

fn kinds(r: &Report) -> Vec<FindingKind> {
    r.findings.iter().map(|f| f.kind).collect()
}

#[test]
fn a_long_library_path_is_probed_and_found() {
    if !kit::have("env", Command::resolve) || !kit::have("true", Command::resolve) {
        return;
    }
    let dir = iolab_testkit::scratch();
    let mut dirs = Vec::new();
    for i in 0..80 {
        let d = dir.path().join(format!("lib{i}"));
        std::fs::create_dir(&d).unwrap();
        dirs.push(d.display().to_string());
    }
    let path = format!("LD_LIBRARY_PATH={}", dirs.join(":"));
    for choice in backends() {
        let r = report(choice, &["env", &path, "true"]);
        let f = r
            .findings
            .iter()
            .find(|f| f.kind == FindingKind::FailedOpens)
            .unwrap_or_else(|| panic!("{choice}: {:?}", kinds(&r)));
        assert!(f.calls >= 80, "{choice}: {f:?}");
        assert!(f.evidence.contains("ENOENT"), "{}", f.evidence);
        assert!(f.evidence.contains("libc.so.6"), "{}", f.evidence);
        let probed = &r.outcome.trace.seen.failed_opens.paths;
        assert!(
            probed.keys().any(|p| p.starts_with(&dirs[79])),
            "{choice}: {probed:?}"
        );
        assert!(f.saving_s.is_some_and(|s| s > 0.0), "{f:?}");
        let r = report(choice, &["env", "-u", "LD_LIBRARY_PATH", "true"]);
        assert!(
            !kinds(&r).contains(&FindingKind::FailedOpens),
            "{choice}: {:?}",
            r.findings
        );
    }
}

#[test]
fn a_shell_testing_one_file_again_and_again_is_a_stat_storm() {
    if !kit::have("bash", Command::resolve) {
        return;
    }
    let dir = iolab_testkit::scratch();
    let file = dir.path().join("flag");
    std::fs::write(&file, "x").unwrap();
    let storm = format!(
        "for i in $(seq 3000); do [ -e {0} ] || echo gone; done",
        file.display()
    );
    for choice in backends() {
        let r = report(choice, &["bash", "-c", &storm]);
        let f = r
            .findings
            .iter()
            .find(|f| f.kind == FindingKind::StatStorm)
            .unwrap_or_else(|| panic!("{choice}: {:?}", kinds(&r)));
        assert!(f.calls >= 2900, "{choice}: {f:?}");
        assert!(
            f.evidence.contains(&file.display().to_string()),
            "{}",
            f.evidence
        );
        assert!(!f.processes.is_empty(), "{choice}: {f:?}");
        // Every file of a folder asked once is no storm.
        let once = format!(
            "for i in $(seq 1500); do : > {0}/f$i; done; ls -l {0} > /dev/null",
            dir.path().display()
        );
        let r = report(choice, &["bash", "-c", &once]);
        assert!(
            !kinds(&r).contains(&FindingKind::StatStorm),
            "{choice}: {:?}",
            r.findings
        );
    }
}

#[test]
fn cat_reading_a_file_twice_is_found() {
    if !kit::have("cat", Command::resolve) {
        return;
    }
    let dir = iolab_testkit::scratch();
    let file = dir.path().join("data");
    std::fs::write(&file, vec![b'y'; 4 << 20]).unwrap();
    let f = file.display().to_string();
    // `cat` itself, its output sent to /dev/null by the shell it replaces (`exec`), so the
    // test's log does not get the file three times over.
    let cat = |files: &str| format!("exec cat {files} > /dev/null");
    for choice in backends() {
        let r = report(choice, &["sh", "-c", &cat(&format!("'{f}' '{f}' '{f}'"))]);
        let found = r
            .findings
            .iter()
            .find(|x| x.kind == FindingKind::ReadTwice)
            .unwrap_or_else(|| panic!("{choice}: {:?}", kinds(&r)));
        assert!(
            found.evidence.contains("3.0 times over"),
            "{}",
            found.evidence
        );
        let r = report(choice, &["sh", "-c", &cat(&format!("'{f}'"))]);
        assert!(
            !kinds(&r).contains(&FindingKind::ReadTwice),
            "{choice}: {:?}",
            r.findings
        );
    }
}

#[test]
fn scattered_faults_on_a_cold_map_are_found_and_madv_random_is_not() {
    let Some(python) = python() else { return };
    if engine::availability(Choice::Bpf).is_err() {
        iolab_testkit::skip("mmap-faults needs the bpf backend (ptrace sees no page faults)");
        return;
    }
    let dir = iolab_testkit::scratch();
    let file = dir.path().join("big");
    std::fs::write(&file, vec![b'z'; 256 << 20]).unwrap();
    let reader = |advise: bool| {
        format!(
            "import mmap, os, random\n\
             fd = os.open({path:?}, os.O_RDONLY)\n\
             os.fsync(fd); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)\n\
             m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)\n\
             {advice}\n\
             r = random.Random(7); n = len(m) // 4096\n\
             print(sum(m[r.randrange(n) * 4096] for _ in range(3000)))",
            path = file.display().to_string(),
            advice = if advise {
                "m.madvise(mmap.MADV_RANDOM)"
            } else {
                "pass"
            }
        )
    };
    let r = report(Choice::Bpf, &[python, "-c", &reader(false)]);
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::MmapFaults)
        .unwrap_or_else(|| panic!("{:?}\n{:?}", kinds(&r), r.outcome.trace.seen.faults));
    assert_eq!(Path::new(&f.path), file.canonicalize().unwrap(), "{f:?}");
    assert!(f.fix.contains("MADV_RANDOM"), "{}", f.fix);
    let r = report(Choice::Bpf, &[python, "-c", &reader(true)]);
    assert!(
        !kinds(&r).contains(&FindingKind::MmapFaults),
        "{:?}",
        r.outcome.trace.seen.faults
    );
}
