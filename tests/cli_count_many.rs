//! `iolab count` over many files: the output is `wc -l`'s, byte for byte (counts, column
//! width, order, `total`), whether the names come as arguments or with `--files0-from`;
//! an unreadable file gets one error line and the others are still counted; `iolab gen
//! tree` makes a folder whose counts agree with `wc -l`.

use iolab_testkit as common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_iolab");
const WC: &str = "/usr/bin/wc";

fn stdout_of(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Files of many sizes: empty, without a final newline, a few bytes, tens of KiB, and
/// one over auto's small-file limit (counted as a whole file is).
fn fixtures(dir: &Path, n: usize) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let path = dir.join(format!("f{i:04}.txt"));
            let len = match i % 7 {
                0 => 0,
                1 => 3,
                2 => 100 + i,
                3 => 4096,
                4 => 65536 + i, // more than one read buffer
                5 => 20_000,
                _ => 777,
            };
            let mut content: Vec<u8> = (0..len)
                .map(|j| if (j * 7 + i) % 41 == 0 { b'\n' } else { b'x' })
                .collect();
            if i == 13 {
                content = vec![b'\n'; (1 << 20) + 5];
            }
            fs::write(&path, content).unwrap();
            path
        })
        .collect()
}

fn wc_available() -> bool {
    let ok = Path::new(WC).exists();
    if !ok {
        common::skip(format!("{WC} is not installed"));
    }
    ok
}

fn nul_list(dir: &Path, names: &[PathBuf]) -> PathBuf {
    let list = dir.join("list0");
    let mut bytes = Vec::new();
    for n in names {
        bytes.extend_from_slice(n.as_os_str().as_encoded_bytes());
        bytes.push(0);
    }
    fs::write(&list, bytes).unwrap();
    list
}

/// `iolab count FILE...` prints exactly what `wc -l FILE...` prints.
fn assert_same_as_wc(files: &[PathBuf]) {
    let wc = Command::new(WC).arg("-l").args(files).output().unwrap();
    let ours = Command::new(BIN).arg("count").args(files).output().unwrap();
    assert_eq!(stdout_of(&ours), stdout_of(&wc));
    assert_eq!(ours.status.code(), wc.status.code());
}

#[test]
fn many_files_print_what_wc_prints_in_the_order_given() {
    if !wc_available() {
        return;
    }
    let dir = common::scratch();
    let mut files = fixtures(dir.path(), 300);
    files.reverse(); // not the order they were made in
    let wc = Command::new(WC).arg("-l").args(&files).output().unwrap();
    assert!(wc.status.success());
    for threads in ["1", "2", "7"] {
        let ours = Command::new(BIN)
            .args(["count", "--threads", threads])
            .args(&files)
            .output()
            .unwrap();
        assert!(ours.status.success(), "{ours:?}");
        assert_eq!(stdout_of(&ours), stdout_of(&wc), "--threads {threads}");
        assert_eq!(stderr_of(&ours), "");
    }
    // The plain form (no option), as `wc -l FILE...` is typed.
    assert_same_as_wc(&files);

    // The same names from a NUL-separated list.
    let list = nul_list(dir.path(), &files);
    let wc = Command::new(WC)
        .arg("-l")
        .arg(format!("--files0-from={}", list.display()))
        .output()
        .unwrap();
    let ours = Command::new(BIN)
        .arg("count")
        .arg(format!("--files0-from={}", list.display()))
        .output()
        .unwrap();
    assert!(ours.status.success(), "{ours:?}");
    assert_eq!(stdout_of(&ours), stdout_of(&wc));
}

