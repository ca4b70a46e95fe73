//! The library calls iolab hands over, rendered as Rust that compiles: each verdict's
//! `library` value in `results.json` and each `iolab trace` finding's `library` value
//! comes from here.
//!
//! **The contract**: a snippet is one or more statements that compile as the body of
//! `fn snippet(path: &std::path::Path) -> iolab::Result<()> { use iolab::prelude::*; …;
//! Ok(()) }` with nothing else in scope. Names are written out in full (`iolab::…`,
//! `std::…`), and values of the choice enums come from their types ([`variant`]), so a
//! renamed method fails to compile in the snippets' test (`tests/snippets.rs`), never in
//! a user's program. [`all`] lists every snippet these functions can produce.
//!
//! [`variant`]: iolab::CountMethod::variant

use crate::append::Strategy as AppendStrategy;
use crate::durable::LogPolicy;
use crate::edit::EditStrategy;
use crate::file::Backing;
use crate::random::Method as RandomMethod;
use crate::read::CountMethod;
use crate::write::Method as WriteMethod;

/// Settings a count was measured with; `None` keeps the call's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CountSettings {
    /// `threads` of the parallel methods.
    pub threads: Option<u64>,
    /// `queue_depth` of `uring-direct`.
    pub queue_depth: Option<u64>,
    /// `buffer_size`, in bytes.
    pub buffer_size: Option<u64>,
}

/// Counting the lines of `path` with `method` and `settings`.
pub fn count(method: CountMethod, settings: CountSettings) -> String {
    let mut call = String::from("iolab::CountOptions::new()");
    if method != CountMethod::Auto {
        call.push_str(&format!(
            ".method(iolab::CountMethod::{})",
            method.variant()
        ));
    }
    for (name, value) in [
        ("threads", settings.threads),
        ("queue_depth", settings.queue_depth),
        ("buffer_size", settings.buffer_size),
    ] {
        if let Some(v) = value {
            call.push_str(&format!(".{name}({v})"));
        }
    }
    if method == CountMethod::Auto && settings == CountSettings::default() {
        return "let count = iolab::count_lines(path)?;".into();
    }
    format!("let count = {call}.count_lines(path)?;")
}

/// Writing to standard output with `method`: `buffer` bytes per write (or the buffer's
/// capacity); `None` for the default's own sizing.
pub fn write(method: WriteMethod, buffer: Option<u64>) -> String {
    let b = buffer.unwrap_or(64 << 10);
    match method {
        WriteMethod::Stdout => {
            format!("std::io::Write::write_all(&mut std::io::stdout().lock(), &vec![b'y'; {b}])?;")
        }
        WriteMethod::RawFd => {
            format!("std::io::Write::write_all(&mut iolab::RawStdout, &vec![b'y'; {b}])?;")
        }
        WriteMethod::Bufwriter => {
            let writer = match buffer {
                None => "iolab::StdoutWriter::new()?".to_string(),
                Some(b) => format!("iolab::WriteOptions::new().buffer_size({b}).stdout()?"),
            };
            format!(
                "let mut out = {writer};\n\
                 std::io::Write::write_all(&mut out, b\"one record\\n\")?;\n\
                 out.finish()?;"
            )
        }
        // The laboratory's `vmsplice` hands the pipe one region of zeros; a program's own
        // bytes go the same way through the writer that lends its pages.
        WriteMethod::Vmsplice => {
            let writer = match buffer {
                None => "iolab::WriteOptions::new().lend_pages(true).stdout()?".to_string(),
                Some(b) => {
                    format!(
                        "iolab::WriteOptions::new().lend_pages(true).buffer_size({b}).stdout()?"
                    )
                }
            };
            format!(
                "let mut out = {writer};\n\
                 std::io::Write::write_all(&mut out, b\"one record\\n\")?;\n\
                 out.finish()?;"
            )
        }
    }
}

/// An edit of `path` in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edit {
    /// Every `from` byte replaced by `to`.
    Replace {
        /// The byte replaced.
        from: u8,
        /// Its replacement.
        to: u8,
    },
    /// Everything after the first line cut off.
    TruncateAfterFirstLine,
}

/// Editing `path` with `strategy` (`None`: the default's), synced or not.
pub fn edit(edit: Edit, strategy: Option<EditStrategy>, durable: bool) -> String {
    let call = match edit {
        Edit::Replace { from, to } => format!("replace_byte(path, {}, {})", byte(from), byte(to)),
        Edit::TruncateAfterFirstLine => "truncate_after_first_line(path)".into(),
    };
    if strategy.is_none() && durable {
        return format!("iolab::{call}?;");
    }
    let mut options = String::from("iolab::EditOptions::new()");
    if let Some(s) = strategy {
        options.push_str(&format!(".strategy(iolab::EditStrategy::{})", s.variant()));
    }
    if !durable {
        options.push_str(".durable(false)");
    }
    format!("{options}.{call}?;")
}

