//! Running jobs: external processes timed from spawn to exit, in an interleaved order.
//!
//! Every job, iolab's own methods included, runs as a child process (`iolab count
//! --method NAME FILE`, `wc -l FILE`), so all rows pay the same process start-up and are
//! measured the same way: wall time around `spawn`…`wait4`, CPU time from `wait4`'s
//! `rusage`. The [`Executor`] trait lets the run loop be tested with a mock.
//!
//! Runs are interleaved round-robin ([`schedule`](crate::rounds::schedule)): round *r* runs every job once,
//! starting at job *r mod n*, so slow drift of a shared machine (another tenant, thermal
//! state, a page-cache flush) spreads over all jobs instead of landing on one.
//!
//! A job's output can also go into a pipe that the executor drains itself ([`Stdout::Pipe`],
//! [`drain`]): the write suite's fixed reader, the same for every writer.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, PipeReader, Read};
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Instant;

/// Where a job's standard output goes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Stdout {
    /// Captured and handed back in [`Outcome::stdout`] (for results printed by the job).
    #[default]
    Capture,
    /// `/dev/null`.
    Null,
    /// A file, created or truncated before the run.
    File(PathBuf),
    /// A fresh pipe, drained by the executor as the job writes ([`drain`]); the run ends
    /// when the job has exited and the pipe is drained. [`Outcome::stdout`] then holds the
    /// number of bytes drained, in decimal.
    Pipe(PipeSink),
    /// A fresh pipe read by another process, started as a shell starts `job | consumer`:
    /// neither pinned, the consumer's standard output on `/dev/null`. The run ends when both
    /// have exited; [`Outcome::reader`] holds what the consumer did.
    Consumer(Consumer),
}

/// The reading side of [`Stdout::Consumer`]: a program that reads its standard input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Consumer {
    /// The program (`head`, `pv`, `iolab`).
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
}

/// The pipe of [`Stdout::Pipe`] and how its reader behaves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PipeSink {
    /// Resize the pipe to this many bytes (`F_SETPIPE_SZ`) before the job starts; `None`
    /// keeps the kernel's default capacity. Resizing beyond `/proc/sys/fs/pipe-max-size`
    /// fails the run (`EPERM`) unless privileged.
    pub capacity: Option<usize>,
    /// Stop reading after this many bytes and close the pipe, so a writer that never ends
    /// on its own (`yes`) gets `EPIPE` or `SIGPIPE`; `None` reads to end of file.
    pub limit: Option<u64>,
    /// Which CPUs the writer and the reader run on.
    pub cpus: CpuPlacement,
}

/// Where the writer of a [`Stdout::Pipe`] and its reader run.
///
/// Through a pipe, placement decides the result as much as the writer does. On the
/// development VM (2 vCPUs), 64 KiB `write`s moved 4.2 GB/s with both sides on one CPU and
/// 0.2–1.5 GB/s on two, where every full pipe costs a cross-CPU wake-up through the
/// hypervisor; 8 KiB `write`s moved 2.4 GB/s on one CPU and anywhere from 1 to 12 GB/s on
/// two. Left to the scheduler, a run lands in either regime, so the benchmark pins both
/// sides.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CpuPlacement {
    /// Wherever the scheduler puts them.
    #[default]
    Free,
    /// Both on the first CPU this process may use.
    Shared,
    /// The writer on the first CPU this process may use, the reader on the second; fails
    /// with `InvalidInput` when it may use only one.
    Separate,
}

impl CpuPlacement {
    /// `"shared"`, `"separate"` or `"free"`, for reports.
    pub fn name(self) -> &'static str {
        match self {
            CpuPlacement::Free => "free",
            CpuPlacement::Shared => "shared",
            CpuPlacement::Separate => "separate",
        }
    }

    /// The (writer, reader) CPUs, from the CPUs this thread may use; `None` for `Free`.
    fn cpus(self) -> io::Result<Option<(usize, usize)>> {
        if self == CpuPlacement::Free {
            return Ok(None);
        }
        let allowed = affinity::allowed()?;
        match (self, allowed.as_slice()) {
            (CpuPlacement::Shared, [first, ..]) => Ok(Some((*first, *first))),
            (CpuPlacement::Separate, [first, second, ..]) => Ok(Some((*first, *second))),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} CPUs needed for a {} placement, {} allowed",
                    if self == CpuPlacement::Separate { 2 } else { 1 },
                    self.name(),
                    allowed.len()
                ),
            )),
        }
    }
}

