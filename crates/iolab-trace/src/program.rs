//! What ran: the program a traced command is, recognised from its path, its `#!` line, its
//! arguments and, for a native binary, the strings linked into it — so that a finding's fix
//! is said in that program's own terms (`rules::programs`) (`python -u`, `BEGIN … COMMIT`,
//! `fs.createWriteStream`, a redirection outside a shell loop, `setvbuf`, …), and the
//! iolab command and library call are kept for Rust programs and unknown ones.
//!
//! **What is read**: the first bytes of the program (its `#!` line) and, for an ELF binary,
//! up to [`MAX_SCAN`] bytes, searched for Go's build-info marker, Rust's panic machinery and
//! a `libsqlite3` dependency. A shell whose script (its `-c` string, or the script file it
//! runs) runs one program and nothing else, outside any loop (`sh -c 'cd repo && git gc'`,
//! `sh -c 'sqlite3 t.db < ins.sql'`, a script of `git` commands), is taken for that program
//! ([`script_programs`]); git runs its subcommands as git processes, so a run of any number
//! of them is git's. The table of programs and their fixes: docs/trace.md.

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
    /// The program images a run of it alone starts (`execve`s): 1, or 2 through `env`;
    /// any number for git (its subcommands are git processes).
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
            r.execs = r.execs.saturating_add(1);
        }
        if r.program == Program::Shell {
            let text = String::from_utf8_lossy(&read_head(path, MAX_SCRIPT)).into_owned();
            return driven(r, &text, python_unbuffered_env);
        }
        return r;
    }
    let name = base(&path.to_string_lossy()).to_string();
    let named = by_name(&name, args, python_unbuffered_env);
    if named.program == Program::Shell {
        return match shell_script(args) {
            Some(text) => driven(named, &text, python_unbuffered_env),
            None => named,
        };
    }
    if named.program != Program::Unknown {
        return named;
    }
    if !head.starts_with(b"\x7fELF") {
        return named;
    }
    native(path)
}

/// The program a command name says (`python3.11`, `node`, `bash`, …).
/// The program a command line (`words`: the program as typed, then its arguments) runs:
/// by its name first (a `python3` on `PATH` may be a shim script), else, and for a shell
/// (whose script is read), by its file.
pub fn recognise_command(words: &[String], python_unbuffered_env: bool) -> Recognised {
    let Some((first, args)) = words.split_first() else {
        return by_name("", &[], false);
    };
    let named = by_name(base(first), args, python_unbuffered_env);
    match named.program {
        Program::Unknown | Program::Shell => recognise(&locate(first), args, python_unbuffered_env),
        _ => named,
    }
}

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
        execs: if program == Program::Git { u64::MAX } else { 1 },
    }
}

/// The most bytes of a shell script read for the programs it runs.
pub const MAX_SCRIPT: usize = 64 << 10;

/// The script a shell run with `args` runs: its `-c` string, or the script file named by
/// its first word that is not an option (read up to [`MAX_SCRIPT`]).
fn shell_script(args: &[String]) -> Option<String> {
    let mut words = args.iter();
    while let Some(w) = words.next() {
        if w == "-c" || (w.starts_with('-') && !w.starts_with("--") && w.ends_with('c')) {
            return words.next().cloned();
        }
        if !w.starts_with('-') && !w.starts_with('+') {
            let bytes = read_head(Path::new(w), MAX_SCRIPT);
            return (!bytes.is_empty()).then(|| String::from_utf8_lossy(&bytes).into_owned());
        }
    }
    None
}

/// `shell` running `script`: the one program the script runs, when it runs one (each of
/// its commands that is not the shell's own runs it; no loop), else the shell.
fn driven(shell: Recognised, script: &str, python_unbuffered_env: bool) -> Recognised {
    let Some(commands) = script_programs(script) else {
        return shell;
    };
    let mut found: Option<Recognised> = None;
    let mut execs = shell.execs;
    for words in &commands {
        // By its name first (a `python3` on PATH may be a shim script), else its file.
        let named = by_name(base(&words[0]), &words[1..], python_unbuffered_env);
        let r = match named.program {
            Program::Unknown => recognise(&locate(&words[0]), &words[1..], python_unbuffered_env),
            _ => named,
        };
        match &found {
            _ if r.program == Program::Unknown || r.program == Program::Shell => return shell,
            Some(f) if f.program != r.program => return shell,
            _ => {}
        }
        execs = execs.saturating_add(r.execs);
        let unbuffered = r.unbuffered || found.as_ref().is_some_and(|f| f.unbuffered);
        found = Some(Recognised { unbuffered, ..r });
    }
    let Some(one) = found else {
        return shell;
    };
    Recognised {
        how: format!(
            "a {} script that runs {} alone ({})",
            shell.how.trim_start_matches("its name, "),
            one.program.name(),
            one.how
        ),
        execs,
        ..one
    }
}