/// A byte literal: `b','`, `b'\n'`, `b'\''`.
fn byte(b: u8) -> String {
    format!("b'{}'", b.escape_ascii())
}

/// Appending records to `path` with `strategy`, made durable every `sync_every` records
/// when given.
pub fn append(strategy: AppendStrategy, sync_every: Option<u64>) -> String {
    append_sized(strategy, None, sync_every)
}

/// As [`append`], for [`AppendStrategy::AppendFile`] with a buffer of `buffer` bytes
/// (`None`: its default); `buffer` is ignored for the other strategies.
pub fn append_sized(
    strategy: AppendStrategy,
    buffer: Option<u64>,
    sync_every: Option<u64>,
) -> String {
    let open = "std::fs::OpenOptions::new().create(true).append(true).open(path)?";
    let every = |call: &str| match sync_every {
        Some(k) => format!("\n{call} // every {k} records"),
        None => String::new(),
    };
    match strategy {
        AppendStrategy::AppendFile => format!(
            "let mut file = {};\n\
             file.append(b\"one record\\n\")?;{}\n\
             file.close()?;",
            buffer.map_or("iolab::AppendFile::create(path)?".into(), |b| format!(
                "iolab::AppendOptions::new().buffer_size({b}).open(path)?"
            )),
            every("file.sync()?;")
        ),
        AppendStrategy::BufWriter64k | AppendStrategy::BufWriter8k => {
            let writer = if strategy == AppendStrategy::BufWriter64k {
                format!("std::io::BufWriter::with_capacity(64 << 10, {open})")
            } else {
                format!("std::io::BufWriter::new({open})")
            };
            format!(
                "let mut out = {writer};\n\
                 std::io::Write::write_all(&mut out, b\"one record\\n\")?;\n\
                 std::io::Write::flush(&mut out)?;{}",
                every("out.get_ref().sync_data()?;")
            )
        }
        AppendStrategy::WritePerRecord => format!(
            "let mut file = {open};\n\
             std::io::Write::write_all(&mut file, b\"one record\\n\")?;{}",
            every("file.sync_data()?;")
        ),
        AppendStrategy::WritevBatch => format!(
            "let mut file = {open};\n\
             // one writev for a batch of records, none copied; it may write fewer bytes\n\
             // than asked: go on from there until the batch is written\n\
             let records = [std::io::IoSlice::new(b\"record 1\\n\"), std::io::IoSlice::new(b\"record 2\\n\")];\n\
             let _written = std::io::Write::write_vectored(&mut file, &records)?;{}",
            every("file.sync_data()?;")
        ),
    }
}

/// Durable appends to a log at `path` with `policy` (`None`: the default's).
pub fn durable(policy: Option<LogPolicy>) -> String {
    let open = match policy {
        None => "iolab::Log::open(path)?".to_string(),
        Some(p) => format!(
            "iolab::LogOptions::new().policy(iolab::LogPolicy::{}).open(path)?",
            p.variant()
        ),
    };
    format!("let log = {open};\nlog.append_durable(b\"one record\")?; // share `log` among threads")
}

