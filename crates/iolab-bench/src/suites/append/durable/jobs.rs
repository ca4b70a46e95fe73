//! The durable section's jobs: each policy over the grid of record sizes and writers
//! (with group commit and alone), and the peer.

use super::{ALONE_WRITERS, PEER_FRAME_BYTES, RECORD_SIZES, WRITERS};
use iolab_lab::durable::{FRAME_HEADER_LEN, LogPolicy};

/// One job of the section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Job {
    Log {
        policy: LogPolicy,
        record_bytes: usize,
        writers: usize,
        group: bool,
    },
    PgTestFsync,
}

/// The jobs, in order.
pub(super) fn jobs(grid: Grid, policies: &[LogPolicy], pg: bool) -> Vec<Job> {
    let quick = grid == Grid::Quick;
    // (record bytes, writers) with group commit.
    let cells: Vec<(usize, usize)> = match grid {
        Grid::Quick => vec![(512, 1), (512, ALONE_WRITERS)],
        Grid::Answer => vec![(512, ALONE_WRITERS), (8 << 10, 1)],
        Grid::Sweep => RECORD_SIZES
            .iter()
            .flat_map(|&b| WRITERS.iter().map(move |&w| (b, w)))
            .collect(),
    };
    let mut out = Vec::new();
    for &policy in policies {
        for &(record_bytes, w) in &cells {
            out.push(Job::Log {
                policy,
                record_bytes,
                writers: w,
                group: true,
            });
        }
        out.push(Job::Log {
            policy,
            record_bytes: 512,
            writers: ALONE_WRITERS,
            group: false,
        });
        if !quick {
            out.push(Job::Log {
                policy,
                record_bytes: PEER_FRAME_BYTES - FRAME_HEADER_LEN,
                writers: 1,
                group: true,
            });
        }
    }
    if pg {
        out.push(Job::PgTestFsync);
    }
    out
}

/// How much of the grid a run measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Grid {
    /// `--quick`: 512-byte records, 1 and [`ALONE_WRITERS`] writers.
    Quick,
    /// By default, what the verdict and the goals need: 512-byte records from
    /// [`ALONE_WRITERS`] writers (and the same writers syncing alone), 8 KiB from one
    /// (and the peer-sized frames).
    Answer,
    /// `--sweep`: every record size × every writer count.
    Sweep,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_has_every_policy_size_and_writer_count() {
        let j = jobs(Grid::Sweep, &LogPolicy::ALL, true);
        assert_eq!(
            j.len(),
            LogPolicy::ALL.len() * (RECORD_SIZES.len() * WRITERS.len() + 2) + 1
        );
        assert_eq!(
            jobs(Grid::Quick, &LogPolicy::ALL, false).len(),
            LogPolicy::ALL.len() * 3
        );
        assert_eq!(
            jobs(Grid::Answer, &LogPolicy::ALL, false).len(),
            LogPolicy::ALL.len() * (2 + 2)
        );
    }
}
