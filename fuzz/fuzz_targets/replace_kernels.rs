//! Every replace kernel equals the reference on arbitrary bytes, at an arbitrary alignment.
#![no_main]

use iolab::kernel::Kernel;
use iolab::kernel::replace::{Replacer, naive_replace};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let (from, to, offset) = (data[0], data[1], usize::from(data[2] % 64));
    let body = &data[3..];
    let offset = offset.min(body.len());
    let mut expected = body.to_vec();
    let expected_count = naive_replace(&mut expected[offset..], from, to);
    for kernel in Kernel::ALL {
        if let Some(replacer) = Replacer::new(kernel) {
            let mut got = body.to_vec();
            let count = replacer.replace(&mut got[offset..], from, to);
            assert_eq!(count, expected_count, "{kernel}");
            assert_eq!(got, expected, "{kernel}");
        }
    }
});
