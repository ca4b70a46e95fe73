//! [`AppendFile`]: a buffered, append-only file, like LevelDB's `PosixWritableFile`.
//!
//! **System calls**: `open(O_WRONLY | O_APPEND | O_CLOEXEC)` (with `O_CREAT | O_EXCL` to
//! create), and on every open `open` + `fsync` of its directory; then nothing per
//! [`append`](AppendFile::append) that fits in the buffer, one `write` of exactly a full
//! buffer when a smaller append overflows it, one `writev` of *buffer + data* for an append
//! at least as large as the buffer, one `write` per [`flush`](AppendFile::flush) of a
//! non-empty buffer, and `fdatasync` per [`sync`](AppendFile::sync).
//!
//! **Where libstdc++'s `writev` fits in** — the append write-up's question was where `fstream`'s
//! `writev` comes from. `basic_filebuf::xsputn` (a template in `<bits/fstream.tcc>`)
//! copies a write into its 8 KiB buffer while it fits; when it does not (or is at least
//! 1 KiB), it calls `std::__basic_file<char>::xsputn_2`, compiled into `libstdc++.so`
//! (from `config/io/basic_file_stdio.cc`, which is why no header mentions `writev`), and
//! that issues one `writev` of the buffered bytes and the new ones. `AppendFile` uses the
//! same `writev` for appends at least as large as its buffer, where it saves copying them
//! and a second system call. For smaller appends that overflow the buffer it does what
//! LevelDB does instead: top the buffer up, write exactly 64 KiB, keep the rest: a write
//! that ends mid-page is slower than one of whole pages, and `writev`ing *64 KiB of
//! buffer + one record* made 64- to 512-byte appends 25–45 % slower per record than whole
//! 64 KiB writes (evidence: docs/findings/append.md). Unlike libstdc++, an append that
//! fits is copied even when it is 1 KiB or more: at 4 KiB records that is 16 records per
//! system call instead of one.
//!
//! **When it wins**: many small appends (log records, a few bytes to a few KiB): one
//! system call per 64 KiB instead of one per record: about 140–170× faster per
//! 5-byte record than a `write` each (`iolab bench append`; docs/findings/append.md).
//!
//! **Limits**: one writer per `AppendFile` (methods take `&mut self`); bytes are in the
//! kernel only after [`flush`](AppendFile::flush) and on the device only after
//! [`sync`](AppendFile::sync) — see the durability table in [`crate::lab::file`]. Several
//! appenders to one file (threads or processes) lose and overwrite nothing, thanks to
//! `O_APPEND`, but their records interleave by write, and a record that a buffer boundary
//! splits can be torn apart by another appender's write: see *Two appenders* on
//! [`AppendFile`].
//!
//! **How it fails**: every error names the file's path. `EINTR` is retried and short
//! writes are continued. When the kernel refuses bytes (`ENOSPC`, `EIO`, …) the call
//! returns the error and the `AppendFile` keeps every byte it has not written, in order,
//! so the file never has a gap: the bytes of earlier successful flushes are untouched, the
//! file may end with part of an unacknowledged record, and a later
//! [`flush`](AppendFile::flush) continues exactly where the kernel stopped. A full disk is
//! [`Error::NoSpace`], which says how many bytes are held. An open writes nothing, and
//! one that created the file and then failed removes it: a failed
//! [`create`](AppendFile::create) leaves no file behind (one the kernel refuses to create
//! — no space, no permission, a read-only file system — is never made).

use std::fs::{self, File, OpenOptions};
use std::io::{self, IoSlice, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::{Error, Result, open_error, retry_eintr};
use crate::units::format_bytes;

/// The buffer's default size: 64 KiB, LevelDB's `PosixWritableFile` (`kWritableFileBufferSize`).
/// Larger buffers save little (one system call per 64 KiB is already negligible per
/// record) and hold more unflushed data.
pub const DEFAULT_BUFFER_SIZE: usize = 64 << 10;

/// The mode of a created file: `0666` less the umask, as `open(2)` callers usually ask.
const NEW_FILE_MODE: u32 = 0o666;

/// Whether [`AppendOptions::open`] creates the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Creation {
    /// Create a new file; fail with [`Error::Exists`] if it exists. The directory is synced
    /// afterwards, so the new name is durable. The default.
    #[default]
    New,
    /// Append to an existing file; fail if it does not exist. Its directory is synced
    /// too, since the name of a file that exists may not be durable yet.
    Existing,
    /// Append to the file, creating it if it does not exist; the directory is synced.
    NewOrExisting,
}

