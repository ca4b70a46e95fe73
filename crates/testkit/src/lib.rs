//! Helpers shared by the integration tests of every crate: scratch folders any user can
//! write, the one `skipped:` line a test prints when the machine lacks what it needs,
//! running a program as `nobody` from a place `nobody` can reach, a small tmpfs for
//! full-disk tests, and what the `iolab` binary printed (its one-line errors).
//!
//! The modules hold the helpers of one kind of test each: [`corpus`] the deterministic
//! content they read, [`count`] `iolab count` against `wc -l`, [`differential`] the read
//! methods against the references, [`trace`] the tracer on real programs, [`seccomp`]
//! system calls refused as a restricted machine refuses them.
//!
//! This crate depends on no crate of the workspace: `iolab` itself has it as a
//! dev-dependency, and a testkit that linked `iolab` would bring a second copy of it, whose
//! types do not match the first. A helper that needs an `iolab` type takes plain data
//! (bytes, paths, strings) or a closure instead, and the typed rest stays in the test.
//!
//! Not every test binary uses every helper.
#![allow(dead_code)]

pub mod corpus;
pub mod count;
pub mod differential;
#[cfg(target_arch = "x86_64")]
pub mod seccomp;
pub mod stdout;
pub mod trace;

use std::ffi::OsStr;
use std::fmt::Display;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

/// uid and gid of `nobody`, for tests of permission errors (the tests run as root).
pub const NOBODY: libc::uid_t = 65534;

/// Whether the tests run as root (permission checks are bypassed for root).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The name of the running test: libtest names each test's thread after it.
fn test_name() -> String {
    std::thread::current()
        .name()
        .filter(|name| *name != "main")
        .unwrap_or("<test>")
        .to_string()
}

/// Prints the one line a test leaves when the machine cannot give it what it needs:
/// `skipped: <test>: <reason>`. The caller then returns (passes) without asserting.
pub fn skip(reason: impl Display) {
    let line = format!("skipped: {}: {reason}", test_name());
    eprintln!("{line}");
    // Also into `<target>/skipped.txt`, which `.ci/run` prints at the end: libtest keeps
    // a passing test's stderr to itself.
    if let Some(target) = target_dir() {
        use std::io::Write;
        let log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(target.join(SKIP_LOG));
        if let Ok(mut log) = log {
            let _ = log.write_all(format!("{line}\n").as_bytes());
        }
    }
}

/// The file in the target folder that collects every skip line of a test run.
pub const SKIP_LOG: &str = "skipped.txt";

/// Whether the current user may write into `dir`.
fn writable(dir: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated path; access only reads it.
    unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) == 0 }
}

/// Cargo's target folder: the test binary's nearest ancestor holding cargo's
/// `CACHEDIR.TAG`.
fn target_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let target = exe.ancestors().find(|d| d.join("CACHEDIR.TAG").is_file())?;
    Some(target.to_path_buf())
}

/// Cargo's temporary folder for tests, `<target dir>/tmp`.
fn target_tmp() -> Option<PathBuf> {
    let tmp = target_dir()?.join("tmp");
    fs::create_dir_all(&tmp).ok()?;
    Some(tmp)
}

/// A fresh scratch folder on a real file system the current user can write: under cargo's
/// per-target temporary folder when this user may write there (it keeps tests off a tmpfs
/// `/tmp`, which refuses `O_DIRECT`), else under [`std::env::temp_dir`] (an unprivileged
/// `bin` as a child whose cache folder (`XDG_CACHE_HOME`) is `cache`, a test file's own: no
/// test reads or writes the user's machine profile (`auto.json`).
pub fn child(bin: &str, cache: &str) -> Command {
    let mut cmd = Command::new(bin);
    cmd.env("XDG_CACHE_HOME", cache);
    cmd
}

/// user running binaries built by someone else).
pub fn scratch() -> TempDir {
    if let Some(target) = target_tmp()
        && writable(&target)
        && let Ok(dir) = tempfile::tempdir_in(&target)
    {
        return dir;
    }
    tempfile::tempdir().expect("cannot make a scratch folder in the temporary directory")
}

