//! Editing a file in place: keep only its first line, or replace one byte by another.
//!
//! Two operations, each with three strategies (one file each):
//!
//! | strategy | module | how the bytes are reached |
//! |---|---|---|
//! | `mmap` | [`mmap`] | the file mapped shared (`MmapMut` for a replace), changed through the map, `msync` |
//! | `std-whole` | [`std_whole`] | the whole file read into one buffer, changed, written back at offset 0 |
//! | `std-stream` | [`std_stream`] | `pread`/`pwrite` of one fixed buffer (1 MiB), in place; bounded memory |
//!
//! All three replace with the same kernel ([`crate::kernel::replace`], runtime dispatch) and
//! find the first newline with `memchr`. How fast each is against `tr`, `sed -i` and
//! `head`: docs/findings/edit.md.
//!
//! ```no_run
//! use iolab::prelude::*;
//!
//! let report = iolab::replace_byte("data.csv", b',', b';')?;
//! println!("{:?} with the {} kernel", report.outcome, report.kernel.unwrap());
//! // A strategy of your choice, without the final sync (the benchmark's no-sync variant):
//! EditOptions::new()
//!     .strategy(EditStrategy::StdStream)
//!     .durable(false)
//!     .truncate_after_first_line("data.csv")?;
//! # Ok::<(), iolab::Error>(())
//! ```
//!
//! **What success means.** By default an edit returns `Ok` only once its result is durable:
//! `msync(MS_SYNC)` for a map, `fdatasync(2)` otherwise (which covers the new size after a
//! truncation; timestamps are not needed to read the data back). The sync runs even when
//! nothing changed, so re-running an edit that was killed before its sync makes the
//! earlier, half-written changes durable too. [`EditOptions::durable`]`(false)` skips it.
//!
//! **Lengths.** A replace never changes the length. A truncation only ever shortens the
//! file, to exactly the end of its first line (`\n` included; `\r\n` stays whole); a file
//! without a newline, an empty one included, is left as it is ([`EditOutcome::NoNewline`]).
//!
//! **Re-running.** Both operations are idempotent: running one again after an interruption
//! finishes it (the bytes already replaced no longer match; the first line is still first).
//!
//! **Refusals**, before anything is changed: a directory, anything but a regular file, a
//! file on a pseudo file system (`/proc`, `/sys`: refused before it is opened for writing),
//! a file that cannot be opened for writing (read-only, on a read-only file system), and for
//! `std-whole` a file larger than it may read into memory (by default 80% of
//! `MemAvailable`; see [`std_whole`]).

pub mod mmap;
pub mod std_stream;
pub mod std_whole;
mod trial;
mod watch;

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::input::Input;
use crate::kernel::Kernel;
use crate::kernel::replace::Replacer;
use watch::Watch;

crate::named_enum! {
    /// A way of editing a file, by its kebab-case name.
    #[non_exhaustive]
    pub enum EditStrategy: "strategy" {
        /// Through a shared memory map, flushed with `msync`.
        Mmap = "mmap",
        /// Read the whole file into memory, change it, write it back (the edit write-up's "std").
        StdWhole = "std-whole",
        /// `pread`/`pwrite` one fixed-size buffer at a time, in place.
        StdStream = "std-stream",
    }
}

impl EditStrategy {
    /// Whether the strategy can run on this machine. All three only need Linux system calls
    /// every supported kernel has; a particular file may still be refused (see the module
    /// docs).
    pub fn availability(self) -> Result<(), String> {
        Ok(())
    }
}

pub(crate) use crate::error::{Error, Result};

/// The edit that was made ([`EditReport::op`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EditOp {
    /// Keep bytes up to and including the first `\n`.
    TruncateAfterFirstLine,
    /// Every `from` byte becomes `to`.
    ReplaceByte {
        /// The byte replaced.
        from: u8,
        /// Its replacement.
        to: u8,
    },
}

impl EditOp {
    /// `truncate-first-line` or `replace`, as in the CLI and the results.
    pub fn name(self) -> &'static str {
        match self {
            EditOp::TruncateAfterFirstLine => "truncate-first-line",
            EditOp::ReplaceByte { .. } => "replace",
        }
    }
}

