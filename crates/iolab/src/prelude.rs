//! `use iolab::prelude::*;`: the six workloads' calls, their options and choices, the
//! error type, and [`std::io::Write`] (for [`StdoutWriter`] and [`RawStdout`]).

pub use std::io::Write as _;

pub use crate::{
    AppendFile, AppendOptions, CountMethod, CountOptions, EditOptions, EditStrategy, Error,
    ErrorKind, Log, LogOptions, LogPolicy, RandomAccessFile, RandomAccessOptions, RawStdout,
    StdoutWriter, WriteOptions, count_lines, replace_byte, truncate_after_first_line,
};
