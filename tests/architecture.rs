//! The layout rules of `docs/architecture.md`, checked on the source itself:
//!
//! - **no import circle** inside any crate of the workspace: every `crate::…`, `super::…`
//!   and `self::…` path in code (comments and strings stripped) is an arrow from the module
//!   that writes it to the module it names; a folder (its `mod.rs` and the files directly
//!   in it) is one node, a file at a crate's root is a node of its own, and the graph of
//!   nodes must have no cycle;
//!   inside a folder, the files other than its `mod.rs` must have no cycle either;
//! - **no source file over 800 lines**, tests included, C sources and headers too (the eBPF
//!   program's among them);
//! - **no C function over 120 lines**, from the line of its name to its closing brace.
//!
//! `cargo test --test architecture -- --nocapture` prints each crate's arrows. The C checks
//! are in `architecture/c_sources.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

#[path = "architecture/c_sources.rs"]
mod c_sources;

/// Longest allowed source file, in lines.
const MAX_LINES: usize = 800;

/// The workspace's root (this package's manifest folder).
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every crate's `src` folder: the root package's and each `crates/*`'s.
fn crate_sources() -> Vec<PathBuf> {
    let mut dirs = vec![root().join("src")];
    if let Ok(entries) = fs::read_dir(root().join("crates")) {
        let mut crates: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path().join("src")))
            .filter(|p| p.is_dir())
            .collect();
        crates.sort();
        dirs.extend(crates);
    }
    dirs
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file under `src`: `lib.rs` → `[]`, `a/mod.rs` → `[a]`, `a/b.rs` →
/// `[a, b]`.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut segs: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = segs.pop().unwrap();
    match last.as_str() {
        "lib.rs" | "main.rs" | "mod.rs" => {}
        name => segs.push(name.trim_end_matches(".rs").to_string()),
    }
    segs
}

/// The node a file belongs to: its folder (relative to `src`), or the file's own name for
/// files at the crate's root.
fn node_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    match rel.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_string_lossy().into_owned(),
        _ => rel.to_string_lossy().into_owned(),
    }
}

