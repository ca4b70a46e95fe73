//! The symbolizer on real programs: C built here (PIE, not PIE, stripped, inlined), this
//! test binary's own Rust, and bogus input.
use super::*;
use std::path::PathBuf;
use std::process::Command;

/// `main` calls `f`, which calls `g`, which reports its own stack sample (from a local
/// variable's address up, with the address of the `write` that follows as the instruction
/// pointer) and then writes. The markers name the lines the frames must point at.
/// `-DINLINE_F` inlines `f` into `main`.
const PROGRAM: &str = r#"#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

/* -DINLINE_F: f is inlined into main, so one return address is in both. */
#ifdef INLINE_F
#define F_KIND static inline __attribute__((always_inline))
#else
#define F_KIND __attribute__((noinline))
#endif

int main(void);
F_KIND void f(void);
void g(void);

static char stat_line[4096];

__attribute__((noinline)) static void report(const void *ip, const volatile uint64_t *sp) {
int fd = open("/proc/self/stat", O_RDONLY);
ssize_t n = read(fd, stat_line, sizeof stat_line - 1);
close(fd);
stat_line[n > 0 ? n : 0] = 0;
printf("stat %s", stat_line);
printf("ip %lx\n", (unsigned long)ip);
for (int i = 0; i < 64; i++)
    printf("word %lx\n", (unsigned long)sp[i]);
printf("entries %lx %lx %lx\n", (unsigned long)&main, (unsigned long)&f, (unsigned long)&g);
fflush(stdout);
}

__attribute__((noinline)) void g(void) {
volatile uint64_t marker = 0;
report(&&at_write, &marker);
at_write:
write(1, "done\n", 5); /* AT_WRITE */
}

F_KIND void f(void) {
g(); /* CALLS_G */
}

int main(void) {
f(); /* CALLS_F */
return 0;
}
"#;

/// The line of `PROGRAM` holding `marker`.
fn line_of(marker: &str) -> u32 {
    let index = PROGRAM.lines().position(|line| line.contains(marker));
    u32::try_from(index.expect("marker in the program") + 1).unwrap()
}

/// What one run of the program reported.
struct Run {
    sample: Sample,
    /// The run-time addresses of `main`, `f` and `g`.
    entries: Vec<u64>,
}

