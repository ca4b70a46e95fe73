//! Group commit: one write and one sync for every record pending when a leader starts.
//!
//! **Protocol** (all state under one mutex; callers wait on one condition variable, a
//! gathering leader on another):
//! 1. A caller frames its record onto `pending` and notes `mine`, the log's end just past
//!    it.
//! 2. While `durable < mine`: if no leader is writing, the caller becomes the leader: it
//!    gathers (below), takes all of `pending` (its own record and everything queued
//!    before it), releases the lock, writes the batch at `taken` and syncs it through the
//!    policy's sink, then sets `durable` to the batch's end and wakes everyone. Otherwise
//!    it waits.
//! 3. It returns `Ok(mine)` once `durable ≥ mine`.
//!
//! Batches are written one at a time and in order, so `durable` only grows and a caller
//! is released only by a completed sync whose batch ended at or after its record: no
//! record is acknowledged before its bytes are durable. A record that arrives while a
//! leader writes waits for the next batch, so under load every sync serves the records
//! of all the writers that arrived during the previous one.
//!
//! **Gathering**: with writers that append again as soon as they are acknowledged, a
//! leader that took `pending` at once would split them into two alternating halves (those
//! released by the last batch are not back yet when the first of the others leads), and a
//! sync would serve N/2 records. So when a batch completes it notes how many records were
//! in the log's hands then (the batch and those pending), and the next leader waits for
//! that many to be pending — at most [`MAX_GATHER`], or the last sync's duration if
//! shorter — before it takes them. A lone writer never waits (it expects one record).
//! This is PostgreSQL's `commit_delay` idea, with the delay and the count learned from
//! the last batch instead of configured.
//!
//! **Without grouping**, a caller takes the sink's lock and writes and syncs its own
//! record alone: the baseline group commit is measured against.
//!
//! **After a failed batch** every waiting and later caller gets [`Error::LogFailed`]; so
//! after a batch whose I/O panicked (in an [`LogObserver`]), which also
//! unwinds its leader. The same holds without grouping, for a record's failed or panicked
//! write or sync.

use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::{LogObserver, Sink, record};
use crate::file::{Error, Result};

/// The longest a leader waits for the records it expects: 500 µs, a few syncs of a fast
/// device, small beside a slow one's.
pub const MAX_GATHER: Duration = Duration::from_micros(500);

/// The state shared by the writers of one log.
struct State {
    /// Framed records not yet taken by a leader.
    pending: Vec<u8>,
    /// How many records `pending` holds.
    pending_records: usize,
    /// Records the next leader waits for: those in the log's hands when the last batch
    /// completed.
    expected: usize,
    /// How long the last batch's write and sync took.
    last_sync: Duration,
    /// The log's end just past the last framed record.
    next_end: u64,
    /// The end of what leaders have taken (written or being written).
    taken: u64,
    /// The end of what is durable.
    durable: u64,
    /// Whether a leader is writing a batch.
    leading: bool,
    /// Callers waiting on `done`: with none (a lone writer), a batch wakes nobody, and
    /// saves the `futex` call a notification costs even when no one waits.
    waiting: usize,
    /// Whether a leader waits on `arrived`, gathering.
    gathering: bool,
    /// Set by the first failed batch: the error's message.
    failed: Option<String>,
    /// Completed batches (syncs).
    syncs: u64,
    /// An empty buffer to swap with `pending`, so batches reuse their allocations.
    spare: Vec<u8>,
}

/// Group commit over a policy's sink.
pub(crate) struct Commit {
    state: Mutex<State>,
    done: Condvar,
    /// Signalled when a record arrives, for a gathering leader.
    arrived: Condvar,
    sink: Mutex<Box<dyn Sink>>,
    grouped: bool,
    observer: Arc<dyn LogObserver>,
}

impl Commit {
    pub(crate) fn new(
        sink: Box<dyn Sink>,
        end: u64,
        grouped: bool,
        observer: Arc<dyn LogObserver>,
    ) -> Commit {
        Commit {
            state: Mutex::new(State {
                pending: Vec::new(),
                pending_records: 0,
                expected: 1,
                last_sync: Duration::ZERO,
                next_end: end,
                taken: end,
                durable: end,
                leading: false,
                waiting: 0,
                gathering: false,
                failed: None,
                syncs: 0,
                spare: Vec::new(),
            }),
            done: Condvar::new(),
            arrived: Condvar::new(),
            sink: Mutex::new(sink),
            grouped,
            observer,
        }
    }

