//! Faults from outside: a full disk (a small tmpfs mounted by the test), an edit killed
//! mid-way, and the memory a streaming read may use on a file far bigger than its buffers.
//! Tests that need to mount skip with a message where they cannot (not root, no tmpfs).

use iolab_testkit as common;

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use assert_cmd::cargo::CommandCargoExt;
use common::SmallFs;

/// The children's cache folder (`XDG_CACHE_HOME`): this file's own, so no test reads or
/// writes the user's machine profile.
const CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache-faults");

fn iolab() -> Command {
    let mut cmd = Command::cargo_bin("iolab").unwrap();
    cmd.env("XDG_CACHE_HOME", CACHE);
    cmd
}

/// A small tmpfs, or the reason it cannot be mounted here (the caller skips).
fn small_disk(size: &str) -> Option<SmallFs> {
    match SmallFs::mount(size) {
        Ok(disk) => Some(disk),
        Err(reason) => {
            common::skip(reason);
            None
        }
    }
}

/// Fills `disk` to the last byte with a file of its own.
fn fill(disk: &SmallFs) -> PathBuf {
    let filler = disk.path().join("filler");
    let _ = Command::new("dd")
        .args(["if=/dev/zero", "bs=64k"])
        .arg(format!("of={}", filler.display()))
        .stderr(Stdio::null())
        .status();
    filler
}

/// The one error line of a failed run; `iolab bench`'s progress lines (`count warm: 1 row
/// in 0.0 s`, printed when stderr is not a terminal) may come before it.
fn one_line_error(output: &std::process::Output) -> String {
    let all = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "it succeeded: {all}");
    let progress = |l: &&str| l.ends_with(" s") && l.contains(" row") && l.contains(" in ");
    let errors: Vec<&str> = all.lines().filter(|l| !progress(l)).collect();
    assert_eq!(errors.len(), 1, "{all}");
    let stderr = format!("{}\n", errors[0]);
    assert!(stderr.starts_with("iolab: "), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

#[test]
fn gen_on_a_full_disk_fails_in_one_line_and_leaves_nothing() {
    let Some(disk) = small_disk("4m") else {
        return;
    };
    // Refused before writing: the size is known.
    let out = iolab()
        .args(["gen", "lines", "--size", "8M", "--out"])
        .arg(disk.path().join("big.txt"))
        .output()
        .unwrap();
    let err = one_line_error(&out);
    assert!(err.contains("space"), "{err}");
    // Runs out while writing: the free-space check passed, then the disk filled up.
    let filler = fill(&disk);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&filler)
        .unwrap()
        .set_len(std::fs::metadata(&filler).unwrap().len() - (1 << 20))
        .unwrap();
    let out = iolab()
        .args(["gen", "lines", "--size", "900K", "--out"])
        .arg(disk.path().join("a.txt"))
        .output()
        .unwrap();
    // 900K fits in the 1 MiB freed; now a second file cannot.
    assert!(out.status.success(), "{out:?}");
    let out = iolab()
        .args(["gen", "csv", "--rows", "100000", "--cols", "10", "--out"])
        .arg(disk.path().join("b.csv"))
        .output()
        .unwrap();
    let err = one_line_error(&out);
    assert!(err.contains("space"), "{err}");
    let names: Vec<String> = std::fs::read_dir(disk.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains("b.csv")), "{names:?}");
}