/// What an edit did to the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EditOutcome {
    /// The file now ends after its first line, which is `kept` bytes long (equal to the old
    /// length when the first line was the only one: nothing was removed).
    Truncated {
        /// The new length.
        kept: u64,
    },
    /// The file has no `\n` (or is empty): it was left as it was.
    NoNewline,
    /// `changed` bytes were replaced (0: none matched, nothing was written).
    Replaced {
        /// How many bytes changed.
        changed: u64,
    },
}

/// Named durations of an edit's steps, in the order they first ran; a step that runs many
/// times (a read per buffer) accumulates. Handed over as [`EditReport::phases`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Phases {
    entries: Vec<(&'static str, Duration)>,
}

impl Phases {
    /// Adds `elapsed` to the phase `name`.
    pub(crate) fn add(&mut self, name: &'static str, elapsed: Duration) {
        match self.entries.iter_mut().find(|(n, _)| *n == name) {
            Some((_, total)) => *total += elapsed,
            None => self.entries.push((name, elapsed)),
        }
    }

    /// Runs `f` and adds its duration to the phase `name`.
    pub(crate) fn time<T>(&mut self, name: &'static str, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let value = f();
        self.add(name, start.elapsed());
        value
    }

    /// One phase's duration, if it ran.
    pub(crate) fn get(&self, name: &str) -> Option<Duration> {
        self.entries
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, d)| d)
    }
}

/// What an edit did, and how long each step took.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditReport {
    /// The edit.
    pub op: EditOp,
    /// The strategy that made it.
    pub strategy: EditStrategy,
    /// The replace kernel that ran (`None` for a truncation).
    pub kernel: Option<Kernel>,
    /// The file's length before.
    pub len_before: u64,
    /// The file's length after.
    pub len_after: u64,
    /// What changed.
    pub outcome: EditOutcome,
    /// Whether the final sync ran (the result is on the device).
    pub durable: bool,
    /// How long each step took, in the order the steps first ran (a step that runs many
    /// times, a read per buffer, is their sum): `open`, `map`, `read`, `find-newline`,
    /// `replace`, `write`, `truncate`, `sync`, `unmap`, as the strategy makes them.
    pub phases: Vec<(&'static str, Duration)>,
    /// From the start of `open` to the end of the last step.
    pub total: Duration,
    /// Why this strategy: the caller's choice, the winner measured on this machine (and
    /// when), or the rule, and why the profile was not followed.
    pub why: String,
}

impl EditReport {
    /// How long the step `name` took (`open`, `sync`, …; see [`EditReport::phases`]), if
    /// the edit made it.
    pub fn phase(&self, name: &str) -> Option<Duration> {
        self.phases
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, d)| d)
    }
}

/// How to edit: the strategy and its settings. The free functions
/// [`truncate_after_first_line`] and [`replace_byte`] use the defaults.
///
/// ```no_run
/// use iolab::prelude::*;
///
/// EditOptions::new()
///     .strategy(EditStrategy::StdStream)
///     .durable(false)
///     .replace_byte("data.csv", b',', b';')?;
/// # Ok::<(), iolab::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct EditOptions {
    strategy: Option<EditStrategy>,
    durable: bool,
    buffer_size: usize,
    kernel: Option<Kernel>,
    memory_limit: Option<u64>,
}

/// Which edit, for [`default_strategy`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EditKind {
    /// [`EditOptions::replace_byte`].
    Replace,
    /// [`EditOptions::truncate_after_first_line`].
    Truncate,
}

impl EditKind {
    /// Its condition in the `edit` suite's verdict and in the machine profile.
    pub fn condition(self) -> &'static str {
        match self {
            EditKind::Replace => "replace",
            EditKind::Truncate => "truncate",
        }
    }

    /// The rule's strategy for it.
    pub fn rule(self) -> EditStrategy {
        match self {
            EditKind::Replace => DEFAULT_REPLACE,
            EditKind::Truncate => DEFAULT_TRUNCATE,
        }
    }
}

