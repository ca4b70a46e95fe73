//! The `append` suite's rows and the run's notes (how it measured, the append write-up's
//! question answered with this run's figures, the goals).

use std::fmt::Write as _;

use serde_json::json;

use super::fstream::FSTREAM;
use super::{Contender, Sample};
use super::{PAYLOADS, SUITE, SYNC_EVERY_K, Section, Strategy, SyncPolicy, WRITEV_BATCH};
use crate::results::Row;
use crate::rounds::{Tally, set_times};
use iolab_lab::units::format_bytes;

pub(super) fn to_row(section: &Section, contender: &Contender<'_>, t: Tally<Sample>) -> Row {
    let records = section.records;
    let mut row = Row {
        suite: SUITE.to_string(),
        method: contender.name().to_string(),
        bytes: records * section.payload as u64,
        ..Row::default()
    };
    match contender {
        Contender::Baseline(fstream) => {
            row.baseline = true;
            row.version = fstream.version.clone();
        }
        Contender::Sized(bytes) => {
            let label = format!("buffer={}", format_bytes(*bytes as u64));
            row.extra.insert("variant".into(), json!(label));
            row.extra.insert("buffer_bytes".into(), json!(bytes));
        }
        Contender::Ours(_) => {}
    }
    row.extra
        .insert("payload_bytes".into(), json!(section.payload));
    row.extra
        .insert("sync_policy".into(), json!(section.sync.name()));
    row.extra.insert("records".into(), json!(records));
    if let Some(k) = section.sync.interval() {
        row.extra.insert("sync_every_records".into(), json!(k));
        row.extra.insert(
            "fdatasyncs_per_record".into(),
            json!(section.sync.syncs(records) as f64 / records as f64),
        );
    }
    row.error = t.error.clone();
    set_times(&mut row, t.counted.iter().map(|s| s.times));
    row.notes.extend(t.stopped_note());
    row.verified = !t.counted.is_empty() && t.wrong.is_none() && row.error.is_none();
    if let Some(wrong) = t.wrong.clone() {
        row.error = Some(wrong);
    } else if t.ended() > 0 {
        row.result = Some(format!("{records} records of {} bytes", section.payload));
    }
    if let Some(median) = row.median_s {
        let ns = median * 1e9 / records as f64;
        row.extra.insert("ns_per_record".into(), json!(ns));
    }
    let write_calls: Option<Vec<u64>> = t.counted.iter().map(|s| s.write_calls).collect();
    if let Some(calls) = write_calls.as_deref().and_then(median_u64) {
        let per_record = calls / records as f64;
        row.extra
            .insert("syscalls_per_record".into(), json!(per_record));
    }
    row
}

/// The median of integer samples, as a float.
fn median_u64(samples: &[u64]) -> Option<f64> {
    let floats: Vec<f64> = samples.iter().map(|&x| x as f64).collect();
    crate::stats::Summary::of(&floats).map(|s| s.median)
}

/// The report's notes: how the suite measures, the append write-up's question answered with
/// this run's figures, and the goals.
pub(super) fn explanations(rows: &[Row]) -> Vec<String> {
    let figure = |method: &str, key: &str| -> Option<f64> {
        rows.iter()
            .find(|r| {
                r.method == method
                    && r.extra.get("payload_bytes") == Some(&json!(PAYLOADS[0]))
                    && r.extra.get("sync_policy") == Some(&json!(SyncPolicy::None.name()))
            })
            .and_then(|r| r.extra.get(key))
            .and_then(serde_json::Value::as_f64)
    };
    let mut notes = vec![format!(
        "append: times cover the append loop and the final flush or sync, measured in-process \
         (fstream: in its own process, the same way); syscalls_per_record is the measured change \
         of syscw in /proc/thread-self/io (write, writev, pwrite; fdatasync calls are counted \
         separately as fdatasyncs_per_record); every-K syncs every {SYNC_EVERY_K} records; \
         writev-batch sends {WRITEV_BATCH} records per writev"
    )];
    let mut answer = String::from(
        "append: where fstream's writev comes from (the append write-up's question): libstdc++'s \
         basic_filebuf::xsputn (bits/fstream.tcc) copies a write into its 8 KiB buffer while it \
         fits; when it does not, or is 1 KiB or more, it calls std::__basic_file<char>::xsputn_2, \
         compiled into libstdc++.so (config/io/basic_file_stdio.cc, so no header mentions writev), \
         which sends the buffered bytes and the new ones in one writev. It is buffering, not the \
         kernel vectorising: ",
    );
    match figure(FSTREAM, "syscalls_per_record") {
        Some(calls) => {
            let _ = write!(
                answer,
                "here fstream made {} write calls per 5-byte record (one per {:.0} records)",
                iolab_lab::units::three_significant(calls),
                1.0 / calls.max(f64::MIN_POSITIVE)
            );
        }
        None => answer.push_str("one write call per 1639 records of 5 bytes"),
    }
    answer.push_str(
        ", and one per record at 4 KiB. append-file buffers 64 KiB and writes it in whole \
         64 KiB pieces (writes ending mid-page are slower here), keeping libstdc++'s \
         writev of buffer + data for appends of 64 KiB or more. \
         The append write-up's writev benchmark handed one iovec per iteration to a single writev, \
         which Linux refuses beyond IOV_MAX (1024) iovecs with EINVAL: it timed building the \
         vector and wrote nothing.",
    );
    notes.push(answer);

    let ns = |m: &str| figure(m, "ns_per_record");
    if let (Some(append), Some(buf64), Some(per_record)) = (
        ns("append-file"),
        ns("bufwriter-64k"),
        ns("write-per-record"),
    ) {
        let verdict = |met: bool| if met { "met" } else { "MISSED" };
        let vs_buf = append / buf64;
        let vs_write = per_record / append;
        let mut goals = format!(
            "append goals at 5-byte payloads: append-file {} ns/record = {:.2}× bufwriter-64k \
             (goal ≤ 1.2×: {}), 1/{:.0} of write-per-record (goal ≤ 1/30: {})",
            iolab_lab::units::three_significant(append),
            vs_buf,
            verdict(vs_buf <= 1.2),
            vs_write,
            verdict(vs_write >= 30.0),
        );
        if let Some(cpp) = ns(FSTREAM) {
            let vs_cpp = append / cpp;
            let _ = write!(
                goals,
                ", {:.2}× fstream (goal ≤ 1.5×: {})",
                vs_cpp,
                verdict(vs_cpp <= 1.5)
            );
        }
        let buffered: Vec<(String, f64)> = Strategy::ALL
            .iter()
            .filter(|s| s.buffers())
            .filter_map(|s| {
                Some((
                    s.name().to_string(),
                    figure(s.name(), "syscalls_per_record")?,
                ))
            })
            .collect();
        if !buffered.is_empty() {
            let worst = buffered.iter().map(|(_, c)| *c).fold(0.0, f64::max);
            let _ = write!(
                goals,
                "; write calls per record of the buffered strategies: {} (goal ≤ 0.001: {})",
                buffered
                    .iter()
                    .map(|(n, c)| format!("{n} {}", iolab_lab::units::three_significant(*c)))
                    .collect::<Vec<_>>()
                    .join(", "),
                verdict(worst <= 0.001)
            );
        }
        notes.push(goals);
    }
    notes
}
