//! Tasks a read method feeds: the library's ([`Task`], [`CountLines`]) and a digest
//! ([`Fnv1a`]) that compares the bytes two methods delivered.

pub use iolab::lab::task::*;

/// A 64-bit FNV-1a digest of the input: a second task, to show that any task runs with
/// every read method, and a way to compare the bytes two methods delivered.
#[derive(Clone, Copy, Debug)]
pub struct Fnv1a {
    state: u64,
}

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a {
            state: 0xcbf2_9ce4_8422_2325,
        }
    }
}

impl Fnv1a {
    /// The digest of the bytes fed so far.
    pub fn digest(&self) -> u64 {
        self.state
    }
}

impl Task for Fnv1a {
    fn feed(&mut self, chunk: &[u8]) {
        for &b in chunk {
            self.state = (self.state ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}
