//! The `write` suite's baselines: `yes`, `fyes` (fcoreutils' `yes`), `dd` and `pv`, each
//! made to move exactly N bytes into the sink (or given an `unavailable` row where nothing
//! can stop it).

use super::{DD_BLOCK, Entry, Sink, sink_row};
use crate::context::Context;
use crate::peers::{version_line, which};
use crate::results::Row;
use crate::runner::Job;
use iolab_lab::write::DestinationKind;

/// `yes`, `fyes`, `dd` and `pv`, as installed; `yes` first, so that it is the pipe tables'
/// reference.
pub(super) fn baselines(
    ctx: &mut Context<'_>,
    sink: &Sink,
    bytes: u64,
    entries: &mut Vec<Entry>,
    rows: &mut Vec<Row>,
) {
    let first_sink = sink.name() == "splice-reader";
    let mut add = |ctx: &mut Context<'_>,
                   name: &str,
                   program: &str,
                   args: Vec<String>,
                   buffer: Option<usize>,
                   endless: bool| {
        let Some(path) = which(program) else {
            if first_sink {
                ctx.notes.push(format!(
                    "write: baseline `{name}` skipped: `{program}` is not installed"
                ));
            }
            return;
        };
        // fyes outside a pipe would only repeat yes's `unavailable` row.
        if name == "fyes" && sink.kind() != DestinationKind::Pipe {
            return;
        }
        if endless && sink.kind() != DestinationKind::Pipe {
            rows.push(sink_row(
                sink,
                bytes,
                name,
                buffer,
                true,
                Some(format!(
                    "{name} never stops by itself; only a pipe's reader can end it after N bytes"
                )),
            ));
            return;
        }
        let mut job = Job::new(name, &path, args, true);
        job.stdout = sink.stdout(ctx.config, bytes, endless.then_some(bytes));
        entries.push(Entry {
            version: version_line(&path, &["--version"]),
            job,
            buffer,
            endless,
            method: None,
        });
    };
    // GNU yes writes its 8 KiB buffer (BUFSIZ) per `write` (seen with strace).
    add(ctx, "yes", "yes", Vec::new(), Some(8 << 10), true);
    // fcoreutils' yes (`cargo install fcoreutils`), which is built for pipe throughput; its
    // buffer is its own business, so the row has none.
    add(ctx, "fyes", "fyes", Vec::new(), None, true);
    if bytes.is_multiple_of(DD_BLOCK) {
        add(
            ctx,
            "dd if=/dev/zero bs=128k",
            "dd",
            vec![
                "if=/dev/zero".into(),
                "bs=128k".into(),
                format!("count={}", bytes / DD_BLOCK),
            ],
            Some(DD_BLOCK as usize),
            false,
        );
    }
    // pv picks 32 × the input's st_blksize (4 KiB for /dev/zero) and splices when it can;
    // -f -n -b print the byte count on stderr, which the /dev/null sink checks.
    add(
        ctx,
        "pv /dev/zero",
        "pv",
        vec![
            "-f".into(),
            "-n".into(),
            "-b".into(),
            "-S".into(),
            "-s".into(),
            bytes.to_string(),
            "/dev/zero".into(),
        ],
        Some(128 << 10),
        false,
    );
}
