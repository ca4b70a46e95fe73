//! Statistics of runs: [`iolab_results::stats`], where the results keep them.

pub use iolab_results::stats::*;