/// The largest buffer a machine profile may set: 64 MiB.
const MAX_PROFILE_BUFFER: usize = 64 << 20;

/// How to open an [`AppendFile`]: a builder, like [`std::fs::OpenOptions`].
#[derive(Clone, Debug, Default)]
pub struct AppendOptions {
    buffer_size: Option<usize>,
    creation: Creation,
}

impl AppendOptions {
    /// The defaults: the buffer size measured here (else 64 KiB), [`Creation::New`].
    pub fn new() -> AppendOptions {
        AppendOptions::default()
    }

    /// The buffer's size in bytes. `0` makes every append a system call of its own.
    ///
    /// By default, the size `iolab bench append` measured fastest for tiny records on this
    /// machine, for a file on the device it ran on, else 64 KiB, LevelDB's
    /// `PosixWritableFile` buffer ([`AppendFile::why`] says which).
    pub fn buffer_size(mut self, bytes: usize) -> AppendOptions {
        self.buffer_size = Some(bytes);
        self
    }

    /// Whether to create the file. Default [`Creation::New`].
    pub fn creation(mut self, creation: Creation) -> AppendOptions {
        self.creation = creation;
        self
    }

    /// Opens `path` for appending. Opening writes nothing into the file.
    ///
    /// Errors, each naming `path`: [`Error::IsDirectory`], [`Error::Exists`] (with
    /// [`Creation::New`]), [`Error::PermissionDenied`], [`Error::NoSpace`] (no inode or
    /// block left for a new file), or [`Error::Io`] (`NotFound` for a missing file or
    /// directory, `EROFS` on a read-only file system, …). An open that created the file and
    /// then failed (its directory could not be synced) removes it again: a failed open
    /// leaves no new file behind.
    pub fn open(&self, path: impl AsRef<Path>) -> Result<AppendFile> {
        let path = path.as_ref();
        self.open_with(path, sync_parent).map_err(|e| e.at(path))
    }

    /// [`AppendOptions::open`] with the directory sync given (a test makes it fail).
    fn open_with(
        &self,
        path: &Path,
        sync_dir: impl FnOnce(&Path) -> Result<()>,
    ) -> Result<AppendFile> {
        let (file, created) = match self.creation {
            Creation::New => (open(path, true)?, true),
            Creation::Existing => (open(path, false)?, false),
            Creation::NewOrExisting => match open(path, true) {
                Err(Error::Exists) => (open(path, false)?, false),
                other => (other?, true),
            },
        };
        // The directory is synced on every open, not only when this open created the file:
        // an existing file's name may not be durable yet (its creator was killed before
        // syncing the directory, or that sync failed and the open is retried), and whatever
        // is synced into the file would go with the name at a power loss.
        if let Err(e) = sync_dir(path) {
            if created {
                remove_created(path, &file);
            }
            return Err(e);
        }
        let (capacity, why) = match self.buffer_size {
            Some(bytes) => (
                bytes,
                format!("{}, as the options asked", format_bytes(bytes as u64)),
            ),
            None => default_buffer(path),
        };
        Ok(AppendFile {
            file,
            path: path.to_path_buf(),
            buf: Vec::with_capacity(capacity),
            capacity,
            written: 0,
            sync_failed: None,
            why,
        })
    }
}

/// Removes the empty file an open created at `path` and could not finish opening, if
/// `path` still names it (the same device and inode as `file`: nobody replaced it since).
/// Best effort: the open's own error is the one reported.
fn remove_created(path: &Path, file: &File) {
    let identity = |m: fs::Metadata| (m.dev(), m.ino());
    let ours = file.metadata().map(identity).ok();
    if ours.is_some() && fs::symlink_metadata(path).map(identity).ok() == ours {
        let _ = fs::remove_file(path);
    }
}

