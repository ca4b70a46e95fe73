//! Byte-replacement kernels: every byte equal to `from` becomes `to`, in place.
//!
//! [`super::scalar::replace`] replaces eight bytes at a time in a `u64` (SWAR), the portable kernel; the
//! SIMD kernels are written once over a register, with the counting kernels
//! ([`super::avx2::replace`]: `vpblendvb`; [`super::avx512::replace`]: a byte-masked store
//! of `to`, and masked loads and stores for the tail).
//!
//! Every kernel **stores only where something changes**: a vector (or word) without a
//! `from` byte is not written back. Through a memory map this keeps pages without a match
//! clean, so they are neither faulted for writing nor written back to the device.
//!
//! Every kernel returns the number of bytes it changed, which is also what
//! [`naive_replace`], the obviously correct reference, returns. When `from == to` nothing
//! changes and every kernel returns 0 without storing anything.
//!
//! A [`Replacer`] is the capability ([`super::Kernels`], as a [`super::ByteCounter`] is for
//! counting): it can only be built for a kernel this CPU supports.

/// [`super::Kernels`] used to replace.
pub type Replacer = super::Kernels;

/// Replaces every `from` byte of `buf` by `to` with the best kernel for this CPU; returns
/// how many bytes changed.
#[cfg(any(test, feature = "lab"))]
pub fn replace_byte(buf: &mut [u8], from: u8, to: u8) -> u64 {
    Replacer::best().replace(buf, from, to)
}

/// The reference: the obviously correct, slow answer every kernel is tested against.
#[cfg(any(test, feature = "lab"))]
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
    use crate::kernel::Kernel;

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