/// A scratch folder every user can enter (mode 0755), for files an unprivileged child
/// must reach. `tempfile` makes folders 0700. It is under [`scratch`]'s folder when every
/// folder above that one lets others pass, else under [`std::env::temp_dir`] (a clone in a
/// `mktemp -d` folder, 0700, would shut them out).
pub fn public_scratch() -> TempDir {
    let dir = scratch();
    let reachable = dir
        .path()
        .ancestors()
        .skip(1)
        .all(|a| fs::metadata(a).is_ok_and(|m| m.permissions().mode() & 0o001 != 0));
    let dir = if reachable {
        dir
    } else {
        tempfile::tempdir().expect("cannot make a scratch folder in the temporary directory")
    };
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// A copy of an executable in a folder that every user can enter, so that a child run as
/// `nobody` can execute it even when the build sits under a private (0700) folder, as a
/// clone into `mktemp -d` or a home directory does. The copy lives as long as this value.
pub struct PublicExe {
    dir: TempDir,
    path: PathBuf,
}

impl PublicExe {
    /// Copies `exe` into a fresh folder under [`std::env::temp_dir`] (not under the build
    /// folder, whose parents may be private), both readable and executable by everyone.
    pub fn copy(exe: &Path) -> io::Result<PublicExe> {
        let dir = tempfile::tempdir()?;
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755))?;
        let path = dir
            .path()
            .join(exe.file_name().unwrap_or(OsStr::new("exe")));
        // A hard link where it can be (never open for writing, so never "Text file busy"
        // for a child another thread forks meanwhile), else a copy.
        let everyone_runs_it =
            fs::metadata(exe).is_ok_and(|m| m.permissions().mode() & 0o005 == 0o005);
        if !(everyone_runs_it && fs::hard_link(exe, &path).is_ok()) {
            fs::copy(exe, &path)?;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755))?;
        }
        Ok(PublicExe { dir, path })
    }

    /// Path of the copy.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A command that runs the copy, from its own folder (the caller's working folder may
    /// be one `nobody` cannot enter).
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.path);
        cmd.current_dir(self.dir.path());
        cmd
    }
}

/// Makes `cmd` start with `SIGTERM` and `SIGHUP` at their default actions and the
/// keyboard's `SIGINT` and `SIGQUIT` at theirs, or ignored when `ignore_keyboard` (as a
/// background job of a shell without job control has them), whatever the test process
/// has. A test run started so (`cargo test … &` in a script) ignores `SIGINT` and
/// `SIGQUIT`, its children too, and `iolab trace` leaves a signal its caller ignored
/// ignored, for itself and the command, as `nohup` asks: a test of Ctrl-C must say which
/// of the two it tests.
pub fn start_with_signals(cmd: &mut Command, ignore_keyboard: bool) {
    let keyboard = if ignore_keyboard {
        libc::SIG_IGN
    } else {
        libc::SIG_DFL
    };
    // SAFETY: the closure runs in the forked child before exec and only calls signal with
    // SIG_DFL or SIG_IGN, async-signal-safe, which installs no code.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            libc::signal(libc::SIGHUP, libc::SIG_DFL);
            libc::signal(libc::SIGINT, keyboard);
            libc::signal(libc::SIGQUIT, keyboard);
            Ok(())
        });
    }
}

