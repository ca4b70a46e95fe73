//! Each finding triggered by a real program that has the pattern, under each backend that
//! can run here; none for well-behaved programs (cat, cp, wc, dd with big blocks); and
//! the estimates from a calibration and from `iolab bench` results.

use std::path::Path;

use iolab_testkit::corpus::text_file;
use iolab_testkit::trace::{self as kit, python};
use iolab_trace::backend::Choice;
use iolab_trace::engine;
use iolab_trace::launch::Command;
use iolab_trace::report::Report;
use iolab_trace::rules::FindingKind;

/// The backends that can trace here (ptrace where it can trace `true`); the skip line names
/// the others.
fn backends() -> Vec<Choice> {
    kit::backends([Choice::Bpf, Choice::Ptrace], engine::availability)
}

/// Whether `program` is on `PATH`; prints the skip line when it is not.
fn have(program: &str) -> bool {
    kit::have(program, Command::resolve)
}

/// Traces `w` with `choice` and reports, calibrating only when asked, with the figures of
/// the `iolab bench` results at `results` if any.
fn report(choice: Choice, w: &[&str], calibrate: bool, results: Option<&Path>) -> Report {
    let options = iolab_trace::Options {
        backend: choice,
        results: results.map(Path::to_path_buf),
        calibrate,
        ..iolab_trace::Options::default()
    };
    kit::locked(choice, w, |words| iolab_trace::trace(words, &options))
}

/// `dd` writing 20 000 records of 64 bytes to `out`, traced: a small-writes finding.
fn dd_64_byte_writes(
    choice: Choice,
    out: &Path,
    calibrate: bool,
    results: Option<&Path>,
) -> Report {
    let of = format!("of={}", out.display());
    let w = [
        "dd",
        "if=/dev/zero",
        &of,
        "bs=64",
        "count=20000",
        "status=none",
    ];
    report(choice, &w, calibrate, results)
}

/// The kinds of the findings on `path` (canonical).
fn kinds_on(r: &Report, path: &Path) -> Vec<FindingKind> {
    let path = path.canonicalize().unwrap();
    r.findings
        .iter()
        .filter(|f| Path::new(&f.path) == path)
        .map(|f| f.kind)
        .collect()
}

fn kinds(r: &Report) -> Vec<FindingKind> {
    r.findings.iter().map(|f| f.kind).collect()
}

#[test]
fn small_writes_of_dd_to_a_file() {
    let dir = iolab_testkit::scratch();
    let out = dir.path().join("out");
    let of = format!("of={}", out.display());
    for choice in backends() {
        let r = report(
            choice,
            &[
                "dd",
                "if=/dev/zero",
                &of,
                "bs=100",
                "count=5000",
                "status=none",
            ],
            false,
            None,
        );
        assert_eq!(kinds_on(&r, &out), [FindingKind::SmallWrites], "{choice}");
        let f = &r.findings[0];
        // A copy loop: 5000 reads of /dev/zero, each followed by a write of it.
        assert_eq!((f.calls, f.bytes), (10_000, 500_000), "{choice}");
        assert!(
            f.evidence
                .starts_with("a copy loop: 5000 reads of 100 B (488 KiB) from /dev/zero"),
            "{choice}: {}",
            f.evidence
        );
        assert!(f.fix.contains("dd bs=1M"), "{}", f.fix);
        assert!(f.library.contains("std::io::copy("), "{}", f.library);
    }
}

#[test]
fn small_writes_of_an_unbuffered_python_into_a_pipe() {
    let Some(python) = python() else { return };
    let script = format!("{python} -u -c 'for i in range(3000): print(i)' | cat > /dev/null");
    for choice in backends() {
        let r = report(choice, &["sh", "-c", &script], false, None);
        let f = r
            .findings
            .iter()
            .find(|f| f.kind == FindingKind::SmallWrites)
            .unwrap_or_else(|| panic!("{choice}: {:?}", kinds(&r)));
        assert!(f.path.starts_with("pipe:["), "{}", f.path);
        assert!(f.calls >= 3000, "{choice}: {}", f.calls);
        assert!(f.library.contains("StdoutWriter"), "{}", f.library);
    }
}

