//! The `append` suite's verification: after every run, warm-up included, the file read
//! back must hold exactly the section's records, in order.

use std::path::Path;

use super::Section;
use super::data::Records;
use iolab_lab::file::SequentialFile;

/// The start of a verification failure's message.
pub(super) const WRONG: &str = "wrong content: ";

/// Checks that `path` holds exactly the section's records, in order.
pub(super) fn verify(
    path: &Path,
    section: &Section,
    records: &Records,
) -> std::result::Result<(), String> {
    let io_error = |e: iolab::Error| format!("{}: {e}", path.display());
    let mut file = SequentialFile::open(path).map_err(io_error)?;
    let mut record = vec![0u8; section.payload];
    for i in 0..section.records {
        let got = file.read_full(&mut record).map_err(io_error)?;
        if got < record.len() {
            return Err(format!(
                "{WRONG}the file ends in record {i} of {}",
                section.records
            ));
        }
        if record != records.get(i) {
            return Err(format!("{WRONG}record {i} differs from what was appended"));
        }
    }
    if file.read(&mut [0u8; 1]).map_err(io_error)? != 0 {
        return Err(format!(
            "{WRONG}the file is longer than {} records",
            section.records
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::suites::append::SyncPolicy;

    #[test]
    fn verification_catches_short_long_and_reordered_files() {
        let dir = tempfile::tempdir().unwrap();
        let section = Section {
            payload: 3,
            records: 4,
            sync: SyncPolicy::None,
        };
        let records = Records::new(3);
        let good: Vec<u8> = (0..4).flat_map(|i| records.get(i).to_vec()).collect();
        let path = dir.path().join("f");
        fs::write(&path, &good).unwrap();
        assert!(verify(&path, &section, &records).is_ok());
        fs::write(&path, &good[..good.len() - 1]).unwrap();
        assert!(
            verify(&path, &section, &records)
                .unwrap_err()
                .contains("ends in record 3")
        );
        fs::write(&path, [good.as_slice(), b"x"].concat()).unwrap();
        assert!(
            verify(&path, &section, &records)
                .unwrap_err()
                .contains("longer")
        );
        let mut swapped = good.clone();
        swapped[..3].copy_from_slice(records.get(1));
        fs::write(&path, &swapped).unwrap();
        assert!(
            verify(&path, &section, &records)
                .unwrap_err()
                .contains("record 0")
        );
    }
}
