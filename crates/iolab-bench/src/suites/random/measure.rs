//! The `random` suite's measurement: its jobs in interleaved rounds on the round driver,
//! the state prepared before each run (evicted, or warm) and, beyond memory, each run
//! confined to a memory cgroup smaller than the file.

use std::path::Path;

use super::{RandomJob, Sample, State, cgroup, rounds};
use crate::cache_state::{CacheState, prepare};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::rounds::{Entry, Role, Rounds, Run, Tally, Turn, drive};

/// Runs the jobs in interleaved rounds, preparing the state before each run; returns each
/// job's tally.
pub(super) fn measure(
    ctx: &mut Context<'_>,
    data: &Path,
    bytes: u64,
    jobs: &[RandomJob],
    state: State,
    cgroup: Option<&cgroup::MemoryCgroup>,
) -> Result<Vec<Tally<Sample>>> {
    let config = ctx.config;
    let rounds = Rounds::section(format!("{} {}", super::SUITE, state.name()), config)
        .rounds(0, rounds(config))
        .every_run()
        .without_line();
    let entries: Vec<Entry> = jobs
        .iter()
        .map(|j| {
            let role = if j.job.baseline {
                Role::Baseline
            } else {
                Role::Method
            };
            Entry::new(&j.method, role)
        })
        .collect();
    let cache = if state == State::Warm {
        CacheState::Warm
    } else {
        CacheState::Cold
    };
    drive(
        ctx,
        &rounds,
        &entries,
        &mut |ctx: &mut Context<'_>, turn: Turn| {
            let mut job = jobs[turn.job].job.clone();
            prepare(data, cache, ctx.config.drop_caches, true)?;
            if let Some(cg) = cgroup {
                let (program, args) = cg.wrap(&job.program, &job.args, data, bytes / 4);
                job.program = program;
                job.args = args;
            }
            let outcome = ctx
                .executor
                .execute(&job)
                .map_err(|e| Error::io("cannot run a benchmark job", e))?;
            if !outcome.success() {
                return Ok(match outcome.unavailable_reason() {
                    Some(reason) => Run::Unavailable(reason),
                    None => Run::Failed(outcome.failure_reason()),
                });
            }
            Ok(match (jobs[turn.job].parse)(&outcome.stdout) {
                Some(sample) => Run::done(sample, outcome.wall_s),
                None => Run::Failed("unreadable output".into()),
            })
        },
    )
}
