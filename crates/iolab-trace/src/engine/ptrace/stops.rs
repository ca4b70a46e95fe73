//! What the tracer's stops add to a call's time, and how it is left out.
//!
//! From a call's entry stop to its exit stop there is a round trip through the tracer
//! (resuming the task, its next stop, `waitpid`, `PTRACE_GET_SYSCALL_INFO`), against about
//! 0.5 µs for a cached 512-byte read. Its cost depends on where the scheduler puts the
//! tracer and the task, and the scheduler moves them while the command runs: on these VMs
//! about 7 µs when they share a CPU, 2 µs of it the task's CPU time (the kernel's resume
//! and stop paths); 30–90 µs when they run on two, 10–15 µs of it the task's (a wake-up
//! across virtual CPUs is an interrupt through the hypervisor, which the task sends).
//!
//! So the launch's probes (calls that fail at once, made before `execve`) measure both
//! placements, the task pinned to the tracer's CPU, then to another; and each call is
//! counted as:
//!
//! - a call that did not wait (its task was switched in once between the stops, for the
//!   resume: `/proc/TID/schedstat`): the task's CPU time between the stops, less the
//!   stops' CPU time in the call's placement. The placement is the one whose time off the
//!   CPU (round trip less CPU time: wake-ups and the tracer's work) is nearer the call's,
//!   by ratio: about 5 µs against 30–70 here, whatever the call itself costs;
//! - a call that waited (a read of an empty pipe, an `fsync`; or any call when `schedstat`
//!   cannot be read): its time from entry stop to exit stop, less the round trip of the
//!   placement of its task's last call that did not wait.
//!
//! Both at least 0. Medians of the probes, so that a stray slow one does not count.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A task's CPU time and how many times it was switched in, from `/proc/TID/schedstat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sched {
    /// Nanoseconds on a CPU.
    pub cpu_ns: u64,
    /// Times switched in.
    pub switches: u64,
}

/// Reads `/proc/TID/schedstat` (`cpu_ns run_delay_ns switches`) through its open file.
pub fn sched(file: &std::fs::File) -> Option<Sched> {
    use std::os::unix::fs::FileExt;
    let mut buf = [0u8; 96];
    let n = file.read_at(&mut buf, 0).ok()?;
    parse_schedstat(&buf[..n])
}

fn parse_schedstat(text: &[u8]) -> Option<Sched> {
    let text = std::str::from_utf8(text).ok()?;
    let mut fields = text.split_ascii_whitespace().map(|f| f.parse::<u64>().ok());
    let cpu_ns = fields.next()??;
    let switches = fields.nth(1)??;
    Some(Sched { cpu_ns, switches })
}

/// The task's CPU time between two readings when it did not wait: switched in once (for
/// the resume) and not again.
pub fn cpu_without_wait(before: Option<Sched>, after: Option<Sched>) -> Option<u64> {
    match (before, after) {
        (Some(a), Some(b)) if b.switches == a.switches + 1 => {
            Some(b.cpu_ns.saturating_sub(a.cpu_ns))
        }
        _ => None,
    }
}

/// What the tracer's stops cost one call in one placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopCost {
    /// From the entry stop to the exit stop of a call that does nothing.
    pub round_trip: Duration,
    /// The part of it the task spends on a CPU, when `/proc/TID/schedstat` tells.
    pub cpu: Option<Duration>,
}

/// The stops' costs the probes measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopCosts {
    /// The tracer on the task's CPU (or wherever the scheduler put them, when the probes
    /// could not be pinned).
    pub together: StopCost,
    /// The tracer on another CPU.
    pub apart: Option<StopCost>,
}

/// One probe: its time from entry stop to exit stop, and its CPU time if it did not wait.
pub type Probe = (u64, Option<u64>);

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

fn nanos(d: Duration) -> u64 {
    d.as_nanos() as u64
}

impl StopCost {
    /// The cost of one batch of probes (not empty). The CPU figure needs a majority of
    /// probes that did not wait.
    fn of(probes: &[Probe]) -> StopCost {
        let cpus: Vec<u64> = probes.iter().filter_map(|p| p.1).collect();
        StopCost {
            round_trip: Duration::from_nanos(median(probes.iter().map(|p| p.0).collect())),
            cpu: (cpus.len() * 2 > probes.len()).then(|| Duration::from_nanos(median(cpus))),
        }
    }

