//! Replaces every `,` by `;` in a file, in place, with the strategy `iolab bench edit`
//! hands over: `mmap` (the file mapped shared, changed through the map, `msync`). The
//! length never changes, so nothing is copied to a new file.
//!
//! ```text
//! cargo run --release --example edit_in_place -- FILE
//! ```
//!
//! If FILE does not exist, a 10 000-row CSV is written there first, so there is something
//! to edit. Running it twice is harmless: the second run finds no `,` and changes nothing.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use iolab::edit::{Editor, Outcome, Strategy};
use iolab::generate::{AtomicOptions, CsvSpec, write_csv, write_file_atomically};
use iolab::units::{format_bytes, format_duration};

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [path] = args.as_slice() else {
        eprintln!("usage: edit_in_place FILE");
        return ExitCode::FAILURE;
    };
    if let Err(e) = run(path) {
        eprintln!("edit_in_place: {}: {e}", path.display());
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

fn run(path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    if !path.exists() {
        let spec = CsvSpec {
            rows: 10_000,
            ..CsvSpec::default()
        };
        // Atomically (a temporary file, then a rename): an interrupted run leaves no
        // half-written CSV behind.
        let made = write_file_atomically(path, &AtomicOptions::new(), |out| write_csv(out, &spec))?;
        println!("created {} ({} rows of CSV)", path.display(), made.lines);
    }
    // Durable by default: `Ok` only once `msync` has put the change on the device.
    // `.durable(false)` is the benchmark's no-sync variant (a crash may lose the edit).
    let report = Editor::new(Strategy::Mmap).replace_byte(path, b',', b';')?;
    let changed = match report.outcome {
        Outcome::Replaced { changed } => changed,
        _ => 0,
    };
    let kernel = report.kernel.map_or("none".to_string(), |k| k.to_string());
    println!(
        "replaced {changed} ',' by ';' in {} with the {} strategy ({kernel} kernel)",
        format_bytes(report.len_after),
        report.strategy,
    );
    println!(
        "took {}{}",
        format_duration(report.total.as_secs_f64()),
        if report.durable {
            ", synced to the device"
        } else {
            ""
        },
    );
    Ok(())
}
