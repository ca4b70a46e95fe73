//! How the eBPF program is compiled, in one place for the three that do it: `build.rs`
//! (into `OUT_DIR`, where clang is), `tests/bpf_object.rs` (which checks the objects
//! shipped beside the sources against a fresh build) and the refresh of those objects
//! (`tools/refresh_bpf_object.sh`, through that test).
//!
//! The objects are reproducible: the same clang makes the same bytes from the same sources
//! wherever the repository is (the sources are named relative to the crate's folder, which
//! `-fdebug-compilation-dir` and `-ffile-prefix-map` write as `.` into the DWARF and the
//! BTF line information), so a fresh build can be compared byte for byte with
//! the shipped one. The DWARF stays: clang makes the BTF (`.BTF`, `.BTF.ext`: the types, the
//! maps' definitions and the CO-RE relocations aya needs) from it.
//!
//! A machine without clang builds with the shipped object of its architecture, when
//! `bpf/shipped.txt` says it was made from these very sources (their fingerprint).

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// The architectures the program knows: Rust's `target_arch`, and the name its
/// `__TARGET_ARCH_…` macro and its shipped object take.
pub const ARCHES: [(&str, &str); 2] = [("x86_64", "x86"), ("aarch64", "arm64")];

/// The program's one compilation unit, relative to the crate's folder.
pub const SOURCE: &str = "bpf/trace.bpf.c";

/// What the shipped objects were made from (relative to the crate's folder).
pub const MANIFEST: &str = "bpf/shipped.txt";

/// The shipped object for the architecture `arch` (`x86`, `arm64`).
pub fn shipped(crate_dir: &Path, arch: &str) -> PathBuf {
    crate_dir.join(format!("bpf/trace.bpf.{arch}.o"))
}

/// Compiles the program for `arch` with `clang` into `out` (an absolute path). `Err` when
/// clang cannot be run.
pub fn compile(clang: &OsStr, crate_dir: &Path, arch: &str, out: &Path) -> io::Result<ExitStatus> {
    let dir = crate_dir.canonicalize()?;
    Command::new(clang)
        .current_dir(&dir)
        .args([
            "-O2", "-g", "-target", "bpf", "-mcpu=v3", "-Wall", "-Werror",
        ])
        .arg(format!("-D__TARGET_ARCH_{arch}"))
        // The sources are named relative to the crate's folder, and that folder is `.`.
        .arg("-fdebug-compilation-dir=.")
        .arg(format!("-ffile-prefix-map={}=.", dir.display()))
        .args(["-c", SOURCE, "-o"])
        .arg(out)
        .status()
}

/// The first line of `clang --version`: what the manifest records.
pub fn clang_version(clang: &OsStr) -> io::Result<String> {
    let out = Command::new(clang).arg("--version").output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text.lines().next().unwrap_or("").trim().to_string())
}

/// Every file the objects are made from, relative to the crate's folder, in order: the C
/// sources and headers of `bpf/`, and this file (the flags).
pub fn sources(crate_dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(crate_dir.join("bpf"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "c" || x == "h")
                || p.file_name().is_some_and(|n| n == "compile.rs")
        })
        .filter_map(|p| p.strip_prefix(crate_dir).ok().map(Path::to_path_buf))
        .collect();
    files.sort();
    Ok(files)
}

/// A fingerprint of the sources (FNV-1a, 64 bits, over each one's name and bytes).
pub fn fingerprint(crate_dir: &Path) -> io::Result<String> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut add = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for file in sources(crate_dir)? {
        add(file.to_string_lossy().as_bytes());
        add(&[0]);
        let text = std::fs::read(crate_dir.join(&file))?;
        add(&(text.len() as u64).to_le_bytes());
        add(&text);
    }
    Ok(format!("{h:016x}"))
}

/// What `bpf/shipped.txt` records: the sources' fingerprint and the clang that compiled
/// them.
#[derive(Debug, PartialEq, Eq)]
pub struct Manifest {
    pub sources: String,
    pub clang: String,
}

impl Manifest {
    /// The manifest of the shipped objects, if there is one.
    pub fn read(crate_dir: &Path) -> Option<Manifest> {
        let text = std::fs::read_to_string(crate_dir.join(MANIFEST)).ok()?;
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
                .map(|v| v.trim().to_string())
        };
        Some(Manifest {
            sources: field("sources")?,
            clang: field("clang")?,
        })
    }

    /// The manifest's text.
    pub fn text(&self) -> String {
        format!(
            "# The compiled eBPF objects beside it (trace.bpf.<arch>.o), which a build without\n\
             # clang uses: the fingerprint of the sources they were made from (bpf/compile.rs),\n\
             # and the clang that made them. Written by tools/refresh_bpf_object.sh.\n\
             sources {}\nclang {}\n",
            self.sources, self.clang
        )
    }
}
