//! Durable appends: a [`Log`] whose [`append_durable`](Log::append_durable) returns only
//! once the record is on the device, with four ways (policies) to get it there and group
//! commit to share one sync among many writers.
//!
//! | policy | module | per batch | metadata per sync |
//! |---|---|---|---|
//! | `fdatasync` | [`fdatasync`] | `pwrite` at the end, `fdatasync` | yes: the file grows |
//! | `dsync` | [`dsync`] | one `pwrite` on an `O_DSYNC` descriptor | yes: the file grows |
//! | `direct-dsync` | [`direct_dsync`] | one `pwrite` of whole blocks, `O_DIRECT \| O_DSYNC`, tail block rewritten, pre-zeroed file | no |
//! | `prealloc` | [`prealloc`] | `pwrite` into a pre-zeroed file, `fdatasync` | no |
//!
//! **Group commit** ([`LogOptions::group_commit`], on by default; [`group`]): many threads
//! call [`Log::append_durable`] on one shared `Log`. Each frames its record into a pending
//! buffer; one of them, the leader, takes everything pending, writes it with one `pwrite`
//! and makes it durable with one sync, while the records that arrive meanwhile wait for
//! the next leader. A caller returns only after a sync that covers its own record has
//! completed; with N writers, one sync serves up to N records. Without group commit every
//! caller writes and syncs its own record under a lock.
//!
//! **What an acknowledgement means, one writer, its own files, after a failure**: on
//! [`Log`] itself (the stable surface). Opening drops the file's clean cached pages before
//! it scans, so recovery reads what the device holds. The file's header: [`header`]; the
//! one-writer lock: `lock.rs`; how a new log gets its name only once whole: `create.rs`.
//!
//! ```no_run
//! use iolab::{LogOptions, LogPolicy, read_records};
//!
//! let log = LogOptions::new().policy(LogPolicy::Prealloc).open("wal.log")?;
//! std::thread::scope(|s| {
//!     for t in 0..8u8 {
//!         let log = &log;
//!         // Each call returns once its record is on the device; concurrent calls share
//!         // one write and one sync.
//!         s.spawn(move || log.append_durable(&[t; 512]));
//!     }
//! });
//! assert_eq!(read_records("wal.log")?.records.len(), 8);
//! # Ok::<(), iolab::Error>(())
//! ```
//!
//! **Record frames** and recovery: [`record`], [`LogReader`]. Reopening an existing log finds its end from
//! the frames; a torn last record is cut off (truncated, or zeroed in a preallocated file)
//! before anything is appended after it.
//!
//! **What each policy costs** here, against PostgreSQL's `pg_test_fsync`, and why
//! [`LogPolicy::DirectDsync`] is the default where the folder accepts `O_DIRECT`
//! ([`default_policy`]): docs/findings/durable.md.

mod create;
pub mod direct_dsync;
pub mod dsync;
pub mod fdatasync;
pub mod group;
pub mod header;
mod lock;
mod open;
pub mod prealloc;
mod reader;
pub mod record;

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[cfg(any(test, feature = "lab"))]
pub use header::LOG_HEADER_LEN;
pub use reader::{LogReader, Recovered, read_records};
#[cfg(any(test, feature = "lab"))]
pub use record::FRAME_HEADER_LEN;
pub use record::MAX_RECORD;

use crate::file::{Error, Result, open_error, retry_eintr};

/// How much [`LogPolicy::Prealloc`] and [`LogPolicy::DirectDsync`] zero ahead of the log at a
/// time: 64 MiB, four of PostgreSQL's 16 MiB WAL segments. One zeroing costs about as
/// much as writing it once; larger chunks cost disk space ahead of need.
pub const PREALLOC_CHUNK: u64 = 64 << 20;

crate::named_enum! {
    /// How a [`Log`] makes a batch of records durable (what each costs here:
    /// docs/findings/durable.md).
    #[non_exhaustive]
    pub enum LogPolicy: "policy" {
        /// `pwrite` at the end, then `fdatasync`: the file grows, so each sync commits
        /// metadata too.
        Fdatasync = "fdatasync",
        /// `pwrite` on an `O_DSYNC` descriptor: the write returns once durable.
        Dsync = "dsync",
        /// Whole aligned blocks written with `O_DIRECT | O_DSYNC` into a pre-zeroed file,
        /// the last partial block rewritten by the next batch (PostgreSQL's
        /// `open_datasync` with direct I/O).
        DirectDsync = "direct-dsync",
        /// `pwrite` into a pre-zeroed file, then `fdatasync`: no metadata per sync
        /// (PostgreSQL's recycled WAL segments).
        Prealloc = "prealloc",
    }
}

