//! The few facts about this machine the library's defaults read: the memory available now
//! (a map or a whole-file read must fit), the CPU model and the time (a machine profile
//! records where and when it was measured). The laboratory's full description of the
//! machine (`iolab-lab`'s `sysinfo`) builds on these.

/// The memory available for new allocations without swapping (`MemAvailable`), now.
pub fn mem_available_bytes() -> Option<u64> {
    meminfo_bytes(
        &std::fs::read_to_string("/proc/meminfo").ok()?,
        "MemAvailable",
    )
}

/// A `/proc/meminfo` field (`MemTotal:  24684092 kB`) in bytes.
pub fn meminfo_bytes(meminfo: &str, key: &str) -> Option<u64> {
    meminfo.lines().find_map(|line| {
        let (name, rest) = line.split_once(':')?;
        if name != key {
            return None;
        }
        let mut words = rest.split_whitespace();
        let value: u64 = words.next()?.parse().ok()?;
        match words.next() {
            Some("kB") => value.checked_mul(1024),
            None => Some(value),
            Some(_) => None,
        }
    })
}

/// This machine's CPU model (`model name` of `/proc/cpuinfo`), if it says.
pub fn cpu_model_name() -> Option<String> {
    cpuinfo_model(&std::fs::read_to_string("/proc/cpuinfo").ok()?)
}

/// The first `model name` of a `/proc/cpuinfo` text.
pub fn cpuinfo_model(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        let value = value.trim();
        (key.trim() == "model name" && !value.is_empty()).then(|| value.to_string())
    })
}

/// The current time as RFC 3339 in UTC (`2026-11-21T08:11:38Z`).
pub fn now_rfc3339() -> String {
    let unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    rfc3339_utc(unix)
}

/// Seconds since the epoch as RFC 3339 in UTC, without a date library.
pub fn rfc3339_utc(unix: u64) -> String {
    let (days, secs) = (unix / 86_400, unix % 86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01: Howard Hinnant's
/// `civil_from_days` (<https://howardhinnant.github.io/date_algorithms.html>), for
/// non-negative days only.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468; // days since 0000-03-01
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153; // month, March = 0
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339_utc(4_102_444_799), "2099-12-31T23:59:59Z");
    }

    #[test]
    fn model_name() {
        let text = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n\
                    processor\t: 1\nmodel name\t: AMD EPYC\n";
        assert_eq!(cpuinfo_model(text).as_deref(), Some("AMD EPYC"));
        assert_eq!(cpuinfo_model("processor\t: 0\n"), None);
    }

    #[test]
    fn meminfo_fields() {
        let text = "MemTotal:       24684092 kB\nMemFree:        22669812 kB\n\
                    MemAvailable:   24136588 kB\nHugePages_Total:       0\n";
        assert_eq!(meminfo_bytes(text, "MemTotal"), Some(24_684_092 * 1024));
        assert_eq!(meminfo_bytes(text, "MemAvailable"), Some(24_136_588 * 1024));
        assert_eq!(meminfo_bytes(text, "HugePages_Total"), Some(0));
        assert_eq!(meminfo_bytes(text, "Mem"), None);
    }
}
