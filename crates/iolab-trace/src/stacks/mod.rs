//! Where in the program a system call came from: the frames of a sampled user stack that lie in
//! the main executable, named with function, file and line.
//!
//! A backend hands over a [`Sample`]: the instruction pointer, the executable's text range
//! (`start_code..end_code`, fields 26 and 27 of `/proc/PID/stat`) and up to 64 raw words of the
//! user stack from the stack pointer up. [`Symbolizer::frames`] keeps the instruction pointer
//! when it is in the executable, then every stack word that points into its text just after a
//! call instruction, and names each from the executable's DWARF, or from its symbol table when
//! it has no DWARF. Only the executable file is read (once, then cached), so the process may be
//! gone; the load bias comes from the sample's text range.
//!
//! It scans the stack instead of walking frames, so code built without frame pointers is fine.
//! Limits: frames in the main executable only (not shared libraries), and only those whose
//! return address lies within the sampled words; DWARF in the executable itself (not split
//! `.dwo` or separate debug files, nor compressed debug sections). A scanned stack also holds
//! stale return addresses of calls that already returned, and data that happens to look like
//! one; the call-instruction test (x86-64 only: elsewhere every word in the text range is kept)
//! removes most non-addresses, not stale ones. A sample whose text range does not fit the file
//! (the executable was rebuilt since, or it ran under an explicit `ld.so`) gives no frames.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol};

/// One frame of a sampled stack: where in the program's code a call was made.
///
/// A call that the compiler inlined is a frame of its own, like in a debugger's backtrace: one
/// return address can give several frames, innermost first, which share the `address`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Frame {
    /// The function (demangled), when the executable has symbols.
    pub function: Option<String>,
    /// The source file, when it has line tables.
    pub file: Option<String>,
    /// The line.
    pub line: Option<u32>,
    /// The address, relative to the executable's file (the link-time virtual address), in hex
    /// `0x…`: the instruction pointer, or the return address (the file and line are those of
    /// the call just before it).
    pub address: String,
}

/// A stack sample as a backend took it.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Sample {
    /// The instruction pointer.
    pub ip: u64,
    /// The start of the executable's text in the process (the kernel's `mm->start_code`).
    pub start_code: u64,
    /// Its end, exclusive (`mm->end_code`).
    pub end_code: u64,
    /// The user stack's words from the stack pointer up.
    pub words: Vec<u64>,
}

/// The longest `FF /2` call whose length matters: `FF`, ModRM, SIB, disp32. Prefixes before
/// the `FF` (REX, `notrack`) do not change where the instruction ends, so they need no bytes.
const INDIRECT_CALL_MAX: usize = 7;

/// `E8 rel32`.
const DIRECT_CALL_LEN: usize = 5;

/// The DWARF reader: sections copied out of the file, so the symbolizer owns them.
type Reader = gimli::EndianArcSlice<gimli::RunTimeEndian>;

/// Symbolizes samples of one executable; caches the parsed file. A file that cannot be read,
/// is not ELF, or does not fit the sample gives no frames; one without symbols gives frames
/// with only `address`.
pub struct Symbolizer {
    /// `None` when the file could not be read or is not ELF: every sample gives no frames.
    exe: Option<Executable>,
    /// The frames already made, by link-time address and whether it is a return address.
    made: HashMap<(u64, bool), Vec<Frame>>,
}

impl Symbolizer {
    /// Reads and parses `exe` now (it may be replaced or deleted later). Never fails: when the
    /// file cannot be read or is not ELF, later calls return no frames.
    pub fn new(exe: &Path) -> Symbolizer {
        Symbolizer {
            exe: Executable::load(exe),
            made: HashMap::new(),
        }
    }

