//! Small wrappers over Linux facilities that more than one module uses.

pub mod fiemap;
pub mod sigbus;
pub mod uring;
