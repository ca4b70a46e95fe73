//! Writing this machine's profile: the winners `iolab bench` measured, which the library's
//! defaults follow (`iolab::lab::profile` reads it, [`load_checked`]). One way to write it:
//! [`save`] with a [`Record`] change; a change that records nothing writes nothing.

use std::path::PathBuf;

pub use iolab::lab::profile::*;

/// The changes a benchmark run makes to a profile; each says whether it changed anything.
pub trait Record {
    /// Records a `count` run's `decisions` for a `file_bytes` data set (nothing below
    /// [`MIN_BYTES`]): each winner replaces its cache state's entry for that size class,
    /// each tie removes it; other classes are kept.
    fn record_count(&mut self, file_bytes: u64, decisions: &[Decision]) -> bool;
    /// Records the `random` suite's winners (nothing below [`MIN_BYTES`] or without one).
    fn record_random(&mut self, file_bytes: u64, winners: Vec<RandomWinner>) -> bool;
    /// Records the depths `iolab bench random --sweep` measured (nothing below
    /// [`MIN_BYTES`]): each method and class measured replaces its entry, and one `tied`
    /// (no depth beat the rule's beyond the noise) is removed.
    fn record_random_depths(
        &mut self,
        file_bytes: u64,
        depths: Vec<RandomDepth>,
        tied: &[(String, String)],
    ) -> bool;
    /// Records a run's decision for `condition` in the `which` list: `Some` winner replaces
    /// the condition's entry, `None` (a tie) removes it, so the rule applies again.
    fn record_strategy(
        &mut self,
        which: Strategies,
        condition: &str,
        winner: Option<StrategyWinner>,
    ) -> bool;
}

/// The remembered winners, when they exist and were measured on this machine as it is.
pub fn load() -> Option<Profile> {
    load_checked().ok()
}

/// What a benchmark run decided for one cache state: a winner, or a tie (which removes the
/// class's previous winner, so the rule applies again).
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// A method beat every other beyond the noise.
    Winner(CountWinner),
    /// No method did: `auto` keeps its rule for this cache state and size class.
    Tie {
        /// `warm` or `cold`.
        cache: String,
    },
}

/// Applies `change` to this machine's profile and writes it atomically into the cache
/// folder, as measured now on this machine by this user and iolab; the one way a profile is
/// written. `change` says whether it changed anything (the `record_*` methods do): when it
/// did not, nothing is written. A profile this process would not follow (another machine,
/// user or version) is started afresh. Returns where it was written (`None`: not written,
/// or no cache folder).
pub fn save(change: impl FnOnce(&mut Profile) -> bool) -> std::io::Result<Option<PathBuf>> {
    let mut profile = load().unwrap_or_default();
    if !change(&mut profile) {
        return Ok(None);
    }
    let Some(dir) = cache_dir() else {
        return Ok(None);
    };
    profile.measured_at = crate::machine::now_rfc3339();
    profile.kernel_release = kernel_release();
    profile.cores = cores();
    profile.cpu_model = cpu_model();
    profile.written_by = Some(Provenance::here());
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(FILE_NAME);
    let json = serde_json::to_vec_pretty(&profile).expect("a profile serializes");
    crate::atomic::write_file_atomically(
        &path,
        &crate::atomic::AtomicOptions::new().overwrite(true),
        |out| {
            out.write_all(&json)
                .map_err(|e| iolab::Error::io("cannot write", e).into())
        },
    )
    .map_err(std::io::Error::other)?;
    Ok(Some(path))
}

impl Record for Profile {
    fn record_count(&mut self, file_bytes: u64, decisions: &[Decision]) -> bool {
        let Some(class) = SizeClass::of(file_bytes).filter(|_| !decisions.is_empty()) else {
            return false;
        };
        for decision in decisions {
            let cache = match decision {
                Decision::Winner(w) => &w.cache,
                Decision::Tie { cache } => cache,
            };
            self.count
                .retain(|w| !(w.cache == *cache && w.size_class == class));
            if let Decision::Winner(w) = decision {
                self.count.push(CountWinner {
                    size_class: class,
                    file_bytes,
                    ..w.clone()
                });
            }
        }
        self.count.sort_by(|a, b| {
            (a.size_class.from_bytes, &a.cache).cmp(&(b.size_class.from_bytes, &b.cache))
        });
        true
    }

    fn record_random(&mut self, file_bytes: u64, winners: Vec<RandomWinner>) -> bool {
        if file_bytes < MIN_BYTES || winners.is_empty() {
            return false;
        }
        self.random = winners;
        true
    }

    fn record_random_depths(
        &mut self,
        file_bytes: u64,
        depths: Vec<RandomDepth>,
        tied: &[(String, String)],
    ) -> bool {
        if file_bytes < MIN_BYTES || depths.is_empty() && tied.is_empty() {
            return false;
        }
        self.random_depth.retain(|d| {
            let key = (d.method.clone(), d.size_class.clone());
            !tied.contains(&key)
                && !depths
                    .iter()
                    .any(|n| n.method == d.method && n.size_class == d.size_class)
        });
        self.random_depth.extend(depths);
        true
    }

    fn record_strategy(
        &mut self,
        which: Strategies,
        condition: &str,
        winner: Option<StrategyWinner>,
    ) -> bool {
        let list = strategies_mut(self, which);
        list.retain(|w| w.condition != condition);
        list.extend(winner);
        true
    }
}

fn strategies_mut(profile: &mut Profile, which: Strategies) -> &mut Vec<StrategyWinner> {
    match which {
        Strategies::Edit => &mut profile.edit,
        Strategies::Durable => &mut profile.durable,
        Strategies::Write => &mut profile.write,
        Strategies::Append => &mut profile.append,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn winner() -> StrategyWinner {
        StrategyWinner {
            condition: "replace".into(),
            method: "std-whole".into(),
            runner_up: "mmap".into(),
            lead: 1.3,
            measured_at: "2026-11-26T10:00:00Z".into(),
            device: None,
            bytes: None,
        }
    }

    #[test]
    fn a_record_below_the_smallest_size_changes_nothing_and_a_tie_removes_the_winner() {
        let mut p = Profile::default();
        assert!(!p.record_random(MIN_BYTES - 1, vec![]));
        assert!(!p.record_count(
            MIN_BYTES - 1,
            &[Decision::Tie {
                cache: "warm".into()
            }]
        ));
        assert!(!p.record_random_depths(MIN_BYTES, vec![], &[]));
        assert_eq!(p, Profile::default());
        assert!(p.record_strategy(Strategies::Edit, "replace", Some(winner())));
        assert!(p.strategy_winner(Strategies::Edit, "replace").is_some());
        assert!(p.strategy_winner(Strategies::Durable, "replace").is_none());
        assert!(p.record_strategy(Strategies::Edit, "replace", None));
        assert_eq!(p, Profile::default());
    }
}