/// The small-writes finding of `r`.
fn small_writes(r: &Report) -> &iolab_trace::rules::Finding {
    r.findings
        .iter()
        .find(|f| f.kind == FindingKind::SmallWrites)
        .unwrap_or_else(|| panic!("{:?}", kinds(r)))
}

#[test]
fn a_pipes_reader_counts_in_the_saving_when_traced_and_is_said_when_not() {
    let Some(python) = python() else { return };
    let Some(&choice) = backends().first() else {
        return;
    };
    let print = format!("{python} -u -c 'for i in range(3000): print(i)'");
    // `cat` reads the pipe, in the traced command: its reads, and its writes of each piece
    // on to /dev/null, go with the fix too.
    let r = report(
        choice,
        &["sh", "-c", &format!("{print} | cat > /dev/null")],
        true,
        None,
    );
    let f = small_writes(&r);
    assert!(
        f.evidence.contains("its reader took them in"),
        "{}",
        f.evidence
    );
    // Its writes on count too when they look like a copy of each read: at least
    // MIN_CALLS reads (on a loaded machine `cat` may find the pipe full at each read and
    // make a few hundred).
    let reads = r
        .groups
        .iter()
        .find(|t| t.path == f.path)
        .map_or(0, |t| t.read.calls);
    assert!(
        f.basis
            .iter()
            .any(|b| b.contains("reads of the pipe by its reader")
                && (reads < iolab_trace::rules::MIN_CALLS
                    || b.contains("each written on to /dev/null"))),
        "{choice}: {reads} reads: {:?}",
        f.basis
    );
    // A FIFO this test reads, outside the trace: nothing is added, and the evidence says so.
    let dir = iolab_testkit::scratch();
    let fifo = dir.path().join("fifo");
    let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo reads a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap().len())
    };
    let w = format!("{print} > {}", fifo.display());
    let r = report(choice, &["sh", "-c", &w], true, None);
    assert!(reader.join().unwrap() > 3000);
    let f = small_writes(&r);
    assert!(
        f.evidence.ends_with(
            "its reader was not traced: the reads the fix would save it are not counted"
        ),
        "{choice}: {}",
        f.evidence
    );
    assert!(
        !f.basis.iter().any(|b| b.contains("reader")),
        "{:?}",
        f.basis
    );
}

#[test]
fn a_sync_per_record_from_dd_with_dsync_and_python_with_fsync() {
    let dir = iolab_testkit::scratch();
    let out = dir.path().join("dsync");
    let of = format!("of={}", out.display());
    let log = dir.path().join("log");
    let code = format!(
        "import os\nf = open('{}', 'ab')\nfor i in range(150):\n    f.write(b'record %d\\n' % i); f.flush(); os.fsync(f.fileno())\n",
        log.display()
    );
    for choice in backends() {
        let r = report(
            choice,
            &[
                "dd",
                "if=/dev/zero",
                &of,
                "bs=512",
                "count=150",
                "oflag=dsync",
                "status=none",
            ],
            false,
            None,
        );
        assert_eq!(kinds_on(&r, &out), [FindingKind::SyncPerRecord], "{choice}");
        if let Some(python) = python() {
            // A new log each run: the finding is about a file the run makes.
            let _ = std::fs::remove_file(&log);
            let r = report(choice, &[python, "-c", &code], false, None);
            // The log is made, its records synced, its folder never: its name is not
            // durable, and the durability rules say so too.
            assert_eq!(
                kinds_on(&r, &log),
                [FindingKind::SyncPerRecord, FindingKind::UnsyncedDirectory],
                "{choice}"
            );
            let f = r
                .findings
                .iter()
                .find(|f| f.kind == FindingKind::SyncPerRecord);
            assert_eq!(f.map(|f| f.calls), Some(150), "{choice}");
        }
    }
}

#[test]
fn small_reads_of_a_large_file() {
    let dir = iolab_testkit::scratch();
    let input = text_file(dir.path(), "big", 8 << 20);
    let code = format!(
        "with open('{}', 'rb', buffering=0) as f:\n    while f.read(4096): pass\n",
        input.display()
    );
    for choice in backends() {
        let r = report(
            choice,
            &[
                "dd",
                &format!("if={}", input.display()),
                "of=/dev/null",
                "bs=4k",
                "status=none",
            ],
            false,
            None,
        );
        assert_eq!(kinds_on(&r, &input), [FindingKind::SmallReads], "{choice}");
        if let Some(python) = python() {
            let r = report(choice, &[python, "-c", &code], false, None);
            assert_eq!(kinds_on(&r, &input), [FindingKind::SmallReads], "{choice}");
        }
    }
}