impl LogPolicy {
    /// Whether the policy can run on this machine at all. They all can; whether a given
    /// file system takes `O_DIRECT` is [`LogPolicy::availability_for`].
    pub fn availability(self) -> Result<(), String> {
        Ok(())
    }

    /// Whether the policy can run for a log in `dir`: `direct-dsync` needs a file system
    /// that accepts `O_DIRECT` there (probed with a temporary file).
    pub fn availability_for(self, dir: &Path) -> Result<(), String> {
        if self != LogPolicy::DirectDsync {
            return Ok(());
        }
        let probe = dir.join(format!(".iolab-direct-probe-{}", std::process::id()));
        let opened = OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_DIRECT)
            .open(&probe);
        let _ = std::fs::remove_file(&probe);
        let file = opened.map_err(|e| match e.raw_os_error() {
            Some(libc::EINVAL) => format!("the file system refuses O_DIRECT ({e})"),
            _ => format!("cannot probe O_DIRECT in {}: {e}", dir.display()),
        })?;
        crate::sys::dio::alignment(&file).map(drop)
    }

    /// Whether the file is preallocated (written with zeros ahead of the log).
    pub fn preallocates(self) -> bool {
        matches!(self, LogPolicy::DirectDsync | LogPolicy::Prealloc)
    }
}

/// The conditions of the durable section whose winners [`Log::open`] follows, in order: 8
/// writers sharing syncs (group commit, 512-byte records), then one writer (8 KiB records)
/// when the first is a tie. The machine profile's `durable` entries.
pub const PROFILE_CONDITIONS: [&str; 2] = ["durable, 8 writers, 512 B", "durable, 1 writer, 8 KiB"];

/// The policy a log at `path` takes when none is set, and why: the winner `iolab bench
/// append` measured on this machine for `path`'s device (of the first of
/// [`PROFILE_CONDITIONS`] that has one), when it can run in `path`'s folder; else the
/// rule: [`LogOptions::DEFAULT_POLICY`] (`direct-dsync`) where the folder accepts
/// `O_DIRECT`, [`LogOptions::FALLBACK_POLICY`] (`prealloc`) where it does not.
pub fn default_policy(path: &Path) -> (LogPolicy, String) {
    policy_from(&crate::profile::load_checked(), path)
}

/// [`default_policy`] with `profile`.
fn policy_from(
    profile: &std::result::Result<crate::profile::Profile, String>,
    path: &Path,
) -> (LogPolicy, String) {
    use crate::profile::{self, Strategies};
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut why_not = Vec::new();
    for condition in PROFILE_CONDITIONS {
        match profile::strategy_for(profile, Strategies::Durable, condition, dir) {
            Ok(w) => match w.method.parse::<LogPolicy>() {
                Ok(policy) => match policy.availability_for(dir) {
                    Ok(()) => return (policy, w.source()),
                    Err(why) => why_not.push(format!("{policy} cannot run here: {why}")),
                },
                Err(_) => why_not.push(format!("the winner `{}` is unknown here", w.method)),
            },
            Err(why) => {
                if !why_not.contains(&why) {
                    why_not.push(why);
                }
            }
        }
    }
    let rule = match LogOptions::DEFAULT_POLICY.availability_for(dir) {
        Ok(()) => LogOptions::DEFAULT_POLICY,
        Err(why) => {
            why_not.push(format!(
                "{} cannot run here: {why}",
                LogOptions::DEFAULT_POLICY
            ));
            LogOptions::FALLBACK_POLICY
        }
    };
    (rule, format!("the rule, {rule} ({})", why_not.join("; ")))
}

