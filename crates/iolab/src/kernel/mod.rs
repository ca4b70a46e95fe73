//! Byte-counting kernels: what a task does with the bytes once they are in memory.
//!
//! Counting lines the way `wc -l` does is counting `0x0A` bytes; editing replaces one byte
//! by another. Each algorithm is written twice: [`scalar`], the
//! portable kernels, and once over a SIMD register ([`vector`]), which [`avx2`] (32-byte
//! registers) and [`avx512`] (64-byte registers and masks) instantiate.
//!
//! A [`Kernel`] names an instruction-set tier; [`Kernels`] is the capability: it can only
//! be built for a kernel this CPU supports, so calling it is always safe
//! ([`ByteCounter`] and [`replace::Replacer`] are its names for each use).
//! [`count_byte`] dispatches to the best kernel; the choice is made once per process and
//! kept in a `OnceLock` (memchr's pattern), so later calls cost one load and one indirect
//! jump. The kernels against `bytecount` and `memchr` (`cargo bench --bench kernels`):
//! docs/findings/machine.md.

pub mod avx2;
pub mod avx512;
pub mod replace;
pub mod scalar;
mod vector;

use std::fmt;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

crate::named_enum! {
    /// The byte kernel that counts (`\n` for a line count) or replaces bytes: an
    /// instruction-set tier, from slowest to fastest. Reported by [`LineCount`] and
    /// [`EditReport`], chosen with [`EditOptions::kernel`]; the mmap family of
    /// [`CountMethod`] names one each.
    ///
    /// [`LineCount`]: crate::LineCount
    /// [`EditReport`]: crate::EditReport
    /// [`EditOptions::kernel`]: crate::EditOptions::kernel
    /// [`CountMethod`]: crate::CountMethod
    #[derive(PartialOrd, Ord)]
    #[non_exhaustive]
    pub enum Kernel: "kernel" {
        /// Portable byte loop; always available.
        Scalar = "scalar",
        /// x86-64 AVX2 (256-bit vectors).
        Avx2 = "avx2",
        /// x86-64 AVX-512 F + BW (512-bit vectors, mask registers).
        Avx512 = "avx512",
    }
}

impl Kernel {
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

    /// The fastest kernel this CPU supports, detected once per process (the answer is
    /// kept: later calls make no feature detection).
    pub fn best() -> Kernel {
        best_counter().kernel
    }
}

/// The proof that a kernel can run here, with its entry points.
///
/// Built only by [`Kernels::new`], which checks the CPU first; so [`Kernels::count`] and
/// [`Kernels::replace`] are safe even though the kernels behind them are `unsafe fn`s
/// with `target_feature`s.
#[derive(Clone, Copy)]
pub struct Kernels {
    kernel: Kernel,
    count: unsafe fn(&[u8], u8) -> u64,
    replace: unsafe fn(&mut [u8], u8, u8) -> u64,
}

/// [`Kernels`] used to count.
pub type ByteCounter = Kernels;

impl fmt::Debug for Kernels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernels")
            .field("kernel", &self.kernel)
            .finish()
    }
}

impl Kernels {
    /// The kernels of `kernel`, or `None` when this CPU lacks its features.
    pub fn new(kernel: Kernel) -> Option<Kernels> {
        kernel.availability().ok()?;
        type Pair = (
            unsafe fn(&[u8], u8) -> u64,
            unsafe fn(&mut [u8], u8, u8) -> u64,
        );
        let (count, replace): Pair = match kernel {
            Kernel::Scalar => (scalar::count_unsafe, scalar::replace_unsafe),
            Kernel::Avx2 => (avx2::count, avx2::replace),
            Kernel::Avx512 => (avx512::count, avx512::replace),
        };
        Some(Kernels {
            kernel,
            count,
            replace,
        })
    }

    /// The fastest kernels this CPU has, detected once per process.
    pub fn best() -> Kernels {
        *best_counter()
    }

    /// The instruction-set tier behind these kernels.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The number of bytes in `haystack` equal to `needle`.
    #[inline]
    pub fn count(&self, haystack: &[u8], needle: u8) -> u64 {
        // SAFETY: `new` only builds kernels after checking that the CPU supports their
        // target features, which is the only precondition of every kernel.
        unsafe { (self.count)(haystack, needle) }
    }

    /// Replaces every `from` byte of `buf` by `to`; returns how many bytes changed.
    #[inline]
    pub fn replace(&self, buf: &mut [u8], from: u8, to: u8) -> u64 {
        // SAFETY: as for `count`.
        unsafe { (self.replace)(buf, from, to) }
    }
}

/// The fastest counter this CPU has, chosen by the first call (memchr's pattern): later
/// calls load it and jump through its function pointer, with no feature detection.
static BEST: OnceLock<Kernels> = OnceLock::new();

/// How many times the CPU was asked which kernel to use: once per process.
static DETECTIONS: AtomicUsize = AtomicUsize::new(0);

/// The counter in [`BEST`], detecting it on the first call.
fn best_counter() -> &'static Kernels {
    BEST.get_or_init(|| {
        DETECTIONS.fetch_add(1, Ordering::Relaxed);
        Kernel::ALL
            .into_iter()
            .rev()
            .find_map(Kernels::new)
            .expect("the scalar kernel is always available")
    })
}

/// The number of bytes in `haystack` equal to `needle`, with the best kernel for this CPU
/// (chosen on the first call and kept in a `OnceLock`: later calls make no feature
/// detection).
#[inline]
#[cfg(any(test, feature = "lab"))]
pub fn count_byte(haystack: &[u8], needle: u8) -> u64 {
    best_counter().count(haystack, needle)
}

/// The reference: the obviously correct, slow answer every kernel is tested against.
#[cfg(any(test, feature = "lab"))]
pub fn naive_count(haystack: &[u8], needle: u8) -> u64 {
    let mut n = 0u64;
    for &b in haystack {
        if b == needle {
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_kernel_is_detected_once_for_every_call_and_thread() {
        let data = b"a\nb\nc\n".repeat(1000);
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let data = data.clone();
                std::thread::spawn(move || (0..1000).map(|_| count_byte(&data, b'\n')).sum::<u64>())
            })
            .collect();
        for t in threads {
            assert_eq!(t.join().unwrap(), 3000 * 1000);
        }
        assert_eq!(ByteCounter::best().kernel(), Kernel::best());
        assert_eq!(Kernel::best().availability(), Ok(()));
        assert_eq!(DETECTIONS.load(Ordering::Relaxed), 1);
    }
}