/// The buffer an [`AppendFile`] at `path` gets without [`AppendOptions::buffer_size`], and
/// why: the size `iolab bench append` measured beating [`DEFAULT_BUFFER_SIZE`] beyond the
/// noise for tiny records on this machine (the profile's `append` `buffer` entry, when it
/// ran on the device of `path`), else [`DEFAULT_BUFFER_SIZE`].
pub fn default_buffer(path: &Path) -> (usize, String) {
    use crate::profile::{self, Strategies, size_for};
    match size_for(&profile::load_checked(), Strategies::Append, "buffer", path) {
        Ok((bytes, source)) => {
            let bytes = usize::try_from(bytes).unwrap_or(MAX_PROFILE_BUFFER);
            (bytes.clamp(1, MAX_PROFILE_BUFFER), source)
        }
        Err(why_not) => (
            DEFAULT_BUFFER_SIZE,
            format!(
                "the rule, {} ({why_not})",
                format_bytes(DEFAULT_BUFFER_SIZE as u64)
            ),
        ),
    }
}

/// Opens `path` write-only with `O_APPEND`; `create` adds `O_CREAT | O_EXCL`.
fn open(path: &Path, create: bool) -> Result<File> {
    let mut options = OpenOptions::new();
    // `append(true)` is `O_WRONLY | O_APPEND`; std adds `O_CLOEXEC`.
    options.append(true).mode(NEW_FILE_MODE);
    if create {
        options.create_new(true);
    }
    match retry_eintr(|| options.open(path)) {
        Ok(file) => Ok(file),
        // O_EXCL reports an existing directory as EEXIST: say what it is.
        Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {
            if path.symlink_metadata().is_ok_and(|m| m.is_dir()) {
                Err(Error::IsDirectory)
            } else {
                Err(Error::Exists)
            }
        }
        Err(e) => Err(open_error(
            if create {
                "cannot create"
            } else {
                "cannot open"
            },
            e,
        )),
    }
}

/// Syncs the directory holding `path`, so that the file keeps its name after a power loss
/// (`fsync` of the file alone does not promise that for a new name).
fn sync_parent(path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let dir = retry_eintr(|| File::open(dir))
        .map_err(|e| open_error("cannot open its directory to sync it", e))?;
    retry_eintr(|| dir.sync_all()).map_err(|e| open_error("cannot sync its directory", e))
}

/// A file that is only ever appended to, through a buffer.
///
/// # Two appenders
///
/// Two `AppendFile`s on one file, in two threads or two processes, lose and overwrite
/// nothing: every byte of both lands in the file once. Each write is made with
/// `O_APPEND`, which the kernel positions at the file's end and performs as one step
/// (`open(2)`), and on Linux's local file systems (ext4, XFS, btrfs, tmpfs) a write to a
/// regular file holds the file's lock from start to end, so the other appender's write
/// lands before or after it, never inside. What lands together is one write, so records
/// interleave by flushed batch (a full buffer, or what a [`flush`](AppendFile::flush)
/// wrote), not record by record. A record stays whole only if it goes out in one write:
///
/// - with [`AppendOptions::buffer_size`]`(0)` every append is a write of its own, and an
///   append at least as large as the buffer goes out in one `writev` with the buffered
///   bytes: whole, either way;
/// - a smaller append that does not fit in what the buffer has left is split: the buffer
///   is topped up with its start and written, and its rest begins the next buffer (whole
///   64 KiB writes, LevelDB's way), so the other appender's write can land inside the
///   record. Records of one size that divides the buffer's (64-byte records, a 64 KiB
///   buffer) never meet this; others can avoid it by flushing first when
///   [`buffered_len`](AppendFile::buffered_len) + the record's length would exceed
///   [`buffer_size`](AppendFile::buffer_size);
/// - a write to a regular file is short only when it fails partway (a full disk or quota,
///   the file-size limit) or asks for more than the kernel's 2 GiB − 4 KiB per call: its
///   rest then goes in another write, and another appender's bytes can come between.
///
/// None of this holds on NFS, where the client emulates `O_APPEND` and appenders on two
/// machines can overwrite each other's bytes (`open(2)`).
///
/// ```no_run
/// use iolab::AppendFile;
///
/// let mut log = AppendFile::create("wal.log")?;
/// log.append(b"record 1\n")?; // in our buffer: lost if the process dies now
/// log.flush()?; // in the kernel: survives the process, not a power loss
/// log.append(b"record 2\n")?;
/// log.sync()?; // on the device: survives a power loss
/// log.close()?; // flushes, and reports the error that dropping would lose
/// # Ok::<(), iolab::Error>(())
/// ```
#[derive(Debug)]
pub struct AppendFile {
    file: File,
    /// The path it was opened at, named by every error.
    path: PathBuf,
    /// Bytes appended but not yet written. Normally at most `capacity` long; after a failed
    /// write it also holds what the kernel refused, which may make it longer.
    buf: Vec<u8>,
    capacity: usize,
    /// Bytes the kernel accepted through this handle.
    written: u64,
    /// The message of a failed `fdatasync`: from then on `flush` and `sync` refuse.
    sync_failed: Option<String>,
    /// Why the buffer has its size ([`AppendFile::why`]).
    why: String,
}

