//! System-call helpers: the library's (the SIGBUS guard, leases, io_uring probes, direct
//! I/O alignment) and the laboratory's own ([`fiemap`]).

pub use iolab::lab::sys::*;

pub mod fiemap;
