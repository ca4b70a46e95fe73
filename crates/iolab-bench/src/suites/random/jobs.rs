//! The `random` suite's jobs: every wanted method at each point of its grid in a state,
//! each followed by fio with the same engine, depth and threads.

use std::ffi::OsString;
use std::path::Path;

use iolab_results::RandomRun;

use super::{DEEP_QUEUE, RandomJob, SWEEP_QUEUE_DEPTHS, Sample, State, fio, rows};
use crate::context::Config;
use crate::data;
use crate::results::Row;
use crate::runner::Job;
use iolab_lab::random::{DEFAULT_BLOCK, Method, Pattern};

/// The jobs of `state`: every wanted method at each point of its grid (a row of its own,
/// pushed to `rows`, for a method that cannot run here), each followed by fio with the
/// same engine, depth and threads when `fio` (its version and path) is installed.
pub(super) fn state_jobs(
    config: &Config,
    dataset: &data::Dataset,
    state: State,
    (cores, seconds): (usize, f64),
    fio: Option<&(Option<String>, std::path::PathBuf)>,
    rows: &mut Vec<Row>,
) -> Vec<RandomJob> {
    let mut jobs = Vec::new();
    for pattern in patterns(state, config.quick) {
        for method in Method::ALL {
            if !config.wants(method.name()) {
                continue;
            }
            for (qd, threads) in grid(method, config.sweep, cores) {
                if let Err(reason) = method.availability() {
                    rows.push(rows::unavailable(
                        method.name(),
                        state,
                        pattern,
                        (qd, threads),
                        dataset.bytes,
                        reason,
                    ));
                    continue;
                }
                jobs.push(iolab_job(
                    config.iolab_exe.as_path(),
                    &dataset.path,
                    method,
                    pattern,
                    (qd, threads),
                    seconds,
                ));
                if let (Some((version, path)), Some((engine, direct))) = (fio, fio::engine(method))
                {
                    jobs.push(RandomJob {
                        job: Job::new(
                            fio::name(engine, direct),
                            path,
                            fio::args(
                                &dataset.path,
                                engine,
                                direct,
                                DEFAULT_BLOCK,
                                (qd, threads),
                                pattern,
                                seconds,
                            ),
                            true,
                        ),
                        version: version.clone(),
                        method: fio::name(engine, direct),
                        pattern,
                        queue_depth: qd,
                        threads,
                        parse: fio::parse,
                    });
                }
            }
        }
    }
    jobs
}

/// The patterns measured in `state`.
pub(super) fn patterns(state: State, quick: bool) -> Vec<Pattern> {
    match state {
        State::BeyondMemory if !quick => vec![Pattern::Uniform, Pattern::Zipf],
        _ => vec![Pattern::Uniform],
    }
}

/// The (queue depth, threads) pairs `method` runs at: a queueing method at [`DEEP_QUEUE`],
/// a synchronous one at 1, `auto` at both (one block per call, and the batch call
/// `read_batch` at [`DEEP_QUEUE`]), one thread. `--sweep` adds [`SWEEP_QUEUE_DEPTHS`] for a
/// queueing method, and the same depth with a thread per core for every method (when
/// there are several cores).
fn grid(method: Method, sweep: bool, cores: usize) -> Vec<(usize, usize)> {
    let depth = if method.queues() { DEEP_QUEUE } else { 1 };
    let batch = (method == Method::Auto).then_some((DEEP_QUEUE, 1));
    if !sweep {
        return [(depth, 1)].into_iter().chain(batch).collect();
    }
    let mut out: Vec<(usize, usize)> = if method.queues() {
        SWEEP_QUEUE_DEPTHS.iter().map(|&qd| (qd, 1)).collect()
    } else {
        [(1, 1)].into_iter().chain(batch).collect()
    };
    if cores > 1 {
        out.push((depth, cores));
    }
    out
}

fn iolab_job(
    exe: &Path,
    data: &Path,
    method: Method,
    pattern: Pattern,
    (qd, threads): (usize, usize),
    seconds: f64,
) -> RandomJob {
    let args: Vec<OsString> = [
        "random",
        "--method",
        method.name(),
        "--queue-depth",
        &qd.to_string(),
        "--threads",
        &threads.to_string(),
        "--pattern",
        pattern.name(),
        "--seconds",
        &seconds.to_string(),
        "--json",
    ]
    .into_iter()
    .map(OsString::from)
    .chain([data.as_os_str().to_owned()])
    .collect();
    RandomJob {
        job: Job::new(method.name(), exe, args, false),
        version: None,
        method: method.name().to_string(),
        pattern,
        queue_depth: qd,
        threads,
        parse: parse_iolab,
    }
}

/// The figures of an `iolab random --json` run.
fn parse_iolab(stdout: &str) -> Option<Sample> {
    let run: RandomRun = serde_json::from_str(stdout.trim()).ok()?;
    Some(Sample {
        iops: run.iops,
        p50_us: run.p50_us,
        p99_us: run.p99_us,
        p999_us: run.p999_us,
        cpu_us_per_read: run.cpu_us_per_read,
        verified: run.verified,
        cdf_us: run.cdf_us,
        why: run.why,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_grid_is_one_point_and_the_sweep_adds_depths_and_threads() {
        assert_eq!(grid(Method::Pread, false, 2), vec![(1, 1)]);
        assert_eq!(grid(Method::UringDirect, false, 2), vec![(DEEP_QUEUE, 1)]);
        assert_eq!(
            grid(Method::Auto, false, 2),
            vec![(1, 1), (DEEP_QUEUE, 1)],
            "auto one block per call, and its batch call"
        );
        assert!(grid(Method::Auto, true, 2).contains(&(DEEP_QUEUE, 1)));
        assert_eq!(grid(Method::Pread, true, 2), vec![(1, 1), (1, 2)]);
        assert_eq!(grid(Method::Pread, true, 1), vec![(1, 1)]);
        let swept = grid(Method::Uring, true, 4);
        for qd in SWEEP_QUEUE_DEPTHS {
            assert!(swept.contains(&(qd, 1)), "{qd}: {swept:?}");
        }
        assert!(swept.contains(&(DEEP_QUEUE, 4)), "{swept:?}");
    }

    #[test]
    fn fio_gets_a_job_per_thread_reported_as_one() {
        let args = |threads| -> Vec<String> {
            fio::args(
                Path::new("/d"),
                "psync",
                false,
                4096,
                (1, threads),
                Pattern::Uniform,
                0.2,
            )
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect()
        };
        assert!(!args(1).iter().any(|a| a.starts_with("--numjobs")));
        let two = args(2);
        assert!(two.contains(&"--numjobs=2".to_string()), "{two:?}");
        assert!(two.contains(&"--group_reporting".to_string()), "{two:?}");
    }
}