/// Random reads of `block`-byte blocks of `path` the way `method` read them, `queue_depth`
/// in flight on each of `threads`: the library's calls, with the caller's own offsets
/// (which blocks is the program's business, not a pattern's).
pub fn random(method: RandomMethod, block: u64, queue_depth: u64, threads: u64) -> String {
    let one_at_a_time = queue_depth <= 1 && threads <= 1;
    match method {
        RandomMethod::Pread | RandomMethod::Mmap | RandomMethod::PreadDirect if one_at_a_time => {
            let backing = match method {
                RandomMethod::Mmap => Backing::Mmap,
                RandomMethod::PreadDirect => Backing::Direct,
                _ => Backing::Pread,
            };
            format!(
                "let file = iolab::RandomAccessOptions::new().backing(iolab::Backing::{backing:?}).open(path)?;\n\
                 file.read_at(0, &mut vec![0u8; {block}])?;"
            )
        }
        // The default: its measured backing maps a file in the page cache (advised
        // `MADV_RANDOM`) and times the others on one that is not.
        RandomMethod::MmapRandom | RandomMethod::Auto if one_at_a_time => format!(
            "let file = iolab::RandomAccessFile::open(path)?;\n\
             file.read_at(0, &mut vec![0u8; {block}])?;"
        ),
        // Many reads in flight: the library's batch call, the caller's own blocks.
        RandomMethod::Auto => {
            let open = if queue_depth == crate::file::auto::DEFAULT_QUEUE_DEPTH as u64 {
                "iolab::RandomAccessFile::open(path)?".to_string()
            } else {
                format!("iolab::RandomAccessOptions::new().queue_depth({queue_depth}).open(path)?")
            };
            let share = if threads > 1 {
                format!(" // share `file` among {threads} threads")
            } else {
                String::new()
            };
            format!(
                "let file = {open};{share}\n\
                 let requests: Vec<(u64, usize)> = (0..1024).map(|k| (k * 7919 % 4096 * {block}, {block})).collect();\n\
                 file.read_batch(&requests, |i, block| {{ let _ = (i, block); }})?;"
            )
        }
        // The laboratory's drivers read offsets of their own choosing; a program's own
        // blocks go through the batch call, on the same backing and depth.
        m => {
            let backing = match m {
                RandomMethod::Uring => "Uring",
                RandomMethod::UringDirect => "UringDirect",
                RandomMethod::Mmap | RandomMethod::MmapRandom => "Map",
                _ => "Pread",
            };
            let share = if threads > 1 {
                format!(" // share `file` among {threads} threads")
            } else {
                String::new()
            };
            format!(
                "let file = iolab::RandomAccessOptions::new()\n    \
                 .batch_backing(iolab::BatchBacking::{backing})\n    \
                 .queue_depth({queue_depth})\n    \
                 .open(path)?;{share}\n\
                 let requests: Vec<(u64, usize)> = (0..1024).map(|k| (k * 7919 % 4096 * {block}, {block})).collect();\n\
                 file.read_batch(&requests, |i, block| {{ let _ = (i, block); }})?;"
            )
        }
    }
}

/// Rewriting `path` through a new file: streamed into `path.tmp`, synced, renamed over
/// `path`, and the folder synced, so a crash leaves the old file or the new one.
pub fn streamed_rewrite(buffer: u64) -> String {
    format!(
        "let tmp = path.with_extension(\"tmp\");\n\
         let mut reader = std::io::BufReader::with_capacity({buffer}, std::fs::File::open(path)?);\n\
         let mut out = std::io::BufWriter::with_capacity({buffer}, std::fs::File::create(&tmp)?);\n\
         // change the bytes on their way here\n\
         std::io::copy(&mut reader, &mut out)?;\n\
         out.into_inner().map_err(|e| e.into_error())?.sync_all()?;\n\
         std::fs::rename(&tmp, path)?;\n\
         let folder = path.parent().filter(|p| !p.as_os_str().is_empty());\n\
         std::fs::File::open(folder.unwrap_or(std::path::Path::new(\".\")))?.sync_all()?;"
    )
}

/// Replacing `path` with new contents so that a crash leaves the old file or the new one:
/// the new bytes into `path.tmp`, synced, renamed over `path`, and the folder synced.
pub fn durable_replace() -> String {
    "let tmp = path.with_extension(\"tmp\");\n\
     let mut file = std::fs::File::create(&tmp)?;\n\
     std::io::Write::write_all(&mut file, b\"new contents\\n\")?;\n\
     file.sync_all()?; // the data, before the name points at it\n\
     std::fs::rename(&tmp, path)?;\n\
     let folder = path.parent().filter(|p| !p.as_os_str().is_empty());\n\
     std::fs::File::open(folder.unwrap_or(std::path::Path::new(\".\")))?.sync_all()?; // the name"
        .into()
}

/// Writing `path` with `O_DIRECT` kept, in `block`-byte writes from an aligned buffer
/// (`block` a multiple of the device's logical block size).
pub fn direct_writes(block: u64) -> String {
    format!(
        "use std::os::unix::fs::OpenOptionsExt;\n\
         let mut file = std::fs::OpenOptions::new()\n    \
         .write(true)\n    \
         .custom_flags(0o40000) // O_DIRECT on x86-64 Linux\n    \
         .open(path)?;\n\
         let buf = vec![b'y'; {block} + 4096];\n\
         let at = buf.as_ptr().align_offset(4096); // O_DIRECT wants an aligned buffer\n\
         std::io::Write::write_all(&mut file, &buf[at..at + {block}])?;"
    )
}

