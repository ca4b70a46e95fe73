//! Every library call iolab hands over compiles: each snippet of `iolab_lab::snippet::all()`
//! (the source of every verdict's and every trace finding's `library` value) becomes the
//! body of `fn snippet(path: &Path) -> iolab::Result<()>` in a scratch crate that depends
//! on the library and nothing else, and `cargo check` must accept the crate.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

#[test]
fn every_snippet_compiles_in_a_function_of_its_own() {
    let snippets = iolab_lab::snippet::all();
    assert!(snippets.len() > 50, "only {} snippets", snippets.len());
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("snippets");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    // The published library, beside this crate.
    let manifest_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../iolab");
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"snippets\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n\
             [dependencies]\niolab = {{ path = {manifest_dir:?} }}\n\n[workspace]\n"
        ),
    )
    .unwrap();
    // The workspace's lock file, so that the check resolves offline to the versions built.
    let lock = PathBuf::from(manifest_dir).join("../../Cargo.lock");
    std::fs::copy(lock, dir.join("Cargo.lock")).unwrap();
    let mut lib = String::from("#![allow(unused_imports, unused_variables, dead_code)]\n");
    for (i, (label, code)) in snippets.iter().enumerate() {
        writeln!(
            lib,
            "\n/// {label}\npub fn snippet_{i}(path: &std::path::Path) -> iolab::Result<()> {{\n\
             use iolab::prelude::*;\n{code}\nOk(())\n}}"
        )
        .unwrap();
    }
    std::fs::write(dir.join("src/lib.rs"), &lib).unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["check", "--offline", "--quiet", "--message-format", "short"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the snippets do not compile:\n{stderr}\n(source: {})",
        dir.join("src/lib.rs").display()
    );
}
