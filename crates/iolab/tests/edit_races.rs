//! Edits while another process changes the file: every strategy and both operations, with
//! a helper process (a shell, as logrotate or a logger would be) that truncates the file to
//! nothing or appends lines to it at several moments of the edit.
//!
//! Whatever the moment, the file must never get NUL bytes (a write past its new end) and
//! never lose a byte the other process appended; an edit that saw the change fails with
//! `changed while being edited` (or, for a map, the truncation it met), and one that
//! succeeded left a correct file. No timing is asserted: the moments only spread the
//! helper's action over the edit, and the test counts how many edits were caught mid-way.

use iolab_testkit as common;

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use iolab::Error;
use iolab_lab::edit::{EditOptions, EditStrategy};

/// The helper's action.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Other {
    /// `truncate -s 0 FILE`, as logrotate's copytruncate.
    Truncate,
    /// 300 lines `appended N`, one `write(2)` each with `O_APPEND`, as a logger.
    Append,
}

/// The edit under test.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Replace,
    TruncateFirstLine,
}

const APPENDED: usize = 300;

/// A CSV file of `rows` lines, without NUL bytes.
fn csv(rows: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..rows {
        out.extend_from_slice(format!("{i},alpha,beta,gamma,{}\n", i * 7).as_bytes());
    }
    out
}

/// Starts the helper: a shell that waits for a line on its standard input, then acts on
/// `path` with builtins only (`: > FILE` truncates with `O_TRUNC`, `echo >> FILE` appends
/// with `O_APPEND`), so it acts within microseconds of being told.
fn helper(other: Other, path: &Path) -> Child {
    let script = match other {
        Other::Truncate => "read go; : > \"$1\"",
        Other::Append => {
            "read go; i=0; while [ $i -lt 300 ]; do i=$((i+1)); echo \"appended $i\" >> \"$1\"; done"
        }
    };
    Command::new("sh")
        .args(["-c", script, "sh"])
        .arg(path)
        .stdin(Stdio::piped())
        .spawn()
        .expect("sh")
}

/// The appended lines, in order, as the helper writes them.
fn appended_tail() -> Vec<u8> {
    (1..=APPENDED)
        .flat_map(|i| format!("appended {i}\n").into_bytes())
        .collect()
}

/// Runs the edit on `path`.
fn edit(strategy: EditStrategy, op: Op, path: &Path) -> Result<(), Error> {
    // A small buffer makes std-stream slow enough to be caught mid-way.
    let editor = EditOptions::new()
        .strategy(strategy)
        .durable(false)
        .buffer_size(4096);
    match op {
        Op::Replace => editor.replace_byte(path, b',', b';').map(drop),
        Op::TruncateFirstLine => editor.truncate_after_first_line(path).map(drop),
    }
}

/// How long the edit takes alone here, so the helper's moments can be spread over it.
fn duration_alone(strategy: EditStrategy, op: Op, data: &[u8], dir: &Path) -> Duration {
    let path = dir.join(format!("alone-{strategy}-{op:?}.csv"));
    fs::write(&path, data).unwrap();
    let start = Instant::now();
    edit(strategy, op, &path).unwrap();
    start.elapsed()
}

/// Runs one race, the helper told to act `delay` after the edit opened the file (it closes
/// its read-only probe once it holds the descriptor it edits through), and checks the file
/// afterwards; returns whether the edit saw the change. Lines appended before the edit
/// opened the file would be the edit's to cut; none are.
fn race(strategy: EditStrategy, op: Op, other: Other, delay: Duration, dir: &Path) -> bool {
    let path = dir.join(format!(
        "{strategy}-{op:?}-{other:?}-{}.csv",
        delay.as_nanos()
    ));
    let data = csv(ROWS);
    fs::write(&path, &data).unwrap();
    let mut child = helper(other, &path);
    let mut go = child.stdin.take().unwrap();
    let closes = common::ReadOnlyCloses::watch(&path);
    let edited = path.clone();
    let editor = std::thread::spawn(move || edit(strategy, op, &edited));
    closes.wait(1);
    std::thread::sleep(delay);
    go.write_all(b"go\n").unwrap();
    drop(go);
    let result = editor.join().unwrap();
    assert!(child.wait().unwrap().success(), "the helper failed");
    let after = fs::read(&path).unwrap();
    let what = format!("{strategy} {op:?} with {other:?} after {delay:?}: {result:?}");
    assert!(!after.contains(&0), "{what}: NUL bytes in the file");
    let caught = match result.as_ref().map_err(Error::cause) {
        Ok(()) => false,
        Err(Error::Changed { what }) => {
            assert!(!what.is_empty());
            true
        }
        Err(Error::ShrankWhileEdited) if strategy == EditStrategy::Mmap => true,
        Err(e) => panic!("{what}: unexpected error {e}"),
    };
    let first_line = &data[..=data.iter().position(|&b| b == b'\n').unwrap()];
    match other {
        Other::Append => {
            // Never cut off: every appended line is there, in order, at the end.
            let tail = appended_tail();
            assert!(after.ends_with(&tail), "{what}: appended lines lost");
            let body = &after[..after.len() - tail.len()];
            match (op, caught) {
                // Untouched, or (replace) partly replaced: same length, no other change.
                (_, true) => {
                    assert!(
                        body.len() == data.len()
                            || (op == Op::TruncateFirstLine && body == first_line),
                        "{what}: body of {} bytes",
                        body.len()
                    );
                    if body.len() == data.len() {
                        assert!(
                            body.iter()
                                .zip(&data)
                                .all(|(&a, &b)| a == b || (b == b',' && a == b';')),
                            "{what}: bytes other than the replaced ones changed"
                        );
                    }
                }
                (Op::Replace, false) => {
                    assert_eq!(body.len(), data.len(), "{what}");
                    assert!(!body.contains(&b','), "{what}: success but a comma left");
                }
                (Op::TruncateFirstLine, false) => assert_eq!(body, first_line, "{what}"),
            }
        }
        Other::Truncate => {
            // The helper truncated last or the edit stopped: either way nothing was
            // written past the end it left (0), so the file is empty or was cut before
            // the helper's truncation and has nothing of the edit past it.
            if after.is_empty() {
                return caught;
            }
            // The edit ran after the truncation: it saw an empty file.
            panic!("{what}: {} bytes left after a truncation to 0", after.len());
        }
    }
    caught
}

