//! Compiles the eBPF program of the bpf backend (`bpf/trace.bpf.c`) with clang into
//! `$OUT_DIR/trace.bpf.o`, which `src/engine/bpf/` embeds and loads at run time.
//!
//! Without clang (`CLANG` names another binary) the crate still builds: the bpf backend
//! then reports itself unavailable, with the reason, and `iolab trace` uses ptrace. A
//! clang that is there but fails is a build error: the program has a bug.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(iolab_bpf)");
    // The program and its headers: the whole folder.
    println!("cargo::rerun-if-changed=bpf");
    println!("cargo::rerun-if-env-changed=CLANG");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let object = out.join("trace.bpf.o");
    let why_not = out.join("bpf-unavailable.txt");
    let arch = match std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() {
        Ok("x86_64") => "x86",
        Ok("aarch64") => "arm64",
        other => {
            let reason = format!("the eBPF program knows x86-64 and arm64, not {other:?}");
            std::fs::write(&why_not, reason).expect("OUT_DIR is writable");
            return;
        }
    };
    let clang = std::env::var_os("CLANG").unwrap_or_else(|| "clang".into());
    let status = Command::new(&clang)
        .args([
            "-O2", "-g", "-target", "bpf", "-mcpu=v3", "-Wall", "-Werror",
        ])
        .arg(format!("-D__TARGET_ARCH_{arch}"))
        .args(["-c", "bpf/trace.bpf.c", "-o"])
        .arg(&object)
        .status();
    match status {
        Ok(s) if s.success() => {
            let _ = std::fs::remove_file(&why_not);
            println!("cargo::rustc-cfg=iolab_bpf");
        }
        Ok(s) => panic!("clang failed to compile bpf/trace.bpf.c ({s})"),
        Err(e) => {
            let reason = format!(
                "this iolab was built without clang ({}: {e}), so without its eBPF program: \
                 install clang (apt-get install clang) and rebuild",
                clang.to_string_lossy()
            );
            println!("cargo::warning={reason}");
            std::fs::write(&why_not, reason).expect("OUT_DIR is writable");
        }
    }
}
