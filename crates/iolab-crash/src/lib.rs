//! The engine of `iolab crash`: from the file-system changes a program made, in order
//! ([`journal`]), the crash states a persistence model allows ([`model`], [`explore`]),
//! each rebuilt from the folder's first state in a small model of a file system ([`fs`])
//! and written out to a scratch folder where the user's check runs.
//!
//! The method is ALICE's (Pillai et al., OSDI 2014): record once, then ask what a crash
//! at each point may have left on disk, under what the file system promises. What a
//! model allows, with its sources, and what this cannot see: `docs/crash.md`.

#![deny(missing_docs)]

pub mod bytes;
pub mod explore;
pub mod fold;
pub mod fs;
pub mod journal;
pub mod model;

pub use bytes::Bytes;
pub use explore::{CrashState, explore, explore_with, planned, rebuild};
pub use fs::Fs;
pub use journal::{Entry, Ino, Journal, Op};
pub use model::Model;
