//! LevelDB-style file abstractions: [`SequentialFile`], [`RandomAccessFile`] and
//! [`AppendFile`], the three ways a storage engine touches its files (read a log from
//! the start, read a table at offsets, append to a log).
//!
//! | type | module | system calls |
//! |---|---|---|
//! | [`SequentialFile`] | [`sequential`] | `read` into a 64 KiB buffer; `lseek` to skip |
//! | [`RandomAccessFile`] | [`random_access`] | `pread`, or one `mmap` while a map slot is free; batches ([`batch`]): io_uring, `O_DIRECT` |
//! | [`AppendFile`] | [`append`] | `open(O_APPEND)`; `write` of whole 64 KiB buffers (`writev` of buffer + data for appends of 64 KiB or more); `fdatasync` |
//!
//! # What is durable after which call
//!
//! For an [`AppendFile`]:
//!
//! | after … returned `Ok` | the appended bytes are … | they survive |
//! |---|---|---|
//! | [`AppendFile::append`] | possibly only in this process's buffer | nothing: a crash of the process loses them |
//! | [`AppendFile::flush`] | in the kernel (the page cache) | a crash or `kill -9` of the process, not a power loss or kernel crash |
//! | [`AppendFile::sync`] | on the device (`fdatasync`) | a power loss, on a device that honours cache flushes |
//!
//! When [`AppendOptions::open`] creates the file ([`AppendFile::create`], or
//! [`Creation::NewOrExisting`] for a missing file) it also syncs the directory, so that the
//! file's *name* survives a power loss; the data in it is durable only after
//! [`AppendFile::sync`]. If `sync` fails ([`Error::SyncFailed`]), the bytes since the last
//! successful `sync` must be treated as lost, and the handle refuses every later `flush`
//! and `sync` ([`Error::SyncFailedBefore`]) rather than acknowledge them.
//!
//! Dropping an [`AppendFile`] flushes its buffer, but an error on drop cannot be reported
//! and is lost: call [`AppendFile::flush`] (or [`AppendFile::close`]) explicitly.
//!
//! # Other ways to append
//!
//! [`AppendFile`] is one of the five tiny-append strategies the laboratory compares (one `write`
//! per record, `BufWriter` with 8 KiB and 64 KiB, `writev` of a batch of records, and
//! `append-file`), which `iolab bench append` measures against C++ `std::fstream`.

pub mod append;
pub mod auto;
pub mod batch;
mod batch_ring;
mod direct;
mod locality;
pub mod map_cost;
pub mod measured;
pub mod random_access;
pub mod sequential;

use std::io;

pub use append::{AppendFile, AppendOptions, Creation};
pub use batch::BatchBacking;
pub use random_access::{Backing, MapLimiter, RandomAccessFile, RandomAccessOptions};
pub use sequential::SequentialFile;

pub(crate) use crate::error::{Error, Result};

/// The file system's answer for a path, mapped to [`Error`], for `open` failures.
pub(crate) fn open_error(op: &'static str, source: io::Error) -> Error {
    Error::from_io(op, source, 0)
}

pub(crate) use crate::sys::retry_eintr;

/// `pread` from `file` at `offset` until `buf` is full or the file ends; how many bytes.
pub(crate) fn pread_full(file: &std::fs::File, offset: u64, buf: &mut [u8]) -> Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut done = 0;
    while done < buf.len() {
        let Some(at) = offset.checked_add(done as u64) else {
            break;
        };
        match retry_eintr(|| file.read_at(&mut buf[done..], at)) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) => return Err(Error::from_io("cannot read", e, 0)),
        }
    }
    Ok(done)
}
