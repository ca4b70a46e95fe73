//! The journal `iolab crash` replays, recorded from real programs: a Python script that
//! replaces a file by rename (with its syncs), and a shell that makes, links and removes
//! names. Every entry must be what the program did, in its order, with its bytes.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use iolab_crash::{Fs, Op};
use iolab_testkit::trace as kit;
use iolab_trace::backend::Choice;
use iolab_trace::engine;

/// Whether the ptrace backend can run here (the skip line printed otherwise).
fn ptrace_here() -> bool {
    !kit::backends([Choice::Ptrace], engine::availability).is_empty()
}

/// A scratch folder holding the folder `data`, which a test's program changes (the
/// journal is written beside it).
fn folder() -> (tempfile::TempDir, std::path::PathBuf) {
    let scratch = iolab_testkit::scratch();
    let dir = scratch.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    (scratch, dir)
}

fn record(dir: &Path, w: &[&str]) -> Vec<Op> {
    let out = dir.parent().unwrap().join("journal.jsonl");
    let exit = kit::locked("record", w, |words| {
        iolab_trace::journal::record(words, dir, &out, &Default::default())
    });
    assert_eq!(exit.shell_code(), 0, "{w:?}");
    let journal = iolab_trace::journal::load(&out).unwrap();
    // Consecutive writes to standard output as one (Python writes a line in two).
    let mut ops: Vec<Op> = Vec::new();
    for op in journal.entries.into_iter().map(|e| e.op) {
        match (ops.last_mut(), op) {
            (Some(Op::Stdout { data }), Op::Stdout { data: more }) => data.extend(more),
            (_, op) => ops.push(op),
        }
    }
    ops
}

#[test]
fn a_python_replace_by_rename_is_journaled_with_its_bytes_and_syncs() {
    if !ptrace_here() || !kit::have("python3", iolab_trace::launch::Command::resolve) {
        return;
    }
    let (_scratch, dir) = folder();
    std::fs::write(dir.join("config.json"), b"{\"v\": 1}\n").unwrap();
    let script = "import os, sys\n\
        d = sys.argv[1]\n\
        fd = os.open(os.path.join(d, 'config.json.tmp'), os.O_WRONLY | os.O_CREAT | os.O_EXCL)\n\
        os.write(fd, b'{\"v\": 2}\\n')\n\
        os.pwrite(fd, b'3', 6)\n\
        os.fsync(fd)\n\
        os.close(fd)\n\
        os.rename(os.path.join(d, 'config.json.tmp'), os.path.join(d, 'config.json'))\n\
        dfd = os.open(d, os.O_RDONLY)\n\
        os.fsync(dfd)\n\
        print('saved', flush=True)\n";
    let initial = Fs::load(&dir).unwrap();
    let d = dir.to_str().unwrap();
    let ops = record(&dir, &["python3", "-c", script, d]);
    let real = std::fs::metadata(dir.join("config.json")).unwrap().ino();
    let dir_ino = std::fs::metadata(&dir).unwrap().ino();
    // A file the run made has an identity of its own, not its inode number, which a
    // file deleted earlier may have had.
    let ino = match ops.first() {
        Some(Op::Create { ino, .. }) => *ino,
        other => panic!("the first change is {other:?}, not the creation"),
    };
    assert_ne!(ino, real);
    assert_ne!(ino, dir_ino);
    let expected = vec![
        Op::Create {
            path: "config.json.tmp".into(),
            ino,
            parent: dir_ino,
        },
        Op::Write {
            ino,
            offset: 0,
            data: b"{\"v\": 3}\n".to_vec(), // read back after the pwrite changed it
        },
        Op::Write {
            ino,
            offset: 6,
            data: b"3".to_vec(),
        },
        Op::Sync {
            ino,
            data_only: false,
        },
        Op::Rename {
            from: "config.json.tmp".into(),
            to: "config.json".into(),
            from_parent: dir_ino,
            to_parent: dir_ino,
        },
        Op::Sync {
            ino: dir_ino,
            data_only: false,
        },
        Op::Stdout {
            data: b"saved\n".to_vec(),
        },
    ];
    // The first write is read back at the exit of its call, before the pwrite: its bytes
    // are the ones it wrote.
    let mut expected = expected;
    if let Op::Write { data, .. } = &mut expected[1] {
        *data = b"{\"v\": 2}\n".to_vec();
    }
    assert_eq!(ops, expected);
    // Replayed in full, the journal gives the folder as the program left it.
    let mut end = initial;
    for op in &ops {
        assert!(end.apply(op), "{op:?}");
    }
    assert_eq!(end.digest(), Fs::load(&dir).unwrap().digest());
}

