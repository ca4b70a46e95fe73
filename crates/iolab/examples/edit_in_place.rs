//! Replaces every `,` by `;` in a file, in place, with the call `iolab bench edit` hands
//! over: `iolab::replace_byte`, whose default strategy is `mmap` (the file mapped shared,
//! changed through the map, `msync`). The length never changes, so nothing is copied to a
//! new file. `EditOptions::new().strategy(…)` takes another strategy.
//!
//! ```text
//! cargo run --release --example edit_in_place -- FILE
//! ```
//!
//! If FILE does not exist, a 10 000-row CSV is written there first, so there is something
//! to edit. Running it twice is harmless: the second run finds no `,` and changes nothing.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use iolab::EditOutcome;

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [path] = args.as_slice() else {
        eprintln!("usage: edit_in_place FILE");
        return ExitCode::FAILURE;
    };
    if let Err(e) = run(path) {
        eprintln!("edit_in_place: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

fn run(path: &Path) -> iolab::Result<()> {
    if !path.exists() {
        let rows: String = (0..10_000)
            .map(|i| format!("{i},{},{},row {i}\n", i * 7, i % 13))
            .collect();
        // A new file only (`create_new`): never overwrite something of the user's.
        std::io::Write::write_all(&mut std::fs::File::create_new(path)?, rows.as_bytes())?;
        println!("created {} (10000 rows of CSV)", path.display());
    }
    // Durable by default: `Ok` only once `msync` has put the change on the device.
    // `.durable(false)` is the benchmark's no-sync variant (a crash may lose the edit).
    let report = iolab::replace_byte(path, b',', b';')?;
    let changed = match report.outcome {
        EditOutcome::Replaced { changed } => changed,
        _ => 0,
    };
    let kernel = report.kernel.map_or("none".to_string(), |k| k.to_string());
    println!(
        "replaced {changed} ',' by ';' in {} bytes with the {} strategy ({kernel} kernel)",
        report.len_after, report.strategy,
    );
    println!(
        "took {:.3} s{}",
        report.total.as_secs_f64(),
        if report.durable {
            ", synced to the device"
        } else {
            ""
        },
    );
    Ok(())
}