#[test]
fn random_reads_one_at_a_time() {
    let Some(python) = python() else { return };
    let dir = iolab_testkit::scratch();
    let input = text_file(dir.path(), "table", 16 << 20);
    let code = format!(
        "import os, random\nfd = os.open('{}', os.O_RDONLY)\nr = random.Random(7)\nfor _ in range(3000):\n    os.pread(fd, 4096, r.randrange(4096) * 4096)\n",
        input.display()
    );
    for choice in backends() {
        let r = report(choice, &[python, "-c", &code], false, None);
        assert_eq!(kinds_on(&r, &input), [FindingKind::RandomReads], "{choice}");
        // A few of 3000 random blocks land where the last read ended or began.
        let f = &r.findings[0];
        assert!((2980..=3000).contains(&f.calls), "{choice}: {}", f.calls);
        assert!(
            f.evidence.starts_with("3000 reads of 4.00 KiB"),
            "{}",
            f.evidence
        );
    }
}

#[test]
fn sed_in_place_rewrites_the_whole_file() {
    if !have("sed") {
        return;
    }
    let dir = iolab_testkit::scratch();
    for choice in backends() {
        let file = text_file(dir.path(), "data.csv", 1 << 20);
        let r = report(
            choice,
            &["sed", "-i", "s/abc/ABC/", &file.display().to_string()],
            false,
            None,
        );
        assert!(
            kinds_on(&r, &file).contains(&FindingKind::WholeFileRewrite),
            "{choice}: {:?}",
            r.findings
        );
        assert!(r.findings.iter().any(|f| f.cli.contains("iolab edit")));
    }
}

/// (`wc -l` is not among them: GNU wc 9.1 reads 16 320 bytes at a time, under the rule's
/// 16 KiB, and the count suite's winner beats it.)
#[test]
fn well_behaved_programs_get_no_finding() {
    let dir = iolab_testkit::scratch();
    let big = text_file(dir.path(), "big", 32 << 20);
    let b = big.display().to_string();
    let copy = dir.path().join("copy").display().to_string();
    let programs: Vec<Vec<String>> = vec![
        vec!["cat".into(), b.clone()],
        vec!["cp".into(), b.clone(), copy],
        vec![
            "dd".into(),
            format!("if={b}"),
            "of=/dev/null".into(),
            "bs=1M".into(),
        ],
        vec!["sha256sum".into(), b.clone()],
    ];
    for choice in backends() {
        for p in &programs {
            if !have(&p[0]) {
                continue;
            }
            let w: Vec<&str> = p.iter().map(String::as_str).collect();
            // cat's output goes to /dev/null through the shell, as a user would.
            let r = if p[0] == "cat" {
                report(
                    choice,
                    &["sh", "-c", &format!("cat {b} > /dev/null")],
                    false,
                    None,
                )
            } else {
                report(choice, &w, false, None)
            };
            assert!(r.findings.is_empty(), "{choice}: {p:?}: {:?}", kinds(&r));
        }
    }
}

#[test]
fn estimates_come_from_a_calibration_and_say_so() {
    let dir = iolab_testkit::scratch();
    let out = dir.path().join("out");
    let Some(&choice) = backends().first() else {
        return;
    };
    let r = dd_64_byte_writes(choice, &out, true, None);
    let f = &r.findings[0];
    let (now, fixed) = (f.estimated_s, f.estimated_fixed_s.unwrap());
    assert!(now > fixed, "the fix must be cheaper: {now} {fixed}");
    // What the calls cost is their measured time, plus a round trip each.
    assert!(
        now > f.measured_s && f.measured_s > 0.0,
        "{now} {}",
        f.measured_s
    );
    assert!((f.saving_s.unwrap() - (now - fixed)).abs() < 1e-12);
    assert!(
        f.basis.iter().all(|b| b.starts_with("calibrated here")),
        "{:?}",
        f.basis
    );
    assert!(r.sources.calibration.is_some());
    let text = iolab_trace::report::summary::render(&r);
    assert!(text.contains("calibration that ran here"), "{text}");
    assert!(text.lines().count() <= 45, "{text}");
}