/// Watches a [`Log`]'s writes and syncs, for tests and tracing. Every `end` is a file
/// offset: the bytes before it are written, or covered by the sync. Calls come from the
/// thread doing the I/O, in the order the I/O happens.
pub trait LogObserver: Send + Sync {
    /// The bytes before `end` are written (in the page cache, or on the device for the
    /// `O_DSYNC` policies).
    fn written(&self, end: u64) {
        let _ = end;
    }
    /// A sync that will cover the bytes before `end` starts. For the `O_DSYNC` policies the
    /// write itself is the sync: it starts before the write.
    fn sync_started(&self, end: u64) {
        let _ = end;
    }
    /// The sync covering the bytes before `end` has completed.
    fn sync_completed(&self, end: u64) {
        let _ = end;
    }
}

/// The observer used when none is set.
struct Unobserved;
impl LogObserver for Unobserved {}

/// Where a batch of framed records goes: a policy's I/O.
pub(crate) trait Sink: Send {
    /// Writes `bytes` at `offset` (the log's end) and returns once they are durable.
    fn write_durable(&mut self, offset: u64, bytes: &[u8], obs: &dyn LogObserver)
    -> io::Result<()>;
}

/// How to open a [`Log`]: a builder with documented defaults.
#[derive(Clone)]
pub struct LogOptions {
    policy: Option<LogPolicy>,
    group_commit: bool,
    prealloc_chunk: u64,
    wait_for_lock: bool,
    observer: Option<Arc<dyn LogObserver>>,
}

impl Default for LogOptions {
    fn default() -> LogOptions {
        LogOptions {
            policy: None,
            group_commit: true,
            prealloc_chunk: PREALLOC_CHUNK,
            wait_for_lock: false,
            observer: None,
        }
    }
}

impl fmt::Debug for LogOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogOptions")
            .field("policy", &self.policy)
            .field("group_commit", &self.group_commit)
            .field("prealloc_chunk", &self.prealloc_chunk)
            .field("wait_for_lock", &self.wait_for_lock)
            .field("observer", &self.observer.is_some())
            .finish()
    }
}

impl LogOptions {
    /// The policy a [`Log`] opened without options uses where this machine's profile holds
    /// no winner for its device and the log's folder accepts `O_DIRECT` (the rule): it won
    /// or tied every durable condition on the machines measured (docs/findings/durable.md,
    /// docs/findings/defaults.md).
    pub const DEFAULT_POLICY: LogPolicy = LogPolicy::DirectDsync;
    /// The rule's policy where the log's folder refuses `O_DIRECT` (tmpfs before Linux 6.6):
    /// the same pre-zeroed file, synced with `fdatasync`.
    pub const FALLBACK_POLICY: LogPolicy = LogPolicy::Prealloc;

    /// Options with every default.
    pub fn new() -> LogOptions {
        LogOptions::default()
    }

    /// How a record reaches the device (`fdatasync`, `dsync`, `direct-dsync`, `prealloc`).
    ///
    /// By default, the policy `iolab bench append` measured as the winner on this machine
    /// for the log's device ([`Log::why`] says which), else [`LogPolicy::DirectDsync`]
    /// where the folder accepts `O_DIRECT` and [`LogPolicy::Prealloc`] where it does not
    /// (docs/findings/durable.md).
    pub fn policy(mut self, policy: LogPolicy) -> LogOptions {
        self.policy = Some(policy);
        self
    }

    /// Whether concurrent appends share syncs.
    ///
    /// By default, `true`.
    pub fn group_commit(mut self, on: bool) -> LogOptions {
        self.group_commit = on;
        self
    }

    /// How much to zero ahead at a time for the preallocating policies (at least 64 KiB).
    ///
    /// By default, 64 MiB: four of PostgreSQL's 16 MiB WAL segments.
    pub fn prealloc_chunk(mut self, bytes: u64) -> LogOptions {
        self.prealloc_chunk = bytes.max(64 << 10);
        self
    }

    /// Whether [`open`](LogOptions::open) waits while another [`Log`] has the file open
    /// (until that log is dropped, or its process ends) instead of failing with
    /// [`ErrorKind::Locked`](crate::ErrorKind::Locked).
    ///
    /// By default, `false`: a second opener is refused at once.
    pub fn wait_for_lock(mut self, wait: bool) -> LogOptions {
        self.wait_for_lock = wait;
        self
    }

    /// Reports every write and sync to `observer` (for tests and tracing).
    ///
    /// By default, none.
    pub fn observer(mut self, observer: Arc<dyn LogObserver>) -> LogOptions {
        self.observer = Some(observer);
        self
    }

