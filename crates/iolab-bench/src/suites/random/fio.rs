//! The baseline: `fio --rw=randread` with the same file, block size, queue depth and
//! pattern as each iolab method, for each engine fio has (`psync`, `io_uring`, `mmap`;
//! `--direct=1` for the `O_DIRECT` rows). `--invalidate=0` keeps fio from dropping the
//! cache itself (the suite prepares it), and its JSON gives IOPS, completion-latency
//! percentiles and CPU use.

use std::ffi::OsString;
use std::path::Path;

use serde_json::Value;

use super::Sample;
use iolab_lab::random::{Method, Pattern};

/// The fio engine and `--direct` flag that do what `method` does, if fio has one.
pub(super) fn engine(method: Method) -> Option<(&'static str, bool)> {
    match method {
        Method::Pread => Some(("psync", false)),
        Method::PreadDirect => Some(("psync", true)),
        // fio's mmap engine advises POSIX_MADV_RANDOM for random jobs (engines/mmap.c).
        Method::MmapRandom => Some(("mmap", false)),
        Method::Mmap => None,
        Method::Uring => Some(("io_uring", false)),
        Method::UringDirect => Some(("io_uring", true)),
        // A method fio has no engine for is compared with nothing.
        _ => None,
    }
}

/// fio's row name for an engine.
pub(super) fn name(engine: &str, direct: bool) -> String {
    if direct {
        format!("fio {engine} direct")
    } else {
        format!("fio {engine}")
    }
}

/// fio's arguments for one run.
pub(super) fn args(
    data: &Path,
    engine: &str,
    direct: bool,
    block: usize,
    (queue_depth, threads): (usize, usize),
    pattern: Pattern,
    seconds: f64,
) -> Vec<OsString> {
    let mut args: Vec<OsString> = [
        "--name=iolab-random".to_string(),
        "--rw=randread".into(),
        format!("--bs={block}"),
        format!("--ioengine={engine}"),
        format!("--iodepth={queue_depth}"),
        format!("--direct={}", u8::from(direct)),
        "--invalidate=0".into(),
        "--norandommap".into(),
        "--time_based".into(),
        format!("--runtime={}ms", (seconds * 1000.0).round() as u64),
        "--output-format=json".into(),
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    if engine == "io_uring" && direct {
        args.push("--fixedbufs".into());
    }
    if threads > 1 {
        // One job per thread, reported as one.
        args.push(format!("--numjobs={threads}").into());
        args.push("--group_reporting".into());
    }
    if pattern == Pattern::Zipf {
        args.push("--random_distribution=zipf:0.99".into());
    }
    let mut filename = OsString::from("--filename=");
    filename.push(data);
    args.push(filename);
    args
}

/// The figures of a fio run from its JSON output.
pub(super) fn parse(stdout: &str) -> Option<Sample> {
    // fio may print notes before the JSON.
    let json: Value = serde_json::from_str(&stdout[stdout.find('{')?..]).ok()?;
    let job = json.get("jobs")?.get(0)?;
    let read = job.get("read")?;
    let iops = read.get("iops")?.as_f64()?;
    let reads = read.get("total_ios")?.as_f64()?;
    let pct = |p: &str| {
        read.get("clat_ns")?
            .get("percentile")?
            .get(p)?
            .as_f64()
            .map(|ns| ns / 1000.0)
    };
    let runtime_s = job.get("job_runtime")?.as_f64()? / 1000.0;
    let cpu_pct = job.get("usr_cpu")?.as_f64()? + job.get("sys_cpu")?.as_f64()?;
    Some(Sample {
        iops,
        p50_us: pct("50.000000")?,
        p99_us: pct("99.000000")?,
        p999_us: pct("99.900000")?,
        cpu_us_per_read: cpu_pct / 100.0 * runtime_s * 1e6 / reads.max(1.0),
        verified: true,
        cdf_us: Vec::new(),
        why: None,
    })
}