/// A `results.json` such as `iolab bench append` writes, with two rows: 64-byte records
/// written one `write(2)` each (1 µs a record) and through `AppendFile` (20 ns).
fn fake_append_results(dir: &Path) -> std::path::PathBuf {
    use iolab_results::{Results, Row, SCHEMA_VERSION, Verdict};
    let row = |method: &str, ns: f64| {
        let mut r = Row {
            suite: "append".into(),
            method: method.into(),
            bytes: 64 * 10_000,
            verified: true,
            ..Row::default()
        };
        r.set_timings(&[ns * 1e-9 * 10_000.0], &[0.0], &[0.0]);
        for (k, v) in [
            ("payload_bytes", serde_json::json!(64)),
            ("records", serde_json::json!(10_000)),
            ("sync_policy", serde_json::json!("none")),
            ("ns_per_record", serde_json::json!(ns)),
        ] {
            r.extra.insert(k.into(), v);
        }
        r
    };
    let results = Results {
        schema_version: SCHEMA_VERSION,
        iolab_version: "test".into(),
        command: vec!["iolab".into(), "bench".into(), "append".into()],
        started_at: "2026-11-25T00:00:00Z".into(),
        finished_at: "2026-11-25T00:00:01Z".into(),
        partial: false,
        config: Default::default(),
        sysinfo: iolab_lab::sysinfo::collect(dir),
        rows: vec![row("write-per-record", 1000.0), row("append-file", 20.0)],
        warnings: vec![],
        notes: vec![],
        ceilings: None,
        verdict: vec![Verdict {
            suite: "append".into(),
            condition: "tiny".into(),
            winner: Some("append-file".into()),
            tied: vec![],
            median_s: Some(20e-9 * 10_000.0),
            figure: "20.0 ns/record".into(),
            ratio_to_best_baseline: None,
            best_baseline: None,
            of_limit: None,
            cli: "— (library only)".into(),
            library: "iolab_lab::file::AppendFile::create(path)?, .append(record)?".into(),
            example: "append_records".into(),
            ..Verdict::default()
        }],
        errors: vec![],
    };
    let run = dir.join("2026-11-25T00-00-00Z");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(
        run.join("results.json"),
        serde_json::to_string(&results).unwrap(),
    )
    .unwrap();
    run
}

/// 20 000 records of 64 bytes, one `write(2)` each, from Python (no copy loop).
fn python_64_byte_writes(choice: Choice, out: &Path, results: Option<&Path>) -> Option<Report> {
    let python = python()?;
    let code = format!(
        "import os\nfd = os.open('{}', os.O_WRONLY | os.O_CREAT | os.O_TRUNC)\nfor _ in range(20000):\n    os.write(fd, b'x' * 64)\n",
        out.display()
    );
    Some(report(choice, &[python, "-c", &code], false, results))
}

#[test]
fn estimates_come_from_iolab_bench_results() {
    let dir = iolab_testkit::scratch();
    let results = fake_append_results(dir.path());
    let out = dir.path().join("out");
    let Some(&choice) = backends().first() else {
        return;
    };
    let Some(r) = python_64_byte_writes(choice, &out, Some(&results)) else {
        return;
    };
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::SmallWrites)
        .unwrap_or_else(|| panic!("{:?}", kinds(&r)));
    assert_eq!(f.calls, 20_000);
    // No calibration: what the calls cost is what was measured in them.
    assert_eq!(f.estimated_s, f.measured_s);
    // The fix: 20 000 records through AppendFile at 20 ns, as the results say; the
    // saving counts at most the 1 µs a write(2) that they measured.
    let saving = f.measured_s.min(0.02) - 0.0004;
    assert!((f.saving_s.unwrap() - saving).abs() < 1e-9, "{f:?}");
    assert!(
        f.basis[0]
            .starts_with("iolab bench 2026-11-25T00-00-00Z: append write-per-record, 64 B records"),
        "{:?}",
        f.basis
    );
    assert!(
        f.basis[1].starts_with("iolab bench 2026-11-25T00-00-00Z: append append-file"),
        "{:?}",
        f.basis
    );
    assert!(f.library.contains("AppendFile"), "{}", f.library);
    assert_eq!(r.sources.results, Some(results.join("results.json")));
    assert!(r.sources.calibration.is_none());
}