    /// Opens the log at `path`, or creates it, as [`Log::open`] says.
    pub fn open(&self, path: impl AsRef<Path>) -> Result<Log> {
        let path = path.as_ref();
        Log::open_with(path, self.clone()).map_err(|e| e.at(path))
    }
}

/// An append-only log of records whose appends are acknowledged only once durable. Share
/// it between threads by reference (it is `Sync`): concurrent appends share syncs (group
/// commit).
///
/// **One writer.** An open `Log` holds an exclusive lock on its file (`flock(2)`, released
/// when the `Log` is dropped or its process ends). A second [`Log::open`] of the same file,
/// from this process or another, fails with [`ErrorKind::Locked`](crate::ErrorKind::Locked)
/// (or waits, with [`LogOptions::wait_for_lock`]): two writers would each append at the end
/// they recovered and overwrite each other's acknowledged records. The lock binds iolab's
/// logs only; a program writing the file by other means is not stopped by it.
///
/// **Its own files only.** A log file starts with a 16-byte header (magic, format, record
/// framing). `open` creates a new log under a temporary name, writes its header (and its
/// preallocated zeros), syncs it and only then gives it its name, so a failed open leaves
/// no file behind. It refuses, with [`ErrorKind::NotALog`](crate::ErrorKind::NotALog) and
/// without changing a byte, a file that is not an iolab log, a log of a newer format, a
/// log with a damaged header and a log written by iolab before headers (read those with
/// [`Log::records`]). An empty file is taken as a new log.
///
/// **What an acknowledgement means**: when [`append_durable`](Log::append_durable)
/// returns `Ok(end)`, the record and every record before `end` are on the device (for
/// devices that honour cache flushes), and [`Log::records`] finds them after any crash. A
/// record whose call returned an error, or never returned, may or may not be found; a
/// record cut short by a crash is never returned. The reading rule: [`LogReader`].
///
/// **After a failure** (no space, an I/O error, a failed sync) the log refuses every
/// later append: after a failed `fdatasync` Linux marks the pages it could not write
/// clean, so a retried sync reports success without writing them. Drop the `Log` and open
/// it again to recover the acknowledged records and go on.
pub struct Log {
    policy: LogPolicy,
    why: String,
    path: PathBuf,
    commit: group::Commit,
    /// A descriptor of the locked open file description: the lock lasts while it does.
    /// Last, so that it is released after everything else of the log is dropped.
    _lock: lock::Held,
}

impl fmt::Debug for Log {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Log")
            .field("path", &self.path)
            .field("policy", &self.policy)
            .field("group_commit", &self.commit.grouped())
            .field("durable_end", &self.durable_end())
            .finish()
    }
}

impl Log {
    /// The largest record [`append_durable`](Log::append_durable) takes: 16 MiB.
    pub const MAX_RECORD: usize = MAX_RECORD;

    /// Opens the log at `path` with the default [`LogOptions`]: creates it if no file is
    /// there, else checks that it is an iolab log, takes its lock, recovers its end from
    /// its records (a torn last record is cut off, or zeroed in a preallocated file) and
    /// syncs its folder, so its name is durable before any record is acknowledged. `path`
    /// must be a regular file (or not exist).
    pub fn open(path: impl AsRef<Path>) -> Result<Log> {
        LogOptions::new().open(path)
    }

    /// A reader of the records of the log at `path`, streamed in constant memory, with the
    /// rule of what a torn or damaged tail becomes ([`LogReader`]).
    pub fn records(path: impl AsRef<Path>) -> Result<LogReader> {
        LogReader::open(path)
    }

