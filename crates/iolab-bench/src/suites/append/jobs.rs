//! The `append` suite's jobs: its sections (a payload size and a sync policy, with the
//! records a run appends), each measuring every wanted strategy and the C++ baseline.

use super::{
    DEFAULT_RECORDS, EVERY_K_RECORDS, EVERY_RECORD_RECORDS, MAX_RUN_BYTES, PAYLOADS,
    QUICK_EVERY_K_RECORDS, QUICK_EVERY_RECORD_RECORDS, QUICK_MAX_RUN_BYTES, QUICK_RECORDS, Section,
    SyncPolicy,
};

/// The sections measured, in order (see the module docs).
pub(super) fn sections(quick: bool) -> Vec<Section> {
    let (records, max_bytes, every_k, every_record) = if quick {
        (
            QUICK_RECORDS,
            QUICK_MAX_RUN_BYTES,
            QUICK_EVERY_K_RECORDS,
            QUICK_EVERY_RECORD_RECORDS,
        )
    } else {
        (
            DEFAULT_RECORDS,
            MAX_RUN_BYTES,
            EVERY_K_RECORDS,
            EVERY_RECORD_RECORDS,
        )
    };
    let mut out: Vec<Section> = PAYLOADS
        .iter()
        .map(|&payload| Section {
            payload,
            records: records.min(max_bytes / payload as u64).max(1),
            sync: SyncPolicy::None,
        })
        .collect();
    out.push(Section {
        payload: PAYLOADS[0],
        records: every_k,
        sync: SyncPolicy::EveryK,
    });
    out.push(Section {
        payload: PAYLOADS[0],
        records: every_record,
        sync: SyncPolicy::EveryRecord,
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_stay_within_the_byte_cap_and_sync_policies_use_5_bytes() {
        for quick in [false, true] {
            let s = sections(quick);
            assert_eq!(s.len(), PAYLOADS.len() + 2);
            for sec in &s {
                assert!(sec.records * sec.payload as u64 <= MAX_RUN_BYTES);
                assert!(sec.records >= 1);
            }
            assert_eq!(s[0].records, if quick { 100_000 } else { 1_000_000 });
            assert!(
                s.iter()
                    .any(|x| x.sync == SyncPolicy::EveryK && x.payload == 5)
            );
            assert!(
                s.iter()
                    .any(|x| x.sync == SyncPolicy::EveryRecord && x.payload == 5)
            );
        }
    }
}
