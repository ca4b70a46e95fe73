//! The compiled eBPF objects shipped beside the program's sources (`bpf/trace.bpf.x86.o`,
//! `bpf/trace.bpf.arm64.o`), which a build without clang embeds, are what clang makes of
//! these sources: their manifest (`bpf/shipped.txt`) names these sources' fingerprint,
//! checked with or without clang; where the clang that made them is here, a fresh build of
//! each is the same bytes. Each keeps the BTF that CO-RE and aya need, and names no folder
//! of the machine that built it.
//!
//! `tools/refresh_bpf_object.sh` writes them anew (this test with
//! `IOLAB_REFRESH_BPF_OBJECTS=1`).

#[path = "../bpf/compile.rs"]
mod compile;

use std::ffi::OsString;
use std::path::Path;

use object::{Object, ObjectSection};

/// Set: the shipped objects and their manifest are written anew, not checked.
const REFRESH: &str = "IOLAB_REFRESH_BPF_OBJECTS";

/// What to do about it, in each failure.
const HOW: &str = "run tools/refresh_bpf_object.sh and commit what it writes";

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn refreshing() -> bool {
    std::env::var_os(REFRESH).is_some()
}

/// The clang the build uses (`CLANG`, else `clang`).
fn clang() -> OsString {
    std::env::var_os("CLANG").unwrap_or_else(|| "clang".into())
}

#[test]
fn the_shipped_objects_are_what_clang_makes_of_these_sources() {
    let dir = crate_dir();
    let clang = clang();
    let version = match compile::clang_version(&clang) {
        Ok(v) => v,
        Err(e) => {
            assert!(!refreshing(), "{REFRESH} needs clang ({e})");
            iolab_testkit::skip(format!(
                "no clang ({}: {e}): the shipped eBPF objects are not compared with a fresh build",
                clang.to_string_lossy()
            ));
            return;
        }
    };
    if !refreshing() {
        let manifest = compile::Manifest::read(dir).unwrap_or_else(|| {
            panic!(
                "no {} to say what the objects are: {HOW}",
                compile::MANIFEST
            )
        });
        if manifest.clang != version {
            iolab_testkit::skip(format!(
                "the shipped eBPF objects were made by {}, this clang is {version}: its bytes \
                 would differ (the sources' fingerprint is checked apart)",
                manifest.clang
            ));
            return;
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut differ = Vec::new();
    for (_, arch) in compile::ARCHES {
        let fresh = tmp.path().join(format!("{arch}.o"));
        let status = compile::compile(&clang, dir, arch, &fresh).unwrap();
        assert!(
            status.success(),
            "clang failed on {} for {arch}",
            compile::SOURCE
        );
        let fresh = std::fs::read(&fresh).unwrap();
        let shipped = compile::shipped(dir, arch);
        if std::fs::read(&shipped).ok().as_deref() == Some(&fresh[..]) {
            continue;
        }
        if refreshing() {
            std::fs::write(&shipped, &fresh).unwrap();
            println!("wrote {}", shipped.display());
        } else {
            differ.push(shipped.display().to_string());
        }
    }
    if refreshing() {
        let manifest = compile::Manifest {
            sources: compile::fingerprint(dir).unwrap(),
            clang: version.clone(),
        };
        std::fs::write(dir.join(compile::MANIFEST), manifest.text()).unwrap();
    }
    assert!(
        differ.is_empty(),
        "not what {version} makes of the sources now: {}: {HOW}",
        differ.join(", ")
    );
}

#[test]
fn the_manifest_names_these_sources() {
    if refreshing() {
        return;
    }
    let dir = crate_dir();
    let manifest = compile::Manifest::read(dir).unwrap_or_else(|| {
        panic!(
            "no {} to say what the objects are: {HOW}",
            compile::MANIFEST
        )
    });
    let sources = compile::fingerprint(dir).unwrap();
    assert_eq!(
        manifest.sources,
        sources,
        "the eBPF sources ({:?}) changed since the shipped objects were made: {HOW}",
        compile::sources(dir).unwrap()
    );
}

#[test]
fn each_shipped_object_keeps_its_btf_and_names_no_folder_of_this_machine() {
    if refreshing() {
        return;
    }
    let dir = crate_dir();
    let folders = [
        dir.display().to_string(),
        dir.canonicalize().unwrap().display().to_string(),
    ];
    for (_, arch) in compile::ARCHES {
        let path = compile::shipped(dir, arch);
        let bytes =
            std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}: {HOW}", path.display()));
        let file = object::File::parse(&*bytes).unwrap();
        for section in [
            ".BTF",
            ".BTF.ext",
            ".maps",
            "tp_btf/sys_enter",
            "tp_btf/sys_exit",
        ] {
            let found = file.section_by_name(section);
            assert!(
                found.is_some_and(|s| s.size() > 0),
                "{}: no {section}",
                path.display()
            );
        }
        for folder in &folders {
            assert!(
                !bytes.windows(folder.len()).any(|w| w == folder.as_bytes()),
                "{} names {folder}",
                path.display()
            );
        }
    }
}
