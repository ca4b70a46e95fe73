//! iolab's own durable files under `iolab crash` (`tests/cli_crash_dogfood.rs`): a program
//! that appends records and prints `ack I` once record I is durable, and the check that
//! a crash state keeps every acknowledged record.
//!
//! ```text
//! crash_dogfood log FILE N [POLICY]   N records to an iolab::Log (append_durable each)
//! crash_dogfood append FILE N         N records to an iolab::AppendFile, sync after each
//! crash_dogfood check-log FILE ACKS   the log opens (recovers) and holds every acked record
//! crash_dogfood check-append FILE ACKS the file starts with every acked record
//! ```
//!
//! Record I is `record I` (a newline after it in the append file). ACKS is what the
//! program had printed (`$IOLAB_CRASH_STDOUT`). A check prints `records R acks A` and
//! exits 1 when an acknowledged record is missing or altered.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use iolab::{AppendFile, LogOptions, LogPolicy};

fn record(i: usize) -> String {
    format!("record {i}")
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match argv.as_slice() {
        ["log", file, n, rest @ ..] => log(file, n, rest.first().copied()),
        ["append", file, n] => append(file, n),
        ["check-log", file, acks] => check_log(file, acks),
        ["check-append", file, acks] => check_append(file, acks),
        _ => {
            Err("usage: crash_dogfood log|append FILE N | check-log|check-append FILE ACKS".into())
        }
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("crash_dogfood: {e}");
            ExitCode::from(2)
        }
    }
}

type Outcome = Result<bool, Box<dyn std::error::Error>>;

fn ack(i: usize) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "ack {i}")?;
    out.flush()
}

fn log(file: &str, n: &str, policy: Option<&str>) -> Outcome {
    let n: usize = n.parse()?;
    let mut options = LogOptions::new();
    if let Some(p) = policy {
        options = options.policy(p.parse::<LogPolicy>()?);
    }
    let log = options.open(file)?;
    for i in 0..n {
        log.append_durable(record(i).as_bytes())?;
        ack(i)?;
    }
    Ok(true)
}

fn append(file: &str, n: &str) -> Outcome {
    let n: usize = n.parse()?;
    let mut f = AppendFile::create(file)?;
    for i in 0..n {
        f.append(format!("{}\n", record(i)).as_bytes())?;
        f.sync()?;
        ack(i)?;
    }
    Ok(true)
}

/// How many records the program acknowledged.
fn acked(acks: &str) -> Result<usize, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(acks)?;
    Ok(text.lines().filter(|l| l.starts_with("ack ")).count())
}

fn verdict(records: usize, acks: usize, ok: bool) -> Outcome {
    println!("records {records} acks {acks}");
    Ok(ok && records >= acks)
}

fn check_log(file: &str, acks: &str) -> Outcome {
    let acks = acked(acks)?;
    if !Path::new(file).exists() {
        return verdict(0, acks, true);
    }
    // Open it as the program would after a restart: recovery runs.
    drop(iolab::Log::open(file)?);
    let mut reader = iolab::Log::records(file)?;
    let mut n = 0;
    while let Some(r) = reader.next_record()? {
        if r != record(n).as_bytes() {
            println!("record {n} is {:?}", String::from_utf8_lossy(r));
            return verdict(n, acks, false);
        }
        n += 1;
    }
    verdict(n, acks, true)
}

fn check_append(file: &str, acks: &str) -> Outcome {
    let acks = acked(acks)?;
    let bytes = if Path::new(file).exists() {
        std::fs::read(file)?
    } else {
        Vec::new()
    };
    let mut at = 0;
    let mut n = 0;
    while n < acks {
        let want = format!("{}\n", record(n));
        if bytes.get(at..at + want.len()) != Some(want.as_bytes()) {
            break;
        }
        at += want.len();
        n += 1;
    }
    verdict(n, acks, true)
}
