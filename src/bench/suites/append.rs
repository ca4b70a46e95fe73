//! The `append` suite (to be written).

use crate::bench::Context;
use crate::bench::results::Row;
use crate::error::Result;

/// Runs the suite.
pub fn run(_ctx: &mut Context<'_>) -> Result<Vec<Row>> {
    Ok(Vec::new())
}