    /// The frames of `sample` in the executable, innermost first: `ip` if it is in the text
    /// range, then each stack word in the range that is preceded by a call instruction in the
    /// file; at most `max` frames.
    pub fn frames(&mut self, sample: &Sample, max: usize) -> Vec<Frame> {
        let Symbolizer { exe, made } = self;
        let Some(exe) = exe else {
            return Vec::new();
        };
        let Some(bias) = exe.bias(sample) else {
            return Vec::new();
        };
        let in_text = |addr: u64| (sample.start_code..sample.end_code).contains(&addr);
        // The instruction pointer is exact; a stack word must look like a return address.
        let ip = in_text(sample.ip).then(|| (sample.ip.wrapping_sub(bias), false));
        let returns = (sample.words.iter())
            .filter(|word| in_text(**word))
            .map(|word| word.wrapping_sub(bias))
            .filter(|vaddr| exe.follows_call(*vaddr))
            .map(|vaddr| (vaddr, true));
        let mut frames = Vec::new();
        for (vaddr, is_return) in ip.into_iter().chain(returns) {
            if frames.len() >= max {
                break;
            }
            let found = made
                .entry((vaddr, is_return))
                .or_insert_with(|| exe.frames_at(vaddr, is_return));
            frames.extend(found.iter().take(max - frames.len()).cloned());
        }
        frames
    }
}

impl std::fmt::Debug for Symbolizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Symbolizer")
            .field("loaded", &self.exe.is_some())
            .field("addresses_made", &self.made.len())
            .finish()
    }
}

/// Whether a frame is the program's own code rather than a runtime's: its file is known and is
/// not under `/rustc/`, `/.cargo/registry/`, `/.cargo/git/`, `/.rustup/`, nor a glibc/gcc
/// source path (`../sysdeps/`, `/build/glibc`, `libio/`, `csu/`).
pub fn is_own_code(frame: &Frame) -> bool {
    /// Rust's standard library, dependencies (crates.io and git), glibc's and gcc's startup.
    const RUNTIME_PATHS: [&str; 8] = [
        "/rustc/",
        "/.cargo/registry/",
        "/.cargo/git/",
        "/.rustup/",
        "../sysdeps/",
        "/build/glibc",
        "/libio/",
        "/csu/",
    ];
    match frame.file.as_deref() {
        None | Some("") => false,
        Some(file) => {
            // A leading slash, so that a relative `libio/…` or `csu/…` matches at its start.
            let file = format!("/{file}");
            !RUNTIME_PATHS.iter().any(|runtime| file.contains(runtime))
        }
    }
}

/// What the symbolizer keeps of the executable file.
struct Executable {
    /// The lowest link-time address of an executable `PT_LOAD` segment.
    lowest_code: u64,
    /// The lowest link-time address of any `PT_LOAD` segment.
    lowest_load: u64,
    /// The end of the executable segments' file bytes (`p_vaddr + p_filesz`): the kernel's
    /// `end_code` before the load bias.
    code_end: u64,
    /// The executable segments' bytes, for the call-instruction test.
    code: Vec<Segment>,
    /// Whether the code is x86-64, the only instruction set the call test knows.
    x86_64: bool,
    /// Defined functions of the symbol table (or of the dynamic one without it), by address.
    symbols: Vec<Symbol>,
    /// The DWARF, when it parses.
    dwarf: Option<addr2line::Context<Reader>>,
}

/// An executable segment.
struct Segment {
    /// Its link-time address.
    vaddr: u64,
    /// Its bytes in the file.
    bytes: Vec<u8>,
}

/// A function of the symbol table.
struct Symbol {
    start: u64,
    end: u64,
    /// As in the file (mangled); demangled when used.
    name: String,
}

/// A function and source location, from DWARF or the symbol table.
#[derive(Default)]
struct Place {
    function: Option<String>,
    file: Option<String>,
    line: Option<u32>,
}