#[test]
fn a_shell_making_linking_and_removing_names_is_journaled() {
    if !ptrace_here() {
        return;
    }
    let (_scratch, dir) = folder();
    let script = "cd \"$1\" && mkdir sub && printf abc > sub/f && ln sub/f g && \
                  rm sub/f && truncate -s 1 g && rmdir sub && sync";
    let initial = Fs::load(&dir).unwrap();
    let ops = record(&dir, &["sh", "-c", script, "sh", dir.to_str().unwrap()]);
    let names: Vec<&str> = ops
        .iter()
        .map(|op| match op {
            Op::Mkdir { .. } => "mkdir",
            Op::Create { .. } => "create",
            Op::Write { .. } => "write",
            Op::Link { .. } => "link",
            Op::Unlink { .. } => "unlink",
            Op::Truncate { .. } => "truncate",
            Op::Rmdir { .. } => "rmdir",
            Op::SyncAll => "sync",
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(
        names,
        [
            "mkdir", "create", "write", "link", "unlink", "truncate", "rmdir", "sync"
        ]
    );
    let mut end = initial;
    for op in &ops {
        assert!(end.apply(op), "{op:?}");
    }
    assert_eq!(end.digest(), Fs::load(&dir).unwrap().digest());
}

#[test]
fn a_shared_writable_map_of_a_file_in_the_folder_is_refused_by_name() {
    if !ptrace_here() || !kit::have("python3", iolab_trace::launch::Command::resolve) {
        return;
    }
    let (_scratch, dir) = folder();
    std::fs::write(dir.join("m"), [0u8; 4096]).unwrap();
    let script = "import mmap, sys\n\
        f = open(sys.argv[1] + '/m', 'r+b')\n\
        m = mmap.mmap(f.fileno(), 4096)\n\
        m[0:1] = b'x'\n\
        m.flush()\n";
    let ops = record(&dir, &["python3", "-c", script, dir.to_str().unwrap()]);
    assert!(
        ops.iter()
            .any(|op| matches!(op, Op::Refused { why } if why.contains("map"))),
        "{ops:?}"
    );
}

/// A file made with no name (`O_TMPFILE`), filled and synced, then linked through its
/// `/proc/self/fd` link (`linkat` with `AT_SYMLINK_FOLLOW`), as `iolab::Log` makes a log: the journal has the file, its bytes
/// (the contiguous writes of zeros as one), its sync and its name.
#[test]
fn a_file_made_with_no_name_and_linked_is_journaled() {
    if !ptrace_here() || !kit::have("python3", iolab_trace::launch::Command::resolve) {
        return;
    }
    let (_scratch, dir) = folder();
    let script = "import os, sys\n\
        d = sys.argv[1]\n\
        fd = os.open(d, os.O_TMPFILE | os.O_WRONLY, 0o644)\n\
        os.pwrite(fd, b'hdr', 0)\n\
        for i in range(3):\n    os.pwrite(fd, bytes(65536), 3 + i * 65536)\n\
        os.fsync(fd)\n\
        dfd = os.open(d, os.O_RDONLY)\n\
        os.link(f'/proc/self/fd/{fd}', 'made', dst_dir_fd=dfd)\n";
    let initial = Fs::load(&dir).unwrap();
    let ops = record(&dir, &["python3", "-c", script, dir.to_str().unwrap()]);
    let dir_ino = std::fs::metadata(&dir).unwrap().ino();
    let ino = match ops.first() {
        Some(Op::Tmpfile { ino }) => *ino,
        other => panic!("the first change is {other:?}, not the unnamed file"),
    };
    let expected = vec![
        Op::Tmpfile { ino },
        Op::Write {
            ino,
            offset: 0,
            data: b"hdr".to_vec(),
        },
        Op::Write {
            ino,
            offset: 3,
            data: vec![0; 3 * 65536],
        },
        Op::Sync {
            ino,
            data_only: false,
        },
        Op::Name {
            ino,
            path: "made".into(),
            parent: dir_ino,
        },
    ];
    assert_eq!(ops, expected);
    let mut end = initial;
    for op in &ops {
        assert!(end.apply(op), "{op:?}");
    }
    assert_eq!(end.digest(), Fs::load(&dir).unwrap().digest());
}