/// Makes `cmd` run as uid/gid 65534 (nobody) with no supplementary groups.
pub fn run_as_nobody(cmd: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec. It only makes the
    // async-signal-safe system calls setgroups, setgid and setuid, and allocates nothing
    // (`last_os_error` just reads errno).
    unsafe {
        cmd.pre_exec(|| {
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(NOBODY) != 0
                || libc::setuid(NOBODY) != 0
            {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// As root: a world-runnable copy of `exe`, checked to start as `nobody` with `probe_args`
/// (e.g. `--version`). `Err` gives the reason it cannot be had; the caller skips.
pub fn nobody_exe(exe: &Path, probe_args: &[&str]) -> Result<PublicExe, String> {
    let copy = PublicExe::copy(exe).map_err(|e| format!("cannot copy {}: {e}", exe.display()))?;
    let run = || {
        let mut probe = copy.command();
        probe.args(probe_args);
        run_as_nobody(&mut probe);
        probe.output()
    };
    // A copy is briefly open for writing in any child another test thread forked while it
    // was being written (until that child execs): its exec then fails with ETXTBSY.
    let mut result = run();
    for _ in 0..100 {
        match &result {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                std::thread::sleep(std::time::Duration::from_millis(10));
                result = run();
            }
            _ => break,
        }
    }
    match result {
        Ok(out) if out.status.success() => Ok(copy),
        Ok(out) => Err(format!(
            "cannot run {} as uid {NOBODY}: {}",
            exe.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => Err(format!("cannot run {} as uid {NOBODY}: {e}", exe.display())),
    }
}

/// A tmpfs of a given size mounted on a fresh folder, unmounted when dropped: a disk that
/// fills up on demand. Mounting needs root (CAP_SYS_ADMIN).
pub struct SmallFs {
    dir: TempDir,
}

impl SmallFs {
    /// Mounts a tmpfs of `size` (as `mount -o size=`), or says why it cannot.
    pub fn mount(size: &str) -> Result<SmallFs, String> {
        SmallFs::mount_with(&format!("size={size}"))
    }

    /// Mounts a tmpfs with the options `options` (`size=1m,nr_inodes=1`, `size=1m,ro`,
    /// …; `mode=0755` is added), or says why it cannot.
    pub fn mount_with(options: &str) -> Result<SmallFs, String> {
        if !is_root() {
            return Err("mounting a tmpfs needs root".to_string());
        }
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("{options},mode=0755"),
                "tmpfs",
            ])
            .arg(dir.path())
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "cannot mount a tmpfs: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(SmallFs { dir })
    }

    /// Makes the file system read-only (`mount -o remount,ro`), or says why it cannot.
    pub fn remount_read_only(&self) -> Result<(), String> {
        let out = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(self.dir.path())
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "cannot remount the tmpfs read-only: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }

    /// The mount point.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("--lazy")
            .arg(self.dir.path())
            .status();
    }
}

/// [`skip`], once per test and reason: for a reason that would otherwise repeat for every
/// file of a corpus (libtest runs each test on a thread of its own).
pub fn skip_once(reason: impl Display) {
    thread_local! {
        static SAID: std::cell::RefCell<std::collections::HashSet<String>> =
            std::cell::RefCell::default();
    }
    let reason = reason.to_string();
    if SAID.with(|said| said.borrow_mut().insert(reason.clone())) {
        skip(reason);
    }
}

/// The arguments that make this test binary run only its test `child_test`, alone and
/// with its output shown: for tests that re-execute themselves to run a child half.
pub fn child_test_args(child_test: &str) -> [&str; 4] {
    ["--exact", child_test, "--nocapture", "--test-threads=1"]
}

/// Runs this test binary's test `name` alone, with `env` and `XDG_CACHE_HOME` set to
/// `cache` (a machine profile of its own, or none), and checks that it passed; its stderr
/// (skip lines) is passed on.
pub fn run_child_with_cache(name: &str, env: &str, cache: &Path) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(child_test_args(name))
        .env(env, cache)
        .env("XDG_CACHE_HOME", cache)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{name} failed or did not run ({}):\n{stdout}\n{stderr}",
        out.status
    );
    eprint!("{stderr}");
}

/// Re-executes this test binary's test `child_test` (a test that does nothing unless its
/// environment says so) with `envs`, waits until the file `ready` exists (the child is
/// writing), sleeps `delay`, and kills it with `SIGKILL`. Panics if the child exits on its
/// own, with its stderr.
pub fn kill_child_when_ready(
    child_test: &str,
    envs: &[(&str, &OsStr)],
    ready: &Path,
    delay: std::time::Duration,
) {
    use std::time::{Duration, Instant};
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(child_test_args(child_test))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let exited = |child: &mut std::process::Child| {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            let _ = io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr);
            panic!("the child exited on its own ({status}):\n{stderr}");
        }
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ready.exists() && Instant::now() < deadline {
        exited(&mut child);
        std::thread::sleep(Duration::from_micros(200));
    }
    std::thread::sleep(delay);
    exited(&mut child);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}

/// Re-executes this test binary's test `child_test` (a test that does nothing unless `env`
/// is set) under `strace -f -y -e trace=fsync,fdatasync`, with `env` set to `value`, and
/// returns the trace: each synced descriptor is named (`fsync(3</dir>) = 0`).
/// `None`, after printing the [`skip`] line, when `strace` is missing or cannot trace;
/// panics if the child fails.
pub fn trace_syncs_of_child(child_test: &str, env: &str, value: &OsStr) -> Option<String> {
    match try_trace_syncs_of_child(child_test, env, value) {
        Ok(trace) => Some(trace),
        Err(reason) => {
            skip(reason);
            None
        }
    }
}

fn try_trace_syncs_of_child(child_test: &str, env: &str, value: &OsStr) -> Result<String, String> {
    let probe = Command::new("strace").arg("-V").output();
    if !probe.is_ok_and(|o| o.status.success()) {
        return Err("strace is not installed".to_string());
    }
    let dir = scratch();
    let trace = dir.path().join("trace");
    let out = Command::new("strace")
        .args(["-f", "-y", "-e", "trace=fsync,fdatasync", "-o"])
        .arg(&trace)
        .arg(std::env::current_exe().unwrap())
        .args(child_test_args(child_test))
        .env(env, value)
        .output()
        .unwrap();
    let trace = fs::read_to_string(&trace).unwrap_or_default();
    if !out.status.success() && trace.is_empty() {
        return Err(format!(
            "cannot trace a child: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(trace)
}

/// Whether `trace` (from [`trace_syncs_of_child`]) has a successful `fsync` of `dir`.
pub fn trace_syncs_dir(trace: &str, dir: &Path) -> bool {
    let dir = format!("<{}>)", dir.canonicalize().unwrap().display());
    trace
        .lines()
        .any(|l| l.contains("fsync(") && l.contains(&dir) && l.ends_with("= 0"))
}

/// Runs `cmd` with at most `timeout`; panics if it does not finish in time (assert_cmd
/// kills it then, and it has no exit code).
pub fn run_within(cmd: Command, timeout: std::time::Duration) -> std::process::Output {
    let out = assert_cmd::Command::from_std(cmd)
        .timeout(timeout)
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some(),
        "did not finish within {timeout:?}"
    );
    out
}

/// A program's standard output, which must be UTF-8.
pub fn stdout_of(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

/// A program's standard error, invalid UTF-8 replaced.
pub fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts exit `code` and [`assert_error_line`] on stderr; returns the line.
pub fn assert_one_line_error(o: &Output, code: i32, needles: &[&str]) -> String {
    let stderr = stderr_of(o);
    assert_eq!(o.status.code(), Some(code), "stderr: {stderr}");
    assert_error_line(&stderr, needles);
    stderr
}

/// Checks that `stderr` is exactly one `iolab: …` line containing every one of `needles`,
/// with no trace of a panic.
pub fn assert_error_line(stderr: &str, needles: &[&str]) {
    assert!(
        stderr.ends_with('\n') && stderr.lines().count() == 1,
        "stderr should be exactly one line, got {stderr:?}"
    );
    assert!(stderr.starts_with("iolab: "), "stderr {stderr:?}");
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "stderr {stderr:?} lacks {needle:?}"
        );
    }
    assert_no_panic(stderr);
}

/// Checks that `stderr` shows no panic.
pub fn assert_no_panic(stderr: &str) {
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "the binary panicked: {stderr:?}"
    );
}

/// The names in `dir`, sorted.
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Read-only closes of one file, seen through inotify (`IN_CLOSE_NOWRITE`): a test waits
/// for a program to have opened and closed its file before acting on it. (Opens are no
/// good for this: inotify coalesces identical events that are not read in between.)
pub struct ReadOnlyCloses {
    fd: std::os::fd::OwnedFd,
}

impl ReadOnlyCloses {
    /// Starts watching `path`, which must exist.
    pub fn watch(path: &Path) -> ReadOnlyCloses {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        // SAFETY: inotify_init1 has no memory effects; the descriptor is owned from here.
        let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
        assert!(fd >= 0, "inotify_init1: {}", io::Error::last_os_error());
        // SAFETY: fd was just returned open and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let name = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid descriptor and a NUL-terminated path.
        let wd = unsafe {
            libc::inotify_add_watch(fd.as_raw_fd(), name.as_ptr(), libc::IN_CLOSE_NOWRITE)
        };
        assert!(wd >= 0, "inotify_add_watch: {}", io::Error::last_os_error());
        ReadOnlyCloses { fd }
    }

    /// Waits until the file has been closed read-only `count` times since [`watch`].
    ///
    /// [`watch`]: ReadOnlyCloses::watch
    pub fn wait(&self, count: usize) {
        use std::os::fd::AsRawFd;
        let mut seen = 0;
        let mut buf = [0u8; 4096];
        while seen < count {
            // SAFETY: reading into a buffer of the given length from an open descriptor.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            assert!(n > 0, "inotify: {}", io::Error::last_os_error());
            let mut at = 0;
            while at < n as usize {
                // SAFETY: the kernel writes whole events; this reads one header, unaligned.
                let event: libc::inotify_event =
                    unsafe { std::ptr::read_unaligned(buf[at..].as_ptr().cast()) };
                if event.mask & libc::IN_CLOSE_NOWRITE != 0 {
                    seen += 1;
                }
                at += std::mem::size_of::<libc::inotify_event>() + event.len as usize;
            }
        }
    }
}
