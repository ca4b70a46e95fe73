//! Reading bpftrace's JSON output (`-f json`: one object per line, maps printed at exit)
//! back into a [`Trace`].

use std::collections::HashMap;

use serde_json::Value;

use crate::model::{CallStat, Flow, Kind, SIZE_BUCKETS, Target, TargetKey, Trace, size_bucket};
use crate::syscalls::Sys;

/// The maps of one run: name (without `@`) → value.
#[derive(Debug, Default)]
pub struct Maps {
    maps: HashMap<String, Value>,
}

impl Maps {
    /// Takes one line of bpftrace's output; returns whether it was a map.
    pub fn take_line(&mut self, line: &str) -> bool {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return false;
        };
        if !matches!(v["type"].as_str(), Some("map" | "hist")) {
            return false;
        }
        let Some(data) = v["data"].as_object() else {
            return false;
        };
        for (name, value) in data {
            self.maps
                .insert(name.trim_start_matches('@').to_string(), value.clone());
        }
        true
    }

    /// Whether no map was read.
    pub fn is_empty(&self) -> bool {
        self.maps.is_empty()
    }

    /// The most entries any map printed.
    pub fn largest(&self) -> usize {
        self.maps
            .values()
            .filter_map(Value::as_object)
            .map(|o| o.len())
            .max()
            .unwrap_or(0)
    }

    /// A map without keys, as a number.
    fn scalar(&self, name: &str) -> u64 {
        self.maps.get(name).and_then(Value::as_u64).unwrap_or(0)
    }

    /// A keyed map's entries.
    fn entries(&self, name: &str) -> impl Iterator<Item = (Vec<u64>, &Value)> {
        self.maps
            .get(name)
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|o| o.iter())
            .map(|(k, v)| {
                (
                    k.split(',')
                        .map(|p| p.trim().parse().unwrap_or(0))
                        .collect(),
                    v,
                )
            })
    }
}

/// A number that bpftrace printed, or 0 (sums of negative values never happen here).
fn num(v: &Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_i64().map(|i| i.max(0) as u64))
        .unwrap_or(0)
}

/// The targets and tasks the maps describe. `names` gives a path for the targets known
/// before the run (the inherited descriptors).
pub fn trace(maps: &Maps, names: &HashMap<TargetKey, String>) -> Trace {
    let mut targets: HashMap<(u64, u64), Target> = HashMap::new();
    // Flows are keyed (dev, ino, direction): 0 reads, 1 writes.
    for (field, set) in [
        ("c", (|f, v| f.calls = v) as fn(&mut Flow, u64)),
        ("b", |f, v| f.bytes = v),
        ("t", |f, v| f.ns = v),
        ("s", |f, v| f.sequential = v),
    ] {
        for (k, v) in maps.entries(field) {
            let dir = k.get(2).copied().unwrap_or(0);
            if let Some(t) = target(&mut targets, &k) {
                set(flow_of(t, dir), num(v));
            }
        }
    }
    for (k, v) in maps.entries("h") {
        let dir = k.get(2).copied().unwrap_or(0);
        if let Some(t) = target(&mut targets, &k) {
            let sizes = &mut flow_of(t, dir).sizes;
            for bucket in v.as_array().into_iter().flatten() {
                let floor = bucket["min"].as_i64().unwrap_or(0).max(0) as u64;
                sizes[size_bucket(floor).min(SIZE_BUCKETS - 1)] += num(&bucket["count"]);
            }
        }
    }
    type Setter = fn(&mut Target, u64);
    let counters: [(&str, Setter); 14] = [
        ("err", |t, v| t.errors = v),
        ("sc", |t, v| t.syncs = v),
        ("st", |t, v| t.sync_ns = v),
        ("dsw", |t, v| t.write.synced = v),
        ("oc", |t, v| t.opens = v),
        ("odirect", |t, v| t.open_flags.direct = v),
        ("osync", |t, v| t.open_flags.sync = v),
        ("odsync", |t, v| t.open_flags.dsync = v),
        ("oappend", |t, v| t.open_flags.append = v),
        ("otrunc", |t, v| t.open_flags.trunc = v),
        ("seek", |t, v| t.seeks = v),
        ("mm", |t, v| t.mmaps = v),
        ("mmb", |t, v| t.mmap_bytes = v),
        ("ring", |t, v| t.ring_enters = v),
    ];
    for (name, set) in counters {
        for (k, v) in maps.entries(name) {
            if let Some(t) = target(&mut targets, &k) {
                set(t, num(v));
            }
        }
    }
    for (k, v) in maps.entries("ringsub") {
        if let Some(t) = target(&mut targets, &k) {
            t.ring_submissions = num(v);
        }
    }
    for (k, v) in maps.entries("size") {
        if let Some(t) = target(&mut targets, &k) {
            t.size = num(v);
        }
    }
    for (k, v) in maps.entries("sys") {
        let name = k.get(2).and_then(|&n| Sys::from_number(n as i64));
        if let (Some(t), Some(sys)) = (target(&mut targets, &k), name) {
            t.calls.insert(
                sys,
                CallStat {
                    calls: num(v),
                    ..CallStat::default()
                },
            );
        }
    }
    for (k, v) in maps.entries("meta") {
        if let Some(t) = target(&mut targets, &k) {
            let mode = v.get(0).map_or(0, num) as u32;
            let rdev = v.get(1).map_or(0, num);
            t.kind = Some(Kind::from_mode(mode, (rdev >> 20) as u32));
            if t.path.is_empty()
                && matches!(t.kind, Some(Kind::Tty | Kind::Device))
                && let Some(p) =
                    crate::procfs::device_path((rdev >> 20) as u32, (rdev & 0xf_ffff) as u32)
            {
                t.path = p;
            }
        }
    }
    for (k, v) in maps.entries("path") {
        if let (Some(t), Some(p)) = (target(&mut targets, &k), v.as_str())
            && !p.is_empty()
        {
            t.path = absolute(p);
            if p.len() + 1 >= super::STRLEN {
                t.path.push('…');
            }
        }
    }
    let mut trace = Trace::default();
    for (_, mut t) in targets {
        if t.path.is_empty() {
            t.path = t
                .key
                .and_then(|k| names.get(&k).cloned())
                .unwrap_or_else(|| describe(&t));
        }
        trace.targets.push(t);
    }
    for (k, v) in maps.entries("other") {
        if let Some(sys) = k.first().and_then(|&n| Sys::from_number(n as i64)) {
            trace.other_calls.insert(
                sys,
                CallStat {
                    calls: num(v),
                    ..CallStat::default()
                },
            );
        }
    }
    let tasks = maps.scalar("tasks");
    trace.tasks.processes = maps.scalar("procs").max(1);
    trace.tasks.threads = tasks.saturating_sub(trace.tasks.processes);
    trace.tasks.execs = maps.scalar("execs");
    trace
}

