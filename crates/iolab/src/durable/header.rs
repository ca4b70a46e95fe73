//! The log file's header: how a [`Log`](super::Log) knows a file is its own before it
//! changes a byte of it.
//!
//! **Layout** (one 4 KiB block at offset 0, the records after it):
//! `[magic: 8 bytes "\x89iolog\r\n"][format version: u16 LE][framing: u16 LE][CRC-32 of
//! the 12 bytes before: u32 LE]`, then zeros to 4 KiB (reserved). The magic's first byte
//! is not ASCII and its line ends are those a text transfer would change (PNG's trick), so
//! no text file starts with it. Format 1 frames records as [`record`](super::record) says
//! (framing 1). A whole block, not 16 bytes: records then keep the alignment they had from
//! offset 0, so 8 KiB frames (PostgreSQL's WAL page, the durable suite's one-writer
//! condition) still cover two 4 KiB blocks each, not three.
//!
//! **Classification** of an existing file (`classify`): a valid header of a format this
//! iolab reads is a log; a newer format, an unknown framing or a damaged header is
//! refused; a file no longer than the header holding only zeros or a prefix of the header
//! is what a crash during the header's first write leaves (the file is taken, as an empty
//! one is); a file whose first bytes are a whole, valid record frame is a log written by
//! iolab before format 1 (readable, not opened for appends); anything else is not a log.

use super::record;

/// Bytes of the header before the first record: one 4 KiB block.
pub const LOG_HEADER_LEN: u64 = 4096;

/// The header's meaningful bytes; the rest of the block is zeros.
const FIELDS_LEN: usize = 16;

/// The header's first 8 bytes.
pub const MAGIC: [u8; 8] = *b"\x89iolog\r\n";

/// The format this iolab writes and the newest it reads.
pub const FORMAT: u16 = 1;

/// The record framing of format 1: `[length u32][CRC-32 u32][payload]`.
const FRAMING: u16 = 1;

/// The header this iolab writes.
pub(crate) fn encode() -> [u8; LOG_HEADER_LEN as usize] {
    let mut h = [0u8; LOG_HEADER_LEN as usize];
    h[..8].copy_from_slice(&MAGIC);
    h[8..10].copy_from_slice(&FORMAT.to_le_bytes());
    h[10..12].copy_from_slice(&FRAMING.to_le_bytes());
    let crc = crc32fast::hash(&h[..12]);
    h[12..FIELDS_LEN].copy_from_slice(&crc.to_le_bytes());
    h
}

/// What a file's first bytes say it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A log of this format: records start after the header.
    Log,
    /// Empty, or what an interrupted first write of the header leaves: ours to take.
    Unstarted,
    /// A log written before headers: records start at 0.
    Headerless,
    /// Not a log this iolab opens, and why.
    Foreign(String),
}

/// Classifies a file of `len` bytes from its first bytes (`start`: [`LOG_HEADER_LEN`] of
/// them, fewer only when the file is shorter) and, for a file with
/// no header, whether a whole valid frame starts it (`first_frame_valid`).
pub(crate) fn classify(start: &[u8], len: u64, first_frame_valid: bool) -> Kind {
    let ours = encode();
    if len <= LOG_HEADER_LEN
        && (start.iter().all(|&b| b == 0) || ours.starts_with(start))
        && start.len() as u64 == len
        && start != ours
    {
        return Kind::Unstarted;
    }
    if start.len() >= MAGIC.len() && start[..8] == MAGIC {
        if start.len() < FIELDS_LEN {
            return Kind::Foreign("an iolab log whose header is cut short".into());
        }
        let version = u16::from_le_bytes([start[8], start[9]]);
        let framing = u16::from_le_bytes([start[10], start[11]]);
        let crc = u32::from_le_bytes(start[12..16].try_into().expect("4 bytes"));
        if crc != crc32fast::hash(&start[..12]) {
            return Kind::Foreign("an iolab log whose header is damaged (checksum)".into());
        }
        if version > FORMAT {
            return Kind::Foreign(format!(
                "an iolab log of format {version}, newer than this iolab reads ({FORMAT}): use a newer iolab"
            ));
        }
        if framing != FRAMING {
            return Kind::Foreign(format!(
                "an iolab log of record framing {framing}, which this iolab does not know"
            ));
        }
        return Kind::Log;
    }
    if first_frame_valid {
        return Kind::Headerless;
    }
    Kind::Foreign("not an iolab log (it does not start with a log header)".into())
}

/// The refusal of a log written before format 1, for [`Log::open`](super::Log::open).
pub(crate) const HEADERLESS_REFUSED: &str = "an iolab log from before log headers (format 0): read its records with Log::records and append them to a new log";

/// Whether `bytes` start with a whole, valid record frame.
pub(crate) fn starts_with_frame(bytes: &[u8]) -> bool {
    let mut found = false;
    let _ = record::scan_slice(bytes, |_| {
        found = true;
        false
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        record::frame(payload, &mut out);
        out
    }

    #[test]
    fn each_kind_of_start_is_told_apart() {
        let ours = encode();
        let len = LOG_HEADER_LEN;
        assert_eq!(classify(&ours, len, false), Kind::Log);
        assert_eq!(classify(&ours, 1 << 30, false), Kind::Log);
        assert_eq!(classify(&[], 0, false), Kind::Unstarted);
        assert_eq!(classify(&[0; 16], 16, false), Kind::Unstarted);
        assert_eq!(classify(&ours[..5], 5, false), Kind::Unstarted);
        assert_eq!(classify(&ours[..100], 100, false), Kind::Unstarted);
        // Zeros going on past the header's block are someone's data.
        assert!(matches!(
            classify(&[0; 4096], 4097, false),
            Kind::Foreign(_)
        ));
        let text = b"precious data\n";
        assert!(matches!(classify(text, 14, false), Kind::Foreign(_)));
        let f = frame(b"old record");
        assert!(starts_with_frame(&f));
        assert!(!starts_with_frame(&f[..f.len() - 1]));
        assert_eq!(classify(&f[..16], f.len() as u64, true), Kind::Headerless);

        let mut newer = ours;
        newer[8..10].copy_from_slice(&2u16.to_le_bytes());
        let crc = crc32fast::hash(&newer[..12]);
        newer[12..16].copy_from_slice(&crc.to_le_bytes());
        match classify(&newer, len, false) {
            Kind::Foreign(why) => assert!(why.contains("format 2"), "{why}"),
            k => panic!("{k:?}"),
        }
        let mut damaged = ours;
        damaged[9] ^= 1;
        match classify(&damaged, 100, false) {
            Kind::Foreign(why) => assert!(why.contains("damaged"), "{why}"),
            k => panic!("{k:?}"),
        }
    }
}
