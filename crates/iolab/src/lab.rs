//! The laboratory's door: every method of every workload one by one (the slow ones kept
//! for comparison), the kernels, page-cache residency, the system-call helpers and the
//! machine profile's types, for the engines `iolab bench`, `iolab trace` and the `iolab`
//! command drive.
//!
//! It exists only with the `lab` feature, which iolab's own unpublished crates turn on
//! (`crates/iolab-lab`, which adds the benchmark engines, the generators and the savers of
//! the machine profile); it is off by default, outside the semver promise, and absent from
//! the published documentation. A program uses the crate root, whose options builders take
//! every method by name ([`crate::CountMethod`], [`crate::EditStrategy`],
//! [`crate::LogPolicy`]).

/// Read methods and the line-counting task ([`read::count_input`]) and `auto`'s rule.
pub mod read {
    pub use crate::read::*;
}
/// This machine's profile: the winners `iolab bench` measured, which the defaults follow.
pub mod profile {
    pub use crate::profile::*;
}
/// Write methods (the engine of `iolab write` is the laboratory's).
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
/// The page cache: residency and dropping clean pages.
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
/// The facts about this machine the defaults read (memory available, CPU model, time).
pub mod machine {
    pub use crate::machine::*;
}
