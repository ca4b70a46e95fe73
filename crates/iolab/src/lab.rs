//! The laboratory: the machinery `iolab bench`, `iolab trace` and the `iolab` command
//! drive — every method of every workload (the slow ones kept for comparison), the
//! benchmark engines (zeros written to standard output, timed appends, the random-read
//! driver), the kernels, the data-set generators, page-cache control and the system
//! facts a results file records.
//!
//! It is public so that iolab's own crates can reach it; it is not the library's stable
//! surface (the crate root is), and names here may change between releases. A program
//! that wants one of these methods uses the root's options builders, which take every
//! method by name ([`crate::CountMethod`], [`crate::EditStrategy`], [`crate::LogPolicy`]).

/// Read methods and the line-counting task ([`read::count_input`]) and `auto`'s rule.
pub mod read {
    pub use crate::read::*;
}
/// This machine's profile: the winners `iolab bench` measured, which the defaults follow.
pub mod profile {
    pub use crate::profile::*;
}
/// Write methods and [`write::write_zeros`], the engine of `iolab write`.
pub mod write {
    pub use crate::write::*;
}
/// Edit strategies and what an edit reports.
pub mod edit {
    pub use crate::edit::*;
}
/// Durable-log policies, their observer and record frames.
pub mod durable {
    pub use crate::durable::*;
}
/// LevelDB-style files.
pub mod file {
    pub use crate::file::*;
}
/// The line-counting and replacing kernels (scalar, AVX2, AVX-512).
pub mod kernel {
    pub use crate::kernel::*;
}
/// The page cache: evicting and warming files.
pub mod cache {
    pub use crate::cache::*;
}
/// Sizes, durations and rates, parsed and printed.
pub mod units {
    pub use crate::units::*;
}
/// Tasks a read method feeds.
pub mod task {
    pub use crate::task::*;
}
/// Names of the choice enums ([`named::Named`], [`named::named_enum!`]); the error of an
/// unknown name is the root's [`crate::UnknownName`].
pub mod named {
    pub use crate::UnknownName;
    #[doc(inline)]
    pub use crate::named::Named;
    #[doc(inline)]
    pub use crate::named_enum;
}
/// Aligned buffers.
pub mod buf {
    pub use crate::buf::*;
}
/// System-call helpers (FIEMAP, the SIGBUS guard, leases, io_uring probes).
pub mod sys {
    pub use crate::sys::*;
}
/// Error helpers.
pub mod error {
    pub use crate::error::describe_io;
}
/// Putting a file in place complete or not at all ([`atomic::write_file_atomically`]).
pub mod atomic {
    pub use crate::atomic::*;
}
/// The facts about this machine the defaults read (memory available, CPU model, time).
pub mod machine {
    pub use crate::machine::*;
}
