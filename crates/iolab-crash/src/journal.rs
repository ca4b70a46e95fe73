//! What a program did to a folder, in the order it did it: one [`Entry`] per change
//! (creations, writes with their bytes, truncations, renames, links, unlinks, folders made
//! and removed), per sync, and per write to standard output (an acknowledgement, placed
//! among the changes).
//!
//! Files are named by their inode number ([`Ino`]) where the change is to a file's bytes
//! (a write through a descriptor reaches the file whatever its name is by then), and by
//! their path, relative to the folder, where the change is to a folder's names. A change
//! to a folder's names carries the inode of that folder (its parent), which a sync of the
//! folder makes durable.

use serde::{Deserialize, Serialize};

/// A file's or a folder's inode number, as `stat` gives it on the folder's file system.
pub type Ino = u64;

/// One change, sync or acknowledgement.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Op {
    /// An open made an empty file at `path` (`O_CREAT` on a name that did not exist).
    Create {
        /// The new name, relative to the folder.
        path: String,
        /// The new file.
        ino: Ino,
        /// The folder that holds the name.
        parent: Ino,
    },
    /// An open with `O_TMPFILE` made a file with no name; it gets one with [`Op::Name`].
    Tmpfile {
        /// The new file.
        ino: Ino,
    },
    /// A file with no name (`O_TMPFILE`) was given `path` (`linkat` of its descriptor).
    Name {
        /// The file.
        ino: Ino,
        /// Its name, relative to the folder.
        path: String,
        /// The folder that holds the name.
        parent: Ino,
    },
    /// A folder was made.
    Mkdir {
        /// Its name, relative to the folder.
        path: String,
        /// The new folder.
        ino: Ino,
        /// The folder that holds the name.
        parent: Ino,
    },
    /// Bytes were written at `offset` (whatever call wrote them: `write`, `pwrite`,
    /// `writev`, `copy_file_range`, …).
    Write {
        /// The file.
        ino: Ino,
        /// Where the bytes start.
        offset: u64,
        /// The bytes, as the file held them right after the call.
        #[serde(with = "packed")]
        data: Vec<u8>,
    },
    /// The file's size was set (`ftruncate`, `truncate`, an `O_TRUNC` open, `fallocate`
    /// that grows it).
    Truncate {
        /// The file.
        ino: Ino,
        /// Its new size.
        size: u64,
    },
    /// `from` was renamed to `to`, replacing what `to` named.
    Rename {
        /// The old name.
        from: String,
        /// The new name.
        to: String,
        /// The folder that held the old name.
        from_parent: Ino,
        /// The folder that holds the new name.
        to_parent: Ino,
    },
    /// `to` was made a second name of what `from` names.
    Link {
        /// The existing name.
        from: String,
        /// The new name.
        to: String,
        /// The folder that holds the new name.
        parent: Ino,
    },
    /// A file's name was removed.
    Unlink {
        /// The name.
        path: String,
        /// The folder that held it.
        parent: Ino,
    },
    /// An empty folder was removed.
    Rmdir {
        /// Its name.
        path: String,
        /// The folder that held it.
        parent: Ino,
    },
    /// A file or a folder was synced: `fsync` (`data_only: false`), `fdatasync`,
    /// `sync_file_range` with `SYNC_FILE_RANGE_WAIT_AFTER`, `msync(MS_SYNC)`.
    Sync {
        /// The file or folder.
        ino: Ino,
        /// `fdatasync` and kin: the data and the size, not the other metadata.
        data_only: bool,
    },
    /// Everything was synced (`sync`, `syncfs` on the folder's file system).
    SyncAll,
    /// The program wrote these bytes to its standard output: what it has acknowledged
    /// by this point.
    Stdout {
        /// The bytes.
        #[serde(with = "packed")]
        data: Vec<u8>,
    },
    /// A call whose effect on the folder cannot be replayed faithfully (a write through a
    /// shared map, io_uring, a symbolic link made): the run cannot be explored.
    Refused {
        /// What and why.
        why: String,
    },
}

impl Op {
    /// Whether it changes the folder (not a sync, not standard output, not a file with
    /// no name yet, which no crash state can show).
    pub fn is_change(&self) -> bool {
        !matches!(
            self,
            Op::Sync { .. }
                | Op::SyncAll
                | Op::Stdout { .. }
                | Op::Refused { .. }
                | Op::Tmpfile { .. }
        )
    }

    /// Whether it changes a folder's names (rather than a file's bytes or size).
    pub fn is_namespace(&self) -> bool {
        matches!(
            self,
            Op::Create { .. }
                | Op::Name { .. }
                | Op::Mkdir { .. }
                | Op::Rename { .. }
                | Op::Link { .. }
                | Op::Unlink { .. }
                | Op::Rmdir { .. }
        )
    }

    /// The folders whose names it changes; a sync of the last one makes it durable
    /// (for a rename, the folder of the new name).
    pub fn parents(&self) -> Vec<Ino> {
        match self {
            Op::Create { parent, .. }
            | Op::Name { parent, .. }
            | Op::Mkdir { parent, .. }
            | Op::Link { parent, .. }
            | Op::Unlink { parent, .. }
            | Op::Rmdir { parent, .. } => vec![*parent],
            Op::Rename {
                from_parent,
                to_parent,
                ..
            } => vec![*from_parent, *to_parent],
            _ => Vec::new(),
        }
    }

