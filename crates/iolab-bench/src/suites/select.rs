//! Which suites a run measures, from `--suite`, `--methods` and `--file`, refused before
//! anything is measured when they do not fit together.

use super::{SUITES, find};
use crate::suite::Suite;
use iolab::UnknownName;

/// A suite's method and baseline names.
pub fn names_of(suite: &Suite) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = (suite.methods)().into_iter().map(|m| m.name).collect();
    names.extend(suite.default_rows);
    names.extend(suite.baselines.iter().copied());
    names
}

/// Every method and baseline name of every suite, once each.
pub fn known_names() -> Vec<&'static str> {
    let mut names = Vec::new();
    for suite in SUITES {
        for name in names_of(suite) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// The suites that have `method`.
fn suites_of(method: &str) -> Vec<&'static str> {
    SUITES
        .iter()
        .filter(|s| names_of(s).contains(&method))
        .map(|s| s.name)
        .collect()
}

/// The suites to run: `asked` (`--suite`), or else every suite (those that read a file
/// when `files` were given; those with one of `methods` when methods were given). An error
/// names the option at fault: an unknown method, a method of no suite that runs, a suite
/// that does not read `--file`.
pub fn select(
    asked: Vec<String>,
    methods: Option<&[String]>,
    files: bool,
) -> Result<Vec<String>, String> {
    if let Some(methods) = methods {
        let known = known_names();
        if let Some(m) = methods.iter().find(|m| !known.contains(&m.as_str())) {
            let unknown = UnknownName {
                kind: "method",
                name: m.clone(),
                expected: known,
            };
            return Err(format!("--methods: {unknown}"));
        }
    }
    let suites: Vec<String> = if asked.is_empty() {
        SUITES
            .iter()
            .filter(|s| !files || s.takes_files)
            // With --methods, only the suites that have one of them (a suite without
            // would measure baselines nobody asked for).
            .filter(|s| {
                methods.is_none_or(|methods| {
                    let names = names_of(s);
                    methods.iter().any(|m| names.contains(&m.as_str()))
                })
            })
            .map(|s| s.name.to_string())
            .collect()
    } else {
        asked
    };
    if let Some(methods) = methods {
        check_methods(&suites, methods)?;
    }
    if files
        && let Some(suite) = suites
            .iter()
            .find(|s| find(s).is_some_and(|s| !s.takes_files))
    {
        let readers: Vec<&str> = SUITES
            .iter()
            .filter(|s| s.takes_files)
            .map(|s| s.name)
            .collect();
        return Err(format!(
            "--file: the {suite} suite does not read a file (suites that do: {})",
            readers.join(", ")
        ));
    }
    Ok(suites)
}

/// Each of `methods` must belong to one of `suites`: `bench count --methods vmsplice` would
/// otherwise measure baselines only and say nothing.
fn check_methods(suites: &[String], methods: &[String]) -> Result<(), String> {
    let selected: Vec<&'static str> = suites
        .iter()
        .filter_map(|name| find(name))
        .flat_map(names_of)
        .collect();
    match methods.iter().find(|m| !selected.contains(&m.as_str())) {
        None => Ok(()),
        Some(m) => {
            let scope = match suites {
                [] => "a suite that reads --file".to_string(),
                [one] => format!("the {one} suite"),
                many => format!("the suites {}", many.join(", ")),
            };
            let owners = suites_of(m);
            Err(format!(
                "--methods: '{m}' is not a method of {scope} (it is one of {}'s: see `iolab methods {}`)",
                owners.join("'s, "),
                owners.first().copied().unwrap_or("count")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_rows_of_a_suite_can_be_selected_by_name() {
        let one = |suite: &str| vec![suite.to_string()];
        let auto = vec!["auto".to_string()];
        // edit measures its default as rows of their own; count's is one of its methods.
        assert!(check_methods(&one("edit"), &auto).is_ok());
        assert!(check_methods(&one("count"), &auto).is_ok());
        let e = check_methods(&one("write"), &auto).unwrap_err();
        assert!(
            e.contains("'auto' is not a method of the write suite"),
            "{e}"
        );
    }
}
