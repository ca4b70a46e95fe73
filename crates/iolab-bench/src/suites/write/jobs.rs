//! The `write` suite's jobs into one sink: each method at its default buffer and the
//! sizes around the pipe's cliff (the whole sweep with `--sweep`), and the baselines.

use std::ffi::OsString;

use super::baselines::baselines;
use super::rows::sink_row;
use super::sinks::Sink;
use super::{Entry, SWEEP};
use crate::context::{Config, Context};
use crate::results::Row;
use crate::runner::{CpuPlacement, Job};
use iolab_lab::write::{self, Destination, DestinationKind, Method};

/// The sizes around the cliff a pipe's reader on another CPU shows (8 KiB streams, 16 KiB
/// does not; see [`iolab_lab::write::adaptive`]), measured by default into pipes.
const PIPE_SIZES: [usize; 2] = [8 << 10, 16 << 10];

/// The buffer sizes measured into `sink` for a method whose default buffer is `default`:
/// the whole [`SWEEP`] with `--sweep`; else, into a pipe, the sizes around the cliff
/// ([`PIPE_SIZES`]) and the default rule's size (the pipe's capacity, which the adaptive
/// default compares with 8 KiB); elsewhere 4 KiB. `--quick` and the same-CPU pipe measure
/// 8 KiB and the default size, the resized and two-CPU pipes the default size alone. Each method's default, as it runs without `--buffer`, is a
/// row of its own besides (elsewhere than in a pipe it is the default size, so that size
/// is not measured twice).
fn sweep_for(config: &Config, sink: &Sink, default: usize) -> Vec<usize> {
    if config.sweep {
        return SWEEP.to_vec();
    }
    let pipe = sink.kind() == DestinationKind::Pipe;
    let mut sizes = if matches!(sink, Sink::Pipe { resized: true, .. })
        || matches!(
            sink,
            Sink::Pipe {
                cpus: CpuPlacement::Separate,
                ..
            }
        ) {
        vec![default]
    } else if config.quick || sink.diagnostic() {
        vec![8 << 10, default]
    } else if pipe {
        let mut v = PIPE_SIZES.to_vec();
        v.push(default);
        v
    } else {
        vec![4 << 10]
    };
    sizes.retain(|&s| SWEEP.contains(&s) && (pipe || s != default));
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// The jobs of one sink into `destination`: every wanted method at its default and at each
/// buffer size of [`sweep_for`], then the installed baselines; and a row of its own for a
/// method that cannot run here.
pub(super) fn jobs(
    ctx: &mut Context<'_>,
    sink: &Sink,
    bytes: u64,
    destination: &Destination,
) -> (Vec<Entry>, Vec<Row>) {
    let config = ctx.config;
    let mut rows = Vec::new();
    let mut entries = Vec::new();
    let sweep = sweep_for(config, sink, write::default_buffer_size(destination));
    // The resized and two-CPU diagnostics show what the pipe does to the fastest methods;
    // every method runs into the consumers, the same-CPU pipe, /dev/null and the file.
    let methods: &[Method] = match sink {
        Sink::Pipe { resized: true, .. }
        | Sink::Pipe {
            cpus: CpuPlacement::Separate,
            ..
        } => &[Method::RawFd, Method::Vmsplice],
        _ => &Method::ALL,
    };
    for &method in methods {
        if !config.wants(method.name()) {
            continue;
        }
        let reason = method
            .availability()
            .err()
            .or_else(|| method.refuses(destination));
        if let Some(reason) = reason {
            rows.push(sink_row(
                sink,
                bytes,
                method.name(),
                None,
                false,
                Some(reason),
            ));
            continue;
        }
        // `None`: the method's default, as `iolab write` runs it without `--buffer`.
        for buffer in std::iter::once(None).chain(sweep.iter().copied().map(Some)) {
            let mut args: Vec<OsString> = ["write", "--method", method.name()]
                .map(OsString::from)
                .to_vec();
            if let Some(b) = buffer {
                args.extend(["--buffer".into(), b.to_string().into()]);
            }
            args.extend([
                "--bytes".into(),
                bytes.to_string().into(),
                "--verbose".into(),
            ]);
            let mut job = Job::new(method.name(), &config.iolab_exe, args, false);
            job.stdout = sink.stdout(config, bytes, None);
            entries.push(Entry {
                job,
                version: None,
                buffer,
                endless: false,
                method: Some(method),
            });
        }
    }
    if config.baselines {
        baselines(ctx, sink, bytes, &mut entries, &mut rows);
    }
    (entries, rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::write::sinks::ConsumerKind;

    #[test]
    fn the_default_sweep_brackets_the_pipe_cliff_and_skips_sizes_the_default_row_measures() {
        let mut config = Config::for_tests();
        let consumer = Sink::Consumer(ConsumerKind::Splice);
        let same_cpu = Sink::Pipe {
            capacity: None,
            resized: false,
            cpus: CpuPlacement::Shared,
        };
        let two_cpus = Sink::Pipe {
            capacity: None,
            resized: false,
            cpus: CpuPlacement::Separate,
        };
        assert_eq!(
            sweep_for(&config, &consumer, 64 << 10),
            [8 << 10, 16 << 10, 64 << 10]
        );
        assert_eq!(sweep_for(&config, &same_cpu, 64 << 10), [8 << 10, 64 << 10]);
        assert_eq!(sweep_for(&config, &two_cpus, 64 << 10), [64 << 10]);
        assert_eq!(sweep_for(&config, &Sink::Null, 128 << 10), [4 << 10]);
        config.quick = true;
        assert_eq!(sweep_for(&config, &consumer, 64 << 10), [8 << 10, 64 << 10]);
        config.sweep = true;
        assert_eq!(sweep_for(&config, &consumer, 128 << 10), SWEEP);
    }
}