/// The strategy an edit of the file at `path` takes when none is set, and why: the winner
/// `iolab bench edit` measured on this machine, for files on `path`'s device
/// ([`crate::lab::profile`]); else the rule, [`DEFAULT_REPLACE`] or
/// [`DEFAULT_TRUNCATE`]. Where the rule applies, a replace of a file of at least
/// [`TRIAL_MIN`] bytes measures `mmap` and `std-stream` on its first part and finishes
/// with the faster ([`EditReport::strategy`] and [`EditReport::why`] say which it took).
#[cfg(any(test, feature = "lab"))]
pub fn default_strategy(kind: EditKind, path: &Path) -> (EditStrategy, String) {
    let (strategy, why, _) = strategy_from(&crate::profile::load_checked(), kind, path);
    (strategy, why)
}

/// The smallest file a replace with no strategy and no measured winner measures itself on
/// (see [`default_strategy`]): 128 MiB.
pub const TRIAL_MIN: u64 = trial::TRIAL_MIN;

/// [`default_strategy`] with `profile`, and, when it is the rule, why the profile was not
/// followed.
fn strategy_from(
    profile: &std::result::Result<crate::profile::Profile, String>,
    kind: EditKind,
    path: &Path,
) -> (EditStrategy, String, Option<String>) {
    use crate::profile::{Strategies, strategy_for};
    let rule = kind.rule();
    let why_not = match strategy_for(profile, Strategies::Edit, kind.condition(), path) {
        Ok(w) => match w.method.parse::<EditStrategy>() {
            Ok(strategy) => return (strategy, w.source(), None),
            Err(_) => format!("the measured winner `{}` is unknown here", w.method),
        },
        Err(why) => why,
    };
    (rule, format!("the rule, {rule} ({why_not})"), Some(why_not))
}

/// The strategy [`EditOptions::replace_byte`] takes when none is set and the profile has no
/// winner, for a file smaller than [`TRIAL_MIN`] (a bigger one is measured): it won replace
/// on two of the machines measured and lost on the third (docs/findings/edit.md).
pub const DEFAULT_REPLACE: EditStrategy = EditStrategy::Mmap;
/// The strategy [`EditOptions::truncate_after_first_line`] takes when none is set: the
/// winner or tied with `mmap`, in bounded memory (docs/findings/edit.md).
pub const DEFAULT_TRUNCATE: EditStrategy = EditStrategy::StdStream;

impl Default for EditOptions {
    fn default() -> Self {
        EditOptions {
            strategy: None,
            durable: true,
            buffer_size: std_stream::DEFAULT_BUFFER_SIZE,
            kernel: None,
            memory_limit: None,
        }
    }
}

impl EditOptions {
    /// Options with every default.
    pub fn new() -> EditOptions {
        EditOptions::default()
    }

    /// How the file's bytes are reached: through a map, read whole, or streamed.
    ///
    /// By default, the winner `iolab bench edit` measured on this machine for the file's
    /// device ([`EditReport::why`] says which), else the rule:
    /// [`EditOptions::replace_byte`] measures `mmap` and `std-stream` on the first 64 MiB
    /// of a file of at least 128 MiB and replaces the rest with the faster
    /// (each won on some machine and lost on another), and takes [`EditStrategy::Mmap`] on a
    /// smaller file; [`EditOptions::truncate_after_first_line`] takes
    /// [`EditStrategy::StdStream`] (the winner or tied with `mmap`, in bounded memory);
    /// docs/findings/edit.md.
    pub fn strategy(mut self, strategy: EditStrategy) -> EditOptions {
        self.strategy = Some(strategy);
        self
    }

    /// Whether to sync before returning (`msync(MS_SYNC)` or `fdatasync`); `false` lets
    /// the kernel write the changes back later, and a crash before that loses them.
    ///
    /// By default, `true`.
    pub fn durable(mut self, durable: bool) -> EditOptions {
        self.durable = durable;
        self
    }

    /// The buffer `std-stream` reads and writes with, in bytes (at least 1); other
    /// strategies ignore it.
    ///
    /// By default, 1 MiB.
    pub fn buffer_size(mut self, bytes: usize) -> EditOptions {
        self.buffer_size = bytes.max(1);
        self
    }