mod affinity;
mod consumer;

/// What drains a [`Stdout::Pipe`], for reports: the benchmark process itself, moving the
/// pipe's pages to `/dev/null` with `splice(2)`.
pub const PIPE_READER: &str = "splice(2) from the pipe to /dev/null, in the bench process";

/// The most bytes one `splice(2)` of [`drain`] asks for: 1 MiB, the default
/// `/proc/sys/fs/pipe-max-size`; a call moves at most what the pipe holds anyway.
const SPLICE_CHUNK: usize = 1 << 20;

/// Drains `pipe` into `/dev/null` with `splice(2)` until end of file or `limit` bytes, and
/// returns the number of bytes drained. The pipe is closed on return.
///
/// This reader never copies a byte (the pipe's pages are released, not read), so it is
/// never the bottleneck of what it measures, and it counts exactly. Any writer can feed it:
/// `write(2)` copies into the pipe's pages, `vmsplice(2)` lends its own.
pub fn drain(pipe: PipeReader, limit: Option<u64>) -> io::Result<u64> {
    drain_fd(&pipe, limit)
}

/// [`drain`] for any pipe's read end, borrowed (`iolab drain` drains standard input).
pub fn drain_fd(pipe: &impl AsRawFd, limit: Option<u64>) -> io::Result<u64> {
    let null = File::options().write(true).open("/dev/null")?;
    drain_into(pipe, &null, limit)
}

fn drain_into(pipe: &impl AsRawFd, null: &File, limit: Option<u64>) -> io::Result<u64> {
    let mut total = 0u64;
    loop {
        let want = match limit {
            Some(limit) if total >= limit => return Ok(total),
            Some(limit) => {
                usize::try_from(limit - total).map_or(SPLICE_CHUNK, |r| r.min(SPLICE_CHUNK))
            }
            None => SPLICE_CHUNK,
        };
        // SAFETY: both descriptors are open for the call; null offsets mean "the file
        // position", which pipes and /dev/null do not have; no memory of ours is involved.
        let n = unsafe {
            libc::splice(
                pipe.as_raw_fd(),
                std::ptr::null_mut(),
                null.as_raw_fd(),
                std::ptr::null_mut(),
                want,
                0,
            )
        };
        match n {
            0 => return Ok(total),
            n if n > 0 => total += n as u64,
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
}

/// A command to time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// The row's method name (`mmap-avx2`, `wc -l`, …).
    pub name: String,
    /// The program to run.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Whether this is an external baseline rather than an iolab method.
    pub baseline: bool,
    /// Where its standard output goes.
    pub stdout: Stdout,
}

impl Job {
    /// A job whose standard output is captured.
    pub fn new(
        name: impl Into<String>,
        program: impl Into<PathBuf>,
        args: impl IntoIterator<Item = impl Into<OsString>>,
        baseline: bool,
    ) -> Job {
        Job {
            name: name.into(),
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            baseline,
            stdout: Stdout::Capture,
        }
    }
}

/// Context switches of a process (`ru_nvcsw`, `ru_nivcsw` from `wait4`'s `rusage`): the
/// voluntary ones are sleeps (a full or an empty pipe), the involuntary ones preemptions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Switches {
    /// Voluntary: the process blocked.
    pub voluntary: u64,
    /// Involuntary: the scheduler took the CPU away.
    pub involuntary: u64,
}

impl Switches {
    fn of(usage: &libc::rusage) -> Switches {
        Switches {
            voluntary: u64::try_from(usage.ru_nvcsw).unwrap_or(0),
            involuntary: u64::try_from(usage.ru_nivcsw).unwrap_or(0),
        }
    }

    /// Both kinds together.
    pub fn total(self) -> u64 {
        self.voluntary + self.involuntary
    }
}

/// What the consumer of a [`Stdout::Consumer`] run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReaderOutcome {
    /// Its exit code, or `None` when a signal ended it.
    pub code: Option<i32>,
    /// Everything it printed on stderr (`pv -n`'s byte counts, `iolab drain`'s total).
    pub stderr: String,
    /// Its context switches.
    pub switches: Switches,
}

