//! Differential tests of the kernels: every kernel in [`Kernel::ALL`] against
//! [`naive_count`], a plain byte loop too simple to be wrong, at every length to 300 and
//! every offset, across page and vector boundaries, and on random inputs (proptest).

use iolab_testkit as common;
use iolab_testkit::corpus::{KIB, MIB, Rng};
use iolab_testkit::differential::{Failures, proptest_config};

use iolab_lab::kernel::{ByteCounter, Kernel, count_byte, naive_count};
use proptest::collection::vec;
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::ops::Range;

// ------------------------------------------------------------------------------------------
// 1. Kernels against `naive_count`
// ------------------------------------------------------------------------------------------

/// The bytes the kernels are checked with: the newline they exist for, zero (the SWAR
/// kernel's "byte is zero" trick), and the two bytes with the top bit set (signed versus
/// unsigned compares, `vpsadbw`'s unsigned sums).
const NEEDLES: [u8; 4] = [b'\n', 0x00, 0xFF, 0x80];

/// Every kernel this CPU can run. Kernels it cannot run are named on stderr, not hidden.
fn counters() -> Vec<ByteCounter> {
    let mut counters = Vec::new();
    for kernel in Kernel::ALL {
        match ByteCounter::new(kernel) {
            Some(counter) => counters.push(counter),
            None => {
                common::skip_once(format!(
                    "kernel {kernel} cannot run on this CPU; not tested"
                ));
            }
        }
    }
    counters
}

/// Buffers of `len` bytes, each stressing a different part of a kernel for `needle`.
fn kernel_patterns(len: usize, needle: u8, seed: u64) -> Vec<(&'static str, Vec<u8>)> {
    let mut rng = Rng::new(seed ^ ((len as u64) << 8) ^ u64::from(needle));
    // About one byte in four is the needle: every vector holds a mix.
    let random: Vec<u8> = (0..len)
        .map(|_| {
            if rng.below(4) == 0 {
                needle
            } else {
                rng.byte()
            }
        })
        .collect();
    // Random bytes with the needle replaced: the answer is 0 whatever the kernel folds.
    let none: Vec<u8> = (0..len)
        .map(|_| match rng.byte() {
            b if b == needle => b ^ 1,
            b => b,
        })
        .collect();
    // Bytes one bit away from the needle, with the needle at the first and last position
    // only: catches a compare that is off by a bit and an off-by-one at either end.
    let mut near_miss: Vec<u8> = (0..len).map(|_| needle ^ (1u8 << rng.below(8))).collect();
    if let Some(first) = near_miss.first_mut() {
        *first = needle;
    }
    if let Some(last) = near_miss.last_mut() {
        *last = needle;
    }
    vec![
        ("random", random),
        ("all-needle", vec![needle; len]),
        ("no-needle", none),
        ("near-miss", near_miss),
    ]
}

/// Checks every kernel, and the dispatching [`count_byte`], on `content` placed at each
/// start offset in `offsets` (within 0..64) of a bigger buffer.
///
/// Every other byte of that buffer is `needle`, 64 bytes before and after: a kernel that
/// reads before its slice or past its end (a wrong tail length, an unmasked load) counts
/// them and fails, instead of reading harmless padding.
fn check_kernels(
    counters: &[ByteCounter],
    label: &str,
    content: &[u8],
    needle: u8,
    offsets: Range<usize>,
    failures: &mut Failures,
) {
    let expected = naive_count(content, needle);
    let mut buf = vec![needle; 64 + content.len() + 64];
    for offset in offsets {
        // Restore the padding the previous offset's copy overwrote.
        buf.fill(needle);
        buf[offset..offset + content.len()].copy_from_slice(content);
        let haystack = &buf[offset..offset + content.len()];
        let results = counters
            .iter()
            .map(|c| (c.kernel().name(), c.count(haystack, needle)))
            .chain([("count_byte", count_byte(haystack, needle))]);
        for (name, got) in results {
            if got != expected {
                failures.push(format!(
                    "{name} on {label} (len {}, offset {offset}, needle {needle:#04x}): \
                     got {got}, want {expected}",
                    content.len()
                ));
            }
        }
    }
}

#[test]
fn kernel_availability_matches_byte_counter() {
    // The harness trusts `ByteCounter::new` to say which kernels run; it must agree with
    // `availability`, and the portable kernel must always be there as the reference tier.
    for kernel in Kernel::ALL {
        assert_eq!(
            ByteCounter::new(kernel).is_some(),
            kernel.availability().is_ok(),
            "ByteCounter::new and availability disagree for {kernel}"
        );
    }
    assert!(ByteCounter::new(Kernel::Scalar).is_some());
    assert!(ByteCounter::new(Kernel::best()).is_some());
}