    /// The replace kernel (`scalar`, `avx2`, `avx512`).
    ///
    /// By default, the fastest this CPU has.
    pub fn kernel(mut self, kernel: Kernel) -> EditOptions {
        self.kernel = Some(kernel);
        self
    }

    /// The most bytes `std-whole` may read into memory; other strategies ignore it.
    ///
    /// By default, 80% of `MemAvailable` read when the edit starts (no limit but the
    /// allocator's where /proc/meminfo is missing).
    pub fn memory_limit(mut self, bytes: u64) -> EditOptions {
        self.memory_limit = Some(bytes);
        self
    }

    /// Cuts the file at `path` after its first `\n`; see the module docs. A failure names
    /// `path`.
    pub fn truncate_after_first_line(&self, path: impl AsRef<Path>) -> Result<EditReport> {
        let path = path.as_ref();
        let choice = self.choose(EditKind::Truncate, path);
        self.run(choice, path, Edit::Truncate)
            .map_err(|e| e.at(path))
    }

    /// Replaces every `from` byte of the file at `path` by `to`; see the module docs. A
    /// failure names `path`.
    pub fn replace_byte(&self, path: impl AsRef<Path>, from: u8, to: u8) -> Result<EditReport> {
        let path = path.as_ref();
        let choice = self.choose(EditKind::Replace, path);
        let replacer = match self.kernel {
            None => Replacer::best(),
            Some(kernel) => Replacer::new(kernel).ok_or_else(|| Error::KernelUnavailable {
                kernel,
                reason: kernel.availability().err().unwrap_or_default(),
            })?,
        };
        self.run(choice, path, Edit::Replace(Replace { from, to, replacer }))
            .map_err(|e| e.at(path))
    }

    /// The strategy for `kind` on `path`, why, and, when it is the rule (which a big replace
    /// measures instead), why the profile was not followed: the one set, else the default.
    fn choose(&self, kind: EditKind, path: &Path) -> (EditStrategy, String, Option<String>) {
        match self.strategy {
            Some(strategy) => (strategy, "chosen by the caller".into(), None),
            None => strategy_from(&crate::profile::load_checked(), kind, path),
        }
    }

    fn run(
        &self,
        (mut strategy, mut why, rule): (EditStrategy, String, Option<String>),
        path: &Path,
        edit: Edit,
    ) -> Result<EditReport> {
        let start = Instant::now();
        let mut phases = Phases::default();
        let (file, probed) = phases.time("open", || open_for_edit(path))?;
        let len = probed.len();
        let mut watch = Watch::new(&file, path, &probed);
        let job = Job {
            file: &file,
            len,
            durable: self.durable,
        };
        let (op, kernel) = match &edit {
            Edit::Truncate => (EditOp::TruncateAfterFirstLine, None),
            Edit::Replace(r) => (
                EditOp::ReplaceByte {
                    from: r.from,
                    to: r.to,
                },
                Some(r.replacer.kernel()),
            ),
        };
        let outcome = match edit {
            // Nothing can change; no strategy needs to read the file to know that.
            Edit::Replace(r) if r.from == r.to => EditOutcome::Replaced { changed: 0 },
            // The rule measures a big file's first part (see [`trial`]).
            Edit::Replace(r) if rule.is_some() && len >= TRIAL_MIN => {
                let (changed, trial) =
                    trial::replace(&job, &r, self.buffer_size, &mut watch, &mut phases)?;
                strategy = trial.chosen;
                why = trial.why(rule.as_deref().unwrap_or_default());
                EditOutcome::Replaced { changed }
            }
            Edit::Replace(r) => EditOutcome::Replaced {
                changed: match strategy {
                    EditStrategy::Mmap => mmap::replace(&job, &r, &mut watch, &mut phases),
                    EditStrategy::StdWhole => {
                        std_whole::replace(&job, &r, self.whole_limit(), &mut watch, &mut phases)
                    }
                    EditStrategy::StdStream => {
                        std_stream::replace(&job, &r, self.buffer_size, &mut watch, &mut phases)
                    }
                }?,
            },
            Edit::Truncate => {
                let kept = match strategy {
                    EditStrategy::Mmap => mmap::truncate(&job, &mut phases),
                    EditStrategy::StdWhole => {
                        std_whole::truncate(&job, self.whole_limit(), &mut phases)
                    }
                    EditStrategy::StdStream => {
                        std_stream::truncate(&job, self.buffer_size, &mut phases)
                    }
                }?;
                // The one write of a truncation, made here for every strategy: only if the
                // file is still what was read, so no other writer's bytes are cut off.
                let kept = match kept {
                    Some(kept) if kept < job.len => {
                        phases.time("truncate", || {
                            watch
                                .guarded("the truncation", "cannot truncate", || file.set_len(kept))
                        })?;
                        watch.cut(kept)?;
                        Some(kept)
                    }
                    other => other,
                };
                match kept {
                    Some(kept) => EditOutcome::Truncated { kept },
                    None => EditOutcome::NoNewline,
                }
            }
        };
        // Nothing changed under the edit since its last write (an append after it would
        // be a tail the edit never saw).
        watch.check("the sync")?;
        // A strategy that synced itself (`mmap`'s replace, through its map) recorded a
        // `sync` phase; everything else, a truncation made after unmapping included,
        // syncs the descriptor here. It runs even when nothing changed: see the module docs.
        if self.durable && phases.get("sync").is_none() {
            phases
                .time("sync", || file.sync_data())
                .map_err(|e| Error::io("cannot sync (fdatasync)", e))?;
        }
        let len_after = match outcome {
            EditOutcome::Truncated { kept } => kept,
            _ => len,
        };
        drop(file);
        Ok(EditReport {
            op,
            strategy,
            kernel,
            len_before: len,
            len_after,
            outcome,
            durable: self.durable,
            phases: phases.entries,
            total: start.elapsed(),
            why,
        })
    }

