//! [`Stdout::Consumer`](super::Stdout::Consumer): a job writing into a pipe that another
//! process reads, as a shell runs `job | consumer`.
//!
//! The consumer is spawned first with the pipe's read end on its standard input and
//! `/dev/null` on its standard output, then the job with the write end; this process keeps
//! neither end, so the consumer sees end of file when the job exits, and the job `EPIPE`
//! (or `SIGPIPE`) when the consumer stops early (`head -c N` after N bytes). Neither side
//! is pinned: the scheduler places them as it places a user's pipeline. The timer runs
//! from before the first spawn until both have been reaped.

use std::io::{self, Read};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus, Stdio};
use std::time::Instant;

use super::{Consumer, Job, Outcome, ReaderOutcome, Switches, reap, timeval_s};

/// Runs `job | consumer` once.
pub(super) fn run(job: &Job, consumer: &Consumer) -> io::Result<Outcome> {
    let (read_end, write_end) = io::pipe()?;
    let start = Instant::now();
    // Each `Command` is a temporary: dropping it closes this process's copy of its pipe end.
    let mut reader = Command::new(&consumer.program)
        .args(&consumer.args)
        .stdin(Stdio::from(read_end))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let writer = Command::new(&job.program)
        .args(&job.args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(write_end))
        .stderr(Stdio::piped())
        .spawn();
    // Without a writer the consumer sees end of file at once and is reaped below.
    let writer = writer.and_then(|mut child| {
        let reaped = reap(&mut child, start)?;
        Ok((child, reaped))
    });
    let (reader_status, reader_usage, reader_wall) = reap(&mut reader, start)?;
    let (mut writer, (status, usage, writer_wall)) = writer?;
    let mut stderr = String::new();
    if let Some(mut err) = writer.stderr.take() {
        err.read_to_string(&mut stderr)?;
    }
    let mut reader_stderr = String::new();
    if let Some(mut err) = reader.stderr.take() {
        err.read_to_string(&mut reader_stderr)?;
    }
    let exit = ExitStatus::from_raw(status);
    Ok(Outcome {
        wall_s: writer_wall.max(reader_wall),
        user_s: timeval_s(usage.ru_utime),
        sys_s: timeval_s(usage.ru_stime),
        code: exit.code(),
        signal: exit.signal(),
        stdout: String::new(),
        stderr,
        switches: Switches::of(&usage),
        reader: Some(ReaderOutcome {
            code: ExitStatus::from_raw(reader_status).code(),
            stderr: reader_stderr,
            switches: Switches::of(&reader_usage),
        }),
    })
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::super::{Executor, ProcessExecutor, Stdout};
    use super::*;

    fn head(bytes: u64) -> Consumer {
        Consumer {
            program: "head".into(),
            args: vec!["-c".into(), OsString::from(bytes.to_string())],
        }
    }

    #[test]
    fn a_consumer_reads_the_jobs_output_and_both_are_reported() {
        let mut job = Job::new(
            "sh",
            "sh",
            ["-c", "head -c 300000 /dev/zero; echo done >&2"],
            true,
        );
        job.stdout = Stdout::Consumer(Consumer {
            program: "sh".into(),
            args: vec!["-c".into(), "wc -c >&2".into()],
        });
        let out = ProcessExecutor.execute(&job).unwrap();
        assert!(out.success(), "{out:?}");
        assert_eq!(out.stderr, "done\n");
        let reader = out.reader.unwrap();
        assert_eq!(reader.code, Some(0));
        assert_eq!(reader.stderr.trim(), "300000");
        assert!(out.wall_s > 0.0);
    }

    #[test]
    fn a_consumer_that_stops_ends_an_endless_writer() {
        let mut job = Job::new("yes", "yes", Vec::<OsString>::new(), true);
        job.stdout = Stdout::Consumer(head(1_000_001));
        let out = ProcessExecutor.execute(&job).unwrap();
        assert_eq!(out.signal, Some(libc::SIGPIPE), "{out:?}");
        assert_eq!(out.reader.unwrap().code, Some(0));
    }

    #[test]
    fn a_writer_that_cannot_start_is_an_error_and_the_consumer_is_reaped() {
        let mut job = Job::new(
            "nope",
            "/nonexistent/iolab-writer",
            Vec::<OsString>::new(),
            true,
        );
        job.stdout = Stdout::Consumer(head(10));
        assert!(ProcessExecutor.execute(&job).is_err());
    }
}
