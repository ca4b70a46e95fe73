#!/usr/bin/env python3
"""Issue #15's check: every write default and the baselines into real pipe consumers.

Each writer runs as `WRITER | CONSUMER` (the shell starts both, unpinned), N bytes per run,
rounds interleaved (round r starts at writer r); prints the median throughput, the spread
(min-max), the ratio of the medians to `yes`'s and the median of the paired ratios (each
run against `yes`'s run of the same round, which cancels the host's slower and faster
spells: the issue's "medians of interleaved pairs"), with their spread. The same-CPU case pins both sides with
`taskset -c 0` and compares each default with today's fixed 64 KiB.

    flock /tmp/iolab-measure.lock tools/pipe_goals.py target/x86_64-unknown-linux-gnu/release/iolab [GiB] [rounds]

(`cargo build --release` puts the binary under target/<host tuple>/release: see
.cargo/config.toml.)
"""
import shutil
import statistics
import subprocess
import sys
import time

iolab = sys.argv[1] if len(sys.argv) > 1 else "target/x86_64-unknown-linux-gnu/release/iolab"
n = int(float(sys.argv[2] if len(sys.argv) > 2 else 4) * (1 << 30))
rounds = int(sys.argv[3] if len(sys.argv) > 3 else 5)

def w(method, extra=""):
    return f"{iolab} write -m {method} --bytes {n} {extra}".strip()

writers = ["yes"] + (["fyes"] if shutil.which("fyes") else []) + [
    w("raw-fd"), w("stdout"), w("bufwriter"), w("vmsplice"), w("raw-fd", "--buffer 64K"),
]
consumers = {
    "splice reader": f"{iolab} drain --limit {n}",
    "head -c": f"head -c {n} > /dev/null",
}
if shutil.which("pv"):
    consumers["pv"] = f"pv -q -S -s {n} > /dev/null"

def measure(cmds, consumer, pin=""):
    """Each command's runs in GB/s, in round order."""
    runs = {c: [] for c in cmds}
    for r in range(rounds):
        for c in cmds[r % len(cmds):] + cmds[: r % len(cmds)]:
            t = time.perf_counter()
            subprocess.run(["bash", "-c", f"{pin}{c} | {pin}{consumer}"], check=True,
                           stderr=subprocess.DEVNULL)
            runs[c].append(n / (time.perf_counter() - t) / 1e9)
    return runs

def paired(v, base):
    """The median of the per-round ratios of `v` to `base`, and their range."""
    ratios = [a / b for a, b in zip(v, base)]
    return statistics.median(ratios), min(ratios), max(ratios)

for name, consumer in consumers.items():
    runs = measure(writers, consumer)
    yes = statistics.median(runs["yes"])
    print(f"== into {name} ({n >> 30} GiB, median of {rounds} interleaved rounds)")
    for c, v in runs.items():
        med = statistics.median(v)
        pr, plo, phi = paired(v, runs["yes"])
        print(f"  {med:6.2f} GB/s  [{min(v):.2f}-{max(v):.2f}]  {med / yes:5.2f}x yes"
              f"  paired {pr:5.2f}x [{plo:.2f}-{phi:.2f}]  {c.replace(iolab, 'iolab')}")

same = [w(m) for m in ("raw-fd", "stdout", "bufwriter", "vmsplice")]
same += [w(m, "--buffer 64K") for m in ("raw-fd", "stdout", "bufwriter", "vmsplice")]
runs = measure(same, consumers["splice reader"], pin="taskset -c 0 ")
print(f"== same CPU (taskset -c 0 on both sides): default against today's fixed 64 KiB")
for m in ("raw-fd", "stdout", "bufwriter", "vmsplice"):
    new, old = runs[w(m)], runs[w(m, "--buffer 64K")]
    pr, plo, phi = paired(new, old)
    print(f"  {m:10} default {statistics.median(new):6.2f} GB/s, 64 KiB"
          f" {statistics.median(old):6.2f} GB/s: paired {pr - 1:+.0%} [{plo - 1:+.0%} to {phi - 1:+.0%}]")