impl AppendFile {
    /// Creates a new file at `path` with the default options (64 KiB buffer), and syncs its
    /// directory. Fails with [`Error::Exists`] if the file exists.
    pub fn create(path: impl AsRef<Path>) -> Result<AppendFile> {
        AppendOptions::new().open(path)
    }

    /// Opens an existing file at `path` for appending, with the default options.
    pub fn open(path: impl AsRef<Path>) -> Result<AppendFile> {
        AppendOptions::new().creation(Creation::Existing).open(path)
    }

    /// Appends `data`.
    ///
    /// When `data` fits in the buffer it is copied there and nothing else happens. When it
    /// does not fit but is smaller than the buffer, it tops the buffer up to exactly its
    /// size, the buffer is written with one `write`, and the rest of `data` starts the
    /// buffer again. When it is at least as large as the buffer, the buffered bytes and
    /// `data` go out in one `writev`, without copying `data` (see the module docs for why
    /// each).
    ///
    /// After `Ok`, the bytes may be only in this process's memory: see [`flush`].
    /// After `Err`, `data` is held all the same, behind the bytes the kernel refused: the
    /// stream of appended bytes never has a gap, and [`flush`] retries.
    ///
    /// [`flush`]: AppendFile::flush
    #[inline]
    pub fn append(&mut self, data: &[u8]) -> Result<()> {
        if data.len() <= self.capacity.saturating_sub(self.buf.len()) {
            self.buf.extend_from_slice(data);
            return Ok(());
        }
        self.append_overflowing(data)
    }

    /// [`append`](Self::append) of `data` that does not fit in the buffer: one system call.
    fn append_overflowing(&mut self, data: &[u8]) -> Result<()> {
        let result = if data.len() < self.capacity {
            // Top up and write exactly a buffer's worth (LevelDB's way): a file appended from
            // its start then receives whole 64 KiB pieces, which the page cache takes
            // fastest. `spare < data.len()`, else `data` would have fitted.
            let (head, rest) = data.split_at(self.capacity.saturating_sub(self.buf.len()));
            self.buf.extend_from_slice(head);
            let result = self.write_out(&[]);
            // After a failure the buffer holds what the kernel refused; `rest` follows it.
            self.buf.extend_from_slice(rest);
            result
        } else {
            // A buffer's worth or more: buffer and data in one writev (libstdc++'s way).
            self.write_out(data)
        };
        result.map_err(|e| Error::from_io("cannot append", e, self.buf.len()).at(&self.path))
    }

    /// Writes the buffered bytes to the kernel (one `write`; none if the buffer is empty).
    ///
    /// After `Ok`, every byte appended so far is in the page cache: it survives a crash or
    /// `SIGKILL` of this process, not a power loss (for that, see [`sync`](Self::sync)).
    /// After `Err`, bytes of earlier successful flushes are untouched and the unwritten
    /// bytes are still held; calling `flush` again retries from where the kernel stopped.
    pub fn flush(&mut self) -> Result<()> {
        self.check_sync_failed()?;
        if self.buf.is_empty() {
            return Ok(());
        }
        self.write_out(&[])
            .map_err(|e| Error::from_io("cannot flush", e, self.buf.len()).at(&self.path))
    }