#[test]
fn an_unreadable_file_gets_one_line_and_the_others_are_counted() {
    if !wc_available() {
        return;
    }
    let dir = common::scratch();
    let files = fixtures(dir.path(), 200);
    let missing = dir.path().join("no-such-file");
    let mut names = files.clone();
    names.insert(150, missing.clone());
    let list = nul_list(dir.path(), &names);
    let ours = Command::new(BIN)
        .arg("count")
        .arg(format!("--files0-from={}", list.display()))
        .output()
        .unwrap();
    assert_eq!(ours.status.code(), Some(1), "{ours:?}");
    let stderr = stderr_of(&ours);
    assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    assert!(stderr.starts_with("iolab: "), "{stderr:?}");
    assert!(
        stderr.contains(&missing.display().to_string()),
        "{stderr:?}"
    );
    assert!(stderr.contains("No such file"), "{stderr:?}");
    assert!(!stderr.contains("panicked"), "{stderr:?}");
    // The others: exactly as wc counts them without the missing one, in order.
    let wc = Command::new(WC).arg("-l").args(&files).output().unwrap();
    assert_eq!(stdout_of(&ours), stdout_of(&wc));
}

#[test]
fn a_bad_list_entry_is_named_with_its_position() {
    let dir = common::scratch();
    let file = dir.path().join("a");
    fs::write(&file, "1\n2\n").unwrap();
    let list = dir.path().join("list0");
    let mut bytes = file.as_os_str().as_encoded_bytes().to_vec();
    bytes.extend_from_slice(b"\0\0");
    bytes.extend_from_slice(file.as_os_str().as_encoded_bytes());
    fs::write(&list, bytes).unwrap();
    let out = Command::new(BIN)
        .arg("count")
        .arg(format!("--files0-from={}", list.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr_of(&out),
        format!(
            "iolab: {}:2: invalid zero-length file name\n",
            list.display()
        )
    );
    let f = file.display();
    assert_eq!(stdout_of(&out), format!("2 {f}\n2 {f}\n4 total\n"));

    // A list that cannot be read: one line naming it, no panic.
    let out = Command::new(BIN)
        .args(["count", "--files0-from"])
        .arg(dir.path().join("none"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = stderr_of(&out);
    assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    assert!(stderr.contains("none"), "{stderr:?}");

    // Names and a list together are refused, as wc refuses them.
    let out = Command::new(BIN)
        .arg("count")
        .arg(format!("--files0-from={}", list.display()))
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_generated_tree_counts_as_wc_counts_it() {
    if !wc_available() {
        return;
    }
    let dir = common::scratch();
    let root = dir.path().join("tree");
    let out = Command::new(BIN)
        .args(["gen", "tree", "--files", "250", "--out"])
        .arg(&root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(stderr_of(&out).contains("250 files"), "{out:?}");
    let mut files: Vec<PathBuf> = Vec::new();
    for a in fs::read_dir(root.join("d000")).unwrap() {
        for f in fs::read_dir(a.unwrap().path()).unwrap() {
            files.push(f.unwrap().path());
        }
    }
    files.sort();
    assert_eq!(files.len(), 250);
    assert_same_as_wc(&files);
}

/// A name that is not UTF-8 is printed with its own bytes, and a directory among the files
/// (or first) widens the column as `wc` widens it; stdout and the status are `wc -l`'s.
#[test]
fn odd_names_and_a_directory_print_as_wc_prints_them() {
    use std::os::unix::ffi::OsStrExt;
    if !wc_available() {
        return;
    }
    let dir = common::scratch();
    let odd = dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"odd-\xff-name"));
    fs::write(&odd, "a\nb\n").unwrap();
    let plain = dir.path().join("plain");
    fs::write(&plain, "c\n").unwrap();
    let folder = dir.path().join("folder");
    fs::create_dir(&folder).unwrap();
    for files in [
        vec![odd.clone(), plain.clone()],
        vec![odd.clone(), folder.clone(), plain.clone()],
        vec![folder.clone(), odd.clone()],
    ] {
        let wc = Command::new(WC).arg("-l").args(&files).output().unwrap();
        let ours = Command::new(BIN)
            .arg("count")
            .args(&files)
            .output()
            .unwrap();
        assert_eq!(ours.stdout, wc.stdout, "{files:?}");
        assert_eq!(ours.status.code(), wc.status.code(), "{files:?}");
    }
}
