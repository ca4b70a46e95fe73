//! Starting the command: finding it on `PATH` as a shell does (so that a missing command is
//! one line and exit 127, before any tracer starts), then forking a child that waits,
//! before `execve`, until the tracer is in place ([`child`]).
//!
//! The child keeps the tracer's standard input, output and error and its process group
//! (the terminal's Ctrl-C reaches it as it would untraced); only a gate pipe and an error
//! pipe are added, both close-on-exec. Its signal dispositions and mask are set to what
//! the caller started with ([`Command::inherit_signals`]), not the tracer's.

pub mod child;

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::Exit;
use crate::signals::Inherited;

/// The path `execvp` searches when `PATH` is not set (glibc's default).
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The shell that runs a script without `#!` (glibc's `_PATH_BSHELL`, as `execvp` does).
const SHELL: &std::ffi::CStr = c"/bin/sh";

/// How much of a script the kernel reads for its `#!` line (`BINPRM_BUF_SIZE`).
const SHEBANG_MAX: usize = 256;

/// A command ready to be executed: its program found, its arguments as C strings.
#[derive(Clone, Debug)]
pub struct Command {
    /// The words as given.
    pub words: Vec<OsString>,
    /// The program's path, found on `PATH` when the first word has no `/`.
    pub program: PathBuf,
    program_c: CString,
    argv_c: Vec<CString>,
    /// `/bin/sh PROGRAM ARGS…`: what the child runs when `execve` says the program is not
    /// a binary it knows (`ENOEXEC`: a script without `#!`), as `execvp` and `env` do.
    sh_argv_c: Vec<CString>,
    /// Descriptors the child closes before `execve` (see [`Command::close_before_exec`]).
    close: Vec<i32>,
    /// The signal state the child sets before `execve` (see [`Command::inherit_signals`]).
    signals: Inherited,
}

impl Command {
    /// Finds the program `words[0]` names and prepares the arguments.
    ///
    /// Fails with [`Error::NoCommand`] for no words, [`Error::NotFound`] when no such
    /// program exists (a shell's 127) and [`Error::CannotExecute`] when it exists but is
    /// not an executable file (a shell's 126).
    pub fn resolve(words: &[OsString]) -> Result<Command> {
        let first = words.first().ok_or(Error::NoCommand)?;
        let name = first.to_string_lossy().into_owned();
        let program = find_program(first).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => Error::NotFound { name: name.clone() },
            _ => Error::CannotExecute {
                name: name.clone(),
                source: e,
            },
        })?;
        let c = |s: &OsStr| {
            CString::new(s.as_bytes()).map_err(|_| Error::CannotExecute {
                name: name.clone(),
                source: io::Error::new(io::ErrorKind::InvalidInput, "an argument holds a NUL byte"),
            })
        };
        let argv_c: Vec<CString> = words.iter().map(|w| c(w)).collect::<Result<_>>()?;
        let program_c = c(program.as_os_str())?;
        let sh_argv_c = [CString::from(SHELL), program_c.clone()]
            .into_iter()
            .chain(argv_c[1..].iter().cloned())
            .collect();
        Ok(Command {
            program_c,
            argv_c,
            sh_argv_c,
            close: Vec::new(),
            signals: Inherited::default(),
            program,
            words: words.to_vec(),
        })
    }

    /// The command as a shell would show it (words with spaces or quotes quoted).
    pub fn display(&self) -> String {
        self.words
            .iter()
            .map(|w| quote(&w.to_string_lossy()))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Makes the child close `fds` before it executes the command: standard descriptors
    /// that were closed when the tracer started (Rust's runtime put `/dev/null` there), so
    /// that the command finds them closed, as it would untraced.
    pub fn close_before_exec(&mut self, fds: &[i32]) {
        self.close = fds.to_vec();
    }

    /// Makes the child start the command with these ignored signals and this mask (by
    /// default none ignored and none blocked), as it would untraced: the tracer's own
    /// handlers and Rust's ignored `SIGPIPE` must not reach it.
    pub fn inherit_signals(&mut self, signals: Inherited) {
        self.signals = signals;
    }

    /// The program's name as given.
    pub fn name(&self) -> String {
        self.words[0].to_string_lossy().into_owned()
    }
}

/// `word`, quoted for a shell when it holds anything but plain characters.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%^".contains(&b));
    if plain {
        word.to_string()
    } else if word.chars().any(char::is_control) {
        // Bash's $'…' keeps a line break or a tab on one line.
        format!("$'{}'", word.escape_default())
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The program `word` names: itself when it holds a `/`, else the first executable file of
/// that name on `PATH`. `NotFound` when there is none; `PermissionDenied` when there is a
/// file of that name but none that may be executed.
fn find_program(word: &OsStr) -> io::Result<PathBuf> {
    if word.is_empty() {
        return Err(io::ErrorKind::NotFound.into());
    }
    if word.as_bytes().contains(&b'/') {
        let path = PathBuf::from(word);
        return check_executable(&path).map(|()| path);
    }
    let path_var = std::env::var_os("PATH").unwrap_or_else(|| DEFAULT_PATH.into());
    let mut denied = None;
    for dir in std::env::split_paths(&path_var) {
        // An empty entry means the current folder, as for execvp.
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let candidate = dir.join(word);
        match check_executable(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => denied = Some(e),
        }
    }
    Err(denied.unwrap_or_else(|| io::ErrorKind::NotFound.into()))
}

/// Whether `path` is a file this process may execute.
fn check_executable(path: &Path) -> io::Result<()> {
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "is a directory",
        ));
    }
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `c` is a valid NUL-terminated path; access only reads it.
    if unsafe { libc::access(c.as_ptr(), libc::X_OK) } != 0 {
        // Root may execute a file with any execute bit; access says so, but a file with no
        // execute bit at all fails execve even for root.
        return Err(io::Error::last_os_error());
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(io::ErrorKind::PermissionDenied.into());
    }
    Ok(())
}

