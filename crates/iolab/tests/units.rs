//! Property tests of `iolab_lab::units`: what is printed parses back to about the same size,
//! suffixes multiply exactly, and no input makes the parser panic or print two lines.

use iolab_lab::units::{SizeErrorKind, format_bytes, format_duration, format_rate, parse_size};
use proptest::prelude::*;

/// The units a size may carry and what they multiply by.
const SUFFIXES: [(&str, u64); 17] = [
    ("", 1),
    ("B", 1),
    ("K", 1 << 10),
    ("k", 1 << 10),
    ("KiB", 1 << 10),
    ("kib", 1 << 10),
    ("KB", 1000),
    ("kB", 1000),
    ("M", 1 << 20),
    ("MiB", 1 << 20),
    ("MB", 1_000_000),
    ("G", 1 << 30),
    ("g", 1 << 30),
    ("GiB", 1 << 30),
    ("GB", 1_000_000_000),
    ("T", 1 << 40),
    ("TB", 1_000_000_000_000),
];

/// Whether `text` is a number with three significant digits (or an integer of 1000 and more,
/// or zero) followed by a space and one of `units`.
fn is_three_digits_and_unit(text: &str, units: &[&str]) -> bool {
    let Some((number, unit)) = text.split_once(' ') else {
        return false;
    };
    if !units.contains(&unit) || number.parse::<f64>().is_err() {
        return false;
    }
    let significant = number.trim_start_matches(['0', '.']).replace('.', "");
    number == "0" || significant.len() == 3 || (!number.contains('.') && number.len() > 3)
}

proptest! {
    // Up to 8 EiB: from 15.995 EiB on, sizes print as `16.0 EiB`, one past u64 (see below).
    #[test]
    fn formatted_bytes_parse_back_within_rounding(bytes in 0u64..=1 << 63) {
        let text = format_bytes(bytes);
        let parsed = parse_size(&text).unwrap();
        // Three significant digits: at most half a unit in the third digit, 0.5 %.
        let tolerance = bytes as f64 * 0.005 + 1.0;
        prop_assert!((parsed as f64 - bytes as f64).abs() <= tolerance, "{bytes} -> {text} -> {parsed}");
        if bytes < 1024 {
            prop_assert_eq!(parsed, bytes);
        }
    }

    #[test]
    fn formatted_bytes_have_three_digits(bytes in 1024u64..) {
        let text = format_bytes(bytes);
        prop_assert!(
            is_three_digits_and_unit(&text, &["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]),
            "{}", text
        );
    }

    #[test]
    fn plain_numbers_parse_exactly(bytes in any::<u64>()) {
        prop_assert_eq!(parse_size(&bytes.to_string()), Ok(bytes));
    }

    #[test]
    fn suffixes_multiply_exactly(n in 0u64..1 << 24, suffix in 0..SUFFIXES.len(), space in any::<bool>()) {
        let (unit, multiplier) = SUFFIXES[suffix];
        let gap = if space && !unit.is_empty() { " " } else { "" };
        let text = format!("{n}{gap}{unit}");
        prop_assert_eq!(parse_size(&text), Ok(n * multiplier), "{}", text);
    }

    #[test]
    fn overflow_is_refused(n in 1u64 << 20.., suffix in 2..SUFFIXES.len()) {
        let (unit, multiplier) = SUFFIXES[suffix];
        let text = format!("{n}{unit}");
        match n.checked_mul(multiplier) {
            Some(bytes) => prop_assert_eq!(parse_size(&text), Ok(bytes)),
            None => {
                let error = parse_size(&text).unwrap_err();
                prop_assert_eq!(error.kind(), &SizeErrorKind::TooLarge);
            }
        }
    }

    #[test]
    fn fractions_round_to_the_nearest_byte(whole in 0u64..1000, thousandths in 0u64..1000) {
        let text = format!("{whole}.{thousandths:03}K");
        let exact = (whole * 1000 + thousandths) * 1024;
        prop_assert_eq!(parse_size(&text), Ok((exact + 500) / 1000), "{}", text);
    }

    #[test]
    fn any_text_parses_or_fails_in_one_line(text in ".{0,24}") {
        if let Err(e) = parse_size(&text) {
            let message = e.to_string();
            prop_assert!(!message.contains('\n'));
            prop_assert!(message.starts_with("invalid size '"));
        }
    }

    #[test]
    fn rates_have_three_digits_and_a_decimal_unit(rate in 0.0f64..1e20) {
        let text = format_rate(rate);
        prop_assert!(
            is_three_digits_and_unit(&text, &["B/s", "kB/s", "MB/s", "GB/s", "TB/s", "PB/s", "EB/s"])
                || text.starts_with("0."),
            "{}", text
        );
    }

    #[test]
    fn durations_have_three_digits_and_a_unit(secs in 1e-9f64..999.0) {
        let text = format_duration(secs);
        prop_assert!(is_three_digits_and_unit(&text, &["ns", "µs", "ms", "s"]), "{}", text);
    }
}

#[test]
fn the_largest_sizes_print_above_the_limit() {
    assert_eq!(format_bytes(u64::MAX), "16.0 EiB");
    let error = parse_size("16.0 EiB").unwrap_err();
    assert_eq!(error.kind(), &SizeErrorKind::TooLarge);
}

#[test]
fn the_seed_write_up_sizes() {
    // `truncate -s 22G` and `head -c 22G` mean 22 GiB; so does iolab.
    assert_eq!(parse_size("22G"), Ok(22 * (1 << 30)));
    assert_eq!(format_bytes(22 * (1 << 30)), "22.0 GiB");
    assert_eq!(format_rate(22e9 / 10.0), "2.20 GB/s");
}

/// Found by the `parse_args` fuzz target: a newline in the input used to end up verbatim
/// in the message, breaking the one-line rule.
#[test]
fn control_characters_in_the_input_stay_escaped_in_one_line() {
    for text in ["\n", "x\ny", "\u{2028}", "4\tX"] {
        let message = iolab_lab::units::parse_size(text).unwrap_err().to_string();
        assert_eq!(message.lines().count(), 1, "{message:?}");
        assert!(!message.contains(['\n', '\r']), "{message:?}");
    }
    for text in ["\n\n", "a\nb"] {
        let message = iolab_lab::units::parse_byte(text).unwrap_err();
        assert_eq!(message.lines().count(), 1, "{message:?}");
    }
}
