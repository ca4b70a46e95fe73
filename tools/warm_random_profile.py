#!/usr/bin/env python3
"""Issue 48's done-when: a warm file read at random through `RandomAccessFile::open` after a
machine profile that names a plain `mmap` the warm winner, against a plain `pread` loop, in
fresh processes, interleaved.

Each round runs, in a fresh process each and in an order rotated from round to round:

- `pread`: `iolab random --method pread --reads N FILE`, a loop of `pread`s;
- `auto-other`: `iolab random --method auto ...` (`RandomAccessFile::open`, then the same
  reads) with a private `XDG_CACHE_HOME` whose profile names `mmap` the warm winner and was
  written by another iolab version (0.0.9): it must be ignored, and `why` must say so;
- `auto-same`: the same profile as this iolab, this user and this machine write it: it is
  followed (the map starts), and only the call's own trials stand between the reads and a
  map's first-touch faults.

Both sides read the same offsets (`iolab random`'s seeded sampler) and check each read the
same way (every read of an `iolab gen blocks` file; a sample of any other file). Before each
run the file must be in the page cache (99.5% of it, `fincore`); if it is not (something evicted
it), the cache state is made again, and a run after which it is not is made again (up to
three times):

- `--folios large`: evicted, then read once in order (read-ahead: large folios, where the
  file system has them; ext4 does since Linux 6.16);
- `--folios small`: evicted, then read 64 KiB at a time with `POSIX_FADV_RANDOM`, so the
  cache fills a page at a time (single-page folios: how a kernel without large folios for
  the file system caches it, and the case of issue 48's 63 000 faults in 200 000 reads).

Prints each run, then per variant the median reads/s, the median and range of its ratio to
the same round's `pread`, and the median minor faults of its process (`wait4`).

    python3 tools/warm_random_profile.py --iolab target/x86_64-unknown-linux-gnu/release/iolab \\
        --file /data/blocks-4g.bin --rounds 7 --reads 200000 --folios small

A missing FILE is made first (`--size`, by default 4 GiB, with `iolab gen blocks`).
docs/findings/random.md (28 Nov 2026) has the runs this made.
"""

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

OTHER_VERSION = "0.0.9"


