//! Sizes, rates and durations: parsing what people type and printing what people read.
//!
//! **Parsing** ([`parse_size`]) follows GNU coreutils (`truncate -s`, `head -c`, `dd`), so a
//! size means the same here as in the shell command next to it:
//!
//! | written | means | example |
//! |---|---|---|
//! | `N` or `NB` | bytes | `4096`, `4096B` |
//! | `NK`, `NKiB` (also `Ki`) | N × 1024 | `64K` = 65 536 |
//! | `NKB` | N × 1000 | `64KB` = 64 000 |
//! | `M`, `G`, `T`, `P`, `E` | the same, with the next powers | `22G` = 22 × 2³⁰ |
//!
//! Letters are case-insensitive (`k`, `kib`, `kB` all work), a space may separate the number
//! from its unit (`1.00 GiB`, which is what [`format_bytes`] prints), and the number may have a
//! fraction (`1.5G`; the result is rounded to the nearest byte). Unlike coreutils, a bare `b`
//! means bytes, not 512-byte blocks. Empty, negative, unknown-suffix, fraction-of-a-byte and
//! beyond-`u64` sizes are refused with a one-line [`SizeError`].
//!
//! **Printing** uses three significant digits: [`format_bytes`] in binary units (`1.00 GiB`,
//! the unit sizes are chosen in), [`format_rate`] in decimal units (`12.3 GB/s`, the unit
//! storage and memory throughput is quoted in), [`format_duration`] in ns, µs, ms or s.

use std::fmt;

use iolab::lab::units::{NEXT_UNIT_AT, three_digits};
pub use iolab::lab::units::{format_bytes, format_rate};

/// Binary unit letters in increasing order; `K` is 1024¹, `E` is 1024⁶ (the largest below 2⁶⁴).
const UNIT_LETTERS: [u8; 6] = *b"KMGTPE";

/// Duration units for [`format_duration`] with their length in seconds, shortest first.
const DURATION_UNITS: [(&str, f64); 4] = [("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0)];

/// Fraction digits beyond this many are ignored: 19 digits already resolve 1/2⁶⁴ of an exbibyte
/// step, far below a byte, and they keep the arithmetic inside `u128`.
const MAX_FRACTION_DIGITS: usize = 19;

/// A size string that [`parse_size`] refused, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeError {
    input: String,
    kind: SizeErrorKind,
}

/// Why a size string was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SizeErrorKind {
    /// Nothing (or only blanks) was given.
    Empty,
    /// The size starts with `-`.
    Negative,
    /// There are no digits where the number should be.
    NoNumber,
    /// The text after the number is not a known unit.
    UnknownSuffix(String),
    /// The size does not fit in 64 bits.
    TooLarge,
    /// A plain byte count with a fraction, like `1.5`.
    FractionOfByte,
}

impl SizeError {
    fn new(input: &str, kind: SizeErrorKind) -> SizeError {
        SizeError {
            input: input.to_string(),
            kind,
        }
    }

    /// The text that was refused.
    pub fn input(&self) -> &str {
        &self.input
    }

    /// Why it was refused.
    pub fn kind(&self) -> &SizeErrorKind {
        &self.kind
    }
}

impl fmt::Display for SizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Control characters are escaped so the message stays on one line.
        write!(f, "invalid size '{}': ", self.input.escape_debug())?;
        match &self.kind {
            SizeErrorKind::Empty => f.write_str("empty (give a number like 4096, 64K or 1.5G)"),
            SizeErrorKind::Negative => f.write_str("sizes cannot be negative"),
            SizeErrorKind::NoNumber => f.write_str("no number (give one like 4096, 64K or 1.5G)"),
            SizeErrorKind::UnknownSuffix(suffix) => write!(
                f,
                "unknown suffix '{}' (use K, M, G, T, P or E; KB, MB, … are powers of 1000)",
                suffix.escape_debug()
            ),
            SizeErrorKind::TooLarge => f.write_str("too large (the limit is 2^64 - 1 bytes)"),
            SizeErrorKind::FractionOfByte => {
                f.write_str("a fraction of a byte (add a unit, like 1.5K)")
            }
        }
    }
}

impl std::error::Error for SizeError {}