    pub(crate) fn grouped(&self) -> bool {
        self.grouped
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic in another writer leaves the state consistent (it is only changed
        // under the lock, and a leader that panics in its I/O marks the log failed before
        // it unwinds), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn durable_end(&self) -> u64 {
        self.lock().durable
    }

    pub(crate) fn syncs(&self) -> u64 {
        self.lock().syncs
    }

    /// Appends `rec` and returns once a completed sync covers it.
    pub(crate) fn append(&self, rec: &[u8]) -> Result<u64> {
        if !self.grouped {
            return self.append_alone(rec);
        }
        let mut st = self.lock();
        check_failed(&st)?;
        record::frame(rec, &mut st.pending);
        st.pending_records += 1;
        st.next_end += (record::FRAME_HEADER_LEN + rec.len()) as u64;
        let mine = st.next_end;
        // Wake a gathering leader only once its count is reached: a wake-up per arrival
        // would put it on a CPU just to sleep again, while the writers still coming need
        // that CPU.
        if st.gathering && st.pending_records >= st.expected {
            self.arrived.notify_one();
        }
        loop {
            if st.durable >= mine {
                return Ok(mine);
            }
            check_failed(&st)?;
            if st.leading {
                st.waiting += 1;
                st = self.done.wait(st).unwrap_or_else(|p| p.into_inner());
                st.waiting -= 1;
                continue;
            }
            // Lead: gather, take everything pending, write and sync it without the lock.
            st.leading = true;
            st = self.gather(st);
            let records = std::mem::take(&mut st.pending_records);
            let spare = std::mem::take(&mut st.spare);
            let batch = std::mem::replace(&mut st.pending, spare);
            let at = st.taken;
            st.taken += batch.len() as u64;
            drop(st);
            let started = Instant::now();
            let result = match panic::catch_unwind(AssertUnwindSafe(|| self.write(at, &batch))) {
                Ok(result) => result,
                Err(payload) => {
                    // A panic in the batch's I/O (an `LogObserver` is the caller's code): the
                    // batch may or may not be durable, so nothing more is acknowledged, and
                    // the waiters are woken to hear it instead of waiting for a leader that
                    // is gone.
                    let mut st = self.lock();
                    st.leading = false;
                    st.failed = Some("a batch's write or sync panicked".to_string());
                    self.wake(&st);
                    drop(st);
                    panic::resume_unwind(payload);
                }
            };
            let took = started.elapsed();
            st = self.lock();
            st.last_sync = took;
            st.expected = records + st.pending_records;
            st.leading = false;
            let mut batch = batch;
            batch.clear();
            st.spare = batch;
            match result {
                Ok(end) => {
                    st.durable = end;
                    st.syncs += 1;
                }
                Err(e) => {
                    st.failed = Some(e.to_string());
                    self.wake(&st);
                    return Err(e);
                }
            }
            self.wake(&st);
        }
    }

    /// Wakes the callers waiting for a batch, if any (called with the lock held).
    fn wake(&self, st: &State) {
        if st.waiting > 0 {
            self.done.notify_all();
        }
    }

    /// Waits (releasing the lock) until `expected` records are pending, or at most the
    /// last sync's duration capped at [`MAX_GATHER`].
    fn gather<'a>(&'a self, mut st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        let deadline = Instant::now() + st.last_sync.min(MAX_GATHER);
        while st.pending_records < st.expected {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            st.gathering = true;
            st = self
                .arrived
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            st.gathering = false;
        }
        st
    }

    /// One record, written and synced by its own caller under the sink's lock.
    fn append_alone(&self, rec: &[u8]) -> Result<u64> {
        let mut framed = Vec::with_capacity(record::FRAME_HEADER_LEN + rec.len());
        record::frame(rec, &mut framed);
        let mut sink = self.sink.lock().unwrap_or_else(|p| p.into_inner());
        let at = {
            let st = self.lock();
            check_failed(&st)?;
            st.durable
        };
        let result = match panic::catch_unwind(AssertUnwindSafe(|| {
            sink.write_durable(at, &framed, &*self.observer)
        })) {
            Ok(result) => result.map(|()| at + framed.len() as u64),
            Err(payload) => {
                // As in a grouped batch: the record's bytes may be in the file, unsynced,
                // so the log must not write over them and acknowledge the next record.
                self.lock().failed = Some("a record's write or sync panicked".to_string());
                drop(sink);
                panic::resume_unwind(payload);
            }
        };
        let mut st = self.lock();
        match result {
            Ok(end) => {
                st.durable = end;
                st.next_end = end;
                st.taken = end;
                st.syncs += 1;
                Ok(end)
            }
            Err(e) => {
                let e = batch_error(e);
                st.failed = Some(e.to_string());
                Err(e)
            }
        }
    }

    /// Writes and syncs one batch at `at`; returns its end.
    fn write(&self, at: u64, batch: &[u8]) -> Result<u64> {
        let mut sink = self.sink.lock().unwrap_or_else(|p| p.into_inner());
        sink.write_durable(at, batch, &*self.observer)
            .map(|()| at + batch.len() as u64)
            .map_err(batch_error)
    }
}

/// The error of a failed batch write or sync.
fn batch_error(source: std::io::Error) -> Error {
    Error::Io {
        op: "cannot append durably",
        source,
    }
}

/// Refuses to go on after a failed batch.
fn check_failed(st: &State) -> Result<()> {
    match &st.failed {
        Some(reason) => Err(Error::LogFailed {
            reason: reason.clone(),
        }),
        None => Ok(()),
    }
}