def resident_bytes(path):
    out = subprocess.run(
        ["fincore", "--bytes", "--noheadings", "--output", "RES", str(path)],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    return int(out or 0)


def evict(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def warm(path, folios):
    """Puts the whole file in the page cache, in large or single-page folios."""
    evict(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        if folios == "small":
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
            step = 1 << 16
        else:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_SEQUENTIAL)
            step = 1 << 20
        off = 0
        while off < size:
            n = len(os.pread(fd, step, off))
            if n == 0:
                break
            off += n
    finally:
        os.close(fd)


# The share of the file that counts as all of it: a few pages reclaimed cost a run a few
# device reads, not its figure.
WHOLE = 0.995


def ensure_warm(path, folios, size):
    if resident_bytes(path) < size * WHOLE:
        print(f"  (the file was not all cached: cache made again, {folios} folios)", flush=True)
        warm(path, folios)


def cpu_model():
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and value.strip():
            return value.strip()
    return ""


def machine_id():
    for p in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        try:
            text = Path(p).read_text().strip()
        except OSError:
            continue
        if text:
            return text
    return ""


def plant(cache, version, schema):
    """A profile naming a plain map the warm winner, as `iolab bench random` saves it."""
    profile = {
        "measured_at": "2026-11-28T00:00:00Z",
        "kernel_release": platform.release(),
        "cores": len(os.sched_getaffinity(0)),
        "cpu_model": cpu_model(),
        "written_by": {
            "uid": os.geteuid(),
            "version": version,
            "schema": schema,
            "machine_id": machine_id(),
        },
        "random": [{"size_class": "warm", "method": "mmap", "iops": 1.0e6}],
    }
    (cache / "iolab").mkdir(parents=True, exist_ok=True)
    (cache / "iolab" / "auto.json").write_text(json.dumps(profile))


def run(iolab, method, path, reads, pattern, cache):
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    child = subprocess.Popen(
        [iolab, "random", "--method", method, "--reads", str(reads), "--pattern", pattern,
         "--json", str(path)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    out, err = child.communicate()
    return out, err, child.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iolab", default="target/x86_64-unknown-linux-gnu/release/iolab")
    ap.add_argument("--file", required=True, type=Path)
    ap.add_argument("--size", default="4G", help="for a missing FILE (iolab gen blocks)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reads", type=int, default=200000)
    ap.add_argument("--folios", choices=["large", "small"], default="large")
    ap.add_argument("--pattern", choices=["uniform", "zipf"], default="uniform",
                    help="the offsets (`iolab random --pattern`): zipf is a hot set")
    ap.add_argument("--schema", type=int, default=1, help="this iolab's profile format")
    ap.add_argument("--no-check", action="store_true",
                    help="do not check that each profile was taken as planned (an iolab from "
                         "before 28 Nov 2026, which records no writer: both are followed)")
    args = ap.parse_args()

    iolab = str(Path(args.iolab).resolve())
    version = subprocess.run([iolab, "--version"], capture_output=True, text=True,
                             check=True).stdout.split()[-1]
    if not args.file.exists():
        subprocess.run([iolab, "gen", "blocks", "--size", args.size, "--out", str(args.file)],
                       check=True)
    size = args.file.stat().st_size
    warm(args.file, args.folios)

    tmp = Path(tempfile.mkdtemp(prefix="iolab-warm-profile-"))
    try:
        measure(args, iolab, version, size, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def measure(args, iolab, version, size, tmp):
    caches = {"pread": tmp / "none", "auto-other": tmp / "other", "auto-same": tmp / "same"}
    caches["pread"].mkdir()
    plant(caches["auto-other"], OTHER_VERSION, args.schema)
    plant(caches["auto-same"], version, args.schema)
    expect = {
        "auto-other": f"was written by iolab {OTHER_VERSION}, this is {version}: ignored",
        "auto-same": "the warm winner measured by `iolab bench random` on this machine",
    }
    methods = {"pread": "pread", "auto-other": "auto", "auto-same": "auto"}
    names = list(caches)
    iops = {n: [] for n in names}
    faults = {n: [] for n in names}
    whys = {}
    redone = 0
    print(f"iolab {version}, {args.file} ({size} bytes), {args.folios} folios, "
          f"{args.pattern}, {args.reads} reads a run, {args.rounds} rounds", flush=True)
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        line = []
        for name in order:
            for _ in range(4):
                ensure_warm(args.file, args.folios, size)
                # The run's faults: the increment of the reaped children's total.
                ru_before = resource.getrusage(resource.RUSAGE_CHILDREN)
                out, err, code = run(iolab, methods[name], args.file, args.reads, args.pattern,
                                     caches[name])
                ru_after = resource.getrusage(resource.RUSAGE_CHILDREN)
                # A run during which pages of the file were evicted did not read a warm
                # file: it is run again.
                if code != 0 or resident_bytes(args.file) >= size * WHOLE:
                    break
                redone += 1
                print(f"  ({name}: the file lost pages during the run: run again)", flush=True)
            if code != 0:
                sys.exit(f"{name}: exit {code}: {err}")
            v = json.loads(out)
            if not v.get("verified"):
                sys.exit(f"{name}: reads returned wrong bytes: {out}")
            if not args.no_check and name in expect and expect[name] not in (v.get("why") or ""):
                sys.exit(f"{name}: the profile was not taken as planned: {v.get('why')}")
            iops[name].append(v["iops"])
            faults[name].append(ru_after.ru_minflt - ru_before.ru_minflt)
            whys[name] = v.get("why")
            line.append(f"{name} {v['iops']:.0f}")
        print(f"round {r + 1}: " + ", ".join(line), flush=True)

    print(f"\nruns made again (the file lost pages during them): {redone}")
    print("| variant | median reads/s | ratio to pread (median, min–max) | minor faults (median) |")
    print("|---|---|---|---|")
    for name in names:
        ratios = [a / b for a, b in zip(iops[name], iops["pread"])]
        print(f"| {name} | {statistics.median(iops[name]):.0f} | "
              f"{statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f}) | "
              f"{statistics.median(faults[name]):.0f} |")
    for name in ("auto-other", "auto-same"):
        print(f"\n{name}, the last run's why: {whys[name]}")


if __name__ == "__main__":
    main()