/// The data set's rows: about 13 MB.
const ROWS: usize = 400_000;

/// Every strategy, the helper acting at 0, 1/8, 1/4, 1/2, 3/4, 1 and 3/2 of the time the
/// edit takes alone. At least one edit must have been caught mid-way, or the test tested
/// nothing.
fn check_all(op: Op, other: Other) {
    if Command::new("sh").arg("-c").arg("true").status().is_err() {
        return common::skip("no sh(1) here");
    }
    let dir = common::scratch();
    let data = csv(ROWS);
    let mut caught_any = 0;
    for strategy in EditStrategy::ALL {
        let alone = duration_alone(strategy, op, &data, dir.path());
        let delays = [0, 1, 2, 4, 6, 8, 12].map(|eighths| alone * eighths / 8);
        let caught = delays
            .iter()
            .filter(|&&d| race(strategy, op, other, d, dir.path()))
            .count();
        eprintln!(
            "{strategy} {op:?} {other:?}: {caught} of {} edits saw the change (alone: {alone:?})",
            delays.len()
        );
        caught_any += caught;
    }
    // A replace takes milliseconds: some moments must land inside it, or the test tested
    // nothing. Keeping the first line takes well under one here, and a loaded machine can
    // finish it before the helper acts every time; its invariants were checked all the same.
    if op == Op::Replace {
        assert!(
            caught_any > 0,
            "no edit was caught mid-way: the races did not happen"
        );
    }
}

#[test]
fn replace_while_another_process_truncates() {
    check_all(Op::Replace, Other::Truncate);
}

#[test]
fn replace_while_another_process_appends() {
    check_all(Op::Replace, Other::Append);
}

#[test]
fn truncate_first_line_while_another_process_truncates() {
    check_all(Op::TruncateFirstLine, Other::Truncate);
}

#[test]
fn truncate_first_line_while_another_process_appends() {
    check_all(Op::TruncateFirstLine, Other::Append);
}

/// Another writer rewriting bytes in place (every 50 µs) while the edit runs: its bytes are
/// never undone by a write-back of an older copy. The read-and-write strategies see the
/// change before their first write and stop; the map has no older copy to write back.
#[test]
fn every_strategy_refuses_to_write_over_a_change_it_did_not_read() {
    let dir = common::scratch();
    for strategy in EditStrategy::ALL {
        let path = dir.path().join(format!("rewrite-{strategy}"));
        let data = csv(200_000);
        fs::write(&path, &data).unwrap();
        // A writer that rewrites the first bytes continuously while the edit runs.
        let victim = path.clone();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let (started, first_write) = std::sync::mpsc::channel();
        let rewriter = std::thread::spawn(move || {
            use std::os::unix::fs::FileExt;
            let f = fs::OpenOptions::new().write(true).open(&victim).unwrap();
            let mut n = 0u64;
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                f.write_all_at(b"X", 0).unwrap();
                n += 1;
                if n == 1 {
                    started.send(()).unwrap();
                }
                std::thread::sleep(Duration::from_micros(50));
            }
            n
        });
        // The edit starts once the other writer is writing.
        first_write.recv().unwrap();
        let result = EditOptions::new()
            .strategy(strategy)
            .durable(false)
            .buffer_size(4096)
            .replace_byte(&path, b',', b';');
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let writes = rewriter.join().unwrap();
        assert!(writes > 0);
        let after = fs::read(&path).unwrap();
        assert_eq!(after.len(), data.len());
        assert_eq!(
            after[0], b'X',
            "{strategy}: the other writer's byte was undone"
        );
        match strategy {
            // Through a shared map the other writer's byte lands in the same page: no
            // stale copy is ever written back, so the edit may finish.
            EditStrategy::Mmap => assert!(
                matches!(
                    result.as_ref().map_err(Error::cause),
                    Ok(_) | Err(Error::Changed { .. })
                ),
                "{result:?}"
            ),
            _ => assert!(
                matches!(
                    result.as_ref().map_err(Error::cause),
                    Err(Error::Changed { .. })
                ),
                "{strategy}: {result:?}"
            ),
        }
    }
}
