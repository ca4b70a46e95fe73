//! How the machine's facts are written: a value or `-`, a size with its exact bytes.

/// `value`, or `-` when it is not known.
pub(crate) fn or_dash<T: ToString>(value: &Option<T>) -> String {
    value.as_ref().map_or_else(|| "-".to_string(), T::to_string)
}

/// `23.5 GiB (25276510208 bytes)`.
pub(crate) fn bytes_exact(bytes: Option<u64>) -> String {
    bytes.map_or_else(
        || "-".into(),
        |n| format!("{} ({n} bytes)", iolab::lab::units::format_bytes(n)),
    )
}