#[test]
fn bench_results_on_a_full_disk_fail_in_one_line() {
    let Some(disk) = small_disk("1m") else {
        return;
    };
    let data = common::scratch();
    fill(&disk);
    let out = iolab()
        .args([
            "bench",
            "count",
            "--quick",
            "--size",
            "1M",
            "--methods",
            "mmap",
            "--no-baselines",
            "--cache",
            "warm",
            "--data",
        ])
        .arg(data.path())
        .arg("--out")
        .arg(disk.path().join("results"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = one_line_error(&out);
    assert!(
        err.contains("No space left") || err.contains("space"),
        "{err}"
    );
}

#[test]
fn in_place_edits_need_no_free_space() {
    let Some(disk) = small_disk("2m") else {
        return;
    };
    let file = disk.path().join("data.csv");
    let content = b"a,b,c\n1,2,3\n".repeat(10_000);
    std::fs::write(&file, &content).unwrap();
    fill(&disk);
    for strategy in ["std-stream", "mmap"] {
        let out = iolab()
            .args([
                "edit",
                "replace",
                "--from",
                ",",
                "--to",
                ";",
                "--strategy",
                strategy,
            ])
            .arg(&file)
            .output()
            .unwrap();
        assert!(out.status.success(), "{strategy}: {out:?}");
        let out = iolab()
            .args([
                "edit",
                "replace",
                "--from",
                ";",
                "--to",
                ",",
                "--strategy",
                strategy,
            ])
            .arg(&file)
            .output()
            .unwrap();
        assert!(out.status.success(), "{strategy}: {out:?}");
    }
    assert_eq!(std::fs::read(&file).unwrap(), content);
    // std-whole needs no disk either, only memory.
    let out = iolab()
        .args(["edit", "truncate-first-line", "--strategy", "std-whole"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(std::fs::read(&file).unwrap(), b"a,b,c\n");
}

/// `edit replace` killed at random points leaves a file that a second run completes:
/// every byte is either the old or the new value, and the re-run gives the exact result.
#[test]
fn an_edit_killed_mid_way_is_completed_by_a_rerun() {
    let dir = common::scratch();
    let file = dir.path().join("big.csv");
    let original: Vec<u8> = b"12,345,6789,0\n".repeat(6 << 20);
    let want: Vec<u8> = original
        .iter()
        .map(|&b| if b == b',' { b';' } else { b })
        .collect();
    let mut interrupted = 0;
    for (round, strategy) in ["std-stream", "mmap", "std-stream", "mmap", "std-stream"]
        .iter()
        .enumerate()
    {
        std::fs::write(&file, &original).unwrap();
        // The kill comes once the edit holds the file (it has closed its read-only probe).
        let closes = common::ReadOnlyCloses::watch(&file);
        let mut child = iolab()
            .args([
                "edit",
                "replace",
                "--from",
                ",",
                "--to",
                ";",
                "--strategy",
                strategy,
            ])
            .arg(&file)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        closes.wait(1);
        std::thread::sleep(Duration::from_millis(2 + 4 * round as u64));
        // SAFETY: kill with our own child's pid has no memory effects.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) };
        let status = child.wait().unwrap();
        let now = std::fs::read(&file).unwrap();
        // Killed mid-way: some commas replaced, some not.
        if status.signal() == Some(libc::SIGKILL) && now.contains(&b';') && now.contains(&b',') {
            interrupted += 1;
        }
        assert_eq!(now.len(), original.len(), "the length never changes");
        assert!(
            now.iter()
                .zip(&original)
                .all(|(&n, &o)| n == o || (o == b',' && n == b';')),
            "only commas may have changed"
        );
        let out = iolab()
            .args([
                "edit",
                "replace",
                "--from",
                ",",
                "--to",
                ";",
                "--strategy",
                strategy,
            ])
            .arg(&file)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert!(
            std::fs::read(&file).unwrap() == want,
            "{strategy}: the re-run did not complete the edit"
        );
    }
    eprintln!("{interrupted} of 5 edits were killed mid-way");
    assert!(
        interrupted > 0,
        "no edit was killed mid-way: the test tested nothing"
    );
}

/// Peak memory of an iolab run, as it reports it (`VmHWM`: this program alone; a child's
/// `ru_maxrss` would include the test harness's own peak, inherited at `exec`).
fn peak_rss_kib(mut cmd: Command) -> (std::process::ExitStatus, i64) {
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return (out.status, 0);
    }
    let bytes: i64 = stderr
        .lines()
        .find_map(|l| l.split("peak memory (VmHWM): ").nth(1))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .or_else(|| {
            // `edit --timings-json`
            let json: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
            json["peak_rss_bytes"].as_i64()
        })
        .unwrap_or_else(|| panic!("no peak memory reported: {stderr}"));
    (out.status, bytes / 1024)
}

/// Streaming methods and the std-stream edit stay within 16 MiB of resident memory on a
/// 4 GiB (sparse) file.
#[test]
fn streaming_reads_and_edits_stay_within_16_mib_on_a_4_gib_file() {
    let dir = common::scratch();
    let file = dir.path().join("sparse");
    let f = std::fs::File::create(&file).unwrap();
    f.set_len(4 << 30).unwrap();
    // A newline every 1 MiB keeps lines short for bufread-lines.
    use std::os::unix::fs::FileExt;
    for i in 0..4096u64 {
        f.write_at(b"\n", i << 20).unwrap();
    }
    drop(f);
    const LIMIT_KIB: i64 = 16 << 10;
    for method in [
        "bufread-chunks",
        "readv",
        "direct",
        "uring",
        "uring-readv",
        "pread-parallel",
        "uring-direct",
        "bufread-lines",
    ] {
        let mut cmd = iolab();
        cmd.args(["count", "--verbose", "--method", method])
            .arg(&file);
        // Only a method this machine cannot run is passed over; any other failure fails.
        if let Err(reason) = method.parse::<iolab::CountMethod>().unwrap().availability() {
            common::skip(format!("{method}: {reason}"));
            continue;
        }
        let (status, kib) = peak_rss_kib(cmd);
        assert!(
            status.success(),
            "{method} failed on the 4 GiB file: {status}"
        );
        eprintln!("{method}: peak RSS {kib} KiB");
        assert!(kib <= LIMIT_KIB, "{method}: peak RSS {kib} KiB");
    }
    let mut cmd = iolab();
    // No byte matches, so nothing is written back and the sparse file stays sparse.
    cmd.args([
        "edit",
        "replace",
        "--from",
        "z",
        "--to",
        "y",
        "--strategy",
        "std-stream",
        "--no-sync",
        "--timings-json",
    ])
    .arg(&file);
    let (status, kib) = peak_rss_kib(cmd);
    assert!(status.success());
    eprintln!("std-stream edit: peak RSS {kib} KiB");
    assert!(kib <= LIMIT_KIB, "std-stream edit: peak RSS {kib} KiB");
}