    fn open_with(path: &Path, options: LogOptions) -> Result<Log> {
        // Checked before the open (opening a device or FIFO can have effects of its own)
        // and again on the descriptor (the path may change in between).
        if let Ok(meta) = std::fs::metadata(path)
            && !meta.is_file()
            && !meta.is_dir()
        {
            return Err(not_regular());
        }
        let (policy, why) = match options.policy {
            Some(policy) => (policy, "chosen by the caller".to_string()),
            None => default_policy(path),
        };
        let opened = loop {
            if let Some(existing) = open::existing(path, options.wait_for_lock)? {
                break existing;
            }
            if let Some(created) =
                create::create(path, policy, options.prealloc_chunk, options.wait_for_lock)?
            {
                break created;
            }
            // Another opener gave the name a log first: open that one (and find it locked).
        };
        let lock = opened
            .file
            .try_clone()
            .map_err(|e| Error::from_io("cannot open", e, 0))?;
        let (first_len, created) = (opened.len, opened.created);
        match Log::recover(path, opened.file, policy, &options) {
            Ok(commit) => Ok(Log {
                policy,
                why,
                path: path.to_path_buf(),
                commit,
                _lock: lock::Held(lock),
            }),
            Err(e) => {
                // As it was: a log this call made is removed (while still locked, so an
                // opener waiting for it sees it lose its name and starts again); a file
                // that was there goes back to its length, if this call grew it.
                if created {
                    let _ = std::fs::remove_file(path);
                } else if lock.metadata().is_ok_and(|m| m.len() > first_len) {
                    let _ = lock.set_len(first_len).and_then(|()| lock.sync_all());
                }
                Err(e)
            }
        }
    }

    /// Recovers the end of the locked log `file` and opens the policy's I/O after it.
    fn recover(
        path: &Path,
        file: File,
        policy: LogPolicy,
        options: &LogOptions,
    ) -> Result<group::Commit> {
        // The directory is synced on every open, not only when this open created the
        // file: a file that exists may have a name that is not durable yet (its creator
        // was killed before syncing the directory, or that sync failed and the open is
        // retried), and the records acknowledged in it would go with it at a power loss.
        sync_parent(path)?;
        // Recovery reads what the device holds, not the page cache: after a failed
        // writeback Linux keeps the unwritten pages cached and clean, and a scan of them
        // would take records that never reached the device for part of the log (and the
        // appends after them would be lost with them). Clean cached pages are dropped
        // first; dirty ones (written, never synced, never acknowledged) stay.
        // A file system that refuses the advice leaves the cache as it is (the scan still
        // reads the file's bytes as the kernel has them).
        let _ = crate::cache::drop_clean_pages(&file);
        let end = open::recover_end(&file)?;
        let len = file
            .metadata()
            .map_err(|e| Error::from_io("cannot stat", e, 0))?
            .len();
        let zeroed = if policy.preallocates() {
            // Zeros after the end: a torn record left by a crash must not be read back as
            // the start of a later one.
            clear_torn_tail(&file, end, len).map_err(|e| fail("cannot clear the torn tail", e))?;
            // The first chunk is zeroed now, so the first appends pay no zeroing.
            if len < options.prealloc_chunk {
                zero_fill(&file, len, options.prealloc_chunk, options.prealloc_chunk)
                    .map_err(|e| fail("cannot preallocate the log", e))?
            } else {
                len
            }
        } else {
            if len > end {
                file.set_len(end)
                    .and_then(|()| file.sync_all())
                    .map_err(|e| fail("cannot truncate the torn tail", e))?;
            }
            end
        };
        let sink = open_sink(path, file, policy, end, zeroed, options.prealloc_chunk)?;
        let observer = options
            .observer
            .clone()
            .unwrap_or_else(|| Arc::new(Unobserved));
        Ok(group::Commit::new(
            sink,
            end,
            options.group_commit,
            observer,
        ))
    }

    /// Appends `record` and returns once it is durable (and with it every record before
    /// it), with the log's end (a file offset) just past it. Records longer than
    /// [`Log::MAX_RECORD`] are refused.
    pub fn append_durable(&self, record: &[u8]) -> Result<u64> {
        if record.len() > MAX_RECORD {
            let too_long = io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a record of {} bytes is over the {MAX_RECORD}-byte limit",
                    record.len()
                ),
            );
            return Err(Error::io("cannot append", too_long).at(&self.path));
        }
        self.commit.append(record).map_err(|e| e.at(&self.path))
    }

    /// The end of the records known durable (a file offset).
    pub fn durable_end(&self) -> u64 {
        self.commit.durable_end()
    }

    /// The log's policy.
    pub fn policy(&self) -> LogPolicy {
        self.policy
    }

    /// The log's path, as it was opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why this policy: the caller's choice, the winner measured on this machine (and
    /// when), or the rule, and why the profile was not followed.
    pub fn why(&self) -> &str {
        &self.why
    }

    /// Syncs completed so far (one per batch), for measuring how much group commit shares.
    pub fn syncs(&self) -> u64 {
        self.commit.syncs()
    }
}

