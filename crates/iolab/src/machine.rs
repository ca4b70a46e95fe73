//! The few facts about this machine the library's defaults read: the memory available now
//! (a map or a whole-file read must fit), and the CPU model (a machine profile records where it
//! was measured). The laboratory's full description of the
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

#[cfg(test)]
mod tests {
    use super::*;

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
