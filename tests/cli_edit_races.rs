//! `iolab edit` while another process changes the file, as a user meets it: logrotate's
//! copytruncate truncating a file mid-edit, a logger appending to it. The edit must fail
//! with one line (`changed while being edited: …`, exit 1), never leave NUL bytes, never
//! lose an appended byte; and `--timings-json` must say what the summary line says.

use iolab_testkit as common;

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_iolab");

fn csv(rows: usize) -> Vec<u8> {
    (0..rows)
        .flat_map(|i| format!("{i},alpha,beta,gamma\n").into_bytes())
        .collect()
}

/// Runs `iolab edit ARGS FILE` and, once it holds the file open for writing (it has
/// closed its read-only probe), after `after`, runs the shell `action` on the file.
fn edit_while(args: &[&str], file: &Path, after: Duration, action: &str) -> std::process::Output {
    let closes = common::ReadOnlyCloses::watch(file);
    let child = Command::new(BIN)
        .arg("edit")
        .args(args)
        .arg(file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    closes.wait(1);
    std::thread::sleep(after);
    let status = Command::new("sh")
        .args(["-c", action, "sh"])
        .arg(file)
        .status()
        .unwrap();
    assert!(status.success(), "{action}");
    child.wait_with_output().unwrap()
}

#[test]
fn a_truncation_mid_replace_is_one_line_exit_1_and_no_nul_bytes() {
    let dir = common::scratch();
    for strategy in ["std-stream", "mmap", "std-whole"] {
        let file = dir.path().join(format!("log-{strategy}.csv"));
        fs::write(&file, csv(1_500_000)).unwrap(); // about 36 MB
        // The default strategy with a small buffer is slow enough to be met mid-way; the
        // others may finish first, which is fine as long as the file stays whole.
        let out = edit_while(
            &[
                "replace",
                "--from",
                ",",
                "--to",
                ";",
                "--buffer-size",
                "4K",
                "-s",
                strategy,
            ],
            &file,
            Duration::from_millis(5),
            ": > \"$1\"",
        );
        let after = fs::read(&file).unwrap();
        assert!(
            !after.contains(&0),
            "{strategy}: NUL bytes after a truncation"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        if strategy == "std-stream" {
            let line = common::assert_one_line_error(&out, 1, &["changed while being edited"]);
            assert!(line.contains(&file.display().to_string()), "{line}");
            assert!(out.stdout.is_empty(), "nothing reported as replaced");
        } else if !out.status.success() {
            assert!(
                stderr.contains("changed while being edited"),
                "{strategy}: {stderr}"
            );
        }
    }
}

#[test]
fn an_append_during_an_edit_is_never_lost() {
    let dir = common::scratch();
    let appender = "i=0; while [ $i -lt 200 ]; do i=$((i+1)); echo \"appended $i\" >> \"$1\"; done";
    let tail: Vec<u8> = (1..=200)
        .flat_map(|i| format!("appended {i}\n").into_bytes())
        .collect();
    for strategy in ["std-whole", "std-stream", "mmap"] {
        for op in [
            &["replace", "--from", ",", "--to", ";"][..],
            &["truncate-first-line"][..],
        ] {
            let file = dir.path().join(format!("app-{strategy}-{}.csv", op[0]));
            fs::write(&file, csv(500_000)).unwrap();
            let mut args = op.to_vec();
            args.extend(["--buffer-size", "4K", "-s", strategy]);
            let out = edit_while(&args, &file, Duration::from_millis(1), appender);
            let after = fs::read(&file).unwrap();
            assert!(
                after.ends_with(&tail),
                "{strategy} {op:?}: appended lines lost"
            );
            if !out.status.success() {
                common::assert_one_line_error(&out, 1, &["changed while being edited"]);
            }
        }
    }
}

#[test]
fn timings_json_says_what_the_summary_says() {
    let dir = common::scratch();
    let cases: [(&[u8], &[&str], &str); 6] = [
        (b"", &["truncate-first-line"], "unchanged"),
        (b"no newline", &["truncate-first-line"], "unchanged"),
        (b"one line\n", &["truncate-first-line"], "unchanged"),
        (b"a\nb\n", &["truncate-first-line"], "truncated"),
        (
            b"a;b\n",
            &["replace", "--from", ",", "--to", ";"],
            "unchanged",
        ),
        (
            b"a,b\n",
            &["replace", "--from", ",", "--to", ";"],
            "replaced",
        ),
    ];
    for (i, (content, args, expected)) in cases.iter().enumerate() {
        let file = dir.path().join(format!("t{i}"));
        let run = |json: bool| {
            fs::write(&file, content).unwrap();
            let mut cmd = Command::new(BIN);
            cmd.arg("edit").args(*args).arg("--no-sync");
            if json {
                cmd.arg("--timings-json");
            }
            let out = cmd.arg(&file).output().unwrap();
            assert!(
                out.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        };
        let text = run(false);
        let json: serde_json::Value = serde_json::from_str(&run(true)).unwrap();
        assert_eq!(json["outcome"], *expected, "{args:?} on {content:?}");
        let summary = json["summary"].as_str().unwrap();
        assert!(text.contains(summary), "{text:?} vs {summary:?}");
        assert_eq!(
            text.contains("left unchanged"),
            *expected == "unchanged",
            "{text}"
        );
    }
}
