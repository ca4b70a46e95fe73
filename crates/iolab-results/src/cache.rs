//! The page-cache states a run measures its input in, and the residency that counts as
//! each.

/// Residency at or below which the cache counts as cold.
pub const COLD_MAX_RESIDENCY: f64 = 0.05;
/// Residency at or above which the cache counts as warm.
pub const WARM_MIN_RESIDENCY: f64 = 0.95;

/// A page-cache state for the input of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CacheState {
    /// The input is in the page cache.
    Warm,
    /// The input was evicted; the device must deliver it.
    Cold,
}

impl CacheState {
    /// `"warm"` or `"cold"`.
    pub fn name(self) -> &'static str {
        match self {
            CacheState::Warm => "warm",
            CacheState::Cold => "cold",
        }
    }
}
