//! The log's record frame and its recovery: how a reopened [`Log`](super::Log) finds where
//! the acknowledged records end.
//!
//! **Frame**: `[payload length: u32 LE][CRC-32 of the length's 4 bytes and the payload:
//! u32 LE][payload]`. A frame is valid when its length is at most [`MAX_RECORD`], the
//! payload is all there and the checksum holds. An all-zero header is never valid (the
//! CRC-32 of four zero bytes is not zero), so the zeros of a preallocated file end the log.
//!
//! **Recovery** reads frames from the end of the file's [header](super::header) until the
//! first one that is not valid; that offset is the log's logical end. Every record whose
//! append was acknowledged lies before it (its bytes were durable before the
//! acknowledgement), and a record cut by a crash lies at it and is dropped.

use std::io::{self, BufReader, Read};

/// Bytes before each payload: its length and its checksum.
pub const FRAME_HEADER_LEN: usize = 8;

/// The largest payload a record may have: 16 MiB. A larger length in a header is garbage.
pub const MAX_RECORD: usize = 16 << 20;

/// How much a [`Frames`] reads at a time.
const READ_CHUNK: usize = 256 << 10;

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
fn payload_len(header: &[u8; FRAME_HEADER_LEN]) -> Option<usize> {
    let len = u32::from_le_bytes(header[..4].try_into().unwrap()) as usize;
    (len <= MAX_RECORD).then_some(len)
}

/// The valid frames of a log read in order, in constant memory: a buffered reader and
/// one payload buffer (as long as the longest record read).
pub(crate) struct Frames<R> {
    reader: BufReader<R>,
    payload: Vec<u8>,
    end: u64,
    done: bool,
}

impl<R: Read> Frames<R> {
    /// Frames read from `reader`, positioned at offset `start` of the log file.
    pub(crate) fn new(reader: R, start: u64) -> Frames<R> {
        Frames {
            reader: BufReader::with_capacity(READ_CHUNK, reader),
            payload: Vec::new(),
            end: start,
            done: false,
        }
    }

    /// The next valid record's payload, or `None` at the log's end (the first frame that
    /// is not whole and valid, or the end of the file).
    pub(crate) fn next_payload(&mut self) -> io::Result<Option<&[u8]>> {
        if self.done {
            return Ok(None);
        }
        let mut header = [0u8; FRAME_HEADER_LEN];
        let whole = read_exact_or_eof(&mut self.reader, &mut header)?;
        let len = whole.then(|| payload_len(&header)).flatten();
        let Some(len) = len else {
            self.done = true;
            return Ok(None);
        };
        self.payload.resize(len, 0);
        let want = u32::from_le_bytes(header[4..].try_into().unwrap());
        if !read_exact_or_eof(&mut self.reader, &mut self.payload)?
            || checksum(header[..4].try_into().unwrap(), &self.payload) != want
        {
            self.done = true;
            return Ok(None);
        }
        self.end += (FRAME_HEADER_LEN + len) as u64;
        Ok(Some(&self.payload))
    }

    /// The reader the frames come from.
    pub(crate) fn get_ref(&self) -> &R {
        self.reader.get_ref()
    }

    /// The offset just past the last record returned: the log's end once
    /// [`next_payload`](Frames::next_payload) has returned `None`.
    pub(crate) fn end(&self) -> u64 {
        self.end
    }
}

/// Reads frames from `reader` (positioned at offset `start`), calling `each` with every
/// valid payload, and returns the logical end.
pub(crate) fn scan(reader: impl Read, start: u64, mut each: impl FnMut(&[u8])) -> io::Result<u64> {
    let mut frames = Frames::new(reader, start);
    while let Some(p) = frames.next_payload()? {
        each(p);
    }
    Ok(frames.end())
}

/// The frames of `bytes` (a log without its header) while `each` returns `true`; the end of
/// the last one given.
pub(crate) fn scan_slice(bytes: &[u8], mut each: impl FnMut(&[u8]) -> bool) -> u64 {
    let mut frames = Frames::new(bytes, 0);
    while let Ok(Some(p)) = frames.next_payload() {
        if !each(p) {
            break;
        }
    }
    frames.end()
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
        let end = scan(bytes, 0, |p| found.push(p.to_vec())).unwrap();
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
        let first_end = (FRAME_HEADER_LEN + 5) as u64;
        for cut in first_end as usize..whole.len() {
            assert_eq!(payloads(&whole[..cut]).1, first_end, "cut at {cut}");
        }
        let mut flipped = whole.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(payloads(&flipped), (vec![b"first".to_vec()], first_end));
    }
}