/// A path an open was given, made absolute against this process's folder (the command's,
/// unless it changed folders).
fn absolute(path: &str) -> String {
    if path.starts_with('/') {
        return path.to_string();
    }
    match std::env::current_dir() {
        Ok(dir) => {
            let joined = dir.join(path.trim_start_matches("./"));
            joined.to_string_lossy().into_owned()
        }
        Err(_) => path.to_string(),
    }
}

/// The flow of direction `dir` (0 reads, 1 writes).
fn flow_of(t: &mut Target, dir: u64) -> &mut Flow {
    if dir == 0 { &mut t.read } else { &mut t.write }
}

/// The target of a map key `dev,ino[,…]`, made on first sight.
fn target<'a>(targets: &'a mut HashMap<(u64, u64), Target>, k: &[u64]) -> Option<&'a mut Target> {
    let (dev, ino) = (*k.first()?, *k.get(1)?);
    Some(
        targets
            .entry((dev, ino))
            .or_insert_with(|| Target::new(Some(TargetKey::from_kernel_dev(dev, ino)), None, "")),
    )
}

/// A name for a target whose path was not seen: what `/proc` would call it.
fn describe(t: &Target) -> String {
    let key = t.key.unwrap_or(TargetKey {
        major: 0,
        minor: 0,
        ino: 0,
    });
    match t.kind {
        Some(Kind::Pipe) => format!("pipe:[{}]", key.ino),
        Some(Kind::Socket) => format!("socket:[{}]", key.ino),
        _ if t.ring_enters > 0 => "anon_inode:[io_uring]".to_string(),
        _ => format!("inode {} on {}:{}", key.ino, key.major, key.minor),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_maps_hists_and_tuples() {
        let mut m = Maps::default();
        let dev = (254u64 << 20) | 1;
        for line in [
            r#"{"type": "attached_probes", "data": {"probes": 3}}"#.to_string(),
            format!(r#"{{"type": "map", "data": {{"@c": {{"{dev},7,1": 3}}}}}}"#),
            format!(r#"{{"type": "map", "data": {{"@b": {{"{dev},7,1": 27}}}}}}"#),
            format!(
                r#"{{"type": "hist", "data": {{"@h": {{"{dev},7,1": [{{"min": 8, "max": 15, "count": 3}}]}}}}}}"#
            ),
            format!(r#"{{"type": "map", "data": {{"@meta": {{"{dev},7": [33188, 0]}}}}}}"#),
            format!(r#"{{"type": "map", "data": {{"@path": {{"{dev},7": "/tmp/x"}}}}}}"#),
            format!(
                r#"{{"type": "map", "data": {{"@sys": {{"{dev},7,{}": 3}}}}}}"#,
                Sys::Write.number()
            ),
            r#"{"type": "map", "data": {"@tasks": 3}}"#.to_string(),
            r#"{"type": "map", "data": {"@procs": 2}}"#.to_string(),
        ] {
            m.take_line(&line);
        }
        let t = trace(&m, &HashMap::new());
        assert_eq!(t.targets.len(), 1);
        let x = &t.targets[0];
        assert_eq!((x.write.calls, x.write.bytes), (3, 27));
        assert_eq!(x.write.histogram(), vec![(8, 3)]);
        assert_eq!(x.kind, Some(Kind::File));
        assert_eq!(x.path, "/tmp/x");
        assert_eq!(x.calls_of(Sys::Write).calls, 3);
        assert_eq!((t.tasks.processes, t.tasks.threads), (2, 1));
    }
}
