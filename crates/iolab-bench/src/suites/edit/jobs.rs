//! The `edit` suite's jobs: which strategies, variants and baselines run for an
//! operation on a data set, and how each is invoked.

use super::{Arg, Check, EditJob, Op, Plan, SED_LARGE_MAX_RUNS, whole_fits};
use crate::context::Config;
use crate::context::Context;
use crate::peers::{version_line, which};
use crate::verdict::DEFAULT_METHOD;
use iolab_lab::edit::EditStrategy;
use iolab_lab::kernel::Kernel;
use std::ffi::OsString;

/// The jobs of `op` on `plan`'s data set, in row order.
pub(super) fn jobs_for(ctx: &mut Context<'_>, plan: &Plan<'_>, op: Op) -> Vec<EditJob> {
    let config = ctx.config;
    let mut jobs = if op == Op::Count {
        count_jobs(config)
    } else {
        strategy_jobs(config, plan, op)
    };
    if config.baselines {
        jobs.extend(baseline_jobs(ctx, plan, op));
    }
    jobs
}

/// An argument of the command line, as text.
fn text(s: &str) -> Arg {
    Arg::Text(OsString::from(s))
}

/// Counting the lines of a cold copy: the `mmap` kernel's read and std's, as the edit write-up's
/// "count" operation.
fn count_jobs(config: &Config) -> Vec<EditJob> {
    let iolab = config.iolab_exe.clone();
    let mut jobs = Vec::new();
    {
        let best = match Kernel::best() {
            Kernel::Scalar => "mmap",
            Kernel::Avx2 => "mmap-avx2",
            Kernel::Avx512 => "mmap-avx512",
            _ => "mmap",
        };
        for (strategy, method) in [("mmap", best), ("std-stream", "bufread-chunks")] {
            if !config.wants(strategy) {
                continue;
            }
            jobs.push(EditJob {
                method: strategy.into(),
                baseline: false,
                durable: false,
                variant: None,
                version: None,
                command: None,
                count_method: Some(method.into()),
                program: iolab.clone(),
                args: vec![text("count"), text("--method"), text(method), Arg::Input],
                check: Check::Count,
                reports_phases: false,
                cold: true,
                max_runs: usize::MAX,
            });
        }
    }
    jobs
}

/// Every strategy and the default (`auto`: no `--strategy`, the library's choice), without
/// and with the final sync, editing a copy through `iolab edit`.
fn strategy_jobs(config: &Config, plan: &Plan<'_>, op: Op) -> Vec<EditJob> {
    let iolab = config.iolab_exe.clone();
    let whole_fits = whole_fits(plan.dataset.bytes);
    let mut jobs = Vec::new();
    {
        // `None`: the library's default, `iolab edit` without `--strategy`.
        let contenders = EditStrategy::ALL.into_iter().map(Some).chain([None]);
        for strategy in contenders {
            let name = strategy.map_or(DEFAULT_METHOD, |s| s.name());
            if !config.wants(name) {
                continue;
            }
            if strategy == Some(EditStrategy::StdWhole) && !whole_fits {
                continue;
            }
            for durable in [false, true] {
                if durable && strategy == Some(EditStrategy::StdWhole) && plan.large {
                    // Its durable step is std-stream's: one fdatasync of the same dirty pages.
                    continue;
                }
                let mut args = vec![text("edit")];
                match op {
                    Op::Replace => args.extend([
                        text("replace"),
                        text("--from"),
                        text(","),
                        text("--to"),
                        text(";"),
                    ]),
                    _ => args.push(text("truncate-first-line")),
                }
                if let Some(strategy) = strategy {
                    args.extend([text("--strategy"), text(strategy.name())]);
                }
                if !durable {
                    args.push(text("--no-sync"));
                }
                args.extend([text("--timings-json"), Arg::Input]);
                jobs.push(EditJob {
                    method: name.into(),
                    baseline: false,
                    durable,
                    variant: Some(if durable { "durable" } else { "no-sync" }),
                    version: None,
                    command: None,
                    count_method: None,
                    program: iolab.clone(),
                    args,
                    check: Check::InPlace,
                    reports_phases: true,
                    cold: !(durable && plan.large),
                    max_runs: usize::MAX,
                });
            }
        }
    }
    jobs
}

/// The peers: `head` (with `wc` and `truncate`), `tr` and `sed -i`, `wc -l`; one skipped
/// with a note when a program it needs is missing.
fn baseline_jobs(ctx: &mut Context<'_>, plan: &Plan<'_>, op: Op) -> Vec<EditJob> {
    let config = ctx.config;
    // sed -i runs at about 60 MB/s: on the large data set a single run is a tenth of the
    // whole bench, and it cannot be the best baseline (tr is 10× faster), so only --sweep
    // runs it there; the small data set has it always.
    let sed_here = !plan.large || config.sweep;
    if op == Op::Replace && !sed_here {
        let note = "edit: baseline `sed -i` skipped on the large data set (about 60 MB/s, it \
                    cannot be the best baseline; --sweep runs it)"
            .to_string();
        if !ctx.notes.contains(&note) {
            ctx.notes.push(note);
        }
    }
    let mut baseline = |name: &str,
                        needs: &[&str],
                        program: &str,
                        args: Vec<Arg>,
                        command: &str,
                        check: Check,
                        limited: bool| {
        if let Some(missing) = needs.iter().find(|p| which(p).is_none()) {
            let note = format!("edit: baseline `{name}` skipped: `{missing}` is not installed");
            if !ctx.notes.contains(&note) {
                ctx.notes.push(note);
            }
            return None;
        }
        let path = which(program)?;
        let version_of = needs.last().copied().unwrap_or(program);
        Some(EditJob {
            method: name.into(),
            baseline: true,
            durable: false,
            variant: None,
            version: which(version_of).and_then(|p| version_line(&p, &["--version"])),
            command: Some(command.into()),
            count_method: None,
            program: path,
            args,
            check,
            reports_phases: false,
            cold: !limited,
            max_runs: if limited {
                SED_LARGE_MAX_RUNS
            } else {
                usize::MAX
            },
        })
    };
    let found = match op {
        Op::Truncate => vec![baseline(
            "head",
            &["sh", "wc", "truncate", "head"],
            "sh",
            vec![
                text("-c"),
                text(r#"n=$(head -n 1 "$1" | wc -c) && exec truncate -s "$n" "$1""#),
                text("sh"),
                Arg::Input,
            ],
            r#"truncate -s "$(head -n 1 COPY | wc -c)" COPY"#,
            Check::InPlace,
            false,
        )],
        Op::Replace => vec![
            baseline(
                "tr",
                &["sh", "tr"],
                "sh",
                vec![
                    text("-c"),
                    text(r#"exec tr , ";" < "$1" > "$2""#),
                    text("sh"),
                    Arg::Input,
                    Arg::Output,
                ],
                "tr , ';' < COPY > OUT",
                Check::Output,
                false,
            ),
            sed_here
                .then(|| {
                    baseline(
                        "sed",
                        &["sed"],
                        "sed",
                        vec![text("-i"), text("s/,/;/g"), Arg::Input],
                        "sed -i 's/,/;/g' COPY",
                        Check::InPlace,
                        plan.large,
                    )
                })
                .flatten(),
        ],
        Op::Count => vec![baseline(
            "wc -l",
            &["wc"],
            "wc",
            vec![text("-l"), Arg::Input],
            "wc -l DATA",
            Check::Count,
            false,
        )],
    };
    found.into_iter().flatten().collect()
}
