//! What one `iolab random --json` run prints: the CLI writes it, the random suite reads it
//! back from the child's standard output (one type, so the two sides cannot drift).

use serde::{Deserialize, Serialize};

/// How the bytes of every read were checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RandomCheck {
    /// Each block compared with the pattern the generator wrote.
    Generated,
    /// A sample of reads compared with a second `pread` of the same range.
    Sampled,
}

/// The figures of one random-read run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RandomRun {
    /// The method's name (`iolab random --method`).
    pub method: String,
    /// The offsets' pattern's name (`uniform`, `zipf`).
    pub pattern: String,
    /// The requested block size.
    pub block_bytes: usize,
    /// Bytes a read returned on average (below `block_bytes` at the file's end).
    pub bytes_per_read: f64,
    /// Reads in flight per thread.
    pub queue_depth: usize,
    /// Threads reading.
    pub threads: usize,
    /// The file's length.
    pub file_bytes: u64,
    /// Reads completed.
    pub reads: u64,
    /// Wall time of the reads.
    pub elapsed_s: f64,
    /// Reads per second.
    pub iops: f64,
    /// Bytes per second.
    pub bytes_per_s: f64,
    /// Median latency, microseconds.
    pub p50_us: f64,
    /// 99th percentile latency, microseconds.
    pub p99_us: f64,
    /// 99.9th percentile latency, microseconds.
    pub p999_us: f64,
    /// CPU time (user + system) per read, microseconds.
    pub cpu_us_per_read: f64,
    /// Every checked read held the file's bytes.
    pub verified: bool,
    /// Reads whose bytes were wrong.
    pub mismatches: u64,
    /// How reads were checked.
    pub check: RandomCheck,
    /// Reads checked.
    pub checked: u64,
    /// The latency distribution: (quantile, microseconds) points.
    pub cdf_us: Vec<(f64, f64)>,
    /// For `auto`: the backing that served and why.
    pub why: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_reads_back_as_written_and_a_missing_field_is_refused() {
        let run = RandomRun {
            method: "auto".into(),
            pattern: "zipf".into(),
            block_bytes: 4096,
            bytes_per_read: 4096.0,
            queue_depth: 32,
            threads: 1,
            file_bytes: 1 << 30,
            reads: 1000,
            elapsed_s: 0.5,
            iops: 2000.0,
            bytes_per_s: 8.192e6,
            p50_us: 10.0,
            p99_us: 90.0,
            p999_us: 200.0,
            cpu_us_per_read: 1.5,
            verified: true,
            mismatches: 0,
            check: RandomCheck::Sampled,
            checked: 64,
            cdf_us: vec![(0.5, 10.0), (0.99, 90.0)],
            why: Some("the map: the file is cached".into()),
        };
        let text = serde_json::to_string(&run).unwrap();
        assert!(text.contains("\"check\":\"sampled\""), "{text}");
        assert_eq!(serde_json::from_str::<RandomRun>(&text).unwrap(), run);
        let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
        value.as_object_mut().unwrap().remove("iops");
        assert!(serde_json::from_value::<RandomRun>(value).is_err());
    }
}
