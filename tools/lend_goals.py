#!/usr/bin/env python3
"""Issue #50's pipe goals, interleaved: `yes`, the bare floor of a lending writer
(tools/lend_floor.c: the same records copied into a ring and vmsplice'd, no checks) and the
stdout_writer example (StdoutWriter, lending pages), 4 GiB each into three readers. Round r
starts at writer r; prints the medians, the spread and the median of the paired ratios to
`yes` (each run against `yes`'s run of the same round).

    cc -O2 -o /tmp/floor/lend_floor tools/lend_floor.c
    cargo build --release --bin iolab && cargo build --release --examples -p iolab
    python3 tools/lend_goals.py [ROUNDS]
"""
import statistics, subprocess, sys, time
n = 4 << 30
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
R = "target/x86_64-unknown-linux-gnu/release"
writers = {
    "yes": "yes",
    "floor": f"/tmp/floor/lend_floor {n}",
    "StdoutWriter": f"{R}/examples/stdout_writer --records 4G 2>/dev/null",
}
readers = {
    "splice": f"{R}/iolab drain --limit {n}",
    "pv": f"pv -q -S -s {n} > /dev/null",
    "cat": f"head -c {n} > /dev/null",
}
for rname, reader in readers.items():
    runs = {w: [] for w in writers}
    names = list(writers)
    for r in range(rounds):
        for w in names[r % 3:] + names[: r % 3]:
            t = time.perf_counter()
            subprocess.run(["bash", "-c", f"{writers[w]} | {reader}"], check=False, stderr=subprocess.DEVNULL)
            runs[w].append(time.perf_counter() - t)
    med = {w: statistics.median(v) for w, v in runs.items()}
    paired = {w: statistics.median([runs["yes"][i] / runs[w][i] for i in range(rounds)]) for w in writers}
    print(f"{rname}: " + ", ".join(f"{w} {med[w]*1000:.0f} ms ({min(runs[w])*1000:.0f}-{max(runs[w])*1000:.0f}), {paired[w]:.2f}x yes" for w in writers), flush=True)