impl Executable {
    fn load(path: &Path) -> Option<Executable> {
        let data = std::fs::read(path).ok()?;
        let file = object::File::parse(&*data).ok()?;
        if file.format() != object::BinaryFormat::Elf {
            return None;
        }
        let mut lowest_code = u64::MAX;
        let mut lowest_load = u64::MAX;
        let mut code_end = 0;
        let mut code = Vec::new();
        // `segments()` lists the PT_LOAD program headers.
        for segment in file.segments() {
            lowest_load = lowest_load.min(segment.address());
            let object::SegmentFlags::Elf { p_flags } = segment.flags() else {
                continue;
            };
            if p_flags & object::elf::PF_X == 0 {
                continue;
            }
            let (_, file_size) = segment.file_range();
            let Some(end) = segment.address().checked_add(file_size) else {
                continue;
            };
            lowest_code = lowest_code.min(segment.address());
            code_end = code_end.max(end);
            code.push(Segment {
                vaddr: segment.address(),
                // A truncated file: no bytes, so no return address passes the call test.
                bytes: segment.data().unwrap_or_default().to_vec(),
            });
        }
        if code.is_empty() {
            return None;
        }
        Some(Executable {
            lowest_code,
            lowest_load,
            code_end,
            code,
            x86_64: matches!(
                file.architecture(),
                object::Architecture::X86_64 | object::Architecture::X86_64_X32
            ),
            symbols: functions(&file),
            dwarf: dwarf(&file),
        })
    }

    /// The load bias: `start_code` minus the lowest executable segment's address, checked
    /// against `end_code`. Older kernels set `start_code` from every PT_LOAD segment, not only
    /// the executable ones, so that reading is tried second. `None` when neither fits: the
    /// sample is not of this file.
    fn bias(&self, sample: &Sample) -> Option<u64> {
        [self.lowest_code, self.lowest_load]
            .into_iter()
            .map(|lowest| sample.start_code.wrapping_sub(lowest))
            .find(|bias| sample.end_code.wrapping_sub(*bias) == self.code_end)
    }

    /// Whether the bytes just before link-time address `vaddr` end with a call instruction
    /// (always true off x86-64, where there is no test).
    fn follows_call(&self, vaddr: u64) -> bool {
        if !self.x86_64 {
            return true;
        }
        ends_with_call(self.bytes_before(vaddr, DIRECT_CALL_LEN.max(INDIRECT_CALL_MAX)))
    }

    /// Up to `count` bytes of the file just before `vaddr`, within one executable segment.
    fn bytes_before(&self, vaddr: u64, count: usize) -> &[u8] {
        for segment in &self.code {
            let Some(end) = vaddr.checked_sub(segment.vaddr) else {
                continue;
            };
            let Ok(end) = usize::try_from(end) else {
                continue;
            };
            if end <= segment.bytes.len() {
                return &segment.bytes[end.saturating_sub(count)..end];
            }
        }
        &[]
    }

    /// The frames at `vaddr`: a return address is looked up one byte earlier, in its call
    /// instruction, so the line is the call's.
    fn frames_at(&self, vaddr: u64, is_return: bool) -> Vec<Frame> {
        let probe = if is_return {
            vaddr.wrapping_sub(1)
        } else {
            vaddr
        };
        let mut places = self.dwarf_places(probe);
        match places.last_mut() {
            // Only the outermost frame is the function the symbol table knows.
            Some(outermost) if outermost.function.is_none() => {
                outermost.function = self.symbol(probe);
            }
            Some(_) => {}
            None => places.push(Place {
                function: self.symbol(probe),
                ..Place::default()
            }),
        }
        let address = format!("{vaddr:#x}");
        places
            .into_iter()
            .map(|place| Frame {
                function: place.function,
                file: place.file,
                line: place.line,
                address: address.clone(),
            })
            .collect()
    }

    /// The DWARF frames at `probe`, innermost (inlined) first; empty without DWARF for it.
    fn dwarf_places(&self, probe: u64) -> Vec<Place> {
        let mut places = Vec::new();
        let Some(context) = &self.dwarf else {
            return places;
        };
        // No split DWARF is loaded: its units are skipped.
        let Ok(mut found) = context.find_frames(probe).skip_all_loads() else {
            return places;
        };
        while let Ok(Some(frame)) = found.next() {
            let function = (frame.function.as_ref())
                .and_then(|name| name.demangle().ok())
                .map(Cow::into_owned);
            let (file, line) = match frame.location {
                Some(location) => (location.file.map(str::to_owned), location.line),
                None => (None, None),
            };
            places.push(Place {
                function,
                file,
                line,
            });
        }
        places
    }

