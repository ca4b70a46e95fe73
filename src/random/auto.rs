//! Placeholder, filled in by the backing choice.
