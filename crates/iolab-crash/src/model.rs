//! Persistence models: which of a program's recorded changes may be on disk after a
//! crash at a given point. Each rule cites its source in `docs/crash.md`.
//!
//! - [`Model::Posix`] (the default) keeps only what POSIX and the syncs promise: a change
//!   to a file's bytes or size is durable once that file is synced (`fsync`, `fdatasync`,
//!   or the write itself through `O_SYNC`/`O_DSYNC`) or everything is (`sync`, `syncfs`);
//!   a change to a folder's names once that folder is synced (for a rename, the folder of
//!   the new name) or everything is. Any other change may be lost while later ones
//!   persist, and a write that spans blocks may be torn at a block boundary (ALICE's
//!   abstract persistence model, Pillai et al., OSDI 2014, §3).
//! - [`Model::Ext4Ordered`] is ext4 mounted `data=ordered` with `auto_da_alloc` (the
//!   defaults): changes to names (creations, renames, links, unlinks, folders) and
//!   truncations persist in the order they were made, as a prefix, and every one before
//!   any sync is durable (a sync commits the whole journal); a write (an append too:
//!   delayed allocation gives it blocks and its size later) may be lost unless its file
//!   was synced, but is never torn or garbage (`data=ordered`); a rename that replaces a
//!   file first writes the renamed file's bytes (`auto_da_alloc`).

use std::fmt;
use std::str::FromStr;

/// A persistence model, by its name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Model {
    /// Only what POSIX and the syncs promise.
    #[default]
    Posix,
    /// ext4 with `data=ordered` and `auto_da_alloc`.
    Ext4Ordered,
}

impl Model {
    /// Every model.
    pub const ALL: [Model; 2] = [Model::Posix, Model::Ext4Ordered];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Model::Posix => "posix",
            Model::Ext4Ordered => "ext4-ordered",
        }
    }
}

impl fmt::Display for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Model {
    type Err = String;

    fn from_str(s: &str) -> Result<Model, String> {
        Model::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| format!("unknown model `{s}` (known: posix, ext4-ordered)"))
    }
}