/// The code of a Rust file with comments, string and character literals blanked out (line
/// breaks kept, so positions still give line numbers).
fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if (c == b'r' || c == b'b')
            && !b[..i]
                .last()
                .is_some_and(|p| p.is_ascii_alphanumeric() || *p == b'_')
            && raw_string_start(&b[i..]).is_some()
        {
            let (hashes, skip) = raw_string_start(&b[i..]).unwrap();
            out.extend(std::iter::repeat_n(b' ', skip));
            i += skip;
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            while i < b.len() && !b[i..].starts_with(&close) {
                blank(&mut out, b[i]);
                i += 1;
            }
            out.extend(std::iter::repeat_n(b' ', close.len().min(b.len() - i)));
            i += close.len();
        } else if c == b'"' {
            out.push(b' ');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    blank(&mut out, b[i]);
                    i += 1;
                }
                if i < b.len() {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
            out.push(b' ');
            i += 1;
        } else if c == b'\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a): a literal
            // closes within a few bytes.
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&x| x == b'\'')
                    .map(|p| i + 2 + p)
            } else if b.get(i + 2) == Some(&b'\'') {
                Some(i + 2)
            } else {
                // A multi-byte UTF-8 character.
                let len = std::str::from_utf8(&b[i + 1..(i + 5).min(b.len())])
                    .ok()
                    .or_else(|| std::str::from_utf8(&b[i + 1..(i + 4).min(b.len())]).ok())
                    .and_then(|s| s.chars().next())
                    .map_or(0, char::len_utf8);
                (len > 1 && b.get(i + 1 + len) == Some(&b'\'')).then_some(i + 1 + len)
            };
            match end {
                Some(end) => {
                    out.extend(std::iter::repeat_n(b' ', end + 1 - i));
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `r"`, `r#"`, `br"`, `br#"` at the start of `b`: the number of `#` and the prefix length.
fn raw_string_start(b: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    if b.first() == Some(&b'b') {
        i += 1;
    }
    if b.get(i) != Some(&b'r') {
        return None;
    }
    i += 1;
    let hashes = b[i..].iter().take_while(|&&c| c == b'#').count();
    i += hashes;
    (b.get(i) == Some(&b'"')).then_some((hashes, i + 1))
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The paths a stripped file names, each with its line and the module it is written in
/// (the file's module plus any inline `mod x { … }` around it). Besides `crate::`, `super::`
/// and `self::` paths, a path that starts with one of the file's `children` (its `mod x;`
/// files) names that child: it is returned as `self::x::…`.
fn paths_in(
    code: &str,
    file_module: &[String],
    children: &BTreeSet<String>,
) -> Vec<(usize, Vec<String>, Vec<String>)> {
    let b = code.as_bytes();
    let mut found = Vec::new();
    // Inline modules: (name, brace depth at which it opened).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut pending_mod: Option<String> = None;
    let mut i = 0;
    let line_at = |pos: usize| code[..pos].bytes().filter(|&c| c == b'\n').count() + 1;
    let here = |inline: &[(String, usize)]| {
        let mut m = file_module.to_vec();
        m.extend(inline.iter().map(|(n, _)| n.clone()));
        m
    };
    while i < b.len() {
        let c = b[i];
        if c == b'{' {
            depth += 1;
            if let Some(name) = pending_mod.take() {
                inline.push((name, depth));
            }
            i += 1;
            continue;
        }
        if c == b'}' {
            if inline.last().is_some_and(|(_, d)| *d == depth) {
                inline.pop();
            }
            depth = depth.saturating_sub(1);
            i += 1;
            continue;
        }
        if c == b';' {
            pending_mod = None;
        }
        if !is_ident(c) || (i > 0 && is_ident(b[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && is_ident(b[i]) {
            i += 1;
        }
        let word = &code[start..i];
        let rest = code[i..].trim_start();
        if word == "mod" {
            let name: String = rest
                .bytes()
                .take_while(|&c| is_ident(c))
                .map(char::from)
                .collect();
            pending_mod = Some(name);
            continue;
        }
        if word == "use" {
            let end = code[i..].find(';').map_or(b.len(), |p| i + p);
            // `a as b` keeps `a`: mark the rename, then drop the whitespace.
            let words: Vec<&str> = code[i..end].split_whitespace().collect();
            let tree: String = words.join(" ").replace(" as ", "@").replace(' ', "");
            let line = line_at(start);
            let module = here(&inline);
            for mut path in expand_use(&tree) {
                let first = path.first().map(String::as_str);
                if inline.is_empty() && first.is_some_and(|f| children.contains(f)) {
                    path.insert(0, "self".into());
                }
                if matches!(
                    path.first().map(String::as_str),
                    Some("crate" | "super" | "self")
                ) {
                    found.push((line, module.clone(), path));
                }
            }
            i = end;
            continue;
        }
        let child = inline.is_empty()
            && children.contains(word)
            && !code[..start].trim_end().ends_with("::");
        if (child || matches!(word, "crate" | "super" | "self")) && rest.starts_with("::") {
            // Any path in code: crate::a::b, super::super::x, child::y.
            let mut segs = vec![word.to_string()];
            if child {
                segs.insert(0, "self".into());
            }
            let mut j = i;
            loop {
                let after = &code[j..];
                let trimmed = after.trim_start();
                if !trimmed.starts_with("::") {
                    break;
                }
                let k = j + (after.len() - trimmed.len()) + 2;
                let seg_len = code[k..].bytes().take_while(|&c| is_ident(c)).count();
                if seg_len == 0 {
                    break;
                }
                segs.push(code[k..k + seg_len].to_string());
                j = k + seg_len;
            }
            // A macro (`crate::named_enum!`): marked, resolved to the file defining it.
            if code[j..].trim_start().starts_with('!') {
                segs.push("!".into());
            }
            found.push((line_at(start), here(&inline), segs));
            i = j;
        }
    }
    found
}

/// The paths of a `use` tree without whitespace: `crate::{a::B,c::{self,D}}` →
/// `crate::a::B`, `crate::c`, `crate::c::D`.
fn expand_use(tree: &str) -> Vec<Vec<String>> {
    fn go(prefix: &[String], s: &str, out: &mut Vec<Vec<String>>) {
        // Split at top-level commas.
        let mut depth = 0;
        let mut last = 0;
        let mut parts = Vec::new();
        for (k, ch) in s.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(&s[last..k]);
                    last = k + 1;
                }
                _ => {}
            }
        }
        parts.push(&s[last..]);
        for part in parts.into_iter().filter(|p| !p.is_empty()) {
            let part = part.split('@').next().unwrap_or(part);
            if let Some(open) = part.find('{') {
                let head = part[..open].trim_end_matches("::");
                let inner = &part[open + 1..part.rfind('}').unwrap_or(part.len())];
                let mut p = prefix.to_vec();
                p.extend(head.split("::").filter(|x| !x.is_empty()).map(String::from));
                go(&p, inner, out);
            } else {
                let mut p = prefix.to_vec();
                for seg in part.split("::").filter(|x| !x.is_empty()) {
                    if seg == "self" && !p.is_empty() {
                        continue;
                    }
                    p.push(seg.to_string());
                }
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    let tree = tree.trim_start_matches("::");
    go(&[], tree, &mut out);
    out
}

/// An arrow between two nodes, with where it was written and the two files.
struct Arrow {
    from: String,
    to: String,
    at: String,
    from_file: PathBuf,
    to_file: PathBuf,
}

/// The arrows between the nodes of one crate.
fn arrows(src: &Path) -> (BTreeSet<String>, Vec<Arrow>) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let modules: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|f| (module_path(src, f), f.clone()))
        .collect();
    let nodes: BTreeSet<String> = files.iter().map(|f| node_of(src, f)).collect();
    // Where each `macro_rules!` is defined: a `crate::m!` call is an arrow to that file.
    let mut macros: BTreeMap<String, PathBuf> = BTreeMap::new();
    for file in &files {
        let code = strip(&fs::read_to_string(file).unwrap());
        for (at, _) in code.match_indices("macro_rules!") {
            let name: String = code[at + "macro_rules!".len()..]
                .trim_start()
                .bytes()
                .take_while(|&c| is_ident(c))
                .map(char::from)
                .collect();
            macros.insert(name, file.clone());
        }
    }
    let mut out = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        let code = strip(&text);
        let from = node_of(src, file);
        let module = module_path(src, file);
        let children: BTreeSet<String> = modules
            .keys()
            .filter(|m| m.len() == module.len() + 1 && m.starts_with(&module))
            .map(|m| m[module.len()].clone())
            .collect();
        for (line, module, path) in paths_in(&code, &module, &children) {
            if path.last().map(String::as_str) == Some("!") {
                let name = &path[path.len() - 2];
                if let Some(dest) = macros.get(name) {
                    let to = node_of(src, dest);
                    if dest != file {
                        let rel = file.strip_prefix(root()).unwrap_or(file);
                        out.push(Arrow {
                            from: from.clone(),
                            to,
                            at: format!(
                                "{}:{line} {}!",
                                rel.display(),
                                path[..path.len() - 1].join("::")
                            ),
                            from_file: file.clone(),
                            to_file: dest.clone(),
                        });
                    }
                }
                continue;
            }
            let mut target: Vec<String> = Vec::new();
            let mut rest = path.iter().peekable();
            match rest.peek().map(|s| s.as_str()) {
                Some("crate") => {
                    rest.next();
                }
                Some("super") => {
                    target = module.clone();
                    while rest.peek().map(|s| s.as_str()) == Some("super") {
                        rest.next();
                        target.pop();
                    }
                }
                Some("self") => {
                    rest.next();
                    target = module.clone();
                }
                _ => continue,
            }
            target.extend(rest.cloned());
            // The longest prefix that is a file's module.
            let Some(dest) = (0..=target.len())
                .rev()
                .find_map(|n| modules.get(&target[..n]))
            else {
                continue;
            };
            let to = node_of(src, dest);
            if dest != file {
                let rel = file.strip_prefix(root()).unwrap_or(file);
                out.push(Arrow {
                    from: from.clone(),
                    to,
                    at: format!("{}:{line} {}", rel.display(), path.join("::")),
                    from_file: file.clone(),
                    to_file: dest.clone(),
                });
            }
        }
    }
    (nodes, out)
}

/// The strongly connected components with more than one node (Tarjan).
fn circles(
    nodes: &BTreeSet<String>,
    edges: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(succ) = s.edges.get(v) {
            for w in succ {
                if !s.index.contains_key(w.as_str()) {
                    visit(s, w);
                    let lw = s.low[w.as_str()];
                    let lv = s.low[v];
                    s.low.insert(v, lv.min(lw));
                } else if s.on_stack.contains(w.as_str()) {
                    let iw = s.index[w.as_str()];
                    let lv = s.low[v];
                    s.low.insert(v, lv.min(iw));
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in nodes {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn no_crate_has_an_import_circle() {
    let mut failures = Vec::new();
    for src in crate_sources() {
        let (nodes, arrows) = arrows(&src);
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for a in arrows.iter().filter(|a| a.from != a.to) {
            edges
                .entry(a.from.clone())
                .or_default()
                .insert(a.to.clone());
        }
        println!("{}:", src.strip_prefix(root()).unwrap_or(&src).display());
        for (from, to) in &edges {
            println!(
                "  {from} -> {}",
                to.iter().cloned().collect::<Vec<_>>().join(", ")
            );
        }
        for comp in circles(&nodes, &edges) {
            let members: BTreeSet<&String> = comp.iter().collect();
            let mut msg = format!("circle among {}:", comp.join(", "));
            for a in arrows
                .iter()
                .filter(|a| a.from != a.to && members.contains(&a.from) && members.contains(&a.to))
            {
                msg.push_str(&format!("\n    {} -> {}  ({})", a.from, a.to, a.at));
            }
            failures.push(msg);
        }
    }
    assert!(
        failures.is_empty(),
        "import circles:\n{}",
        failures.join("\n")
    );
}

/// Whether `file` is a folder's or a crate's own file (`mod.rs`, `lib.rs`, `main.rs`): its
/// children name it with `super::`, and it names them to declare and use them.
fn is_folder_file(file: &Path) -> bool {
    matches!(
        file.file_name().and_then(|n| n.to_str()),
        Some("mod.rs" | "lib.rs" | "main.rs")
    )
}

#[test]
fn no_folder_has_an_import_circle_among_its_files() {
    let mut failures = Vec::new();
    for src in crate_sources() {
        let (_, arrows) = arrows(&src);
        // Arrows between two sibling files of one folder, the folder's own file aside.
        let siblings: Vec<&Arrow> = arrows
            .iter()
            .filter(|a| {
                a.from_file.parent() == a.to_file.parent()
                    && !is_folder_file(&a.from_file)
                    && !is_folder_file(&a.to_file)
            })
            .collect();
        let name = |f: &Path| f.strip_prefix(&src).unwrap().display().to_string();
        let mut nodes = BTreeSet::new();
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for a in &siblings {
            nodes.insert(name(&a.from_file));
            nodes.insert(name(&a.to_file));
            edges
                .entry(name(&a.from_file))
                .or_default()
                .insert(name(&a.to_file));
        }
        for comp in circles(&nodes, &edges) {
            let members: BTreeSet<&String> = comp.iter().collect();
            let mut msg = format!("circle among {}:", comp.join(", "));
            for a in siblings.iter().filter(|a| {
                members.contains(&name(&a.from_file)) && members.contains(&name(&a.to_file))
            }) {
                msg.push_str(&format!("\n    {}", a.at));
            }
            failures.push(msg);
        }
    }
    assert!(
        failures.is_empty(),
        "import circles between the files of a folder:\n{}",
        failures.join("\n")
    );
}

#[test]
fn no_source_file_is_over_the_limit() {
    let mut files = Vec::new();
    for dir in ["src", "tests", "benches", "examples", "crates"] {
        rust_files(&root().join(dir), &mut files);
    }
    let long: Vec<String> = files
        .iter()
        .filter(|f| !f.components().any(|c| c.as_os_str() == "target"))
        .filter_map(|f| {
            let n = fs::read_to_string(f).ok()?.lines().count();
            (n > MAX_LINES)
                .then(|| format!("{} ({n} lines)", f.strip_prefix(root()).unwrap().display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines: {}",
        long.join(", ")
    );
}

#[test]
fn the_stripper_and_the_use_expander_see_what_the_compiler_sees() {
    let code = strip("let s = \"crate::a\"; // crate::b\nuse crate::{c::D, e::{self, F}};\n");
    assert!(!code.contains("crate::a") && !code.contains("crate::b"));
    let found = paths_in(&code, &[], &BTreeSet::new());
    let paths: Vec<String> = found.iter().map(|(_, _, p)| p.join("::")).collect();
    assert_eq!(paths, ["crate::c::D", "crate::e", "crate::e::F"]);
    let lifetimes = strip("fn f<'a>(x: &'a str) -> char { 'x' } // super::y");
    assert!(lifetimes.contains("'a") && !lifetimes.contains("'x'") && !lifetimes.contains("super"));
    let children = BTreeSet::from(["child".to_string()]);
    let code =
        strip("use child::A;\nfn f() { child::g(); x::child::h(); }\nmod tests { use super::*; }");
    let nested = paths_in(&code, &["m".into()], &children);
    let paths: Vec<String> = nested.iter().map(|(_, _, p)| p.join("::")).collect();
    assert_eq!(paths, ["self::child::A", "self::child::g", "super::*"]);
    assert_eq!(nested[2].1, ["m", "tests"]);
}