/// Compiles `PROGRAM` with `flags` into a fresh directory; `None` (with the reason
/// printed) when there is no C compiler.
fn compile(flags: &[&str]) -> Option<(tempfile::TempDir, PathBuf)> {
    if Command::new("cc").arg("--version").output().is_err() {
        eprintln!("skipped: no `cc` to build the test program");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("prog.c");
    std::fs::write(&source, PROGRAM).unwrap();
    let prog = dir.path().join("prog");
    let out = Command::new("cc")
        .args(["-g", "-O0"])
        .args(flags)
        .arg("-o")
        .arg(&prog)
        .arg(&source)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cc {flags:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some((dir, prog))
}

fn run(prog: &Path) -> Run {
    let out = Command::new(prog).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let hex = |word: &str| u64::from_str_radix(word, 16).unwrap();
    let mut run = Run {
        sample: Sample::default(),
        entries: Vec::new(),
    };
    for line in text.lines() {
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        match key {
            "stat" => {
                // Fields after the `(comm)`, which may hold spaces, start at field 3.
                let after = &value[value.rfind(')').unwrap() + 1..];
                let fields: Vec<&str> = after.split_whitespace().collect();
                run.sample.start_code = fields[26 - 3].parse().unwrap();
                run.sample.end_code = fields[27 - 3].parse().unwrap();
            }
            "ip" => run.sample.ip = hex(value),
            "word" => run.sample.words.push(hex(value)),
            "entries" => run.entries = value.split(' ').map(hex).collect(),
            _ => {}
        }
    }
    assert_eq!(run.sample.words.len(), 64, "{text}");
    assert_eq!(run.entries.len(), 3, "{text}");
    run
}

/// The frames of a run of the program built with `flags`: `g` at the `write`, `f` at its
/// call of `g`, `main` at its call of `f`, all in `prog.c` and the program's own code.
fn finds_the_calls(flags: &[&str]) {
    let Some((_dir, prog)) = compile(flags) else {
        return;
    };
    let run = run(&prog);
    let frames = Symbolizer::new(&prog).frames(&run.sample, 16);
    let expected = [("g", "AT_WRITE"), ("f", "CALLS_G"), ("main", "CALLS_F")];
    assert!(frames.len() >= 3, "{frames:#?}");
    for (frame, (function, marker)) in frames.iter().zip(expected) {
        assert_eq!(frame.function.as_deref(), Some(function), "{frames:#?}");
        assert!(
            frame.file.as_ref().unwrap().ends_with("prog.c"),
            "{frame:?}"
        );
        assert_eq!(frame.line, Some(line_of(marker)), "{frames:#?}");
        assert!(is_own_code(frame), "{frame:?}");
        assert!(frame.address.starts_with("0x"), "{frame:?}");
    }
    let own: Vec<&Frame> = frames.iter().filter(|frame| is_own_code(frame)).collect();
    assert_eq!(own.len(), 3, "{frames:#?}");
    // The program was not stripped, so every frame has at least a name.
    assert!(
        frames.iter().all(|frame| frame.function.is_some()),
        "{frames:#?}"
    );
}

#[test]
fn finds_the_calls_of_a_pie_program() {
    finds_the_calls(&["-fPIE", "-pie"]);
}

#[test]
fn finds_the_calls_of_a_fixed_address_program() {
    finds_the_calls(&["-fno-pie", "-no-pie"]);
}

#[test]
fn an_inlined_call_is_a_frame_of_its_own() {
    let Some((_dir, prog)) = compile(&["-DINLINE_F"]) else {
        return;
    };
    let frames = Symbolizer::new(&prog).frames(&run(&prog).sample, 16);
    let expected = [("g", "AT_WRITE"), ("f", "CALLS_G"), ("main", "CALLS_F")];
    let found: Vec<_> = (frames.iter().take(3))
        .map(|frame| (frame.function.as_deref().unwrap_or(""), frame.line))
        .collect();
    let expected: Vec<_> = (expected.iter())
        .map(|(function, marker)| (*function, Some(line_of(marker))))
        .collect();
    assert_eq!(found, expected, "{frames:#?}");
    // `f`'s call of `g` and `main`'s of `f` are one return address, into `main`.
    assert_ne!(frames[0].address, frames[1].address);
    assert_eq!(frames[1].address, frames[2].address);
}

/// A function whose address the next test looks up.
#[inline(never)]
fn a_rust_function() -> u32 {
    std::hint::black_box(7)
}

#[test]
fn names_rust_functions_demangled() {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .collect();
    let sample = Sample {
        ip: a_rust_function as fn() -> u32 as usize as u64,
        start_code: fields[26 - 3].parse().unwrap(),
        end_code: fields[27 - 3].parse().unwrap(),
        words: Vec::new(),
    };
    let exe = std::env::current_exe().unwrap();
    let frames = Symbolizer::new(&exe).frames(&sample, 4);
    // An optimised build inlines `black_box` into it: its frame comes first, at the
    // same address.
    let frame = frames.last().unwrap_or_else(|| panic!("no frames"));
    assert!(
        frames.iter().all(|f| f.address == frame.address),
        "{frames:#?}"
    );
    let function = frame.function.as_deref().unwrap_or_default();
    // Demangled: the path (a debug build) or the plain name (an optimised build's
    // inline tables), never the `_ZN…`/`_R…` symbol.
    assert!(
        function.ends_with("a_rust_function") && !function.starts_with('_'),
        "{frame:?}"
    );
    assert!(
        frame.file.as_ref().unwrap().ends_with("stacks/tests.rs"),
        "{frame:?}"
    );
    assert!(is_own_code(frame), "{frame:?}");
}

#[test]
fn addresses_are_link_time_addresses() {
    let Some((_dir, prog)) = compile(&["-fPIE", "-pie"]) else {
        return;
    };
    // Two runs load at different addresses (ASLR) but give the same frames.
    let first = Symbolizer::new(&prog).frames(&run(&prog).sample, 3);
    let second = Symbolizer::new(&prog).frames(&run(&prog).sample, 3);
    assert_eq!(first, second);
}

#[test]
fn stops_at_max() {
    let Some((_dir, prog)) = compile(&[]) else {
        return;
    };
    let run = run(&prog);
    let mut symbolizer = Symbolizer::new(&prog);
    let all = symbolizer.frames(&run.sample, usize::MAX);
    let two = symbolizer.frames(&run.sample, 2);
    assert_eq!(two, all[..2]);
    assert!(symbolizer.frames(&run.sample, 0).is_empty());
}

#[test]
fn a_stripped_program_gives_addresses_only() {
    let Some((_dir, prog)) = compile(&[]) else {
        return;
    };
    let status = Command::new("strip").arg(&prog).status();
    if !status.is_ok_and(|status| status.success()) {
        eprintln!("skipped: no `strip`");
        return;
    }
    let run = run(&prog);
    let frames = Symbolizer::new(&prog).frames(&run.sample, 16);
    assert!(frames.len() >= 3, "{frames:#?}");
    for frame in &frames {
        assert_eq!(
            (&frame.function, &frame.file, frame.line),
            (&None, &None, None)
        );
        assert!(frame.address.starts_with("0x"));
        assert!(!is_own_code(frame));
    }
}

#[test]
fn bogus_words_give_no_frames() {
    let Some((_dir, prog)) = compile(&[]) else {
        return;
    };
    let run = run(&prog);
    let mut symbolizer = Symbolizer::new(&prog);
    let (start, end) = (run.sample.start_code, run.sample.end_code);
    // Out of the text range, or in it but at a function's first byte (not after a call).
    let mut words = vec![0, 1, u64::MAX, start, end, start - 1, end + 8];
    words.extend(&run.entries);
    let bogus = Sample {
        ip: 0,
        words,
        ..run.sample.clone()
    };
    assert_eq!(symbolizer.frames(&bogus, 16), []);
    // An ip out of the text range is no frame either, nor is a sample of no stack.
    let empty = Sample {
        ip: end,
        words: Vec::new(),
        ..run.sample.clone()
    };
    assert_eq!(symbolizer.frames(&empty, 16), []);
}

#[test]
fn a_sample_of_another_file_gives_no_frames() {
    let Some((_dir, prog)) = compile(&[]) else {
        return;
    };
    let run = run(&prog);
    let mut symbolizer = Symbolizer::new(&prog);
    for (start_code, end_code) in [
        (run.sample.start_code, run.sample.end_code + 16),
        (run.sample.start_code + 16, run.sample.end_code),
        (0, 0),
        (u64::MAX, 0),
    ] {
        let other = Sample {
            start_code,
            end_code,
            ..run.sample.clone()
        };
        assert_eq!(symbolizer.frames(&other, 16), []);
    }
}

#[test]
fn reads_the_text_range_of_older_kernels_too() {
    let Some((_dir, prog)) = compile(&[]) else {
        return;
    };
    let run = run(&prog);
    let mut symbolizer = Symbolizer::new(&prog);
    let exe = symbolizer.exe.as_ref().unwrap();
    let headers = exe.lowest_code - exe.lowest_load;
    // Older kernels counted the first (non-executable) PT_LOAD segment in `start_code`.
    let older = Sample {
        start_code: run.sample.start_code - headers,
        ..run.sample.clone()
    };
    let frames = symbolizer.frames(&run.sample, 16);
    assert!(frames.len() >= 3, "{frames:#?}");
    assert_eq!(symbolizer.frames(&older, 16), frames);
}

#[test]
fn unreadable_or_broken_files_give_no_frames_and_no_panic() {
    let sample = Sample {
        ip: 0x1000,
        start_code: 0x1000,
        end_code: 0x2000,
        words: vec![0x1005, 0x1fff],
    };
    let dir = tempfile::tempdir().unwrap();
    let missing = Symbolizer::new(&dir.path().join("missing")).frames(&sample, 16);
    assert_eq!(missing, []);
    let text = dir.path().join("text");
    std::fs::write(&text, "#!/bin/sh\necho not ELF\n").unwrap();
    assert_eq!(Symbolizer::new(&text).frames(&sample, 16), []);

    // A truncated copy of a real program: whatever it gives, it does not panic.
    let Some((_build, prog)) = compile(&[]) else {
        return;
    };
    let run = run(&prog);
    let bytes = std::fs::read(&prog).unwrap();
    for len in [0, 16, 64, 100, 1000, bytes.len() / 2, bytes.len() - 1] {
        let cut = dir.path().join(format!("cut-{len}"));
        std::fs::write(&cut, &bytes[..len]).unwrap();
        let mut symbolizer = Symbolizer::new(&cut);
        symbolizer.frames(&run.sample, 16);
        symbolizer.frames(&sample, 16);
    }
}

#[test]
fn recognizes_call_instructions() {
    let calls: [&[u8]; 11] = [
        &[0xE8, 1, 2, 3, 4],             // call rel32
        &[0xFF, 0xD0],                   // call *%rax
        &[0x41, 0xFF, 0xD3],             // call *%r11 (REX.B)
        &[0xFF, 0x10],                   // call *(%rax)
        &[0xFF, 0x50, 0x08],             // call *0x8(%rax)
        &[0xFF, 0x14, 0xC3],             // call *(%rbx,%rax,8)
        &[0xFF, 0x54, 0x24, 0x08],       // call *0x8(%rsp)
        &[0xFF, 0x90, 1, 2, 3, 4],       // call *disp32(%rax)
        &[0xFF, 0x15, 1, 2, 3, 4],       // call *disp32(%rip)
        &[0xFF, 0x94, 0xC3, 1, 2, 3, 4], // call *disp32(%rbx,%rax,8)
        &[0xFF, 0x14, 0x25, 1, 2, 3, 4], // call *disp32 (SIB, no base)
    ];
    for call in calls {
        let mut before = vec![0x90; 8];
        before.extend_from_slice(call);
        assert!(ends_with_call(&before), "{call:02x?}");
        assert!(ends_with_call(call), "{call:02x?}");
    }
    let others: [&[u8]; 7] = [
        &[],
        &[0xC3],
        &[0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90],
        &[0xFF, 0xE0],          // jmp *%rax (/4)
        &[0xFF, 0x15, 1, 2, 3], // a RIP-relative call cut short
        &[0xFF, 0x50],          // call *disp8(%rax) without its disp8
        &[0x5D, 0xC3],          // pop %rbp; ret
    ];
    for other in others {
        assert!(!ends_with_call(other), "{other:02x?}");
    }
}

#[test]
fn own_code_is_the_program_s_files() {
    let frame = |file: Option<&str>| Frame {
        function: Some("f".into()),
        file: file.map(str::to_owned),
        line: Some(1),
        address: "0x1000".into(),
    };
    for own in [
        "/home/me/app/src/main.rs",
        "src/lib.rs",
        "/tmp/x/prog.c",
        "mylibio/io.c",
    ] {
        assert!(is_own_code(&frame(Some(own))), "{own}");
    }
    for runtime in [
        "/rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/std/src/io/mod.rs",
        "/home/me/.cargo/registry/src/index.crates.io-6f17d22bba15001f/serde-1.0.0/src/de.rs",
        "/home/me/.cargo/git/checkouts/dep-1234/abcdef/src/lib.rs",
        "/home/me/.rustup/toolchains/stable/lib/rustlib/src/rust/library/core/src/ptr.rs",
        "../sysdeps/unix/sysv/linux/write.c",
        "/build/glibc-abc123/csu/../csu/libc-start.c",
        "./libio/ioputs.c",
        "libio/fileops.c",
        "csu/libc-start.c",
    ] {
        assert!(!is_own_code(&frame(Some(runtime))), "{runtime}");
    }
    assert!(!is_own_code(&frame(None)));
    assert!(!is_own_code(&frame(Some(""))));
}
