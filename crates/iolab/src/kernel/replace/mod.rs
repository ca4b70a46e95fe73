//! Byte-replacement kernels: every byte equal to `from` becomes `to`, in place.
//!
//! One algorithm, written once per instruction set like the counting kernels:
//!
//! - [`scalar`]: eight bytes at a time in a `u64` (SWAR), the portable kernel;
//! - [`avx2`]: 32-byte compares, matching bytes blended in with `vpblendvb`;
//! - [`avx512`]: 64-byte compares into a mask register and a byte-masked store of `to`,
//!   with masked loads and stores for the tail, so no scalar loop is needed.
//!
//! Every kernel **stores only where something changes**: a vector (or word) without a
//! `from` byte is not written back. Through a memory map this keeps pages without a match
//! clean, so they are neither faulted for writing nor written back to the device.
//!
//! Every kernel returns the number of bytes it changed, which is also what
//! [`naive_replace`], the obviously correct reference, returns. When `from == to` nothing
//! changes and every kernel returns 0 without storing anything.
//!
//! A [`Replacer`] is the capability, as [`crate::kernel::ByteCounter`] is for counting: it
//! can only be built for a kernel this CPU supports. [`Replacer::best`] uses
//! [`Kernel::best`], which is detected once per process and cached.

pub mod avx2;
pub mod avx512;
pub mod scalar;

use std::fmt;
use std::sync::OnceLock;

use super::Kernel;

/// The proof that a replace kernel can run here, with its entry point.
///
/// Built only by [`Replacer::new`], which checks the CPU first; so [`Replacer::replace`] is
/// safe even though the SIMD kernels behind it are `unsafe fn`s with `target_feature`s.
#[derive(Clone, Copy)]
pub struct Replacer {
    kernel: Kernel,
    replace: unsafe fn(&mut [u8], u8, u8) -> u64,
}

impl fmt::Debug for Replacer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Replacer")
            .field("kernel", &self.kernel)
            .finish()
    }
}

impl Replacer {
    /// A replacer running `kernel`, or `None` when this CPU lacks the kernel's features.
    pub fn new(kernel: Kernel) -> Option<Replacer> {
        kernel.availability().ok()?;
        let replace: unsafe fn(&mut [u8], u8, u8) -> u64 = match kernel {
            Kernel::Scalar => scalar::replace_unsafe,
            Kernel::Avx2 => avx2::replace,
            Kernel::Avx512 => avx512::replace,
        };
        Some(Replacer { kernel, replace })
    }

    /// A replacer running the fastest kernel this CPU has, chosen once per process.
    pub fn best() -> Replacer {
        static BEST: OnceLock<Replacer> = OnceLock::new();
        *BEST.get_or_init(|| {
            Replacer::new(Kernel::best()).expect("Kernel::best returns an available kernel")
        })
    }

    /// The kernel behind this replacer.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Replaces every `from` byte of `buf` by `to`; returns how many bytes changed.
    #[inline]
    pub fn replace(&self, buf: &mut [u8], from: u8, to: u8) -> u64 {
        // SAFETY: `new` only builds a replacer after checking that the CPU supports the
        // kernel's target features, which is the only precondition of every kernel.
        unsafe { (self.replace)(buf, from, to) }
    }
}

/// Replaces every `from` byte of `buf` by `to` with the best kernel for this CPU; returns
/// how many bytes changed.
pub fn replace_byte(buf: &mut [u8], from: u8, to: u8) -> u64 {
    Replacer::best().replace(buf, from, to)
}

/// The reference: the obviously correct, slow answer every kernel is tested against.
pub fn naive_replace(buf: &mut [u8], from: u8, to: u8) -> u64 {
    if from == to {
        return 0;
    }
    let mut changed = 0u64;
    for b in buf.iter_mut() {
        if *b == from {
            *b = to;
            changed += 1;
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_available_kernel_matches_the_reference_on_a_small_case() {
        let input = b"a,b,,c;d,\n,".repeat(20);
        let mut expected = input.clone();
        let n = naive_replace(&mut expected, b',', b';');
        for kernel in Kernel::ALL {
            let Some(r) = Replacer::new(kernel) else {
                continue;
            };
            let mut got = input.clone();
            assert_eq!(r.replace(&mut got, b',', b';'), n, "{kernel}");
            assert_eq!(got, expected, "{kernel}");
        }
    }

    #[test]
    fn equal_bytes_change_nothing() {
        let mut buf = b",,,".repeat(50);
        assert_eq!(replace_byte(&mut buf, b',', b','), 0);
        assert_eq!(buf, b",,,".repeat(50));
    }
}