    /// [`flush`](Self::flush), then `fdatasync`: after `Ok`, every byte appended so far is on
    /// the device and survives a power loss, as far as the device honours cache flushes.
    /// `fdatasync` also writes the file's new size (needed to read the data back), not its
    /// modification time.
    ///
    /// Errors: those of [`flush`](Self::flush) (a full disk is [`Error::NoSpace`] and
    /// nothing is lost), or [`Error::SyncFailed`] when `fdatasync` itself fails: then the
    /// kernel may have dropped the pages it could not write, so the bytes since the last
    /// successful `sync` must be treated as lost — and every later `flush` or `sync` of this
    /// handle fails with [`Error::SyncFailedBefore`] instead of acknowledging them (a second
    /// `fdatasync` would report success without storing them).
    pub fn sync(&mut self) -> Result<()> {
        self.flush()?;
        retry_eintr(|| self.file.sync_data()).map_err(|source| {
            let error = Error::SyncFailed { source };
            self.sync_failed = Some(error.to_string());
            error.at(&self.path)
        })
    }

    /// [`Error::SyncFailedBefore`] once a sync of this handle has failed.
    fn check_sync_failed(&self) -> Result<()> {
        match &self.sync_failed {
            Some(reason) => Err(Error::SyncFailedBefore {
                reason: reason.clone(),
            }
            .at(&self.path)),
            None => Ok(()),
        }
    }

    /// Flushes and closes the file, reporting the error that dropping would lose.
    ///
    /// On an error the handle is gone, and with it the bytes it still held: the error says
    /// so (a full disk is then not [`Error::NoSpace`], whose advice is to flush again, but
    /// an [`Error::Io`] of kind [`NoSpace`](crate::ErrorKind::NoSpace)). To keep them
    /// through a full disk, [`flush`](Self::flush) until it succeeds, then close.
    ///
    /// Errors of `close(2)` itself are not reported: Linux reports write errors on local
    /// file systems at `write` or `fdatasync` time, which [`sync`](Self::sync) covers.
    pub fn close(mut self) -> Result<()> {
        let result = self.flush();
        if result.is_err() {
            // Lost, and said so: dropping the handle must not write them later, behind
            // the caller's back.
            self.buf.clear();
        }
        result.map_err(|e| lost_on_close(e).at(&self.path))
    }

    /// Bytes appended but not yet handed to the kernel.
    pub fn buffered_len(&self) -> usize {
        self.buf.len()
    }

    /// Bytes this handle has handed to the kernel since it was opened.
    pub fn written_len(&self) -> u64 {
        self.written
    }

    /// The buffer's size: set by [`AppendOptions::buffer_size`], else its default
    /// ([`AppendFile::why`] says which).
    pub fn buffer_size(&self) -> usize {
        self.capacity
    }

    /// Why the buffer has its size: asked for, the machine profile's winner (and when it
    /// was measured), or the rule (and why no winner applied).
    pub fn why(&self) -> &str {
        &self.why
    }

