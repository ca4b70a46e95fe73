//! The log's record frame and its recovery: how a reopened [`Log`](super::Log) finds where
//! the acknowledged records end.
//!
//! **Frame**: `[payload length: u32 LE][CRC-32 of the length's 4 bytes and the payload:
//! u32 LE][payload]`. A frame is valid when its length is at most [`MAX_RECORD`], the
//! payload is all there and the checksum holds. An all-zero header is never valid (the
//! CRC-32 of four zero bytes is not zero), so the zeros of a preallocated file end the log.
//!
//! **Recovery** reads frames from offset 0 until the first one that is not valid; that
//! offset is the log's logical end. Every record whose append was acknowledged lies before
//! it (its bytes were durable before the acknowledgement), and a record cut by a crash lies
//! at it and is dropped.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

use crate::file::{Error, Result, open_error};

/// Bytes before each payload: its length and its checksum.
pub const HEADER_LEN: usize = 8;

/// The largest payload a record may have: 16 MiB. A larger length in a header is garbage.
pub const MAX_RECORD: usize = 16 << 20;

/// Appends `record`'s frame to `out`.
pub(crate) fn frame(record: &[u8], out: &mut Vec<u8>) {
    debug_assert!(record.len() <= MAX_RECORD);
    let len = (record.len() as u32).to_le_bytes();
    out.extend_from_slice(&len);
    out.extend_from_slice(&checksum(len, record).to_le_bytes());
    out.extend_from_slice(record);
}

/// The checksum of a frame with this length field and payload.
fn checksum(len: [u8; 4], payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&len);
    h.update(payload);
    h.finalize()
}

/// The length of `header`'s payload if the header can start a record (its length is in
/// range), before the payload is checked.
fn payload_len(header: &[u8; HEADER_LEN]) -> Option<usize> {
    let len = u32::from_le_bytes(header[..4].try_into().unwrap()) as usize;
    (len <= MAX_RECORD).then_some(len)
}

/// What recovery found in a log file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    /// The payloads of the valid records, in order.
    pub records: Vec<Vec<u8>>,
    /// The logical end: the offset just past the last valid record.
    pub end: u64,
    /// The file's length; more than `end` for a preallocated log or a torn tail.
    pub file_len: u64,
}

/// Reads every valid record of the log at `path` (see the module doc for the rule).
pub fn read_records(path: impl AsRef<Path>) -> Result<Recovered> {
    let path = path.as_ref();
    (|| {
        let file = File::open(path).map_err(|e| open_error("cannot open", e))?;
        let file_len = file
            .metadata()
            .map_err(|e| Error::from_io("cannot stat", e, 0))?
            .len();
        let mut recovered = Recovered {
            file_len,
            ..Recovered::default()
        };
        scan(file, |payload| recovered.records.push(payload.to_vec()))
            .map(|end| recovered.end = end)
            .map_err(|e| Error::from_io("cannot read", e, 0))?;
        Ok(recovered)
    })()
    .map_err(|e: Error| e.at(path))
}

/// Reads frames from `reader` (positioned at the log's start), calling `each` with every
/// valid payload, and returns the logical end.
pub(crate) fn scan(reader: impl Read, mut each: impl FnMut(&[u8])) -> io::Result<u64> {
    let mut reader = BufReader::with_capacity(1 << 20, reader);
    let mut end = 0u64;
    let mut payload = Vec::new();
    loop {
        let mut header = [0u8; HEADER_LEN];
        if !read_exact_or_eof(&mut reader, &mut header)? {
            return Ok(end);
        }
        let Some(len) = payload_len(&header) else {
            return Ok(end);
        };
        payload.resize(len, 0);
        if !read_exact_or_eof(&mut reader, &mut payload)? {
            return Ok(end);
        }
        let want = u32::from_le_bytes(header[4..].try_into().unwrap());
        if checksum(header[..4].try_into().unwrap(), &payload) != want {
            return Ok(end);
        }
        each(&payload);
        end += (HEADER_LEN + len) as u64;
    }
}

/// Fills `buf`, or returns `false` at an end of file before it is full.
fn read_exact_or_eof(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<bool> {
    match reader.read_exact(buf) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(records: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for r in records {
            frame(r, &mut out);
        }
        out
    }

    fn payloads(bytes: &[u8]) -> (Vec<Vec<u8>>, u64) {
        let mut found = Vec::new();
        let end = scan(bytes, |p| found.push(p.to_vec())).unwrap();
        (found, end)
    }

    #[test]
    fn frames_round_trip_and_zeros_end_the_log() {
        let mut bytes = framed(&[b"a", b"", b"hello"]);
        let end = bytes.len() as u64;
        bytes.extend_from_slice(&[0u8; 100]);
        let (found, got_end) = payloads(&bytes);
        assert_eq!(found, vec![b"a".to_vec(), vec![], b"hello".to_vec()]);
        assert_eq!(got_end, end);
    }

    #[test]
    fn a_torn_or_corrupt_record_ends_the_log_at_its_start() {
        let whole = framed(&[b"first", b"second"]);
        let first_end = (HEADER_LEN + 5) as u64;
        for cut in first_end as usize..whole.len() {
            assert_eq!(payloads(&whole[..cut]).1, first_end, "cut at {cut}");
        }
        let mut flipped = whole.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(payloads(&flipped), (vec![b"first".to_vec()], first_end));
    }
}
