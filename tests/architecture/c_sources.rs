//! The limits of `docs/architecture.md` on the C sources and headers (the eBPF program's,
//! the tests' and the tools' programs): no file over [`MAX_LINES`] lines, no function over
//! [`MAX_C_FUNCTION_LINES`] lines, from the line of its name to its closing brace.

use std::fs;
use std::path::{Path, PathBuf};

use super::{MAX_LINES, is_ident, root};

/// Longest allowed C function, in lines.
const MAX_C_FUNCTION_LINES: usize = 120;

/// Every C source and header (`.c`, `.h`) under `dir`, build output aside.
fn c_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") {
                c_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "c" || e == "h") {
            out.push(path);
        }
    }
}

/// C code with its comments, string and character literals and preprocessor lines
/// blanked out (line breaks kept).
fn strip_c(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    let mut line_start = true;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if line_start && c == b'#' {
            // A directive, with its continuation lines.
            while i < b.len() && !(b[i] == b'\n' && b[i - 1] != b'\\') {
                blank(&mut out, b[i]);
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let end = text[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
            while i < end {
                blank(&mut out, b[i]);
                i += 1;
            }
        } else if c == b'"' || c == b'\'' {
            blank(&mut out, c);
            i += 1;
            while i < b.len() && b[i] != c && b[i] != b'\n' {
                if b[i] == b'\\' {
                    blank(&mut out, b[i]);
                    i += 1;
                }
                if i < b.len() {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
            if i < b.len() {
                blank(&mut out, b[i]);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
        if let Some(&last) = out.last() {
            if last == b'\n' {
                line_start = true;
            } else if !last.is_ascii_whitespace() {
                line_start = false;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The functions stripped C code defines: name, first line (its name's) and last line (its
/// closing brace's). A definition is a brace at file level that follows a `)`: the end of
/// its parameters, or of an attribute after them.
fn c_functions(code: &str) -> Vec<(String, usize, usize)> {
    let b = code.as_bytes();
    let line_at = |pos: usize| code[..pos].bytes().filter(|&c| c == b'\n').count() + 1;
    let mut found = Vec::new();
    let mut depth = 0usize;
    let mut open: Option<(String, usize)> = None;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'{' => {
                if depth == 0 {
                    open = c_function_name(b, i).map(|(name, at)| (name, line_at(at)));
                }
                depth += 1;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0
                    && let Some((name, first)) = open.take()
                {
                    found.push((name, first, line_at(i)));
                }
            }
            _ => {}
        }
    }
    found
}

/// The name of the function whose body opens at `brace`, and where that name is; `None`
/// when the brace opens no function (a struct, an enum, an initializer).
fn c_function_name(b: &[u8], brace: usize) -> Option<(String, usize)> {
    let mut end = brace;
    loop {
        let close = b[..end].iter().rposition(|c| !c.is_ascii_whitespace())?;
        if b[close] != b')' {
            return None;
        }
        // Back to the matching parenthesis, then the word before it.
        let mut depth = 0usize;
        let mut at = close;
        loop {
            match b[at] {
                b')' => depth += 1,
                b'(' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                break;
            }
            at = at.checked_sub(1)?;
        }
        let word_end = b[..at].iter().rposition(|c| !c.is_ascii_whitespace())? + 1;
        let word_start = b[..word_end]
            .iter()
            .rposition(|&c| !is_ident(c))
            .map_or(0, |p| p + 1);
        let word = String::from_utf8_lossy(&b[word_start..word_end]).into_owned();
        match word.as_str() {
            // An attribute between the parameters and the body: look before it.
            "__attribute__" | "__attribute" => end = word_start,
            "" => return None,
            _ => return Some((word, word_start)),
        }
    }
}

#[test]
fn no_c_file_or_function_is_over_the_limit() {
    let mut files = Vec::new();
    for dir in [
        "src", "tests", "benches", "examples", "crates", "tools", "fuzz",
    ] {
        c_files(&root().join(dir), &mut files);
    }
    files.sort();
    let mut over = Vec::new();
    let mut functions = 0;
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        let rel = file.strip_prefix(root()).unwrap().display();
        let n = text.lines().count();
        if n > MAX_LINES {
            over.push(format!("{rel} ({n} lines, more than {MAX_LINES})"));
        }
        for (name, first, last) in c_functions(&strip_c(&text)) {
            functions += 1;
            let n = last + 1 - first;
            if n > MAX_C_FUNCTION_LINES {
                over.push(format!(
                    "{rel}:{first} {name} ({n} lines, more than {MAX_C_FUNCTION_LINES})"
                ));
            }
        }
    }
    assert!(
        files.iter().any(|f| f.ends_with("bpf/trace.bpf.c")) && functions > 20,
        "the eBPF program's C was not found: {files:?}"
    );
    assert!(over.is_empty(), "C over the limits: {}", over.join(", "));
}

#[test]
fn the_c_reader_finds_functions_and_nothing_else() {
    let code = strip_c(
        "#define F(x) { x }\n\
         struct s { int a; };\n\
         static int f(int x)\n{\n\treturn x; /* } */\n}\n\
         struct {\n\tint b;\n} m SEC(\".maps\");\n\
         __attribute__((noinline)) int g(void) __attribute__((cold))\n{\n\tchar *s = \"{\";\n\
         \tif (s) { return '}'; }\n\treturn 0;\n}\n",
    );
    assert_eq!(
        c_functions(&code),
        [("f".to_string(), 3, 6), ("g".to_string(), 10, 15)]
    );
}
