//! Puts the eBPF program of the bpf backend (`bpf/trace.bpf.c` and its headers) into
//! `$OUT_DIR/trace.bpf.o`, which `src/engine/bpf/` embeds and loads at run time: compiled
//! by clang where clang is (`CLANG` names another binary), else the object shipped beside
//! the sources for this architecture (`bpf/trace.bpf.<arch>.o`, made by
//! `tools/refresh_bpf_object.sh`; `tests/bpf_object.rs` checks it is what clang makes of
//! these sources), when `bpf/shipped.txt` says it was made from these very sources. How it
//! is compiled is `bpf/compile.rs`.
//!
//! Without either the crate still builds: the bpf backend then reports itself unavailable,
//! with the reason, and `iolab trace` uses ptrace. A clang that is there but fails is a
//! build error: the program has a bug.

use std::path::{Path, PathBuf};

// The tests use the rest of it.
#[allow(dead_code)]
#[path = "bpf/compile.rs"]
mod compile;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(iolab_bpf)");
    // The program, its headers, the shipped objects and their manifest: the whole folder.
    println!("cargo::rerun-if-changed=bpf");
    println!("cargo::rerun-if-env-changed=CLANG");
    let crate_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let object = out.join("trace.bpf.o");
    let why_not = out.join("bpf-unavailable.txt");
    let target = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let Some(&(_, arch)) = compile::ARCHES.iter().find(|(rust, _)| *rust == target) else {
        let reason = format!("the eBPF program knows x86-64 and arm64, not {target:?}");
        std::fs::write(&why_not, reason).expect("OUT_DIR is writable");
        return;
    };
    let clang = std::env::var_os("CLANG").unwrap_or_else(|| "clang".into());
    let built = match compile::compile(&clang, &crate_dir, arch, &object) {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => panic!("clang failed to compile {} ({s})", compile::SOURCE),
        Err(e) => {
            let clang = clang.to_string_lossy();
            match shipped(&crate_dir, arch, &object) {
                Ok(name) => {
                    println!(
                        "cargo::warning=no clang ({clang}: {e}): the eBPF program is the \
                         shipped {name}"
                    );
                    Ok(())
                }
                Err(why) => Err(format!(
                    "this iolab was built without clang ({clang}: {e}), and {why}: install \
                     clang (apt-get install clang) and rebuild"
                )),
            }
        }
    };
    match built {
        Ok(()) => {
            let _ = std::fs::remove_file(&why_not);
            println!("cargo::rustc-cfg=iolab_bpf");
        }
        Err(reason) => {
            println!("cargo::warning={reason}");
            std::fs::write(&why_not, reason).expect("OUT_DIR is writable");
        }
    }
}

/// Copies the shipped object for `arch` to `object` and names it, or says why it cannot be
/// used.
fn shipped(crate_dir: &Path, arch: &str, object: &Path) -> Result<String, String> {
    let from = compile::shipped(crate_dir, arch);
    let name = from
        .strip_prefix(crate_dir)
        .unwrap_or(&from)
        .display()
        .to_string();
    let made_from = compile::Manifest::read(crate_dir).map(|m| m.sources);
    let sources = compile::fingerprint(crate_dir).ok();
    if made_from.is_none() || made_from != sources {
        return Err(format!(
            "the shipped {name} is not of these sources ({} says {}, they are {})",
            compile::MANIFEST,
            made_from.as_deref().unwrap_or("nothing"),
            sources.as_deref().unwrap_or("unreadable")
        ));
    }
    std::fs::copy(&from, object)
        .map(|_| name.clone())
        .map_err(|e| format!("the shipped {name} cannot be read ({e})"))
}
