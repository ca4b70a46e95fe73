//! The stack of each call the journal records (`iolab crash`'s report names where in the
//! program a lost change was made): the user stack is read while the task is stopped at
//! the call's exit and symbolized in the process's executable at once ([`crate::stacks`]:
//! frames in the main executable only, the program's own code first).

use std::collections::HashMap;

use super::witness::{code_range, read_words};
use crate::model::events::STACK_WORDS;
use crate::stacks::{Frame, Sample, Symbolizer, is_own_code};

/// Frames kept per call.
const FRAMES: usize = 6;

/// Symbolizers by process and executable (an exec changes the executable).
#[derive(Default)]
pub struct CallStacks {
    symbolizers: HashMap<(i32, String), (Symbolizer, (u64, u64))>,
    words: Vec<u64>,
}

impl CallStacks {
    /// The frames of task `tid` (of process `tgid`) stopped with its instruction pointer at
    /// `ip` and its stack pointer at `sp`: `function (file:line)`, innermost first, the
    /// program's own code only when it has any.
    pub fn of(&mut self, tid: i32, tgid: i32, (ip, sp): (u64, u64)) -> Vec<String> {
        let Ok(exe) = std::fs::read_link(format!("/proc/{tgid}/exe")) else {
            return Vec::new();
        };
        let key = (tgid, exe.to_string_lossy().into_owned());
        let (symbolizer, code) = self
            .symbolizers
            .entry(key)
            .or_insert_with(|| (Symbolizer::new(&exe), code_range(tgid)));
        self.words.resize(STACK_WORDS, 0);
        let n = [STACK_WORDS, STACK_WORDS / 4, STACK_WORDS / 32]
            .into_iter()
            .map(|n| read_words(tid, sp, &mut self.words[..n]))
            .find(|&n| n > 0)
            .unwrap_or(0);
        let sample = Sample {
            ip,
            start_code: code.0,
            end_code: code.1,
            words: (self.words[..n].iter().copied())
                .filter(|w| (code.0..code.1).contains(w))
                .collect(),
        };
        let mut frames = symbolizer.frames(&sample, 32);
        // The C runtime's entry point says nothing about the program.
        frames.retain(|f| f.function.as_deref() != Some("_start"));
        let own: Vec<&Frame> = frames.iter().filter(|f| is_own_code(f)).collect();
        let shown = if own.is_empty() {
            frames.iter().collect()
        } else {
            own
        };
        shown.into_iter().take(FRAMES).map(describe).collect()
    }
}

/// `function (file:line)`, the file by its last two parts; the address when nothing else
/// is known.
fn describe(frame: &Frame) -> String {
    let function = frame.function.as_deref().unwrap_or(&frame.address);
    match (&frame.file, frame.line) {
        (Some(file), Some(line)) => {
            let mut parts = file.rsplit('/');
            let name = parts.next().unwrap_or(file);
            let short = match parts.next() {
                Some(dir) => format!("{dir}/{name}"),
                None => name.to_string(),
            };
            format!("{function} ({short}:{line})")
        }
        _ => function.to_string(),
    }
}
