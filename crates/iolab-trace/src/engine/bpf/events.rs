//! The program's `events` ring read back into a trace's [`Seen`]: the processes it ran, the
//! changes to files in order, the lookups and failed opens by path, the sampled stacks.

use std::collections::HashMap;
use std::path::Path;

use super::layout::{self, EventHeader, Key, kind};
use crate::model::TargetKey;
use crate::model::events::{Change, Process, RawStack, Seen};
use crate::procfs::normalize;
use crate::syscalls::Sys;

/// Size of an event's header (`EVENT_HEADER`).
const HEADER: usize = size_of::<EventHeader>();

/// One event as the program sent it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawEvent {
    kind: u32,
    pid: u32,
    at: u64,
    key: Key,
    index: u32,
    a: u64,
    b: u64,
    c: u64,
    data: Vec<u8>,
}

/// The event in `bytes`, or `None` when it is cut.
pub fn parse(bytes: &[u8]) -> Option<RawEvent> {
    let h: EventHeader = layout::header(bytes)?;
    Some(RawEvent {
        kind: h.kind,
        pid: h.pid,
        at: h.at,
        key: Key {
            dev: h.k.dev,
            ino: h.k.ino,
            generation: h.k.generation,
            pad: 0,
        },
        index: h.k.index,
        a: h.a,
        b: h.b,
        c: h.c,
        data: bytes.get(HEADER..HEADER + h.len as usize)?.to_vec(),
    })
}

/// `FMODE_CREATED` (include/linux/fs.h), the bit of `struct file`'s `f_mode` an open that
/// made its file sets: `0x100000` from Linux 4.19 on (checked on 6.18: a new file's
/// `O_CREAT` open has it, an existing file's has not).
const FMODE_CREATED: u64 = 0x10_0000;