#[test]
fn kernels_every_length_to_300_every_offset() {
    // Every length up to 300 covers every tail length of every kernel (8-byte words,
    // 128-byte AVX2 steps, 256-byte AVX-512 steps with 64-byte masked tails) and more.
    let counters = counters();
    let mut failures = Failures::default();
    for len in 0..=300 {
        for needle in NEEDLES {
            for (name, content) in kernel_patterns(len, needle, 1) {
                check_kernels(&counters, name, &content, needle, 0..64, &mut failures);
            }
        }
    }
    failures.check("kernels, lengths 0..=300");
}

#[test]
fn kernels_page_and_vector_boundaries() {
    // One page and either side of it, and one byte either side of every multiple of 64 up
    // to 70 * 64 (past several AVX2 and AVX-512 steps).
    let mut lengths = BTreeSet::from([4095, 4096, 4097]);
    for k in 1..=70 {
        lengths.extend([64 * k - 1, 64 * k, 64 * k + 1]);
    }
    let counters = counters();
    let mut failures = Failures::default();
    for &len in &lengths {
        for needle in NEEDLES {
            for (name, content) in kernel_patterns(len, needle, 2) {
                check_kernels(&counters, name, &content, needle, 0..64, &mut failures);
            }
        }
    }
    failures.check("kernels, page and vector boundaries");
}

#[test]
fn kernels_fold_boundary_all_needle() {
    // The AVX2 kernel counts in 8-bit lanes and folds them every 255 iterations of 128
    // bytes; with every byte equal to the needle each lane reaches exactly 255 before a
    // fold. One iteration more without a fold would wrap a lane to 0. These lengths sit on
    // either side of one, two and several folds.
    const FOLD: usize = 255 * 128;
    let lengths = [
        FOLD - 1,
        FOLD,
        FOLD + 1,
        FOLD + 128,
        FOLD + 4 * KIB + 3,
        2 * FOLD - 1,
        2 * FOLD,
        2 * FOLD + 1,
        255 * 256 + 1,
        255 * 256 + 4 * KIB + 77,
    ];
    let counters = counters();
    let mut failures = Failures::default();
    for len in lengths {
        for needle in NEEDLES {
            let all = vec![needle; len];
            // All but one byte, so a kernel that answers `len` for a full buffer fails.
            let mut all_but_one = all.clone();
            all_but_one[len / 2] = needle.wrapping_add(1);
            for (name, content) in [("all-needle", all), ("all-but-one", all_but_one)] {
                check_kernels(&counters, name, &content, needle, 0..64, &mut failures);
            }
        }
    }
    // Many folds in one call: 1 MiB + 13 of needles, at a few offsets (all 64 would only
    // repeat the cases above at 16 times the cost).
    for needle in NEEDLES {
        let content = vec![needle; MIB + 13];
        for offset in [0, 1, 31, 32, 33, 63] {
            check_kernels(
                &counters,
                "all-needle 1 MiB",
                &content,
                needle,
                offset..offset + 1,
                &mut failures,
            );
        }
    }
    failures.check("kernels, fold boundary");
}

/// Random bytes with many newlines: short buffers, or long ones that are newlines except
/// for up to 500 random bytes at random places (so AVX2 lanes get close to the fold limit
/// with a random pattern). The long ones are built from the few changed bytes, which is
/// much faster to generate and shrink than 70 000 independent elements.
fn newline_heavy_bytes() -> impl Strategy<Value = Vec<u8>> {
    let long = (
        30_000..70_000usize,
        vec((any::<prop::sample::Index>(), any::<u8>()), 0..500),
    )
        .prop_map(|(len, changes)| {
            let mut bytes = vec![b'\n'; len];
            for (at, byte) in changes {
                bytes[at.index(len)] = byte;
            }
            bytes
        });
    prop_oneof![
        4 => vec(prop_oneof![1 => Just(b'\n'), 3 => any::<u8>()], 0..4096),
        1 => long,
    ]
}

proptest! {
    #![proptest_config(proptest_config(256))]

    #[test]
    fn kernels_match_naive_on_random_bytes(
        content in newline_heavy_bytes(),
        offset in 0usize..64,
        needle in prop_oneof![3 => Just(b'\n'), 1 => any::<u8>()],
    ) {
        let mut failures = Failures::default();
        check_kernels(&counters(), "random", &content, needle, offset..offset + 1, &mut failures);
        failures.into_result("kernels, random bytes").map_err(TestCaseError::fail)?;
    }
}