    /// The memory `std-whole` may use now: the explicit limit, else 80% of MemAvailable.
    fn whole_limit(&self) -> Option<u64> {
        self.memory_limit.or_else(|| {
            crate::machine::mem_available_bytes()
                .map(|a| a / WHOLE_MEMORY_SHARE.1 * WHOLE_MEMORY_SHARE.0)
        })
    }
}

/// The share of `MemAvailable` that `std-whole` may fill with the file: 4/5, leaving a
/// fifth for the rest of the system, because `MemAvailable` is itself an estimate and
/// counts the file's own page-cache pages, which reading it keeps in use. The `count`
/// bench suite uses the same 80% for what fits in the page cache.
const WHOLE_MEMORY_SHARE: (u64, u64) = (4, 5);

/// Keeps the first line of the file at `path` (up to and including the first `\n`) and
/// removes the rest, durably, with the default strategy ([`EditOptions::strategy`]); see
/// the module docs. A failure names `path`.
pub fn truncate_after_first_line(path: impl AsRef<Path>) -> Result<EditReport> {
    EditOptions::new().truncate_after_first_line(path)
}

/// Replaces every `from` byte of the file at `path` by `to`, durably, with the default
/// strategy ([`EditOptions::strategy`]); see the module docs. A failure names `path`.
pub fn replace_byte(path: impl AsRef<Path>, from: u8, to: u8) -> Result<EditReport> {
    EditOptions::new().replace_byte(path, from, to)
}

/// An open file being edited, as the strategies see it.
pub(crate) struct Job<'a> {
    /// Open for reading and writing.
    pub(crate) file: &'a File,
    /// Its length when opened.
    pub(crate) len: u64,
    /// Whether the caller wants a durable result (`mmap` syncs through its map).
    pub(crate) durable: bool,
}

/// The edit to make, as the strategies receive it.
enum Edit {
    Truncate,
    Replace(Replace),
}

/// A replacement to make.
pub(crate) struct Replace {
    pub(crate) from: u8,
    pub(crate) to: u8,
    pub(crate) replacer: Replacer,
}

impl Replace {
    /// Replaces in `buf`; returns how many bytes changed.
    pub(crate) fn apply(&self, buf: &mut [u8]) -> u64 {
        self.replacer.replace(buf, self.from, self.to)
    }
}

