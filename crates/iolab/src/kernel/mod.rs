//! Byte-counting kernels: what a task does with the bytes once they are in memory.
//!
//! Counting lines the way `wc -l` does is counting `0x0A` bytes. The algorithm is written
//! three times, once per instruction set:
//!
//! - [`scalar`]: a plain byte loop, the portable reference every other kernel must equal;
//! - [`avx2`]: 32-byte compares accumulated in 8-bit lanes, summed with `vpsadbw`
//!   every 255 iterations so no lane can overflow (bytecount's trick);
//! - [`avx512`]: 64-byte compares into mask registers and `popcnt`, with a masked load
//!   for the tail so no scalar loop is needed.
//!
//! A [`Kernel`] names an instruction-set tier; a [`ByteCounter`] is the capability: it can
//! only be built for a kernel this CPU supports, so calling it is always safe.
//! [`count_byte`] dispatches to the best kernel; the choice is made once per process and
//! cached in an atomic (memchr's pattern), so later calls cost one indirect jump.

pub mod avx2;
pub mod avx512;
pub mod replace;
pub mod scalar;

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU8, Ordering};

/// An instruction-set tier for the kernels, from slowest to fastest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kernel {
    /// Portable byte loop; always available.
    Scalar,
    /// x86-64 AVX2 (256-bit vectors).
    Avx2,
    /// x86-64 AVX-512 F + BW (512-bit vectors, mask registers).
    Avx512,
}

impl Kernel {
    /// Every kernel, slowest first.
    pub const ALL: [Kernel; 3] = [Kernel::Scalar, Kernel::Avx2, Kernel::Avx512];

    /// The kernel's name as used in reports: `scalar`, `avx2`, `avx512`.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            Kernel::Avx2 => "avx2",
            Kernel::Avx512 => "avx512",
        }
    }

    /// `Ok(())` when this CPU can run the kernel, else the reason it cannot.
    pub fn availability(self) -> Result<(), String> {
        let ok = match self {
            Kernel::Scalar => true,
            Kernel::Avx2 => avx2::is_available(),
            Kernel::Avx512 => avx512::is_available(),
        };
        if ok {
            Ok(())
        } else {
            Err(match self {
                Kernel::Scalar => unreachable!("the scalar kernel is always available"),
                Kernel::Avx2 => "this CPU lacks AVX2".to_string(),
                Kernel::Avx512 => "this CPU lacks AVX-512 F/BW".to_string(),
            })
        }
    }

    /// The fastest kernel this CPU supports, detected once and cached.
    pub fn best() -> Kernel {
        // 0 = not detected yet; otherwise the kernel's index + 1.
        static BEST: AtomicU8 = AtomicU8::new(0);
        match BEST.load(Ordering::Relaxed) {
            0 => {
                let best = Kernel::ALL
                    .into_iter()
                    .rev()
                    .find(|k| k.availability().is_ok())
                    .unwrap_or(Kernel::Scalar);
                let index = Kernel::ALL.iter().position(|&k| k == best).unwrap_or(0);
                BEST.store(index as u8 + 1, Ordering::Relaxed);
                best
            }
            n => Kernel::ALL[usize::from(n - 1)],
        }
    }
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Kernel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Kernel::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("unknown kernel '{s}' (expected scalar, avx2 or avx512)"))
    }
}

/// The proof that a kernel can run here, with its entry point.
///
/// Built only by [`ByteCounter::new`], which checks the CPU first; so [`ByteCounter::count`]
/// is safe even though the kernels behind it are `unsafe fn`s with `target_feature`s.
#[derive(Clone, Copy)]
pub struct ByteCounter {
    kernel: Kernel,
    count: unsafe fn(&[u8], u8) -> u64,
}

impl fmt::Debug for ByteCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ByteCounter")
            .field("kernel", &self.kernel)
            .finish()
    }
}

impl ByteCounter {
    /// A counter running `kernel`, or `None` when this CPU lacks the kernel's features.
    pub fn new(kernel: Kernel) -> Option<ByteCounter> {
        kernel.availability().ok()?;
        let count: unsafe fn(&[u8], u8) -> u64 = match kernel {
            Kernel::Scalar => scalar::count_unsafe,
            Kernel::Avx2 => avx2::count,
            Kernel::Avx512 => avx512::count,
        };
        Some(ByteCounter { kernel, count })
    }

    /// A counter running the fastest kernel this CPU has.
    pub fn best() -> ByteCounter {
        ByteCounter::new(Kernel::best()).expect("Kernel::best returns an available kernel")
    }

    /// The kernel behind this counter.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The number of bytes in `haystack` equal to `needle`.
    #[inline]
    pub fn count(&self, haystack: &[u8], needle: u8) -> u64 {
        // SAFETY: `new` only builds a counter after checking that the CPU supports the
        // kernel's target features, which is the only precondition of every kernel.
        unsafe { (self.count)(haystack, needle) }
    }
}

/// The number of bytes in `haystack` equal to `needle`, with the best kernel for this CPU.
///
/// The kernel is chosen on the first call and cached; see [`Kernel::best`].
pub fn count_byte(haystack: &[u8], needle: u8) -> u64 {
    ByteCounter::best().count(haystack, needle)
}

/// The reference: the obviously correct, slow answer every kernel is tested against.
pub fn naive_count(haystack: &[u8], needle: u8) -> u64 {
    let mut n = 0u64;
    for &b in haystack {
        if b == needle {
            n += 1;
        }
    }
    n
}