/// Where a command word names a program: itself when it holds a `/`, else the first
/// executable file of that name on `PATH` (the word itself when none).
fn locate(word: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    if word.contains('/') {
        return word.into();
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(word))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .unwrap_or_else(|| word.into())
}

/// The shell's own words: keywords, and builtins that run no program.
const SHELL_OWN: &[&str] = &[
    "!", "{", "}", "[[", "]]", "if", "then", "else", "elif", "fi", "do", "done", "esac", "cd",
    "echo", "printf", "test", "[", "true", "false", ":", "export", "set", "unset", "read", "exit",
    "return", "local", "shift", "wait", "trap", "umask", "ulimit", "type", "alias", "declare",
    "typeset", "readonly", "let", "pushd", "popd", "hash", "getopts", "shopt", "source", ".",
    "eval",
];

/// Words that run the next word as the program (`exec git gc`, `env X=1 python3 …`).
const PREFIXES: &[&str] = &["exec", "command", "builtin", "nohup", "env", "time", "nice"];

/// The commands a shell script runs that are programs, each as its words (the program
/// first), in order; `None` when it loops (`for`, `while`, `until`, `select`: the shell
/// does work of its own per iteration) or defines a function. A simple reading of the
/// shell's grammar: quotes, `;`, `&&`, `||`, `|`, `&`, newlines, `( )`, `$( )` and
/// backquotes separate commands; assignments and redirections before the program are
/// skipped; a word of the shell's own (a keyword, a builtin) runs no program.
pub fn script_programs(script: &str) -> Option<Vec<Vec<String>>> {
    let mut out = Vec::new();
    for command in commands(script) {
        let mut words = command.into_iter().skip_while(|w| {
            w.contains('=') && !w.starts_with('=') && !w.starts_with('-')
                || w.starts_with(['<', '>'])
                || w.trim_start_matches(|c: char| c.is_ascii_digit())
                    .starts_with(['<', '>'])
        });
        let mut first = words.next();
        while first.as_deref().is_some_and(|w| PREFIXES.contains(&w)) {
            first = words.find(|w| !w.starts_with('-') && !w.contains('='));
        }
        let Some(first) = first else { continue };
        if matches!(
            first.as_str(),
            "for" | "while" | "until" | "select" | "function" | "case"
        ) || first.ends_with("()")
        {
            return None;
        }
        if SHELL_OWN.contains(&first.as_str()) {
            continue;
        }
        let mut all = vec![first];
        all.extend(words.take_while(|w| !w.starts_with(['<', '>'])));
        out.push(all);
    }
    Some(out)
}

