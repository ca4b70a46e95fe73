//! `writev-batch`: one `writev(2)` per batch of records, an `iovec` pointing at each.
//!
//! **System calls**: `writev` of up to [`WRITEV_BATCH`] `iovec`s (continued after a short
//! write or `EINTR`); a batch is also sent early before each `fdatasync` [`Syncs`] asks for.
//! **When it wins**: records that already sit in memory and are large enough that copying
//! them into a buffer costs more than describing them; for 5-byte records the kernel's
//! per-`iovec` work makes it slower than a copying buffer.
//! **Limits**: Linux refuses more than `IOV_MAX` (1024) `iovec`s per call with `EINVAL`;
//! the append write-up's `writev` benchmark passed one per record to a single call and so wrote
//! nothing. The records must stay alive until their batch is sent.
//! **How it fails**: the first failed `writev` or `fdatasync` is returned; earlier batches
//! are in the file, that one may be partly.

use std::fs::File;
use std::io::{self, IoSlice, Write};

use super::Syncs;

/// Records per `writev`: `IOV_MAX`, the most Linux accepts in one call.
pub const WRITEV_BATCH: usize = libc::UIO_MAXIOV as usize;

/// Appends records `0..n` to `file`, [`WRITEV_BATCH`] per `writev`.
pub(super) fn append<'r>(
    file: &mut File,
    n: u64,
    record: &impl Fn(u64) -> &'r [u8],
    syncs: Syncs,
) -> io::Result<()> {
    let mut batch: Vec<IoSlice<'_>> = Vec::with_capacity(WRITEV_BATCH);
    for i in 0..n {
        batch.push(IoSlice::new(record(i)));
        let sync = syncs.due(i);
        if batch.len() == WRITEV_BATCH || sync {
            write_all_vectored(file, &mut batch)?;
            batch.clear();
        }
        if sync {
            file.sync_data()?;
        }
    }
    write_all_vectored(file, &mut batch)?;
    if syncs.tail() {
        file.sync_data()?;
    }
    Ok(())
}

/// `writev` of every slice, continued after short writes and `EINTR`.
fn write_all_vectored(file: &mut File, batch: &mut [IoSlice<'_>]) -> io::Result<()> {
    let mut rest = batch;
    IoSlice::advance_slices(&mut rest, 0);
    while !rest.is_empty() {
        match file.write_vectored(rest) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut rest, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
