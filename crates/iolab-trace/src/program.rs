//! What ran: the program a traced command is, recognised from its path, its `#!` line, its
//! arguments and, for a native binary, the strings linked into it — so that a finding's fix
//! is said in that program's own terms (`rules::programs`) (`python -u`, `BEGIN … COMMIT`,
//! `fs.createWriteStream`, a redirection outside a shell loop, `setvbuf`, …), and the
//! iolab command and library call are kept for Rust programs and unknown ones.
//!
//! **What is read**: the first bytes of the program (its `#!` line) and, for an ELF binary,
//! up to [`MAX_SCAN`] bytes, searched for Go's build-info marker, Rust's panic machinery and
//! a `libsqlite3` dependency. Only the command's own program is recognised: a child it
//! starts (a shell loop's `echo` is a builtin; `sh -c` runs in the same process) is taken
//! as part of it. The table of programs and their fixes: docs/trace.md.

use std::path::Path;

/// The most bytes of a binary searched for its markers: 256 MiB.
pub const MAX_SCAN: usize = 256 << 20;

/// A kind of program, by how its I/O is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Program {
    /// CPython (`python`, `python3`, `python3.11`, a `#!` script).
    Python,
    /// The `sqlite3` shell, or a program linking `libsqlite3`.
    Sqlite3,
    /// Node.js.
    Node,
    /// A POSIX shell (`sh`, `bash`, `dash`, `zsh`, `ksh`, `busybox`).
    Shell,
    /// `dd`.
    Dd,
    /// `tar`.
    Tar,
    /// `git`.
    Git,
    /// A Java virtual machine.
    Java,
    /// A Go binary.
    Go,
    /// A Rust binary.
    Rust,
    /// Any other native binary: C or C++ through stdio, as far as its fix goes.
    CStdio,
    /// Not recognised (a script of another language, an unreadable binary).
    Unknown,
}

impl Program {
    /// The name in `--json` (`program`) and docs/trace.md.
    pub fn name(self) -> &'static str {
        match self {
            Program::Python => "python",
            Program::Sqlite3 => "sqlite3",
            Program::Node => "node",
            Program::Shell => "shell",
            Program::Dd => "dd",
            Program::Tar => "tar",
            Program::Git => "git",
            Program::Java => "java",
            Program::Go => "go",
            Program::Rust => "rust",
            Program::CStdio => "c-stdio",
            Program::Unknown => "unknown",
        }
    }

    /// Whether iolab's own command and library call are the fix for it (a Rust program)
    /// or the best that can be said (an unknown one).
    pub fn takes_iolab(self) -> bool {
        matches!(self, Program::Rust | Program::Unknown)
    }
}

/// A recognised program and what was seen of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recognised {
    /// Which program.
    pub program: Program,
    /// Python run unbuffered (`-u`, or `PYTHONUNBUFFERED` set).
    pub unbuffered: bool,
    /// How it was recognised, in a few words.
    pub how: String,
    /// The program images a run of it alone starts (`execve`s): 1, or 2 through `env`.
    execs: u64,
}

impl Recognised {
    /// What it is in a run that made `execs` program images: itself when that is all it
    /// starts; [`Program::Unknown`] when other programs ran too (a shell's pipeline, a
    /// script calling tools), since the calls of a finding may be theirs.
    pub fn in_run(self, execs: u64) -> Recognised {
        if execs <= self.execs {
            return self;
        }
        Recognised {
            program: Program::Unknown,
            unbuffered: false,
            how: format!(
                "{} ran {execs} programs: which one made a finding's calls is not known",
                self.program.name()
            ),
            execs: self.execs,
        }
    }
}

/// Recognises the program at `path` (the command's resolved program) run with the
/// arguments `args` (after the program's own word); `python_unbuffered_env`: whether
/// `PYTHONUNBUFFERED` is set to a non-empty value in its environment.
pub fn recognise(path: &Path, args: &[String], python_unbuffered_env: bool) -> Recognised {
    let head = read_head(path, 256);
    // A script: its interpreter decides (`#!/usr/bin/env python3 -u` included).
    if let Some(line) = head.strip_prefix(b"#!") {
        let line = String::from_utf8_lossy(line.split(|&b| b == b'\n').next().unwrap_or(&[]));
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or("");
        let (interpreter, mut flags): (&str, Vec<String>) = if base(first) == "env" {
            // `env`'s own options (`-S`) come before the interpreter.
            let mut rest = words.skip_while(|w| w.starts_with('-'));
            (
                rest.next().unwrap_or(""),
                rest.map(str::to_string).collect(),
            )
        } else {
            (first, words.map(str::to_string).collect())
        };
        flags.extend(args.iter().cloned());
        let mut r = by_name(base(interpreter), &flags, python_unbuffered_env);
        r.how = format!("a script run by {interpreter} (its #! line)");
        if base(first) == "env" {
            r.execs = 2;
        }
        return r;
    }
    let name = base(&path.to_string_lossy()).to_string();
    let named = by_name(&name, args, python_unbuffered_env);
    if named.program != Program::Unknown {
        return named;
    }
    if !head.starts_with(b"\x7fELF") {
        return named;
    }
    native(path)
}