/// The user CPU time a `wait4` reported: the process's and that of the children it waited
/// for (their system time is left out: under ptrace it holds the tracer's stops).
pub fn user_cpu_of(usage: &libc::rusage) -> std::time::Duration {
    let t = usage.ru_utime;
    std::time::Duration::from_nanos(t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000)
}

/// How a child ended, from a `waitpid` status.
pub fn exit_of(status: libc::c_int) -> Exit {
    if libc::WIFSIGNALED(status) {
        Exit::Signal(libc::WTERMSIG(status))
    } else {
        Exit::Code(libc::WEXITSTATUS(status))
    }
}

/// The error for an `execve` that failed in the child with `errno`.
///
/// The program was found before the fork, so `ENOENT` (or `EACCES`) for a file that
/// exists comes from what it names: a `#!` interpreter that is missing or may not run
/// ([`Error::BadInterpreter`]), or an ELF program's missing loader ("required file not
/// found", as bash 5.2 says).
pub fn exec_error(command: &Command, errno: i32) -> Error {
    let source = io::Error::from_raw_os_error(errno);
    let exists = command.program.is_file();
    if exists && matches!(errno, libc::ENOENT | libc::EACCES) {
        if let Some(interpreter) = shebang(&command.program)
            && (errno == libc::ENOENT || check_executable(Path::new(&interpreter)).is_err())
        {
            return Error::BadInterpreter {
                name: command.name(),
                interpreter,
                source,
            };
        }
        if errno == libc::ENOENT {
            return Error::CannotExecute {
                name: command.name(),
                source: io::Error::new(io::ErrorKind::NotFound, "required file not found"),
            };
        }
    }
    if source.kind() == io::ErrorKind::NotFound {
        Error::NotFound {
            name: command.name(),
        }
    } else {
        Error::CannotExecute {
            name: command.name(),
            source,
        }
    }
}

/// The interpreter a script's `#!` line names, if it starts with one.
fn shebang(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = Vec::with_capacity(SHEBANG_MAX);
    std::fs::File::open(path)
        .ok()?
        .take(SHEBANG_MAX as u64)
        .read_to_end(&mut head)
        .ok()?;
    let line = head.strip_prefix(b"#!")?;
    let line = line.split(|&b| b == b'\n').next()?;
    let word = line
        .split(|&b| b == b' ' || b == b'\t')
        .find(|w| !w.is_empty())?;
    Some(String::from_utf8_lossy(word).into_owned())
}

/// The words of a command line given as strings (for tests and callers without `OsString`s).
pub fn words<I, S>(words: I) -> Vec<OsString>
where
    I: IntoIterator<Item = S>,
    S: Into<Vec<u8>>,
{
    words
        .into_iter()
        .map(|w| OsString::from_vec(w.into()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_programs_on_the_path() {
        let c = Command::resolve(&words(["sh", "-c", "true"])).unwrap();
        assert!(c.program.is_absolute(), "{:?}", c.program);
        assert_eq!(c.display(), "sh -c true");
        assert!(matches!(
            Command::resolve(&words(["iolab-no-such-command-xyz"])),
            Err(Error::NotFound { .. })
        ));
        assert!(matches!(
            Command::resolve(&words(["/nonexistent/x"])),
            Err(Error::NotFound { .. })
        ));
        assert!(matches!(
            Command::resolve(&words(["/"])),
            Err(Error::CannotExecute { .. })
        ));
        assert!(matches!(Command::resolve(&[]), Err(Error::NoCommand)));
    }

    #[test]
    fn the_interpreter_is_the_first_word_of_the_shebang_line() {
        let dir = tempfile::tempdir().unwrap();
        let cases: [(&[u8], Option<&str>); 5] = [
            (b"#!/bin/sh\necho", Some("/bin/sh")),
            (b"#! /usr/bin/env python3 -u\n", Some("/usr/bin/env")),
            (b"#!\t/x\ty", Some("/x")),
            (b"#!\n", None),
            (b"\x7fELF", None),
        ];
        for (i, (text, want)) in cases.into_iter().enumerate() {
            let path = dir.path().join(i.to_string());
            std::fs::write(&path, text).unwrap();
            assert_eq!(shebang(&path).as_deref(), want, "{text:?}");
        }
    }

    #[test]
    fn quotes_words_a_shell_would_split() {
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote("bs=512"), "bs=512");
        assert_eq!(quote("a\nb"), r"$'a\nb'");
    }
}