fn text(bytes: &[u8]) -> String {
    let end = memchr::memchr(0, bytes).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// `path` as absolute: relative ones start from `base`.
fn absolute(base: Option<&str>, path: &str) -> String {
    let full = match base {
        Some(b) if !path.starts_with('/') => Path::new(b).join(path),
        _ => Path::new(path).to_path_buf(),
    };
    normalize(&full).to_string_lossy().into_owned()
}

/// Folds `events` (sent at `CLOCK_MONOTONIC` times; the command started at `start`) into
/// `seen`; `paths` names the directories renames start from. (The lookups and failed
/// opens were counted as they came: [`count_path`].)
pub fn fold(
    events: &mut [RawEvent],
    start: u64,
    paths: &HashMap<Key, (String, bool)>,
    seen: &mut Seen,
) {
    events.sort_by_key(|e| e.at);
    for e in events.iter() {
        let at = e.at.saturating_sub(start);
        let file = TargetKey::from_kernel_dev(e.key.dev, e.key.ino).with_life(e.key.generation);
        let change = match e.kind {
            kind::EXEC => {
                let name = text(&e.data);
                let rest = e.data.get(name.len() + 1..).unwrap_or_default();
                let args: Vec<String> = rest
                    .split(|&c| c == 0)
                    .filter(|a| !a.is_empty())
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect();
                let parent = Some(e.a as u32).filter(|p| seen.processes.contains_key(p));
                // The executable as the kernel names it; else the name `execve` was given.
                let exe = paths
                    .get(&e.key)
                    .filter(|_| e.key.ino != 0)
                    .map_or_else(|| absolute(None, &name), |(p, _)| p.clone());
                seen.processes.insert(
                    e.pid,
                    Process {
                        pid: e.pid,
                        parent,
                        exe,
                        args,
                        code: (e.b, e.c),
                    },
                );
                None
            }
            kind::FORK => {
                let mut p = seen
                    .processes
                    .get(&(e.a as u32))
                    .cloned()
                    .unwrap_or_default();
                p.pid = e.pid;
                p.parent = Some(e.a as u32);
                seen.processes.insert(e.pid, p);
                None
            }
            kind::OPENED => {
                let made = e.a & FMODE_CREATED != 0;
                let asked = e.b as i32;
                if made && asked & libc::O_CREAT != 0 {
                    Some(Change::Created { file })
                } else if !made && asked & libc::O_TRUNC != 0 {
                    Some(Change::Truncated { file })
                } else {
                    None
                }
            }
            kind::TRUNCATED => Some(Change::Truncated { file }),
            kind::DIRTIED => Some(Change::Dirtied { file }),
            kind::SYNCED => Some(Change::Synced { file }),
            // `sync`, or `syncfs` of the file system (the key's device) of a descriptor.
            kind::SYNCED_ALL => Some(Change::SyncedAll {
                device: (e.key.dev != 0).then_some((file.major, file.minor)),
            }),
            kind::RENAMED => {
                let from = text(&e.data);
                let to = text(e.data.get(from.len() + 1..).unwrap_or_default());
                let base = paths.get(&e.key).map(|(p, _)| p.as_str());
                Some(Change::Renamed {
                    from: absolute(base, &from),
                    to: absolute(base, &to),
                })
            }
            kind::LOOKUP | kind::FAILED_OPEN => {
                count_path(e, paths, seen);
                None
            }
            kind::STACK => {
                let words = e
                    .data
                    .chunks_exact(8)
                    .map(|w| u64::from_ne_bytes(w.try_into().unwrap_or_default()))
                    .collect();
                seen.stacks.push(RawStack {
                    pid: e.pid,
                    target: file,
                    call: Sys::ALL
                        .get(e.index as usize)
                        .map_or("", |s| s.name())
                        .to_string(),
                    ip: e.a,
                    words,
                });
                if let Some(p) = seen.processes.get_mut(&e.pid)
                    && p.code == (0, 0)
                {
                    p.code = (e.b, e.c);
                }
                None
            }
            _ => None,
        };
        if let Some(c) = change {
            seen.push(at, e.pid, c);
        }
    }
}

/// Counts a lookup or a failed open (`e`) in `seen`'s tables, and says whether it was one
/// (the drainer counts them as they come, so that a storm of them takes no memory). A
/// relative path is joined to the directory it started from, named from `paths` (or by
/// its inode): the same name in many folders is many paths.
pub fn count_path(e: &RawEvent, paths: &HashMap<Key, (String, bool)>, seen: &mut Seen) -> bool {
    let table = match e.kind {
        kind::LOOKUP => &mut seen.lookups,
        kind::FAILED_OPEN => &mut seen.failed_opens,
        _ => return false,
    };
    let name = text(&e.data);
    let path = if name.starts_with('/') || e.key.ino == 0 {
        name
    } else {
        let dir = paths
            .get(&e.key)
            .map(|(p, _)| p.clone())
            .unwrap_or_else(|| format!("<inode {}>", e.key.ino));
        absolute(Some(&dir), &name)
    };
    table.add(Some(&path), e.b, e.a as i64);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: u32, pid: u32, at: u64, a: u64, b: u64, data: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend(kind.to_ne_bytes());
        v.extend(pid.to_ne_bytes());
        v.extend(at.to_ne_bytes());
        v.extend(7u64.to_ne_bytes());
        v.extend(9u64.to_ne_bytes());
        v.extend(1u32.to_ne_bytes());
        v.extend(3u32.to_ne_bytes());
        v.extend(a.to_ne_bytes());
        v.extend(b.to_ne_bytes());
        v.extend(0u64.to_ne_bytes());
        v.extend((data.len() as u32).to_ne_bytes());
        v.extend(0u32.to_ne_bytes());
        v.extend(data);
        v
    }

    #[test]
    fn events_become_processes_changes_and_paths() {
        let raw = [
            event(kind::RENAMED, 5, 300, 0, 0, b"a.tmp\0/x/../d/a\0"),
            event(kind::EXEC, 5, 100, 1, 0, b"/bin/prog\0prog\0-v\0"),
            event(kind::FORK, 6, 150, 5, 0, b""),
            event(kind::DIRTIED, 5, 200, 0, 0, b""),
            event(kind::LOOKUP, 6, 210, (-2i64) as u64, 40, b"/etc/x\0"),
            event(
                kind::OPENED,
                5,
                220,
                FMODE_CREATED,
                libc::O_CREAT as u64,
                b"",
            ),
            event(kind::OPENED, 5, 230, 0, libc::O_TRUNC as u64, b""),
        ];
        let mut events: Vec<RawEvent> = raw.iter().map(|b| parse(b).unwrap()).collect();
        assert!(
            parse(&raw[0][..HEADER + 3]).is_none(),
            "a cut event is none"
        );
        let key = events[0].key;
        let paths = HashMap::from([(key, ("/home/u".to_string(), true))]);
        let mut seen = Seen::default();
        fold(&mut events, 50, &paths, &mut seen);
        assert_eq!(seen.processes[&5].args, ["prog", "-v"]);
        // The executable as the kernel names it (its key's path here), not the name
        // `execve` was given; a fork has its parent's.
        assert_eq!(seen.processes[&6].exe, "/home/u");
        assert_eq!(seen.processes[&6].parent, Some(5));
        assert_eq!(seen.lookups.paths["/etc/x"].errno, 2);
        let changes: Vec<&Change> = seen.events.iter().map(|e| &e.change).collect();
        let file = TargetKey::from_kernel_dev(7, 9).with_life(1);
        assert_eq!(
            changes,
            [
                &Change::Dirtied { file },
                &Change::Created { file },
                &Change::Truncated { file },
                &Change::Renamed {
                    from: "/home/u/a.tmp".into(),
                    to: "/d/a".into()
                },
            ]
        );
        assert_eq!(seen.events[0].at_ns, 150);
    }
}
