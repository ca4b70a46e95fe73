//! The command-line parsers never panic, and what they accept round-trips.
#![no_main]

use iolab::units::{format_bytes, parse_byte, parse_size};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match parse_size(text) {
        Ok(n) => {
            // Printed sizes parse back within rounding (0.5%).
            if let Ok(back) = parse_size(&format_bytes(n)) {
                let diff = back.abs_diff(n) as f64;
                assert!(diff <= n as f64 * 0.005 + 1.0, "{text} -> {n} -> {back}");
            }
        }
        Err(e) => assert!(
            !e.to_string().contains('\n'),
            "multi-line error for {text:?}"
        ),
    }
    match parse_byte(text) {
        Ok(b) => assert!(text.len() <= 4, "{text:?} -> {b}"),
        Err(e) => assert!(!e.contains('\n'), "multi-line error for {text:?}"),
    }
});