/// The script's simple commands, each as its words with quotes removed (`#` comments
/// dropped).
fn commands(script: &str) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let (mut words, mut word) = (Vec::new(), String::new());
    let mut quote: Option<char> = None;
    let mut started = false;
    let mut chars = script.chars().peekable();
    let end_word = |words: &mut Vec<String>, word: &mut String, started: &mut bool| {
        if *started {
            words.push(std::mem::take(word));
            *started = false;
        }
    };
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => word.extend(chars.next()),
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, '\\') => {
                word.extend(chars.next().filter(|&n| n != '\n'));
                started = true;
            }
            (None, '#') if !started => while chars.next_if(|&n| n != '\n').is_some() {},
            (None, ' ' | '\t') => end_word(&mut words, &mut word, &mut started),
            (None, '\n' | ';' | '&' | '|' | '(' | ')' | '`') => {
                end_word(&mut words, &mut word, &mut started);
                if !words.is_empty() {
                    out.push(std::mem::take(&mut words));
                }
            }
            (None, '$') if chars.peek() == Some(&'(') => {
                chars.next();
                end_word(&mut words, &mut word, &mut started);
                if !words.is_empty() {
                    out.push(std::mem::take(&mut words));
                }
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    end_word(&mut words, &mut word, &mut started);
    if !words.is_empty() {
        out.push(words);
    }
    out
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
    fn a_command_line_is_recognised_by_its_name_before_its_file() {
        let dir = tempfile::tempdir().unwrap();
        // A pyenv-style shim: a bash script named python3.
        let shim = script(
            dir.path(),
            "python3",
            b"#!/usr/bin/env bash\nexec real \"$@\"\n",
        );
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let shim = shim.to_string_lossy().into_owned();
        let r = recognise_command(&words(&[&shim, "-c", "pass"]), false);
        assert_eq!(r.program, Program::Python);
        // A shell running one program is that program; running two, the shell.
        let git = recognise_command(&words(&["sh", "-c", "git commit -m x"]), false);
        assert_eq!(git.program, Program::Git);
        let two = recognise_command(&words(&["sh", "-c", "sqlite3 d < s | grep ack"]), false);
        assert_eq!(two.program, Program::Shell);
        assert_eq!(recognise_command(&[], false).program, Program::Unknown);
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
    fn a_shell_that_runs_one_program_is_that_program() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let sh = Path::new("/bin/sh");
        let r = recognise(sh, &words(&["-c", "cd repo && git gc -q"]), false);
        assert_eq!(r.program, Program::Git, "{r:?}");
        assert!(r.how.contains("runs git alone"), "{}", r.how);
        // git runs git: its gc's nine processes are still git.
        assert_eq!(r.in_run(10).program, Program::Git);
        let r = recognise(sh, &words(&["-c", "sqlite3 t.db < ins.sql"]), false);
        assert_eq!(r.program, Program::Sqlite3, "{r:?}");
        assert_eq!(r.clone().in_run(2).program, Program::Sqlite3);
        assert_eq!(r.in_run(3).program, Program::Unknown);
        let r = recognise(
            sh,
            &words(&["-c", "exec python3 -u x.py; echo done"]),
            false,
        );
        assert_eq!((r.program, r.unbuffered), (Program::Python, true), "{r:?}");
        // Several programs, a loop, or none: the shell.
        for script in [
            "python3 -u -c 'for i in range(3): print(i)' | cat > /dev/null",
            "for i in $(seq 3); do echo $i >> f; done",
            "echo hi > f; cd /",
            "git add f && sqlite3 db 'select 1'",
        ] {
            let r = recognise(sh, &words(&["-c", script]), false);
            assert_eq!(r.program, Program::Shell, "{script}: {r:?}");
        }
        // A script file, run by name through its #! line or given to the shell.
        let dir = tempfile::tempdir().unwrap();
        let s = script(
            dir.path(),
            "gc.sh",
            b"#!/bin/sh\n# keep the repo small\nset -e\ngit add -A\ngit commit -qm 'x; y'\ngit gc\n",
        );
        assert_eq!(recognise(&s, &[], false).program, Program::Git);
        let r = recognise(Path::new("/bin/bash"), &[s.display().to_string()], false);
        assert_eq!(r.program, Program::Git, "{r:?}");
    }

    #[test]
    fn a_scripts_commands_are_read_as_the_shell_splits_them() {
        let progs = |s: &str| -> Vec<String> {
            script_programs(s)
                .unwrap()
                .into_iter()
                .map(|w| w.join(" "))
                .collect()
        };
        assert_eq!(
            progs("A=1 env B=2 git -C 'a b' gc 2>/dev/null; x=$(date)\n`id`"),
            ["git -C a b gc 2>/dev/null", "date", "id"]
        );
        assert_eq!(progs("echo 'a;b' \"c|d\" # ls\n(cd x && make)"), ["make"]);
        assert!(script_programs("while true; do git fetch; done").is_none());
    }

    #[test]
    fn rust_and_unknown_programs_keep_iolabs_fix() {
        assert!(Program::Rust.takes_iolab() && Program::Unknown.takes_iolab());
        assert!(!Program::Python.takes_iolab() && !Program::CStdio.takes_iolab());
        assert_eq!(Program::CStdio.name(), "c-stdio");
    }
}