/// Parses a size in bytes: `4096`, `64K`, `22G`, `1.5GiB`, `10MB` (see the module docs for
/// the exact rules; `K` is 1024 and `KB` is 1000, as in coreutils).
pub fn parse_size(s: &str) -> Result<u64, SizeError> {
    let error = |kind| SizeError::new(s, kind);
    let text = s.trim();
    if text.is_empty() {
        return Err(error(SizeErrorKind::Empty));
    }
    if text.starts_with('-') {
        return Err(error(SizeErrorKind::Negative));
    }
    let text = text.strip_prefix('+').unwrap_or(text);

    let number_end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(number_end);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() {
        return Err(error(SizeErrorKind::NoNumber));
    }
    if fraction.contains('.') {
        // A second '.' ("1.2.3"): say which part is not understood.
        let rest = &number[whole.len() + 1 + fraction.find('.').unwrap_or(0)..];
        return Err(error(SizeErrorKind::UnknownSuffix(format!(
            "{rest}{suffix}"
        ))));
    }
    let multiplier = parse_suffix(suffix.trim_start()).ok_or_else(|| {
        error(SizeErrorKind::UnknownSuffix(
            suffix.trim_start().to_string(),
        ))
    })?;

    // Whole part: exact, checked.
    let mut bytes: u128 = 0;
    for digit in whole.bytes() {
        bytes = bytes * 10 + u128::from(digit - b'0');
        if bytes > u128::from(u64::MAX) {
            return Err(error(SizeErrorKind::TooLarge));
        }
    }
    let mut bytes = bytes * u128::from(multiplier);

    // Fraction: numerator / 10^digits of the multiplier, rounded to the nearest byte.
    let fraction = fraction.trim_end_matches('0');
    let fraction = &fraction[..fraction.len().min(MAX_FRACTION_DIGITS)];
    if !fraction.is_empty() {
        if multiplier == 1 {
            return Err(error(SizeErrorKind::FractionOfByte));
        }
        let numerator = fraction
            .bytes()
            .fold(0u128, |n, digit| n * 10 + u128::from(digit - b'0'));
        let denominator = 10u128.pow(fraction.len() as u32);
        // numerator < 10^19 < 2^64 and multiplier <= 2^60: the product stays below 2^124.
        let scaled = numerator * u128::from(multiplier);
        bytes += (scaled + denominator / 2) / denominator;
    }
    if bytes > u128::from(u64::MAX) {
        return Err(error(SizeErrorKind::TooLarge));
    }
    Ok(bytes as u64)
}

/// The multiplier of a unit suffix (already trimmed), or `None` when it is not a unit.
fn parse_suffix(suffix: &str) -> Option<u64> {
    let lower = suffix.to_ascii_lowercase();
    let mut chars = lower.bytes();
    let Some(letter) = chars.next() else {
        return Some(1);
    };
    if letter == b'b' {
        return (lower.len() == 1).then_some(1);
    }
    let power = UNIT_LETTERS
        .iter()
        .position(|&unit| unit.to_ascii_lowercase() == letter)? as u32
        + 1;
    let base: u64 = match &lower[1..] {
        "" | "i" | "ib" => 1024,
        "b" => 1000,
        _ => return None,
    };
    Some(base.pow(power))
}

/// Parses a byte given on a command line: one ASCII character (`,`), `0x2c`, `\x2c`,
/// or one of the escapes `\n \r \t \0 \\`. Anything else, including a character that
/// takes several bytes in UTF-8, is refused with a one-line reason.
pub fn parse_byte(s: &str) -> Result<u8, String> {
    const FORMS: &str = "a character like ',' or a form like 0x2c or \\n";
    let hex = |digits: &str| {
        (!digits.is_empty() && digits.len() <= 2)
            .then(|| u8::from_str_radix(digits, 16).ok())
            .flatten()
    };
    let mut chars = s.chars();
    let (first, second) = (chars.next(), chars.next());
    match (first, second) {
        (None, _) => Err(format!("expected one byte, got nothing ({FORMS})")),
        (Some(c), None) if c.is_ascii() => Ok(c as u8),
        (Some(c), None) => Err(format!(
            "'{c}' is {} bytes in UTF-8, not one; give a byte as 0x00 to 0xff",
            c.len_utf8()
        )),
        _ => {
            let parsed = if let Some(digits) = s.strip_prefix("0x").or(s.strip_prefix("0X")) {
                hex(digits)
            } else if let Some(digits) = s.strip_prefix("\\x") {
                hex(digits).filter(|_| digits.len() == 2)
            } else {
                match s {
                    "\\n" => Some(b'\n'),
                    "\\r" => Some(b'\r'),
                    "\\t" => Some(b'\t'),
                    "\\0" => Some(0),
                    "\\\\" => Some(b'\\'),
                    _ => None,
                }
            };
            parsed
                .ok_or_else(|| format!("'{}' is not one byte; expected {FORMS}", s.escape_debug()))
        }
    }
}

/// `x` with (at least) three significant digits, plainly: `13.5`, `0.000612`, `545`,
/// `1.00`.
pub fn three_significant(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if !x.is_finite() {
        format!("{x}")
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        let decimals = (2 - x.abs().log10().floor() as i32).max(0) as usize;
        format!("{x:.decimals$}")
    }
}

