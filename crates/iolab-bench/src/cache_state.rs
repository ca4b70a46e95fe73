//! The page-cache states a run measures its input in ([`iolab_results::cache`]), and
//! when one cannot be had here.

pub use iolab_results::cache::*;

/// Why inputs of `bytes` at `path` (`copies` of them cached at once) cannot be measured
/// in this state here, if they cannot: a cold file on tmpfs cannot be evicted, and warm
/// ones must fit in 80% of the memory available.
pub fn impossible(
    cache: CacheState,
    path: &std::path::Path,
    bytes: u64,
    copies: u64,
) -> Option<String> {
    use iolab::lab::units::format_bytes;
    match cache {
        CacheState::Cold if iolab::lab::sysinfo::is_tmpfs(path.parent()?) => {
            Some("the data set is on tmpfs: it cannot be evicted".into())
        }
        CacheState::Warm => {
            let available = iolab::lab::sysinfo::mem_available_bytes()?;
            (bytes.saturating_mul(copies) > available / 10 * 8).then(|| match copies {
                1 => format!(
                    "the data set ({}) does not fit in 80% of available memory ({})",
                    format_bytes(bytes),
                    format_bytes(available)
                ),
                n => format!(
                    "{} copies of the data set ({} each) do not fit in 80% of available \
                     memory ({})",
                    if n == 3 {
                        "three".to_string()
                    } else {
                        n.to_string()
                    },
                    format_bytes(bytes),
                    format_bytes(available)
                ),
            })
        }
        CacheState::Cold => None,
    }
}