/// What one run of a job did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// Wall-clock seconds from spawn to exit.
    pub wall_s: f64,
    /// User CPU seconds of the child.
    pub user_s: f64,
    /// System CPU seconds of the child.
    pub sys_s: f64,
    /// The exit code, or `None` when a signal ended it.
    pub code: Option<i32>,
    /// The signal that ended it, if any.
    pub signal: Option<i32>,
    /// Everything it printed on stdout.
    pub stdout: String,
    /// Everything it printed on stderr.
    pub stderr: String,
    /// The job's context switches.
    pub switches: Switches,
    /// The consumer's side of a [`Stdout::Consumer`] run; for [`Stdout::Pipe`], the
    /// executor's own reading thread (its switches only).
    pub reader: Option<ReaderOutcome>,
}

impl Outcome {
    /// Whether the job exited with status 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// The first line of stderr, for error notes.
    pub fn first_error_line(&self) -> String {
        self.stderr.lines().next().unwrap_or("").trim().to_string()
    }

    /// Why a failed run failed: its first error line, else its exit code and signal.
    pub fn failure_reason(&self) -> String {
        let line = self.first_error_line();
        if line.is_empty() {
            format!("exit {:?}, signal {:?}", self.code, self.signal)
        } else {
            line
        }
    }

    /// The reason a failed run gave for its method being unavailable here, if it said so
    /// (`… is unavailable: REASON`, as iolab's errors put it).
    pub fn unavailable_reason(&self) -> Option<String> {
        let line = self.first_error_line();
        line.split_once("is unavailable: ")
            .map(|(_, reason)| reason.to_string())
    }
}

/// Runs jobs. [`ProcessExecutor`] spawns them; tests use a mock.
pub trait Executor {
    /// Runs `job` once and reports what happened.
    fn execute(&mut self, job: &Job) -> io::Result<Outcome>;
}

/// Runs jobs as child processes and times them.
#[derive(Debug, Default)]
pub struct ProcessExecutor;

impl Executor for ProcessExecutor {
    fn execute(&mut self, job: &Job) -> io::Result<Outcome> {
        let mut reader = None;
        let mut placement = None;
        let stdout = match &job.stdout {
            Stdout::Consumer(consumer) => return consumer::run(job, consumer),
            Stdout::Capture => Stdio::piped(),
            Stdout::Null => Stdio::null(),
            Stdout::File(path) => Stdio::from(std::fs::File::create(path)?),
            Stdout::Pipe(sink) => {
                let (read_end, write_end) = io::pipe()?;
                if let Some(bytes) = sink.capacity {
                    iolab_lab::write::destination::set_pipe_capacity_of(&read_end, bytes)?;
                }
                let null = File::options().write(true).open("/dev/null")?;
                reader = Some((read_end, null, sink.limit));
                placement = sink.cpus.cpus()?;
                Stdio::from(write_end)
            }
        };
        // Pinned: this thread moves to the writer's CPU so that the child inherits it, and
        // to the reader's after the spawn; its own affinity is put back at the end.
        let saved_affinity = match placement {
            Some((writer_cpu, _)) => {
                let saved = affinity::get()?;
                affinity::pin(writer_cpu)?;
                Some(saved)
            }
            None => None,
        };
        let start = Instant::now();
        // The `Command` is a temporary: dropping it at the end of this statement closes our
        // copy of a pipe's write end, so the reader sees end of file when the child exits.
        let child = Command::new(&job.program)
            .args(&job.args)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn();
        let repinned = match placement {
            Some((_, reader_cpu)) => affinity::pin(reader_cpu),
            None => Ok(()),
        };
        // Drained before waiting: the child cannot finish while its pipe is full. On a read
        // error the pipe is closed here, so the child ends with EPIPE and is reaped below.
        let mut reader_switches = None;
        let drained = match (&child, repinned) {
            (Ok(_), Ok(())) => reader.map(|(pipe, null, limit)| {
                let before = thread_switches();
                let drained = drain_into(&pipe, &null, limit);
                reader_switches = Some(Switches {
                    voluntary: thread_switches().voluntary - before.voluntary,
                    involuntary: thread_switches().involuntary - before.involuntary,
                });
                drained
            }),
            // Not drained: closing the pipe makes the child (if any) end with EPIPE.
            (_, Err(e)) => {
                drop(reader);
                Some(Err(e))
            }
            (Err(_), _) => {
                drop(reader);
                None
            }
        };
        let restored = saved_affinity.map_or(Ok(()), |saved| affinity::set(&saved));
        let mut child = child?;
        // The captured outputs are read as they come, both at once, before the child is
        // reaped: a job that prints more than a pipe holds (1000 file names of a long data
        // path are 100 KB) would otherwise block in write with nobody reading.
        let (out, err) = read_both(child.stdout.take(), child.stderr.take())?;
        let (status, usage, wall_s) = reap(&mut child, start)?;
        restored?;
        let mut stdout = match drained {
            Some(bytes) => bytes?.to_string(),
            None => String::new(),
        };
        stdout.push_str(&String::from_utf8_lossy(&out));
        let stderr = String::from_utf8_lossy(&err).into_owned();
        let exit = ExitStatus::from_raw(status);
        Ok(Outcome {
            wall_s,
            user_s: timeval_s(usage.ru_utime),
            sys_s: timeval_s(usage.ru_stime),
            code: exit.code(),
            signal: exit.signal(),
            stdout,
            stderr,
            switches: Switches::of(&usage),
            reader: reader_switches.map(|switches| ReaderOutcome {
                switches,
                ..ReaderOutcome::default()
            }),
        })
    }
}