/// Reading `path` in `buffer`-byte pieces instead of small reads.
pub fn big_reads(buffer: u64) -> String {
    format!(
        "let mut reader = std::io::BufReader::with_capacity({buffer}, std::fs::File::open(path)?);\n\
         loop {{\n    \
         let chunk = std::io::BufRead::fill_buf(&mut reader)?;\n    \
         if chunk.is_empty() {{\n        break;\n    }}\n    \
         let n = chunk.len(); // use the bytes here\n    \
         std::io::BufRead::consume(&mut reader, n);\n\
         }}"
    )
}

/// Copying standard input into a new file at `path` in `buffer`-byte pieces: a read and a
/// write per piece.
pub fn copy(buffer: u64) -> String {
    format!(
        "let mut reader = std::io::BufReader::with_capacity({buffer}, std::io::stdin().lock());\n\
         let mut out = std::io::BufWriter::with_capacity({buffer}, std::fs::File::create(path)?);\n\
         std::io::copy(&mut reader, &mut out)?;\n\
         std::io::Write::flush(&mut out)?;"
    )
}

/// Opening `path` once for many appends, instead of an open and a close per record.
pub fn open_once() -> String {
    "let mut file = iolab::AppendFile::open(path)?;\n\
     for record in [&b\"record 1\\n\"[..], b\"record 2\\n\"] {\n    \
     file.append(record)?;\n\
     }\n\
     file.close()?;"
        .into()
}

/// Every snippet the functions of this module produce for the settings iolab measures
/// and its tracer suggests, with a label each.
pub fn all() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut add = |label: String, code: String| out.push((label, code));
    for m in CountMethod::ALL {
        add(format!("count {m}"), count(m, CountSettings::default()));
        let settings = CountSettings {
            threads: Some(2),
            queue_depth: Some(32),
            buffer_size: Some(1 << 20),
        };
        add(format!("count {m} with settings"), count(m, settings));
    }
    for m in WriteMethod::ALL {
        add(format!("write {m}"), write(m, None));
        add(format!("write {m} 128 KiB"), write(m, Some(128 << 10)));
    }
    for s in EditStrategy::ALL.map(Some).into_iter().chain([None]) {
        for durable in [true, false] {
            for e in [
                Edit::Replace {
                    from: b',',
                    to: b';',
                },
                Edit::Replace {
                    from: b'\'',
                    to: b'\n',
                },
                Edit::TruncateAfterFirstLine,
            ] {
                add(format!("edit {e:?} {s:?} {durable}"), edit(e, s, durable));
            }
        }
    }
    for s in AppendStrategy::ALL {
        add(format!("append {s}"), append(s, None));
        add(format!("append {s} synced"), append(s, Some(1000)));
        add(
            format!("append {s} sized"),
            append_sized(s, Some(1 << 18), None),
        );
    }
    for p in LogPolicy::ALL.map(Some).into_iter().chain([None]) {
        add(format!("durable {p:?}"), durable(p));
    }
    for m in RandomMethod::ALL {
        for (qd, threads) in [(1, 1), (16, 1), (32, 2)] {
            add(format!("random {m} qd {qd}"), random(m, 4096, qd, threads));
        }
    }
    add("streamed rewrite".into(), streamed_rewrite(1 << 20));
    add("durable replace".into(), durable_replace());
    add("direct writes".into(), direct_writes(1 << 20));
    add("open once".into(), open_once());
    add("big reads".into(), big_reads(128 << 10));
    add("copy".into(), copy(1 << 20));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_one_line_calls() {
        assert!(
            count(CountMethod::Auto, CountSettings::default())
                .contains("iolab::count_lines(path)?")
        );
        assert_eq!(
            edit(Edit::TruncateAfterFirstLine, None, true),
            "iolab::truncate_after_first_line(path)?;"
        );
        assert!(durable(None).starts_with("let log = iolab::Log::open(path)?;"));
    }

    #[test]
    fn names_come_from_the_types() {
        let c = count(
            CountMethod::MmapAvx2,
            CountSettings {
                threads: Some(2),
                ..Default::default()
            },
        );
        assert!(c.contains(".method(iolab::CountMethod::MmapAvx2)"), "{c}");
        assert!(c.contains(".threads(2)"), "{c}");
        let e = edit(
            Edit::Replace {
                from: b'\'',
                to: b'\n',
            },
            Some(EditStrategy::StdStream),
            false,
        );
        assert!(e.contains("replace_byte(path, b'\\'', b'\\n')"), "{e}");
        assert!(e.contains("iolab::EditStrategy::StdStream"), "{e}");
    }
}