/// Opens `path` for reading and writing after checking that it is a regular file on a real
/// file system, and returns it with its length.
///
/// Anything else is refused *before* it is opened for writing: opening a device or FIFO
/// can have effects of its own (a tape rewinds, a FIFO's reader wakes up), and a file on
/// procfs or sysfs is not data but kernel state (a `/proc/sys` file written from offset 0
/// changes a setting). The checks are `count`'s ([`Input::is_sized`]), made on a read-only
/// descriptor opened with `O_NONBLOCK` so that a path replaced by a FIFO since the `stat`
/// cannot block; the writable descriptor must then be the same file, in case the path was
/// replaced in between.
///
/// The metadata returned is the probe's, taken before the writable open: the edit's first
/// look at the file, which [`Watch`] compares every later look with.
fn open_for_edit(path: &Path) -> Result<(File, fs::Metadata)> {
    let meta = fs::metadata(path).map_err(|e| Error::io("cannot open", e))?;
    check_regular(&meta.file_type())?;
    let probe = Input::open_to_probe(path).map_err(from_input_error)?;
    probe.sized_len("edit").map_err(from_input_error)?;
    let probed = probe
        .file()
        .metadata()
        .map_err(|e| Error::io("cannot stat", e))?;
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::EISDIR) => Error::IsDirectory,
            _ => Error::io("cannot open for writing", e),
        })?;
    let meta = file.metadata().map_err(|e| Error::io("cannot stat", e))?;
    if (meta.dev(), meta.ino()) != (probed.dev(), probed.ino()) {
        return Err(Error::ReplacedWhileOpening);
    }
    Ok((file, probed))
}

/// The edit error for a refusal made by [`Input`] (which speaks for the reading methods).
fn from_input_error(e: Error) -> Error {
    match e {
        Error::NotRegularFile { kind, .. } => Error::NotEditable { kind },
        Error::SizeUnknown { .. } => Error::PseudoFile,
        other => other,
    }
}

fn check_regular(kind: &fs::FileType) -> Result<()> {
    if kind.is_file() {
        Ok(())
    } else if kind.is_dir() {
        Err(Error::IsDirectory)
    } else {
        Err(Error::NotEditable {
            kind: crate::sys::special_kind_name(kind),
        })
    }
}

/// `read_at` that retries when a signal interrupts it.
pub(crate) fn read_at_retrying(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    loop {
        match file.read_at(buf, offset) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// The file's length as a `usize`, for a map or a buffer.
pub(crate) fn len_usize(len: u64) -> Result<usize> {
    usize::try_from(len).map_err(|_| Error::TooBigForAddressSpace { len })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{Profile, StrategyWinner};

    fn profile(method: &str) -> std::result::Result<Profile, String> {
        Ok(Profile {
            edit: vec![StrategyWinner {
                condition: "truncate".into(),
                method: method.into(),
                runner_up: "std-stream".into(),
                lead: 1.2,
                measured_at: "2026-11-26T10:00:00Z".into(),
                device: None,
                bytes: None,
            }],
            ..Profile::default()
        })
    }

    #[test]
    fn without_a_strategy_an_edit_follows_the_profile_or_says_why_not() {
        let here = std::env::temp_dir();
        let (s, why, rule) = strategy_from(&profile("mmap"), EditKind::Truncate, &here);
        assert_eq!((s, rule), (EditStrategy::Mmap, None));
        assert!(why.contains("truncate winner"), "{why}");
        let (s, why, rule) = strategy_from(&profile("mmap"), EditKind::Replace, &here);
        assert_eq!(s, DEFAULT_REPLACE);
        assert_eq!(
            rule.as_deref(),
            Some("no winner beyond the noise measured here")
        );
        assert_eq!(
            why,
            "the rule, mmap (no winner beyond the noise measured here)"
        );
        let (s, why, rule) = strategy_from(&profile("teleport"), EditKind::Truncate, &here);
        assert_eq!(s, DEFAULT_TRUNCATE);
        assert!(rule.is_some());
        assert!(why.contains("`teleport` is unknown here"), "{why}");
    }
}