/// Reads `stdout` and `stderr` (either may be absent) to their ends, whichever has data,
/// with `poll(2)`: neither can fill up while the other is being read.
fn read_both(
    stdout: Option<std::process::ChildStdout>,
    stderr: Option<std::process::ChildStderr>,
) -> io::Result<(Vec<u8>, Vec<u8>)> {
    let mut pipes: Vec<(Box<dyn ReadFd>, Vec<u8>, bool)> = Vec::new();
    if let Some(out) = stdout {
        pipes.push((Box::new(out), Vec::new(), true));
    }
    if let Some(err) = stderr {
        pipes.push((Box::new(err), Vec::new(), false));
    }
    let mut buf = [0u8; 16 << 10];
    let mut finished = Vec::new();
    while !pipes.is_empty() {
        let mut fds: Vec<libc::pollfd> = pipes
            .iter()
            .map(|(p, _, _)| libc::pollfd {
                fd: p.raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // SAFETY: `fds` is a valid array of `fds.len()` pollfd structures.
        let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        let mut done = Vec::new();
        for (i, fd) in fds.iter().enumerate() {
            if fd.revents == 0 {
                continue;
            }
            let (pipe, data, _) = &mut pipes[i];
            match pipe.read(&mut buf) {
                Ok(0) => done.push(i),
                Ok(n) => data.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        for i in done.into_iter().rev() {
            let (_, data, is_stdout) = pipes.remove(i);
            finished.push((data, is_stdout));
        }
    }
    let mut out = (Vec::new(), Vec::new());
    for (data, is_stdout) in finished {
        if is_stdout {
            out.0 = data;
        } else {
            out.1 = data;
        }
    }
    Ok(out)
}

/// A readable pipe end with its descriptor, for [`read_both`].
trait ReadFd: Read {
    fn raw_fd(&self) -> libc::c_int;
}

impl<T: Read + AsRawFd> ReadFd for T {
    fn raw_fd(&self) -> libc::c_int {
        self.as_raw_fd()
    }
}

/// Waits for `child` with `wait4`: its raw status, its `rusage` (zero when std had to reap
/// it instead) and the seconds since `start` when it was reaped.
fn reap(child: &mut Child, start: Instant) -> io::Result<(libc::c_int, libc::rusage, f64)> {
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: all-zero is a valid `rusage`.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `status` and `usage` are valid for writes; `pid` is our child, not yet
        // reaped (std's `Child` has not waited on it).
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        let wall_s = start.elapsed().as_secs_f64();
        if rc == pid {
            return Ok((status, usage, wall_s));
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            // Let std reap it instead; its rusage is then unknown.
            let exit = child.wait()?;
            return Ok((exit.into_raw(), usage, start.elapsed().as_secs_f64()));
        }
    }
}

/// The calling thread's context switches so far (`getrusage(RUSAGE_THREAD)`).
fn thread_switches() -> Switches {
    // SAFETY: all-zero is a valid `rusage`.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is valid for writes; RUSAGE_THREAD reads the calling thread's counts.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    Switches::of(&usage)
}

fn timeval_s(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 / 1e6
}

/// The first whitespace-separated token of a job's stdout, as a `u64`: the count printed
/// by `wc -l FILE`, `fwc -l FILE` and `iolab count FILE`.
pub fn parse_count(stdout: &str) -> Option<u64> {
    stdout.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_printing_more_than_a_pipe_holds_on_both_outputs_finishes() {
        let job = Job::new(
            "chatty",
            "sh",
            [
                "-c",
                "head -c 300000 /dev/zero | tr '\\0' b >&2; head -c 200000 /dev/zero | tr '\\0' a",
            ],
            false,
        );
        let outcome = ProcessExecutor.execute(&job).unwrap();
        assert!(outcome.success(), "{outcome:?}");
        assert_eq!(outcome.stdout.len(), 200_000);
        assert!(outcome.stdout.bytes().all(|b| b == b'a'));
        assert_eq!(outcome.stderr.len(), 300_000);
    }

    #[test]
    fn parse_count_reads_wc_style_output() {
        assert_eq!(parse_count("42 file.txt\n"), Some(42));
        assert_eq!(parse_count("   7 -\n"), Some(7));
        assert_eq!(parse_count(""), None);
        assert_eq!(parse_count("x 1"), None);
    }

    #[test]
    fn a_pipe_job_is_drained_and_counted() {
        let mut ex = ProcessExecutor;
        let mut job = Job::new("head", "head", ["-c", "300000", "/dev/zero"], true);
        job.stdout = Stdout::Pipe(PipeSink::default());
        let out = ex.execute(&job).unwrap();
        assert!(out.success(), "{out:?}");
        assert_eq!(out.stdout, "300000");
    }

    #[test]
    fn a_pipe_limit_stops_an_endless_writer() {
        let mut ex = ProcessExecutor;
        let mut job = Job::new("yes", "yes", Vec::<OsString>::new(), true);
        job.stdout = Stdout::Pipe(PipeSink {
            capacity: None,
            limit: Some(1_000_001),
            cpus: CpuPlacement::Free,
        });
        let out = ex.execute(&job).unwrap();
        assert_eq!(out.stdout, "1000001");
        // yes was ended by the closed pipe: SIGPIPE (std restores its default in children).
        assert_eq!(out.signal, Some(libc::SIGPIPE), "{out:?}");
    }

    #[test]
    fn a_pipe_can_be_resized_for_a_job() {
        let mut ex = ProcessExecutor;
        let mut job = Job::new("sh", "sh", ["-c", "head -c 5 /dev/zero"], true);
        job.stdout = Stdout::Pipe(PipeSink {
            capacity: Some(128 * 1024),
            limit: None,
            cpus: CpuPlacement::Shared,
        });
        let out = ex.execute(&job).unwrap();
        assert!(out.success(), "{out:?}");
        assert_eq!(out.stdout, "5");
    }

    #[test]
    fn pinned_pipe_jobs_run_on_the_chosen_cpus_and_the_executor_keeps_its_affinity() {
        let before = affinity::allowed().unwrap();
        let mut ex = ProcessExecutor;
        for placement in [CpuPlacement::Shared, CpuPlacement::Separate] {
            let Ok(Some((writer, _))) = placement.cpus() else {
                continue; // one CPU only: Separate cannot run here
            };
            let mut job = Job::new(
                "sh",
                "sh",
                [
                    "-c",
                    "grep Cpus_allowed_list /proc/self/status >&2; head -c 7 /dev/zero",
                ],
                true,
            );
            job.stdout = Stdout::Pipe(PipeSink {
                capacity: None,
                limit: None,
                cpus: placement,
            });
            let out = ex.execute(&job).unwrap();
            assert_eq!(out.stdout, "7");
            assert!(
                out.stderr.trim_end().ends_with(&format!("\t{writer}")),
                "{placement:?}: {}",
                out.stderr
            );
            assert_eq!(affinity::allowed().unwrap(), before);
        }
    }

    #[test]
    fn process_executor_times_a_real_process_and_reports_its_exit() {
        let mut ex = ProcessExecutor;
        let ok = ex
            .execute(&Job::new(
                "sh",
                "sh",
                ["-c", "echo 5 x; echo oops >&2; exit 3"],
                true,
            ))
            .unwrap();
        assert_eq!(ok.code, Some(3));
        assert!(!ok.success());
        assert_eq!(parse_count(&ok.stdout), Some(5));
        assert_eq!(ok.first_error_line(), "oops");
        assert!(ok.wall_s > 0.0);
    }
}