    /// The open file (for `fstat` and the like; writing to it directly bypasses the buffer).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Writes the buffer, then `data`, with as few system calls as the kernel allows: one
    /// `writev` when both are non-empty, one `write` otherwise, continued after short
    /// writes and `EINTR`. On success the buffer is empty; on failure it holds every byte
    /// not written, buffer first.
    fn write_out(&mut self, data: &[u8]) -> io::Result<()> {
        let (mut from_buf, mut from_data) = (0usize, 0usize);
        loop {
            let (head, tail) = (&self.buf[from_buf..], &data[from_data..]);
            if head.is_empty() && tail.is_empty() {
                self.buf.clear();
                return Ok(());
            }
            let result = if head.is_empty() {
                (&self.file).write(tail)
            } else if tail.is_empty() {
                (&self.file).write(head)
            } else {
                (&self.file).write_vectored(&[IoSlice::new(head), IoSlice::new(tail)])
            };
            let error = match result {
                Ok(0) => io::Error::from(io::ErrorKind::WriteZero),
                Ok(n) => {
                    self.written += n as u64;
                    let into_head = n.min(head.len());
                    from_buf += into_head;
                    from_data += n - into_head;
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => e,
            };
            // Keep what the kernel has not taken, in order: the rest of the buffer, then
            // the rest of `data`.
            self.buf.drain(..from_buf);
            self.buf.extend_from_slice(&data[from_data..]);
            return Err(error);
        }
    }
}

/// The error of a [`AppendFile::close`] whose flush failed: a full disk's advice to flush
/// again no longer applies, the handle being gone.
fn lost_on_close(e: Error) -> Error {
    match e {
        Error::AtPath { source, .. } => lost_on_close(*source),
        Error::NoSpace { source, .. } => Error::Io {
            op: "cannot close: no room for the bytes still buffered, which are lost",
            source,
        },
        other => other,
    }
}

/// `e` saying that `pending` bytes are held (a failed `write` gave its own back).
fn still_held(e: Error, pending: usize) -> Error {
    match e {
        Error::AtPath { path, source } => still_held(*source, pending).at(path),
        Error::NoSpace { op, source, .. } => Error::NoSpace {
            op,
            pending,
            source,
        },
        other => other,
    }
}

/// `AppendFile` as a [`std::io::Write`], for `write!`, `writeln!` and code generic over
/// writers: [`write`](Write::write) is [`AppendFile::append`] (buffered, one system call per
/// full buffer) and [`flush`](Write::flush) is [`AppendFile::flush`].
///
/// Errors are [`io::Error`]s of the nearest kind whose inner error is the iolab [`Error`],
/// naming the path (`?` in a function returning [`crate::Result`] gives it back). Unlike
/// [`AppendFile::append`], a `write` that fails keeps none of the bytes it was given that
/// did not reach the kernel (the `Write` contract: an error means they were not written);
/// the bytes of earlier `write`s stay buffered, and a later `flush` retries them.
///
/// ```no_run
/// use std::io::Write;
///
/// let mut log = iolab::AppendFile::create("events.log")?;
/// for i in 0..3 {
///     writeln!(log, "event {i}")?;
/// }
/// log.close()?;
/// # Ok::<(), iolab::Error>(())
/// ```
impl Write for AppendFile {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        // Every byte appended so far is written or held, in order: `data` starts here.
        let start = self.written + self.buf.len() as u64;
        match self.append(data) {
            Ok(()) => Ok(data.len()),
            Err(e) => {
                // `append` holds what the kernel refused, `data`'s rest last: give back the
                // part of `data` it holds, and report the part that reached the kernel.
                let reached = usize::try_from(self.written.saturating_sub(start))
                    .unwrap_or(usize::MAX)
                    .min(data.len());
                let held = data.len() - reached;
                self.buf.truncate(self.buf.len() - held);
                if reached > 0 {
                    Ok(reached)
                } else {
                    Err(still_held(e, self.buf.len()).into())
                }
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        AppendFile::flush(self).map_err(io::Error::from)
    }
}

impl Drop for AppendFile {
    /// Flushes, best effort: an error here is lost. Call [`AppendFile::flush`] or
    /// [`AppendFile::close`] to see it.
    fn drop(&mut self) {
        if !self.buf.is_empty() {
            let _ = self.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory sync that fails, as an unreadable directory's open does.
    fn failing_sync(_: &Path) -> Result<()> {
        Err(Error::io(
            "cannot open its directory to sync it",
            io::Error::from_raw_os_error(libc::EACCES),
        ))
    }

    #[test]
    fn an_open_that_fails_after_creating_the_file_removes_it_and_only_then() {
        let dir = iolab_testkit::scratch();
        for creation in [Creation::New, Creation::NewOrExisting] {
            let path = dir.path().join(format!("{creation:?}"));
            let options = AppendOptions::new().creation(creation);
            let e = options.open_with(&path, failing_sync).unwrap_err();
            assert!(e.to_string().contains("cannot open its directory"), "{e}");
            assert!(!path.exists(), "{creation:?}: the new file was left behind");
        }
        // A file that was there before is the caller's: it stays, unchanged.
        for creation in [Creation::Existing, Creation::NewOrExisting] {
            let path = dir.path().join(format!("old-{creation:?}"));
            fs::write(&path, b"kept").unwrap();
            let options = AppendOptions::new().creation(creation);
            options.open_with(&path, failing_sync).unwrap_err();
            assert_eq!(fs::read(&path).unwrap(), b"kept", "{creation:?}");
        }
    }
}
