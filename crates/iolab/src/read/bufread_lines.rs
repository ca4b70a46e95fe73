//! `bufread-lines`: `BufReader` and a fresh `String` per line, as `BufRead::lines()` does.
//!
//! **System calls**: `read(2)` of [`DEFAULT_BUFFER_SIZE`] bytes into the `BufReader`.
//! **Cost**: per line, a heap allocation, a copy and UTF-8 validation; it is the slowest
//! method, kept as the line-count write-up's starting point.
//! **When it wins**: never on speed; it is the idiom people write first.
//!
//! `lines().count()` has two traps, both avoided here. It counts a last line without `\n`,
//! so on such a file it says one more than `wc -l`; and on invalid UTF-8 it yields an
//! `Err` item that `count()` counts as a line, a wrong number without a word. This method
//! does what `Lines::next` does inside (`read_line` into a new `String`) but keeps the line
//! terminator, so the task sees the exact bytes, and it stops with
//! [`Error::InvalidUtf8`] on bytes that are not UTF-8.
//!
//! **Limits**: a line is held whole in memory, so a huge file without newlines needs as
//! much RAM as its size. Works on any input, pipes included.

use std::io::{BufRead, BufReader, ErrorKind};

use super::ReadOptions;
use crate::error::{Error, Result};
use crate::input::Input;
use crate::task::Task;

/// The `BufReader` capacity: 16 KiB, as in the line-count write-up.
pub const DEFAULT_BUFFER_SIZE: usize = 16 * 1024;

/// Feeds every line of `input`, terminator included, to `task`.
pub fn read(input: &Input, options: &ReadOptions, task: &mut dyn Task) -> Result<()> {
    let mut reader =
        BufReader::with_capacity(options.buffer_size_or(DEFAULT_BUFFER_SIZE), input.file());
    let mut line_number = 0u64;
    loop {
        line_number += 1;
        // A new String per line, as `Lines::next` allocates one.
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) => return Ok(()),
            // `read_line` retries EINTR itself.
            Ok(_) => task.feed(line.as_bytes()),
            Err(e) if e.kind() == ErrorKind::InvalidData => {
                return Err(Error::InvalidUtf8 { line: line_number });
            }
            Err(e) => return Err(Error::io("read failed", e)),
        }
    }
}
