//! Tasks: what is done with the bytes once a read method has put them in memory.
//!
//! A read method (see [`crate::read`]) calls [`Task::feed`] with consecutive chunks of the
//! input, in file order, each chunk exactly once. A task never knows how its bytes arrived,
//! so a new task works with every method at once.

use crate::kernel::ByteCounter;

/// Consumes the bytes of an input, chunk by chunk, in order.
pub trait Task {
    /// Called with the next chunk of the input. Chunks may be of any length, including 0.
    fn feed(&mut self, chunk: &[u8]);
}

/// A task whose work can be split across threads: each thread gets a [`fork`], fed one
/// contiguous part of the input, and the parts are [`join`]ed back in file order.
///
/// Parallel read methods (`mmap-parallel`, `pread-parallel`) need this; given a task that
/// is only [`Task`], they deliver the input in order on one thread instead.
///
/// [`fork`]: SplitTask::fork
/// [`join`]: SplitTask::join
pub trait SplitTask: Task + Send + Sized {
    /// A new, empty task of the same kind, for one part of the input.
    fn fork(&self) -> Self;
    /// Takes in the result of the part that comes right after everything joined so far.
    fn join(&mut self, part: Self);
}

/// Counts lines the way `wc -l` does: the number of `\n` (0x0A) bytes.
#[derive(Clone, Copy, Debug)]
pub struct CountLines {
    counter: ByteCounter,
    lines: u64,
}

impl CountLines {
    /// A line counter using the given kernel.
    pub fn new(counter: ByteCounter) -> CountLines {
        CountLines { counter, lines: 0 }
    }

    /// The lines counted so far.
    pub fn lines(&self) -> u64 {
        self.lines
    }
}

impl Task for CountLines {
    #[inline]
    fn feed(&mut self, chunk: &[u8]) {
        self.lines += self.counter.count(chunk, b'\n');
    }
}

impl SplitTask for CountLines {
    fn fork(&self) -> Self {
        CountLines::new(self.counter)
    }

    fn join(&mut self, part: Self) {
        self.lines += part.lines;
    }
}

/// Wraps a task and counts the bytes it is fed.
pub(crate) struct Metered<'a> {
    pub(crate) inner: &'a mut dyn Task,
    pub(crate) bytes: u64,
}

impl Task for Metered<'_> {
    #[inline]
    fn feed(&mut self, chunk: &[u8]) {
        self.bytes += chunk.len() as u64;
        self.inner.feed(chunk);
    }
}
