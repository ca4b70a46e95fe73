#!/usr/bin/env python3
"""What `iolab trace` costs a command: its wall time untraced, under `strace -f -c`, and
under `iolab trace` with each backend (`--no-calibrate`: the trace alone; and `auto` with
its calibration, what a user waits for), interleaved: each round runs every variant once,
in an order that rotates from round to round. Prints a Markdown table of medians (min–max)
and the ratios to the untraced and to strace's medians.

    python3 tools/trace_overhead.py [--iolab PATH] [--rounds N]

Needs strace, git, sha256sum, and root for the eBPF backend.
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import time


def commands(d, repo):
    big = os.path.join(d, "big")
    with open(big, "wb") as f:
        f.write(os.urandom(1 << 20) * 32)
    return [
        ("dd 512 B × 150 000 (300 000 I/O calls)",
         ["dd", "if=/dev/zero", "of=/dev/null", "bs=512", "count=150000", "status=none"]),
        ("dd 512 B × 1 000 000 to a file (2 000 000 I/O calls)",
         ["dd", "if=/dev/zero", f"of={d}/out", "bs=512", "count=1000000", "status=none"]),
        ("ls -lR /usr/share", ["ls", "-lR", "/usr/share"]),
        ("git status", ["git", "-C", repo, "status", "--short"]),
        ("sha256sum of 32 MiB", ["sha256sum", big]),
        ("true", ["true"]),
    ]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    host = subprocess.run(["rustc", "-vV"], capture_output=True, text=True).stdout
    host = host.split("host: ")[1].split()[0]
    p.add_argument("--iolab", default=f"{root}/target/{host}/release/iolab")
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args()
    variants = {
        "untraced": [],
        "strace -f -c": ["strace", "-f", "-c", "-o", "/dev/null"],
        "bpf": [a.iolab, "trace", "--no-calibrate", "--backend", "bpf", "--"],
        "ptrace": [a.iolab, "trace", "--no-calibrate", "--backend", "ptrace", "--"],
        "auto, calibrated": [a.iolab, "trace", "--"],
    }
    names = list(variants)
    with tempfile.TemporaryDirectory(dir=root) as d:
        cmds = commands(d, root)
        times = {c: {v: [] for v in names} for c, _ in cmds}
        for r in range(a.rounds):
            order = names[r % len(names):] + names[: r % len(names)]
            for label, cmd in cmds:
                for v in order:
                    t = time.perf_counter()
                    subprocess.run(variants[v] + cmd, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, check=True, cwd=d)
                    times[label][v].append(time.perf_counter() - t)
    def cell(xs):
        return f"{statistics.median(xs):.3g} s ({min(xs):.3g}–{max(xs):.3g})"
    print("| command | " + " | ".join(names) + " | bpf / untraced | bpf / strace | ptrace / strace | auto, calibrated / untraced |")
    print("|---|" + "---|" * (len(names) + 4))
    for label, _ in cmds:
        t = times[label]
        m = {v: statistics.median(t[v]) for v in names}
        print(f"| {label} | " + " | ".join(cell(t[v]) for v in names)
              + f" | {m['bpf'] / m['untraced']:.1f}× | {m['bpf'] / m['strace -f -c']:.2f}"
              + f" | {m['ptrace'] / m['strace -f -c']:.2f} | {m['auto, calibrated'] / m['untraced']:.1f}× |")


if __name__ == "__main__":
    main()
