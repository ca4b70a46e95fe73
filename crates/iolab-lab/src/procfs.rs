//! Small text files of `/proc` and `/sys`: one value, or a selector's current choice.

use std::fs;
use std::path::Path;

/// The contents of a small text file, trimmed; `None` if it cannot be read or is empty.
pub(crate) fn read_trimmed(path: impl AsRef<Path>) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// A small text file holding one unsigned number.
pub(crate) fn read_u64(path: impl AsRef<Path>) -> Option<u64> {
    read_trimmed(path)?.parse().ok()
}

/// The bracketed choice of a sysfs selector such as `always [madvise] never`.
pub(crate) fn bracketed(text: &str) -> Option<String> {
    let start = text.find('[')? + 1;
    let len = text[start..].find(']')?;
    Some(text[start..start + len].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bracketed_selects_the_active_mode() {
        assert_eq!(
            bracketed("always [madvise] never").as_deref(),
            Some("madvise")
        );
        assert_eq!(bracketed("none"), None);
    }
}