/// The error of a step `op` of opening a log that failed with `e`: a full device is said
/// as such, with no advice to flush what a log does not buffer.
fn fail(op: &'static str, e: io::Error) -> Error {
    match e.raw_os_error() {
        Some(libc::ENOSPC | libc::EDQUOT) => Error::io(op, e),
        _ => Error::from_io(op, e, 0),
    }
}

/// The error for a path that is not a regular file. A block device's size is not its
/// `st_size` (0), so the preallocating policies would zero its records on reopen, and
/// recovery could not clear a torn tail; a FIFO would block the recovery scan forever.
pub(crate) fn not_regular() -> Error {
    Error::Io {
        op: "cannot open",
        source: io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a log must be a regular file)",
        ),
    }
}

/// Opens the policy's I/O over the recovered `file`.
fn open_sink(
    path: &Path,
    file: File,
    policy: LogPolicy,
    end: u64,
    zeroed: u64,
    chunk: u64,
) -> Result<Box<dyn Sink>> {
    // A second descriptor with other flags, of the same (locked) file: through its
    // `/proc` link, else its path, and refused if the path names another file by then.
    let reopen = |flags: i32| {
        let open = |p: &Path| {
            OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_CLOEXEC | flags)
                .open(p)
        };
        let by_fd = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
        let other = open(&by_fd)
            .or_else(|_| open(path))
            .map_err(|e| open_error("cannot open", e))?;
        if !lock::same_file(&file, &other) {
            return Err(Error::ReplacedWhileOpening);
        }
        Ok(other)
    };
    Ok(match policy {
        LogPolicy::Fdatasync => Box::new(fdatasync::FdatasyncSink { file }),
        LogPolicy::Dsync => Box::new(dsync::DsyncSink {
            file: reopen(libc::O_DSYNC)?,
        }),
        LogPolicy::Prealloc => Box::new(prealloc::PreallocSink {
            file,
            zeroed,
            chunk,
        }),
        LogPolicy::DirectDsync => {
            let direct = reopen(libc::O_DIRECT | libc::O_DSYNC)?;
            let align = crate::sys::dio::alignment(&direct).map_err(|reason| Error::Io {
                op: "cannot use O_DIRECT",
                source: io::Error::new(io::ErrorKind::Unsupported, reason),
            })?;
            let block = align.offset.max(align.memory).max(4096);
            let tail_start = end - end % block as u64;
            let mut tail = vec![0u8; (end - tail_start) as usize];
            file.read_exact_at(&mut tail, tail_start)
                .map_err(|e| Error::from_io("cannot read", e, 0))?;
            Box::new(direct_dsync::DirectDsyncSink {
                file: direct,
                zeroer: file,
                block,
                tail,
                zeroed,
                chunk,
                buf: None,
            })
        }
    })
}

/// Overwrites with zeros every 4 KiB block (or part of one) after `end` that holds a
/// non-zero byte, up to the file's length, then syncs if it wrote any.
///
/// The whole rest is read, not only up to the first block of zeros: a torn batch need not
/// be one run (writeback can make a later page durable before an earlier one, and a
/// payload can hold a block of zeros), and a whole frame of it left beyond a gap would be
/// read back as a record once a later append ends exactly where it starts. For a
/// preallocated log the rest is at most the zeroed region ahead of the log
/// ([`PREALLOC_CHUNK`] by default), read once per open.
fn clear_torn_tail(file: &File, end: u64, len: u64) -> io::Result<()> {
    const BLOCK: u64 = 4096;
    const PIECE: usize = 1 << 20;
    let mut buf = vec![0u8; PIECE];
    let mut at = end;
    let mut dirty = false;
    while at < len {
        let n = ((len - at) as usize).min(PIECE);
        file.read_exact_at(&mut buf[..n], at)?;
        // Blocks aligned to the file's 4 KiB, the first one starting at `at`.
        let mut from = 0usize;
        while from < n {
            let block_end = (((at + from as u64) / BLOCK + 1) * BLOCK - at) as usize;
            let to = block_end.min(n);
            if buf[from..to].iter().any(|&b| b != 0) {
                pwrite_all(file, &vec![0u8; to - from], at + from as u64)?;
                dirty = true;
            }
            from = to;
        }
        at += n as u64;
    }
    if dirty {
        fdatasync(file)?;
    }
    Ok(())
}