    /// Its time off the task's CPU, when known: wake-ups and the tracer's work.
    fn off_cpu(&self) -> Option<u64> {
        Some(nanos(self.round_trip).saturating_sub(nanos(self.cpu?)))
    }
}

impl StopCosts {
    /// The costs from the probes, made in `batches` (1, or 2: together then apart) of
    /// equal size; one batch when they do not split so. `None` without probes.
    pub fn from_probes(probes: &[Probe], batches: usize) -> Option<StopCosts> {
        if probes.is_empty() {
            return None;
        }
        let half = probes.len() / 2;
        Some(if batches == 2 && half > 0 && probes.len() == 2 * half {
            StopCosts {
                together: StopCost::of(&probes[..half]),
                apart: Some(StopCost::of(&probes[half..])),
            }
        } else {
            StopCosts {
                together: StopCost::of(probes),
                apart: None,
            }
        })
    }

    /// Whether a call that spent `off_cpu` nanoseconds off its task's CPU between the
    /// stops ran with the tracer on another CPU: the placement whose time off the CPU is
    /// nearer, by ratio.
    fn placed_apart(&self, off_cpu: u64) -> bool {
        let (Some(together), Some(apart)) = (
            self.together.off_cpu(),
            self.apart.and_then(|a| a.off_cpu()),
        ) else {
            return false;
        };
        let distance = |of: u64| (off_cpu.max(1) as f64 / of.max(1) as f64).ln().abs();
        distance(apart) < distance(together)
    }

    /// The time of a call that took `wall` nanoseconds from its entry stop to its exit
    /// stop and `cpu` of its task's CPU time if it did not wait. `apart` is the placement
    /// of the task's last call that did not wait, updated by this one.
    pub fn call_time(&self, wall: u64, cpu: Option<u64>, apart: &mut bool) -> u64 {
        if let Some(cpu) = cpu {
            *apart = self.placed_apart(wall.saturating_sub(cpu));
        }
        let stops = match (*apart, self.apart) {
            (true, Some(a)) => a,
            _ => self.together,
        };
        match (cpu, stops.cpu) {
            (Some(cpu), Some(stop_cpu)) => cpu.saturating_sub(nanos(stop_cpu)),
            _ => wall.saturating_sub(nanos(stops.round_trip)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_gives_cpu_time_and_switches() {
        assert_eq!(
            parse_schedstat(b"202563930 138848 19\n"),
            Some(Sched {
                cpu_ns: 202_563_930,
                switches: 19
            })
        );
        assert_eq!(parse_schedstat(b"1 2\n"), None);
        let at = |cpu_ns, switches| Some(Sched { cpu_ns, switches });
        assert_eq!(cpu_without_wait(at(100, 5), at(350, 6)), Some(250));
        assert_eq!(cpu_without_wait(at(100, 5), at(350, 7)), None, "it waited");
        assert_eq!(cpu_without_wait(None, at(350, 6)), None);
    }

    #[test]
    fn each_call_loses_the_stops_of_its_placement() {
        // Together: 7 µs round trip, 2 µs of CPU; apart: 60 µs, 12 µs.
        let mut probes = vec![(7_000, Some(2_000)); 5];
        probes.extend(vec![(60_000, Some(12_000)); 5]);
        probes[0] = (500_000, None); // a stray slow one: the medians ignore it
        let costs = StopCosts::from_probes(&probes, 2).unwrap();
        assert_eq!(costs.together.round_trip, Duration::from_micros(7));
        assert_eq!(costs.together.cpu, Some(Duration::from_micros(2)));
        assert_eq!(costs.apart.unwrap().cpu, Some(Duration::from_micros(12)));
        let mut apart = false;
        // Did not wait, 50 µs off the CPU: apart; 12.5 µs of CPU, 12 of them the stops'.
        assert_eq!(costs.call_time(62_500, Some(12_500), &mut apart), 500);
        assert!(apart);
        // A call that waited: its time less the round trip where its task last was.
        assert_eq!(costs.call_time(1_060_000, None, &mut apart), 1_000_000);
        // A costly call together (5 µs off the CPU): only the stops' 2 µs come off.
        assert_eq!(costs.call_time(105_000, Some(100_000), &mut apart), 98_000);
        assert!(!apart);
        assert_eq!(costs.call_time(100, Some(50), &mut apart), 0, "at least 0");
        let one = StopCosts::from_probes(&probes[..3], 2).unwrap();
        assert!(one.apart.is_none(), "an odd count is one batch");
        assert_eq!(StopCosts::from_probes(&[], 1), None);
    }
}