    /// The file whose bytes or size it changes.
    pub fn file(&self) -> Option<Ino> {
        match self {
            Op::Write { ino, .. } | Op::Truncate { ino, .. } => Some(*ino),
            _ => None,
        }
    }
}

/// A recorded [`Op`], with who made it and where.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// What happened.
    #[serde(flatten)]
    pub op: Op,
    /// The system call that did it (`pwrite64`, `renameat2`, …).
    pub call: String,
    /// The process.
    pub pid: u32,
    /// The thread (0 when not known).
    #[serde(default)]
    pub tid: u32,
    /// For a write through a descriptor opened `O_SYNC` or `O_DSYNC`: durable when the
    /// call returned.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub synced: bool,
    /// Where in the program the call was made: its stack's frames, innermost first
    /// (`function (file:line)`), when they could be read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<String>,
}

impl Entry {
    /// An entry of `op` made by `call`, in process 0, not synced (for tests and replays).
    pub fn new(op: Op, call: &str) -> Entry {
        Entry {
            op,
            call: call.to_string(),
            pid: 0,
            tid: 0,
            synced: false,
            stack: Vec::new(),
        }
    }

    /// A short description: `pwrite64(ino 12, 4096 bytes at 0)`, `rename(a → b)`.
    pub fn describe(&self, names: &dyn Fn(Ino) -> String) -> String {
        let what = match &self.op {
            Op::Create { path, .. } => format!("create {path}"),
            Op::Tmpfile { ino } => format!("unnamed file {}", names(*ino)),
            Op::Name { path, .. } => format!("a file with no name → {path}"),
            Op::Mkdir { path, .. } => format!("mkdir {path}"),
            Op::Write { ino, offset, data } => {
                format!("{} bytes at {offset} of {}", data.len(), names(*ino))
            }
            Op::Truncate { ino, size } => format!("size {size} of {}", names(*ino)),
            Op::Rename { from, to, .. } => format!("{from} → {to}"),
            Op::Link { from, to, .. } => format!("{from} → {to}"),
            Op::Unlink { path, .. } | Op::Rmdir { path, .. } => path.clone(),
            Op::Sync { ino, .. } => names(*ino),
            Op::SyncAll => String::new(),
            Op::Stdout { data } => {
                let text = String::from_utf8_lossy(&data[..data.len().min(40)]);
                format!("stdout {:?}", text.trim_end())
            }
            Op::Refused { why } => why.clone(),
        };
        format!("{}({what})", self.call)
    }
}

/// A program's run: the folder's first state is the folder copied before it started;
/// `entries` are what it did, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journal {
    /// The changes, syncs and acknowledgements, in order.
    pub entries: Vec<Entry>,
}

/// Bytes in a journal line: lowercase hex, with each run of 16 or more zero bytes written
/// `zN.` (N in decimal), so a preallocation's megabytes of zeros take a few characters.
mod packed {
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};
    use std::fmt::Write;

    /// Runs of zeros at least this long are written as their length.
    const RUN: usize = 16;

    pub fn serialize<S: Serializer>(data: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&encode(data))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        decode(&text).ok_or_else(|| D::Error::custom("bytes neither hex nor a zN. run"))
    }

    pub(super) fn encode(data: &[u8]) -> String {
        let mut out = String::with_capacity(data.len() * 2);
        let mut i = 0;
        while i < data.len() {
            let zeros = data[i..].iter().take_while(|&&b| b == 0).count();
            if zeros >= RUN {
                let _ = write!(out, "z{zeros}.");
                i += zeros;
            } else {
                let _ = write!(out, "{:02x}", data[i]);
                i += 1;
            }
        }
        out
    }

    pub(super) fn decode(text: &str) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(text.len() / 2);
        let mut rest = text.as_bytes();
        while let Some((&first, tail)) = rest.split_first() {
            if first == b'z' {
                let end = tail.iter().position(|&b| b == b'.')?;
                let n: usize = std::str::from_utf8(&tail[..end]).ok()?.parse().ok()?;
                out.resize(out.len() + n, 0);
                rest = &tail[end + 1..];
            } else {
                let pair = std::str::from_utf8(rest.get(..2)?).ok()?;
                out.push(u8::from_str_radix(pair, 16).ok()?);
                rest = &rest[2..];
            }
        }
        Some(out)
    }

    #[cfg(test)]
    mod tests {
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn bytes_come_back_as_they_went(
                parts in proptest::collection::vec(
                    prop_oneof![
                        proptest::collection::vec(any::<u8>(), 0..40),
                        (0usize..100).prop_map(|n| vec![0u8; n]),
                    ],
                    0..6,
                )
            ) {
                let data = parts.concat();
                let text = super::encode(&data);
                prop_assert_eq!(super::decode(&text), Some(data));
            }
        }

        #[test]
        fn zeros_are_short_and_bad_text_is_refused() {
            assert_eq!(super::encode(&[0u8; 1 << 20]), "z1048576.");
            assert_eq!(super::encode(b"ok\0"), "6f6b00");
            assert_eq!(super::decode("6g"), None);
            assert_eq!(super::decode("z12"), None);
            assert_eq!(super::decode("abc"), None);
        }
    }
}