/// The program a command name says (`python3.11`, `node`, `bash`, …).
fn by_name(name: &str, args: &[String], python_unbuffered_env: bool) -> Recognised {
    let program = match name {
        n if n.starts_with("python") || n == "pypy3" => Program::Python,
        "sqlite3" => Program::Sqlite3,
        "node" | "nodejs" => Program::Node,
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "busybox" => Program::Shell,
        "dd" => Program::Dd,
        "tar" | "gtar" | "bsdtar" => Program::Tar,
        "git" => Program::Git,
        "java" => Program::Java,
        _ => Program::Unknown,
    };
    // Python's own options come before the script or `-c`/`-m`: `-u`, or `-u` among
    // joined short options (`-uB`).
    let unbuffered = program == Program::Python
        && (python_unbuffered_env
            || args
                .iter()
                .take_while(|a| a.starts_with('-') && *a != "-c" && *a != "-m")
                .any(|a| !a.starts_with("--") && a[1..].contains('u')));
    Recognised {
        program,
        unbuffered,
        how: format!("its name, {name}"),
        execs: 1,
    }
}

/// A native binary: Go by its build-info marker, Rust by its panic machinery, a program
/// linking `libsqlite3` by that dependency's name, else C through stdio.
fn native(path: &Path) -> Recognised {
    let bytes = read_head(path, MAX_SCAN);
    let has = |needle: &[u8]| memchr::memmem::find(&bytes, needle).is_some();
    let (program, how) = if has(b"\xff Go buildinf:") {
        (Program::Go, "Go's build information in the binary")
    } else if has(b"libsqlite3.so") {
        (Program::Sqlite3, "it links libsqlite3")
    } else if has(b"rust_begin_unwind") || has(b"/rustc/") {
        (Program::Rust, "Rust's runtime in the binary")
    } else {
        (Program::CStdio, "a native binary (C or C++)")
    };
    Recognised {
        program,
        unbuffered: false,
        how: how.into(),
        execs: 1,
    }
}

/// The last component of a path.
fn base(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Up to `max` bytes from the start of the file at `path` (none when it cannot be read).
fn read_head(path: &Path, max: usize) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.take(max as u64).read_to_end(&mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(dir: &Path, name: &str, text: &[u8]) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn names_scripts_and_binaries_are_recognised() {
        let dir = tempfile::tempdir().unwrap();
        let none = dir.path().join("missing");
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let py = Path::new("/usr/bin/python3.11");
        let r = recognise(py, &words(&["-u", "x.py"]), false);
        assert_eq!((r.program, r.unbuffered), (Program::Python, true));
        assert!(!recognise(py, &words(&["x.py", "-u"]), false).unbuffered);
        assert!(recognise(py, &words(&["-c", "print(1)"]), true).unbuffered);
        assert!(recognise(py, &words(&["-Bu", "x.py"]), false).unbuffered);
        for (name, program) in [
            ("sqlite3", Program::Sqlite3),
            ("nodejs", Program::Node),
            ("bash", Program::Shell),
            ("dd", Program::Dd),
            ("tar", Program::Tar),
            ("git", Program::Git),
            ("java", Program::Java),
        ] {
            assert_eq!(
                recognise(&dir.path().join(name), &[], false).program,
                program
            );
        }
        assert_eq!(recognise(&none, &[], false).program, Program::Unknown);
        let s = script(dir.path(), "job", b"#!/usr/bin/env python3 -u\nprint(1)\n");
        let r = recognise(&s, &[], false);
        assert_eq!((r.program, r.unbuffered), (Program::Python, true), "{r:?}");
        assert!(r.how.contains("#! line"));
        let s = script(dir.path(), "loop", b"#!/bin/bash\necho\n");
        assert_eq!(recognise(&s, &[], false).program, Program::Shell);
        let s = script(dir.path(), "perl", b"#!/usr/bin/perl\n");
        assert_eq!(recognise(&s, &[], false).program, Program::Unknown);
        let elf = |tail: &[u8]| [b"\x7fELF".as_slice(), b"\0\0padding", tail].concat();
        for (bytes, program) in [
            (elf(b"\xff Go buildinf:"), Program::Go),
            (elf(b"libsqlite3.so.0"), Program::Sqlite3),
            (elf(b"rust_begin_unwind"), Program::Rust),
            (elf(b"libc.so.6"), Program::CStdio),
        ] {
            let p = script(dir.path(), "bin", &bytes);
            assert_eq!(recognise(&p, &[], false).program, program);
        }
    }

    #[test]
    fn a_run_of_several_programs_is_not_taken_for_its_first() {
        let sh = recognise(Path::new("/bin/sh"), &[], false);
        assert_eq!(sh.clone().in_run(1).program, Program::Shell);
        let r = sh.in_run(3);
        assert_eq!(r.program, Program::Unknown);
        assert!(r.how.contains("shell ran 3 programs"), "{}", r.how);
        let dir = tempfile::tempdir().unwrap();
        let s = script(dir.path(), "env", b"#!/usr/bin/env node\n");
        assert_eq!(recognise(&s, &[], false).in_run(2).program, Program::Node);
    }

    #[test]
    fn rust_and_unknown_programs_keep_iolabs_fix() {
        assert!(Program::Rust.takes_iolab() && Program::Unknown.takes_iolab());
        assert!(!Program::Python.takes_iolab() && !Program::CStdio.takes_iolab());
        assert_eq!(Program::CStdio.name(), "c-stdio");
    }
}
