//! Sizes and rates printed for people, in the messages the library's errors and `why()`s
//! carry: [`format_bytes`] in binary units (`1.00 GiB`), [`format_rate`] in decimal units
//! (`12.3 GB/s`), three significant digits. (Parsing sizes is the command's, in the
//! laboratory.)

/// Binary units for [`format_bytes`], after bytes.
const BINARY_UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/// Decimal units for [`format_rate`], bytes per second first.
const RATE_UNITS: [&str; 7] = ["B/s", "kB/s", "MB/s", "GB/s", "TB/s", "PB/s", "EB/s"];

/// A scaled value is printed in the next larger unit from here on: it would round to 1000
/// with three significant digits, and `0.98 MiB` reads better than `1000 KiB`.
pub const NEXT_UNIT_AT: f64 = 999.5;

/// `bytes` for people: exact below 1 KiB (`512 B`), otherwise three significant digits in
/// binary units (`1.00 GiB`, `64.0 KiB`). The command's size parser reads the result back to within
/// 0.5%, except for sizes within 0.03% of 2⁶⁴, which round up to `16.0 EiB`, one past the limit.
pub fn format_bytes(bytes: u64) -> String {
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut scaled = bytes as f64 / 1024.0;
    let mut unit = 0;
    while scaled >= NEXT_UNIT_AT && unit + 1 < BINARY_UNITS.len() {
        scaled /= 1024.0;
        unit += 1;
    }
    format!("{} {}", three_digits(scaled), BINARY_UNITS[unit])
}

/// A throughput for people, in *decimal* units (`12.3 GB/s`, 1 GB = 10⁹ bytes), the unit in
/// which disks, memory and networks are quoted. Negative, NaN and infinite rates print `n/a`.
pub fn format_rate(bytes_per_s: f64) -> String {
    if !bytes_per_s.is_finite() || bytes_per_s < 0.0 {
        return "n/a".to_string();
    }
    let mut scaled = bytes_per_s;
    let mut unit = 0;
    while scaled >= NEXT_UNIT_AT && unit + 1 < RATE_UNITS.len() {
        scaled /= 1000.0;
        unit += 1;
    }
    format!("{} {}", three_digits(scaled), RATE_UNITS[unit])
}

/// `value` (non-negative) with three significant digits: `1.23`, `12.3`, `123`; values of 1000
/// and more print without decimals, values below 1 with three decimals (`0.500`), zero as `0`.
pub fn three_digits(value: f64) -> String {
    // Decide on the value as it will be rounded, so 9.996 prints as 10.0 and not 10.00.
    let decimals = if value == 0.0 {
        0
    } else if value < 0.9995 {
        3
    } else if value < 9.995 {
        2
    } else if value < 99.95 {
        1
    } else {
        0
    };
    format!("{value:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_for_people() {
        assert_eq!(format_bytes(0), "0 B");
        assert_eq!(format_bytes(1023), "1023 B");
        assert_eq!(format_bytes(1024), "1.00 KiB");
        assert_eq!(format_bytes(1536), "1.50 KiB");
        assert_eq!(format_bytes(65536), "64.0 KiB");
        assert_eq!(format_bytes(1 << 30), "1.00 GiB");
        assert_eq!(format_bytes(22 << 30), "22.0 GiB");
        assert_eq!(format_bytes((1 << 20) - 1), "1.00 MiB");
        assert_eq!(format_bytes(1000 << 10), "0.977 MiB");
        assert_eq!(format_bytes(u64::MAX), "16.0 EiB");
    }

    #[test]
    fn rates_in_decimal_units() {
        assert_eq!(format_rate(0.0), "0 B/s");
        assert_eq!(format_rate(999.0), "999 B/s");
        assert_eq!(format_rate(12.3e9), "12.3 GB/s");
        assert_eq!(format_rate(1.5e6), "1.50 MB/s");
        assert_eq!(format_rate(999.7e6), "1.00 GB/s");
        assert_eq!(format_rate(f64::INFINITY), "n/a");
        assert_eq!(format_rate(f64::NAN), "n/a");
        assert_eq!(format_rate(-1.0), "n/a");
    }
}
