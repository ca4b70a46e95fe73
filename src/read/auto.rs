//! `auto`: picks a method for this input and machine, and says why.
//!
//! **The rule** (a measured one replaces it later): inputs without a trustworthy size
//! (pipes, standard input, `/proc` files) and files under [`MMAP_THRESHOLD`] are read with
//! `bufread-chunks`, where one or two `read` calls cost less than setting up a map; bigger
//! regular files are mapped and scanned with the fastest kernel the CPU has.
//! **System calls**: one `fstatfs(2)` (and a one-byte `pread` for empty-looking files) to
//! decide, then those of the chosen method.

use super::Method;
use crate::input::Input;
use crate::kernel::Kernel;

/// Below this size a plain read beats mapping: 1 MiB.
pub const MMAP_THRESHOLD: u64 = 1 << 20;

/// The method `auto` chose and the reason, for `--verbose`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The chosen method (never `auto`).
    pub method: Method,
    /// Why, in a few words.
    pub reason: String,
}

/// Chooses a method for `input`.
pub fn choose(input: &Input) -> Choice {
    if !input.is_sized() {
        return Choice {
            method: Method::BufreadChunks,
            reason: format!(
                "a {} without a trustworthy size: streaming read",
                input.kind().describe()
            ),
        };
    }
    let len = input.reported_len();
    if len < MMAP_THRESHOLD {
        return Choice {
            method: Method::BufreadChunks,
            reason: format!("{len} bytes is under {MMAP_THRESHOLD}: plain reads beat a map"),
        };
    }
    let method = match Kernel::best() {
        Kernel::Avx512 => Method::MmapAvx512,
        Kernel::Avx2 => Method::MmapAvx2,
        Kernel::Scalar => Method::Mmap,
    };
    Choice {
        method,
        reason: format!(
            "{len} bytes, regular file: map it and scan with the {} kernel",
            Kernel::best()
        ),
    }
}