    /// The symbol table's function containing `probe`, demangled.
    fn symbol(&self, probe: u64) -> Option<String> {
        let after = self.symbols.partition_point(|symbol| symbol.start <= probe);
        let symbol = &self.symbols[after.checked_sub(1)?];
        (probe < symbol.end)
            .then(|| addr2line::demangle_auto(Cow::Borrowed(&symbol.name), None).into_owned())
    }
}

/// The defined functions with a size, by address: from `.symtab`, or `.dynsym` when the file
/// is stripped.
fn functions(file: &object::File<'_>) -> Vec<Symbol> {
    let of = |symbols: object::SymbolIterator<'_, '_>| -> Vec<Symbol> {
        symbols
            .filter(|symbol| {
                symbol.kind() == object::SymbolKind::Text
                    && symbol.is_definition()
                    && symbol.size() > 0
            })
            .filter_map(|symbol| {
                Some(Symbol {
                    start: symbol.address(),
                    end: symbol.address().checked_add(symbol.size())?,
                    name: symbol
                        .name()
                        .ok()
                        .filter(|name| !name.is_empty())?
                        .to_owned(),
                })
            })
            .collect()
    };
    let mut symbols = of(file.symbols());
    if symbols.is_empty() {
        symbols = of(file.dynamic_symbols());
    }
    symbols.sort_by_key(|symbol| symbol.start);
    symbols
}

/// The file's DWARF, or `None` when it does not parse. A missing (or compressed) section reads
/// as empty, so a file without debug info gives a context that finds nothing.
fn dwarf(file: &object::File<'_>) -> Option<addr2line::Context<Reader>> {
    let endian = if file.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    let dwarf = gimli::Dwarf::load(|id| -> Result<Reader, gimli::Error> {
        let bytes = (file.section_by_name(id.name()))
            .and_then(|section| section.uncompressed_data().ok())
            .unwrap_or_default();
        Ok(Reader::new(Arc::from(&*bytes), endian))
    })
    .ok()?;
    addr2line::Context::from_dwarf(dwarf).ok()
}

/// Whether `before` (the bytes just before a return address) ends with an x86-64 call:
/// `E8 rel32`, or `FF /2` (call through a register or memory) ending exactly at its end.
fn ends_with_call(before: &[u8]) -> bool {
    let n = before.len();
    if n >= DIRECT_CALL_LEN && before[n - DIRECT_CALL_LEN] == 0xE8 {
        return true;
    }
    (2..=INDIRECT_CALL_MAX.min(n)).any(|len| {
        let instruction = &before[n - len..];
        instruction[0] == 0xFF && indirect_call_len(instruction) == Some(len)
    })
}

/// The length of the `FF /2` instruction starting at `instruction[0]` (an `FF`), from its
/// ModRM byte (and SIB byte); `None` when it is not `/2` or its bytes are missing. In 64-bit
/// mode a REX prefix does not change these forms, so it is just a byte before the `FF`.
fn indirect_call_len(instruction: &[u8]) -> Option<usize> {
    let modrm = *instruction.get(1)?;
    if (modrm >> 3) & 7 != 2 {
        return None;
    }
    let (mode, rm) = (modrm >> 6, modrm & 7);
    let has_sib = mode != 3 && rm == 4;
    let displacement = match mode {
        // `FF 15 disp32`: RIP-relative.
        0 if rm == 5 => 4,
        // A SIB byte with base 101 and no ModRM displacement has a disp32.
        0 if has_sib && *instruction.get(2)? & 7 == 5 => 4,
        0 | 3 => 0,
        1 => 1,
        _ => 4,
    };
    Some(2 + usize::from(has_sib) + displacement)
}

#[cfg(test)]
mod tests;