/// The size of each write of [`zero_fill`]: 64 KiB.
///
/// The page cache keeps a buffered write in folios as large as the write (up to 2 MiB),
/// and a later small overwrite then dirties, and `fdatasync` then writes back, a part of
/// that large folio: the slow path. A C loop of 8 KiB `pwrite` + `fdatasync` ran at 0.81×
/// over zeros written in one 16 MiB write, 0.88× over 1 MiB writes and 1.01× over 64 KiB
/// writes, against zeros written 8 KiB at a time (evidence: docs/findings/durable.md).
pub(crate) const ZERO_FILL_STEP: usize = 64 << 10;

/// Writes zeros from `from` to at least `need`, in steps of `chunk`, and syncs them with
/// `fsync` (the size changes); returns the new zeroed length. The zeros go in writes of
/// [`ZERO_FILL_STEP`], so the page cache holds them in small folios.
pub(crate) fn zero_fill(file: &File, from: u64, need: u64, chunk: u64) -> io::Result<u64> {
    const STEP: usize = ZERO_FILL_STEP;
    let zeros = vec![0u8; STEP];
    let target = need.div_ceil(chunk) * chunk;
    let mut at = from;
    while at < target {
        let n = ((target - at) as usize).min(STEP);
        pwrite_all(file, &zeros[..n], at)?;
        at += n as u64;
    }
    retry_eintr(|| file.sync_all())?;
    Ok(target)
}

/// `pwrite` until all of `bytes` is written at `offset`, retrying `EINTR`.
pub(crate) fn pwrite_all(file: &File, mut bytes: &[u8], mut offset: u64) -> io::Result<()> {
    while !bytes.is_empty() {
        let n = retry_eintr(|| file.write_at(bytes, offset))?;
        if n == 0 {
            return Err(io::Error::from(io::ErrorKind::WriteZero));
        }
        bytes = &bytes[n..];
        offset += n as u64;
    }
    Ok(())
}

/// `fdatasync(2)`, retrying `EINTR`.
pub(crate) fn fdatasync(file: &File) -> io::Result<()> {
    retry_eintr(|| file.sync_data())
}

/// Syncs the directory holding `path`, so that a new file's name is durable.
fn sync_parent(path: &Path) -> Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    File::open(parent)
        .and_then(|d| retry_eintr(|| d.sync_all()))
        .map_err(|e| Error::from_io("cannot sync the directory", e, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_policy_a_log_follows_the_first_condition_with_a_winner() {
        use crate::profile::{Profile, StrategyWinner};
        let winner = |condition: &str, method: &str| StrategyWinner {
            condition: condition.into(),
            method: method.into(),
            runner_up: "prealloc".into(),
            lead: 1.2,
            measured_at: "2026-11-26T10:00:00Z".into(),
            device: None,
            bytes: None,
        };
        let profile = |durable| {
            Ok(Profile {
                durable,
                ..Profile::default()
            })
        };
        let log = std::env::temp_dir().join("log");
        let one_writer = winner(PROFILE_CONDITIONS[1], "fdatasync");
        let (p, why) = policy_from(&profile(vec![one_writer.clone()]), &log);
        assert_eq!(
            p,
            LogPolicy::Fdatasync,
            "the 8 writers tie: the 1-writer winner"
        );
        assert!(why.contains("durable, 1 writer, 8 KiB winner"), "{why}");
        let both = vec![one_writer, winner(PROFILE_CONDITIONS[0], "dsync")];
        assert_eq!(policy_from(&profile(both), &log).0, LogPolicy::Dsync);
        let (p, why) = policy_from(&Err("no profile of this machine yet".into()), &log);
        match LogOptions::DEFAULT_POLICY.availability_for(&std::env::temp_dir()) {
            Ok(()) => {
                assert_eq!(p, LogOptions::DEFAULT_POLICY);
                assert_eq!(
                    why,
                    "the rule, direct-dsync (no profile of this machine yet)"
                );
            }
            Err(refused) => {
                assert_eq!(p, LogOptions::FALLBACK_POLICY);
                assert!(why.starts_with("the rule, prealloc (no profile"), "{why}");
                assert!(why.contains(&refused), "{why}");
            }
        }
    }
}
