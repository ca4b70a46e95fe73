//! The `count` suite's many-files section: [`MANY_FILES`] small text files counted in one
//! process (`iolab count --method M FILE…`, `wc -l FILE…`), warm, where what each file
//! costs besides its bytes (open, `fstat`, setting up the method, close) decides.

use super::{Counted, SIZES};
use crate::cache_state::CacheState;
use crate::context::Config;
use crate::data;
use crate::error::Result;
use iolab_lab::units::format_bytes;

/// Files in the section: 1000, a small source tree or a folder of logs.
pub const MANY_FILES: usize = 1000;
/// Files with `--quick`.
const QUICK_MANY_FILES: usize = 100;
/// Each file's size: 16 KiB, a typical source file.
pub const MANY_FILE_SIZE: u64 = 16 << 10;

/// The section's input: the files (generated once, see [`data::many_lines`]), warm only.
pub(super) fn input(config: &Config) -> Result<Counted> {
    let files = if config.quick && config.size.is_none_or(|s| s >= SIZES.quick) {
        QUICK_MANY_FILES
    } else if config.quick {
        QUICK_MANY_FILES / 10
    } else {
        MANY_FILES
    };
    let set = data::many_lines(&config.data_dir, files, MANY_FILE_SIZE, config.progress)?;
    Ok(Counted {
        bytes: set.bytes,
        lines: Some(set.lines),
        key: Some((
            "input",
            format!("{files} files of {}", format_bytes(MANY_FILE_SIZE)),
        )),
        paths: set.paths,
        caches: vec![CacheState::Warm],
        ceiling: false,
    })
}