/// A duration for people, three significant digits in ns, µs, ms or s (`1.23 s`, `456 ms`,
/// `12.0 µs`); durations of 1000 s and more stay in seconds. Negative, NaN and infinite
/// durations print `n/a`.
pub fn format_duration(secs: f64) -> String {
    if !secs.is_finite() || secs < 0.0 {
        return "n/a".to_string();
    }
    if secs == 0.0 {
        return "0 s".to_string();
    }
    let (name, length) = DURATION_UNITS
        .iter()
        .copied()
        .find(|&(_, length)| secs / length < NEXT_UNIT_AT)
        .unwrap_or(DURATION_UNITS[DURATION_UNITS.len() - 1]);
    format!("{} {name}", three_digits(secs / length))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_significant_digits() {
        assert_eq!(three_significant(13.456), "13.5");
        assert_eq!(three_significant(0.000_612), "0.000612");
        assert_eq!(three_significant(545.4), "545");
        assert_eq!(three_significant(1.0), "1.00");
        assert_eq!(three_significant(0.0), "0");
    }

    #[test]
    fn plain_bytes() {
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size(" 4096 "), Ok(4096));
        assert_eq!(parse_size("+7"), Ok(7));
        assert_eq!(parse_size("100B"), Ok(100));
        assert_eq!(parse_size("100 b"), Ok(100));
        assert_eq!(parse_size("1.0"), Ok(1));
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
    }

    #[test]
    fn binary_suffixes_like_coreutils() {
        assert_eq!(parse_size("1K"), Ok(1024));
        assert_eq!(parse_size("1k"), Ok(1024));
        assert_eq!(parse_size("1KiB"), Ok(1024));
        assert_eq!(parse_size("1kib"), Ok(1024));
        assert_eq!(parse_size("1Ki"), Ok(1024));
        assert_eq!(parse_size("22G"), Ok(22 << 30));
        assert_eq!(parse_size("3M"), Ok(3 << 20));
        assert_eq!(parse_size("2T"), Ok(2 << 40));
        assert_eq!(parse_size("1P"), Ok(1 << 50));
        assert_eq!(parse_size("15E"), Ok(15 << 60));
        assert_eq!(parse_size("1.00 GiB"), Ok(1 << 30));
    }

    #[test]
    fn decimal_suffixes() {
        assert_eq!(parse_size("1KB"), Ok(1000));
        assert_eq!(parse_size("1kB"), Ok(1000));
        assert_eq!(parse_size("5MB"), Ok(5_000_000));
        assert_eq!(parse_size("2GB"), Ok(2_000_000_000));
        assert_eq!(parse_size("1TB"), Ok(1_000_000_000_000));
    }

    #[test]
    fn fractions_round_to_the_nearest_byte() {
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size(".5K"), Ok(512));
        assert_eq!(parse_size("0.5K"), Ok(512));
        assert_eq!(parse_size("1.K"), Ok(1024));
        assert_eq!(parse_size("1.1K"), Ok(1126)); // 1126.4
        assert_eq!(parse_size("1.0005K"), Ok(1025)); // 1024.512
        assert_eq!(parse_size("0.0000000000000000000001K"), Ok(0));
        assert_eq!(parse_size("1.500000000000000000000000000G"), Ok(3 << 29));
    }

    #[test]
    fn refusals_say_why_in_one_line() {
        let kind = |s: &str| parse_size(s).unwrap_err().kind().clone();
        assert_eq!(kind(""), SizeErrorKind::Empty);
        assert_eq!(kind("   "), SizeErrorKind::Empty);
        assert_eq!(kind("-1"), SizeErrorKind::Negative);
        assert_eq!(kind("-1G"), SizeErrorKind::Negative);
        assert_eq!(kind("abc"), SizeErrorKind::NoNumber);
        assert_eq!(kind("G"), SizeErrorKind::NoNumber);
        assert_eq!(kind("."), SizeErrorKind::NoNumber);
        assert_eq!(kind("12X"), SizeErrorKind::UnknownSuffix("X".into()));
        assert_eq!(kind("12 GG"), SizeErrorKind::UnknownSuffix("GG".into()));
        assert_eq!(kind("1KiBs"), SizeErrorKind::UnknownSuffix("KiBs".into()));
        assert_eq!(kind("1e9"), SizeErrorKind::UnknownSuffix("e9".into()));
        assert_eq!(kind("1.2.3"), SizeErrorKind::UnknownSuffix(".3".into()));
        assert_eq!(kind("1.5"), SizeErrorKind::FractionOfByte);
        assert_eq!(kind("18446744073709551616"), SizeErrorKind::TooLarge);
        assert_eq!(kind("16E"), SizeErrorKind::TooLarge);
        assert_eq!(kind("99999999999999999999999T"), SizeErrorKind::TooLarge);
        assert_eq!(
            parse_size("12X").unwrap_err().to_string(),
            "invalid size '12X': unknown suffix 'X' (use K, M, G, T, P or E; KB, MB, … are powers of 1000)"
        );
        for bad in ["", "-1", "abc", "12X", "1.5", "16E"] {
            assert!(!parse_size(bad).unwrap_err().to_string().contains('\n'));
        }
    }

    #[test]
    fn durations_in_the_nearest_unit() {
        assert_eq!(format_duration(0.0), "0 s");
        assert_eq!(format_duration(5e-10), "0.500 ns");
        assert_eq!(format_duration(5e-9), "5.00 ns");
        assert_eq!(format_duration(12.34e-6), "12.3 µs");
        assert_eq!(format_duration(0.456), "456 ms");
        assert_eq!(format_duration(0.9999), "1.00 s");
        assert_eq!(format_duration(1.234), "1.23 s");
        assert_eq!(format_duration(4321.0), "4321 s");
        assert_eq!(format_duration(f64::NAN), "n/a");
    }
}
