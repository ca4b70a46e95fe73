//! A finding made whole, once: after its estimate, the processes that made its calls,
//! their sampled stacks, the program they run and the fix in that program's terms
//! ([`super::programs`]).

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use super::Finding;
use crate::model::Trace;
use crate::origin::{self, Origins};
use crate::program::{self, Program, Recognised};

/// What the findings of one run are made with, beyond the estimates.
pub struct Run<'a> {
    /// The trace.
    pub trace: &'a Trace,
    /// The run's wall time (untraced, as near as the backend can tell): each saving's
    /// share is of it.
    pub wall: Duration,
    /// The command's program, as recognised from its words.
    pub program: &'a Recognised,
    /// Whether `PYTHONUNBUFFERED` was set for the command.
    pub unbuffered_env: bool,
}

/// Completes findings of one run: one symbolizer per executable, one recognition per
/// program and arguments, whatever the number of findings.
pub(super) struct Assembler<'a> {
    run: &'a Run<'a>,
    origins: Origins<'a>,
    programs: HashMap<(String, Vec<String>), Recognised>,
}

impl<'a> Assembler<'a> {
    pub(super) fn new(run: &'a Run<'a>) -> Assembler<'a> {
        Assembler {
            run,
            origins: Origins::new(run.trace),
            programs: HashMap::new(),
        }
    }

    /// Fills `f`'s processes, stacks, program and the program's own fix.
    pub(super) fn complete(&mut self, f: &mut Finding) {
        f.processes = self.origins.processes(&f.keys);
        f.stacks = self
            .origins
            .stacks(&f.keys, origin::offending_calls(f.kind.name()));
        let r = self.program_of(f);
        f.program = r.program;
        if let Some(fix) = super::programs::fix(&r, f) {
            f.fix = fix;
        }
    }

    /// The program of the processes that made the finding's calls, when they all run one
    /// (a script's many `git` processes are git; a pipeline's writer and reader are two
    /// programs); else the command's.
    fn program_of(&mut self, f: &Finding) -> Recognised {
        let unbuffered = self.run.unbuffered_env;
        let mut one: Option<Recognised> = None;
        for p in &f.processes {
            let r = self
                .programs
                .entry((p.exe.clone(), p.args.clone()))
                .or_insert_with(|| {
                    let rest = p.args.get(1..).unwrap_or_default();
                    program::recognise(Path::new(&p.exe), rest, unbuffered)
                });
            match &one {
                _ if r.program == Program::Unknown => return self.run.program.clone(),
                Some(o) if o.program != r.program => return self.run.program.clone(),
                Some(_) => {}
                None => one = Some(r.clone()),
            }
        }
        one.unwrap_or_else(|| self.run.program.clone())
    }
}
