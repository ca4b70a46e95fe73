//! The terminal summary: at most about 45 lines, findings first (at most
//! [`MAX_FINDINGS`], each with its evidence, its estimate and basis, and the fix), then the
//! busiest targets that moved data, as many as fit in [`LINES`] (at least [`MIN_TARGETS`],
//! at most [`MAX_TARGETS`]). No line is wider than [`WIDTH`] columns: the findings' texts
//! and the notes are wrapped under a hanging indent, and what cannot be wrapped (a path in
//! the targets' table, a command line) is shortened with `…` ([`super::wrap`]). The JSON
//! has everything, whole.

use std::fmt::Write;

use super::Report;
use super::wrap::{WIDTH, end, middle, width, wrap};
use crate::backend::Outcome;
use crate::costs::seconds;
use crate::model::Target;
use crate::rules::{Finding, SHOWN_SHARE};

/// Findings shown in full.
pub const MAX_FINDINGS: usize = 3;
/// Targets shown, at most.
pub const MAX_TARGETS: usize = 8;
/// Targets shown, at least (when there are that many).
pub const MIN_TARGETS: usize = 3;
/// The lines the summary aims to stay within.
pub const LINES: usize = 44;

fn bytes(n: u64) -> String {
    if n == 0 {
        "0".to_string()
    } else {
        iolab_lab::units::format_bytes(n)
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A table row: its `cells`, then `last` shortened with `shorten` to the columns left.
fn row(out: &mut String, cells: &str, last: &str, shorten: fn(&str, usize) -> String) {
    let room = WIDTH.saturating_sub(width(cells)).max(8);
    let _ = writeln!(out, "{cells}{}", shorten(last, room));
}

fn target_row(out: &mut String, t: &Target) {
    let cells = format!(
        "  {:<9} {:>9} {:>10} {:>9} {:>10} {:>6} {:>8}  ",
        t.kind_or_other().name(),
        t.read.calls,
        bytes(t.read.bytes),
        t.write.calls,
        bytes(t.write.bytes),
        t.sync_units(),
        seconds(t.total_ns() as f64 * 1e-9),
    );
    row(out, &cells, &t.path, middle);
}

/// "17 targets", or "17 targets (2016 inodes)" when paths named several inodes during the
/// run (a journal made anew per transaction: the table and the findings count it once).
fn targets_text(report: &Report) -> String {
    let inodes = report.outcome.trace.targets.len() as u64;
    let targets = report.groups.len() as u64;
    let mut text = plural(targets, "target", "targets");
    if inodes != targets {
        text.push_str(&format!(" ({inodes} inodes)"));
    }
    text
}

/// The summary's text, the backend on one short line.
pub fn render(report: &Report) -> String {
    render_with(report, false)
}

/// The summary's text; `verbose` (`iolab trace -v`) adds, under the backend's line, how it
/// traces and the whole reason it was chosen.
pub fn render_with(report: &Report, verbose: bool) -> String {
    let mut out = String::new();
    write_head(&mut out, report, verbose);
    let shown: Vec<&Finding> = report.findings.iter().filter(|f| f.shown).collect();
    write_findings(&mut out, report, &shown);
    // The terminal shows the targets that moved data or were synced; the JSON has all.
    // What is left of the budget after the findings and the closing lines (3) goes to
    // the targets: their title, header and rows take 3 + rows.
    let used = out.lines().count() + if shown.is_empty() { 0 } else { 3 };
    write_targets(&mut out, report, LINES.saturating_sub(used + 3));
    if !shown.is_empty() {
        write_sources(&mut out, report);
    }
    out
}

/// The command and how it ended, the backend, what was seen, the notes.
fn write_head(out: &mut String, report: &Report, verbose: bool) {
    let o = &report.outcome;
    let ended = format!(
        ": {} after {}",
        report.ending(),
        seconds(o.wall.as_secs_f64())
    );
    let room = WIDTH.saturating_sub(width("iolab trace: ") + width(&ended));
    let _ = writeln!(
        out,
        "iolab trace: {}{ended}",
        end(&report.display, room.max(20))
    );
    if let Some(sig) = o.interrupted {
        let _ = writeln!(
            out,
            "interrupted (signal {sig}): what was seen until the command ended"
        );
    }
    let _ = writeln!(out, "{}", backend_line(o));
    if verbose {
        out.push_str(&wrap("  how: ", 7, &o.detail));
        out.push_str(&wrap("  why: ", 7, &o.reason));
    }
    let trace = &o.trace;
    let seen = format!(
        "{}, {}, {}; {} on {}",
        plural(trace.tasks.processes, "process", "processes"),
        plural(trace.tasks.threads, "thread", "threads"),
        plural(trace.tasks.execs, "exec", "execs"),
        plural(trace.total_calls(), "I/O call", "I/O calls"),
        targets_text(report)
    );
    out.push_str(&wrap("seen: ", 6, &seen));
    for w in trace.warnings.iter().chain(&report.notes) {
        out.push_str(&wrap("note: ", 6, w));
    }
}

/// The backend's line: which one, its reason's first clause, how long it took to be
/// ready (`backend: bpf (eBPF is allowed here; ready in 0.10 s)`). How it traces and the
/// whole reason are under `-v`, and in the JSON (`backend_detail`, `backend_reason`).
fn backend_line(o: &Outcome) -> String {
    let ready = format!("ready in {}", seconds(o.setup.as_secs_f64()));
    let cut = o.reason.find([';', '(']).unwrap_or(o.reason.len());
    let why = o.reason[..cut].trim_end();
    let bare = format!("backend: {} (; {ready})", o.backend);
    match end(why, WIDTH.saturating_sub(width(&bare))) {
        why if why.is_empty() => format!("backend: {} ({ready})", o.backend),
        why => format!("backend: {} ({why}; {ready})", o.backend),
    }
}

/// How many findings, the hidden ones counted, then the first [`MAX_FINDINGS`] in full.
fn write_findings(out: &mut String, report: &Report, shown: &[&Finding]) {
    out.push('\n');
    let minor = report.findings.len() - shown.len();
    let minor_text = || {
        format!(
            "{} that would save under {:.0}% of the run each (in --json)",
            plural(minor as u64, "finding", "findings"),
            SHOWN_SHARE * 100.0
        )
    };
    if shown.is_empty() {
        let what = if report.outcome.trace.lost.is_none() {
            "none of the write-ups' pitfalls in these calls"
        } else {
            "none in the calls that were kept, but the trace is incomplete (see the notes)"
        };
        out.push_str(&wrap("no findings: ", 13, what));
        if minor > 0 {
            out.push_str(&wrap("  (", 3, &format!("{})", minor_text())));
        }
    } else {
        let mut line = plural(shown.len() as u64, "finding", "findings");
        if minor > 0 {
            let _ = write!(line, " (and {})", minor_text());
        }
        out.push_str(&wrap("", 2, &line));
    }
    for (i, f) in shown.iter().take(MAX_FINDINGS).enumerate() {
        write_finding(out, i + 1, f);
    }
    if shown.len() > MAX_FINDINGS {
        let _ = writeln!(out, "   ({} more in --json)", shown.len() - MAX_FINDINGS);
    }
}

/// The busiest targets that moved data or were synced: `budget` lines for the title, the
/// header and the rows (the rows within [`MIN_TARGETS`]..=[`MAX_TARGETS`]).
fn write_targets(out: &mut String, report: &Report, budget: usize) {
    let all = report.groups_by_time();
    let targets: Vec<&Target> = all
        .iter()
        .copied()
        .filter(|t| t.read.calls + t.write.calls + t.sync_units() > 0)
        .collect();
    if targets.is_empty() {
        return;
    }
    let rows = budget.clamp(MIN_TARGETS, MAX_TARGETS).min(targets.len());
    out.push('\n');
    let title = format!(
        "targets ({} of the {} that moved data, of {} in all; by time in their calls)",
        rows,
        targets.len(),
        all.len()
    );
    out.push_str(&wrap("", 2, &title));
    let _ = writeln!(
        out,
        "  {:<9} {:>9} {:>10} {:>9} {:>10} {:>6} {:>8}  path",
        "kind", "reads", "read", "writes", "written", "syncs", "time"
    );
    for t in targets.iter().take(rows) {
        target_row(out, t);
    }
}

/// A line of code or a command, under `prefix`: as it is when it fits, else wrapped at its
/// spaces, the rest two columns further in than its first line.
fn code_line(out: &mut String, prefix: &str, line: &str) {
    let indent = line.len() - line.trim_start().len();
    let first = format!("{prefix}{}", &line[..indent]);
    if width(&first) + width(line.trim_start()) <= WIDTH {
        let _ = writeln!(out, "{first}{}", line.trim_start());
    } else {
        out.push_str(&wrap(&first, width(&first) + 2, line));
    }
}

/// Finding number `n`: what, the evidence, the estimate and its basis, the fix.
fn write_finding(out: &mut String, n: usize, f: &Finding) {
    let head = format!("{n}. {}: ", f.kind);
    let kind = format!(" ({})", f.target_kind.name());
    let room = WIDTH.saturating_sub(width(&head) + width(&kind));
    let _ = writeln!(out, "{head}{}{kind}", middle(&f.path, room.max(8)));
    out.push_str(&wrap("   ", 5, &f.evidence));
    if let Some(p) = f.processes.first() {
        // One line: the command line cut at its end to what the rest leaves (the JSON's
        // `processes` has its words whole).
        let more = match f.processes.len() - 1 {
            0 => String::new(),
            n => format!(
                " and {}",
                plural(n as u64, "other process", "other processes")
            ),
        };
        let pid = format!("   by: pid {} ", p.pid);
        let calls = format!(" ({}){more}", plural(p.use_.calls, "call", "calls"));
        let room = WIDTH.saturating_sub(width(&pid) + width(&calls)).max(20);
        let command = end(&command_line(&p.exe, &p.args), room);
        out.push_str(&wrap(
            "   by: ",
            7,
            &format!("pid {} {command}{calls}", p.pid),
        ));
    }
    if let Some(s) = f.stacks.first() {
        out.push_str(&wrap("   at: ", 7, &frames_text(s)));
    }
    match (f.estimated_fixed_s, f.saving_s) {
        _ if f.risk.is_some() => {
            out.push_str(&wrap("   risk: ", 9, f.risk.as_deref().unwrap_or_default()));
        }
        (Some(fixed), Some(saving)) => {
            let costs = format!(
                "costs ≈ {} here; with the fix ≈ {}: saves ≈ {}{}",
                seconds(f.estimated_s),
                seconds(fixed),
                seconds(saving),
                f.share
                    .map(|s| format!(", {:.0}% of the run", s * 100.0))
                    .unwrap_or_default()
            );
            out.push_str(&wrap("   ", 5, &costs));
        }
        _ => {
            let costs = format!(
                "costs ≈ {} here; the fix was not measured (see --json's costs)",
                seconds(f.estimated_s)
            );
            out.push_str(&wrap("   ", 5, &costs));
        }
    }
    for b in &f.basis {
        out.push_str(&wrap("     basis: ", 12, b));
    }
    for w in &f.warnings {
        out.push_str(&wrap("   note: ", 9, w));
    }
    let label = match f.program {
        crate::program::Program::Unknown => "   fix: ".to_string(),
        program => format!("   fix ({}): ", program.name()),
    };
    out.push_str(&wrap(&label, width(&label), &f.fix));
    code_line(out, "     ", &f.cli);
    // The library call is the fix for a Rust program (and the best guess for an unknown
    // one); another program's fix is its own, above.
    if f.program.takes_iolab() {
        for line in f.library.lines() {
            code_line(out, "     ", line);
        }
    }
}

/// A process's command line on one line: its arguments (a line break in one shown as
/// `\n`), or its executable when it has none.
fn command_line(exe: &str, args: &[String]) -> String {
    let line = if args.is_empty() {
        exe.to_string()
    } else {
        args.join(" ")
    };
    line.chars()
        .flat_map(|c| match c {
            '\n' => vec!['\\', 'n'],
            c if c.is_control() => vec![' '],
            c => vec![c],
        })
        .collect()
}

/// The top frames of a stack: the first in the program's own code and the two around it,
/// "f (prog.c:12) ← main (prog.c:30)".
fn frames_text(s: &crate::origin::Stack) -> String {
    let at = s
        .own_frame()
        .and_then(|o| s.frames.iter().position(|f| f == o))
        .unwrap_or(0);
    s.frames
        .iter()
        .skip(at)
        .take(3)
        .map(|f| {
            let place = match (&f.file, f.line) {
                (Some(file), Some(line)) => {
                    let name = std::path::Path::new(file)
                        .file_name()
                        .map_or(file.clone(), |n| n.to_string_lossy().into_owned());
                    format!(" ({name}:{line})")
                }
                _ => String::new(),
            };
            format!(
                "{}{place}",
                f.function.as_deref().unwrap_or(f.address.as_str())
            )
        })
        .collect::<Vec<_>>()
        .join(" ← ")
        + if s.frames.iter().all(|f| f.function.is_none()) {
            " (the executable has no symbols)"
        } else {
            ""
        }
}

/// The processes the command ran, with their calls, bytes and time on every target
/// (`--verbose`).
pub fn processes(report: &Report) -> String {
    let mut out = String::from(
        "
processes (calls, bytes and time on every target)
",
    );
    let _ = writeln!(
        out,
        "  {:>8} {:>8} {:>10} {:>10} {:>8}  command",
        "pid", "parent", "calls", "bytes", "time"
    );
    for (p, u) in report.processes() {
        let cells = format!(
            "  {:>8} {:>8} {:>10} {:>10} {:>8}  ",
            p.pid,
            p.parent.map_or("-".to_string(), |x| x.to_string()),
            u.calls,
            bytes(u.bytes),
            seconds(u.ns as f64 * 1e-9),
        );
        row(
            &mut out,
            &cells,
            &end(&command_line(&p.exe, &p.args), 60),
            end,
        );
    }
    out
}

/// Where the estimates came from, and what the times include.
fn write_sources(out: &mut String, report: &Report) {
    let s = &report.sources;
    let text = match (&s.results, s.calibration) {
        (Some(r), Some(c)) => format!(
            "iolab bench results {}, and a calibration that ran here for {} for the rest",
            r.display(),
            seconds(c.as_secs_f64())
        ),
        (Some(r), None) => format!("iolab bench results {}", r.display()),
        (None, Some(c)) => format!(
            "a calibration that ran here for {} ({}; `iolab bench` measures more)",
            seconds(c.as_secs_f64()),
            s.no_results.as_deref().unwrap_or("no results")
        ),
        (None, None) => "none measured".to_string(),
    };
    out.push('\n');
    out.push_str(&wrap("estimates: ", 11, &text));
    out.push_str(&wrap("times: ", 7, &report.outcome.timing_note));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Backend, Outcome};
    use crate::costs::Sources;
    use crate::model::{Exit, Kind, Target, Trace};
    use crate::rules::FindingKind;
    use std::time::Duration;

    fn report(findings: usize, targets: usize) -> Report {
        let mut trace = Trace::default();
        for i in 0..targets {
            let mut t = Target::new(None, Some(Kind::File), format!("/data/file{i}"));
            t.read
                .add(100, 1000 * i as u64, 0, crate::model::Place::Sequential);
            trace.targets.push(t);
        }
        let groups = trace.targets.clone();
        let finding = |i: usize| Finding {
            kind: FindingKind::SmallWrites,
            path: format!("/data/file{i}"),
            target_kind: Kind::File,
            calls: 5000,
            bytes: 50_000,
            evidence: "5000 writes of 10 B".into(),
            measured_s: 0.009,
            estimated_s: 0.01,
            estimated_fixed_s: Some(0.0001),
            saving_s: Some(0.0099),
            share: Some(0.99),
            shown: i != 4,
            basis: vec!["made up: 2 µs a write".into(), "made up: 10 GB/s".into()],
            warnings: vec![],
            fix: "buffer".into(),
            program: crate::program::Program::Unknown,
            cli: "iolab bench append".into(),
            library: iolab_lab::snippet::append(iolab_lab::append::Strategy::AppendFile, None),
            risk: None,
            processes: Vec::new(),
            stacks: Vec::new(),
            keys: Vec::new(),
        };
        Report {
            command: vec!["prog".into()],
            display: "prog".into(),
            program: crate::program::recognise(std::path::Path::new("prog"), &[], false),
            outcome: Outcome {
                backend: Backend::Ptrace,
                reason: "asked for".into(),
                detail: "ptrace".into(),
                trace,
                exit: Exit::Code(0),
                wall: Duration::from_millis(10),
                setup: Duration::from_millis(1),
                interrupted: None,
                timing_note: "test".into(),
                stop_round_trip: None,
                user_cpu: None,
                stopped_in_calls: None,
            },
            findings: (0..findings).map(finding).collect(),
            groups,
            sources: Sources {
                calibration: Some(Duration::from_millis(300)),
                ..Sources::default()
            },
            notes: vec![],
        }
    }

    #[test]
    fn a_command_line_stays_on_one_line() {
        let args = [
            "python3".to_string(),
            "-c".into(),
            "import os\nprint(1)\t".into(),
        ];
        assert_eq!(
            command_line("/usr/bin/python3", &args),
            "python3 -c import os\\nprint(1) "
        );
        assert_eq!(command_line("/bin/x", &[]), "/bin/x");
    }

    #[test]
    fn the_summary_stays_within_its_line_budget() {
        for (findings, targets) in [(0, 50), (1, 50), (3, 50), (5, 50), (5, 0)] {
            let text = render(&report(findings, targets));
            let lines = text.lines().count();
            assert!(
                lines <= LINES + 2,
                "{findings} findings, {targets} targets: {lines} lines\n{text}"
            );
            if targets > 0 {
                assert!(text.contains("targets ("), "{text}");
            }
        }
        let text = render(&report(5, 50));
        assert!(text.contains("(1 more in --json)"), "{text}");
        assert!(
            text.contains(
                "4 findings (and 1 finding that would save under 2% of the run each (in --json))"
            ),
            "{text}"
        );
        assert!(text.contains("basis: made up"), "{text}");
    }

    /// Whether `part`'s words are, in order, among `text`'s: wrapping lost none.
    fn keeps_words(text: &str, part: &str) -> bool {
        let all: Vec<&str> = text.split_whitespace().collect();
        let want: Vec<&str> = part.split_whitespace().collect();
        all.windows(want.len()).any(|w| w == want.as_slice())
    }

    /// A report whose every text is long: paths of 110 columns (the widest a wrapped line
    /// can take whole), notes, fixes, basis, stacks and command lines of several lines.
    fn long_report(path: &str) -> Report {
        use crate::origin::{ProcessUse, Stack};
        use crate::stacks::Frame;
        let mut r = report(3, 12);
        for (i, t) in r.groups.iter_mut().enumerate() {
            t.path = format!("{path}.{i}");
        }
        r.outcome.trace.targets = r.groups.clone();
        r.display = format!("dd if=/dev/zero of={path} bs=16 count=5000 status=none");
        r.outcome.reason = "bpf is not available: eBPF needs root or CAP_BPF and CAP_PERFMON \
            (running as uid 1000 without them): run with sudo, or `setcap cap_bpf,cap_perfmon+ep` \
            on iolab"
            .into();
        r.outcome.detail = "ptrace with a seccomp filter on the I/O calls".into();
        r.outcome.timing_note = format!(
            "ptrace: {}",
            "a call that waited counts its time; ".repeat(9)
        );
        r.outcome.trace.warnings = vec![format!(
            "{path} was renamed while open; {}",
            "so on ".repeat(20)
        )];
        r.notes = vec![format!(
            "ptrace might have cost less for this command: {}",
            "and more ".repeat(20)
        )];
        r.sources.results = Some(format!("{path}/results.json").into());
        let frame = |n: usize| Frame {
            function: Some(format!(
                "iolab_example::writer::records::one_by_one::{}{n}",
                "deep::".repeat(8)
            )),
            file: Some(format!("{path}/src/writer.rs")),
            line: Some(1234),
            address: "0x5b7c".into(),
        };
        let by = |pid: u32| ProcessUse {
            pid,
            exe: "/usr/bin/dd".into(),
            args: vec!["dd".into(), "if=/dev/zero".into(), format!("of={path}")],
            use_: crate::model::Use {
                calls: 123_456_789_012,
                bytes: 1,
                ns: 1,
            },
        };
        for f in &mut r.findings {
            f.path = path.to_string();
            f.evidence = format!(
                "a copy loop: 5000 reads of 16 B (78.1 KiB) from /dev/zero, 860 µs in the calls, \
                 each one followed by a write of it to {path}: 5000 writes of 16 B (78.1 KiB) to \
                 a file, 2.5 ms in the calls; and, in the same numbers, {path} again"
            );
            f.fix = format!(
                "give `dd` a larger block, `dd bs=1M …`: {}",
                "each of its reads and writes moves `bs` bytes ".repeat(4)
            );
            f.basis.push(format!("calibrated here: 1883 records of 4.26 KiB appended in {path}, an fdatasync per record"));
            f.warnings.push(format!(
                "the writes to {path} were {}",
                "interleaved with others ".repeat(8)
            ));
            f.processes = vec![by(4_194_303), by(2)];
            f.stacks = vec![Stack {
                pid: 4_194_303,
                call: "write".into(),
                frames: (0..4).map(frame).collect(),
            }];
            f.cli =
                format!("iolab bench append --methods write-per-record,append-file --out {path}");
        }
        r.findings[1].risk = Some(format!(
            "a crash can leave {path} {}",
            "half written and renamed ".repeat(8)
        ));
        r
    }

    #[test]
    fn every_line_fits_in_120_columns_and_no_word_of_the_texts_is_lost() {
        // 100 columns: whole on every wrapped line, under the widest hanging indent.
        let path = format!(
            "/{}{}",
            "a-very-long-folder-name-of-this-test/".repeat(2),
            "file-with-a-long-name.bin"
        );
        assert_eq!(width(&path), 100);
        let r = long_report(&path);
        for verbose in [false, true] {
            let text = render_with(&r, verbose);
            for line in text.lines() {
                assert!(
                    width(line) <= WIDTH,
                    "{} columns: {line}\n{text}",
                    width(line)
                );
            }
            let f = &r.findings[0];
            let mut parts = vec![&f.evidence, &f.fix, &f.basis[2], &f.warnings[0], &f.cli];
            parts.extend(r.findings[1].risk.as_ref());
            parts.extend(&r.notes);
            parts.extend(&r.outcome.trace.warnings);
            parts.push(&r.outcome.timing_note);
            let stack = frames_text(&f.stacks[0]);
            parts.push(&stack);
            if verbose {
                parts.push(&r.outcome.reason);
            }
            for part in parts {
                assert!(keeps_words(&text, part), "lost words of {part:?}:\n{text}");
            }
            // Each label keeps its place, its text's later lines under the text's start.
            for label in [
                "   by: pid 4194303 dd ",
                "   at: ",
                "   risk: a crash",
                "     basis: calibrated",
            ] {
                assert!(text.contains(&format!("\n{label}")), "{label:?}:\n{text}");
            }
            for (label, hang) in [
                ("   fix: ", 8),
                ("   note: ", 9),
                ("     basis: calibrated", 12),
            ] {
                let mut lines = text.lines().skip_while(|l| !l.starts_with(label)).skip(1);
                let next = lines.next().unwrap();
                assert!(
                    next.starts_with(&" ".repeat(hang)),
                    "{label:?}: {next:?}\n{text}"
                );
                assert!(
                    !next[hang..].starts_with(' '),
                    "{label:?}: {next:?}\n{text}"
                );
            }
            // The finding's path, shortened on its line to fit; the backend, one short line.
            let heading = text.lines().find(|l| l.starts_with("1. ")).unwrap();
            assert_eq!(width(heading), WIDTH, "{heading}");
            assert!(
                heading.starts_with("1. small-writes: /a-very-long"),
                "{heading}"
            );
            assert!(
                heading.ends_with("/file-with-a-long-name.bin (file)"),
                "{heading}"
            );
            let backend = text.lines().find(|l| l.starts_with("backend: ")).unwrap();
            assert_eq!(
                backend,
                "backend: ptrace (bpf is not available: eBPF needs root or CAP_BPF and \
                 CAP_PERFMON; ready in 1.0 ms)"
            );
            assert_eq!(
                text.contains("\n  why: bpf is not available"),
                verbose,
                "{text}"
            );
            let processes = processes(&r);
            assert!(processes.lines().all(|l| width(l) <= WIDTH), "{processes}");
        }
    }

    #[test]
    fn a_path_wider_than_a_line_is_shortened_in_the_middle() {
        let path = format!(
            "/{}file.bin",
            "a-very-long-folder-name-of-this-test/".repeat(5)
        );
        let text = render(&long_report(&path));
        assert!(text.lines().all(|l| width(l) <= WIDTH), "{text}");
        // Each shortened word is the head of a path the JSON has whole, `…`, and its tail.
        let whole: Vec<String> = (0..12)
            .map(|i| format!("{path}.{i}"))
            .chain([path.clone(), format!("{path}/results.json")])
            .collect();
        let shortened: Vec<&str> = text
            .split_whitespace()
            .filter(|w| w.starts_with("/a-very-long") && w.contains('…'))
            .collect();
        assert!(shortened.len() > 5, "{text}");
        for word in shortened {
            let (head, tail) = word.split_once('…').unwrap();
            let tail = tail.trim_end_matches([':', ',', ';']);
            assert!(
                whole
                    .iter()
                    .any(|p| p.starts_with(head) && p.ends_with(tail)),
                "{word}"
            );
        }
    }
}
