//! Every count kernel equals the reference on arbitrary bytes, at an arbitrary alignment.
#![no_main]

use iolab::kernel::{ByteCounter, Kernel, naive_count};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&control, rest)) = data.split_first() else {
        return;
    };
    // The first byte picks the needle's source and the start offset (0..64).
    let offset = usize::from(control % 64).min(rest.len());
    let haystack = &rest[offset..];
    let needle = if control & 0x80 != 0 {
        b'\n'
    } else {
        rest.first().copied().unwrap_or(0)
    };
    let expected = naive_count(haystack, needle);
    for kernel in Kernel::ALL {
        if let Some(counter) = ByteCounter::new(kernel) {
            assert_eq!(counter.count(haystack, needle), expected, "{kernel}");
        }
    }
});
