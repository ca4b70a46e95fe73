#!/usr/bin/env python3
"""Checks the library's rules (the defaults without a machine profile) on device speeds
made locally, and on one CPU: runs `iolab bench` on

- `throttled`: an ext4 file system on a loop device whose reads and writes are limited to
  `--iops` per second by the cgroup-v1 block I/O throttle (`blkio.throttle.*_iops_device`;
  the run's processes are put in the cgroup). Cgroup v1 throttles reads, `O_DIRECT` writes
  and syncs, not the page cache's writeback: buffered writes reach the device unthrottled.
- `ram`: ext4 on `/dev/zram0` (compressed RAM).
- `disk`: the data folder given (`--data`, by default iolab's own).
- `one-cpu`: the disk again, every process pinned to CPU 0 with `taskset -c 0`.

Each run reads no machine profile and cannot save one (`XDG_CACHE_HOME` is a folder that
cannot be made), so every verdict's `default` is the rule's and `default_vs_winner` its
ratio to the best row of its job. Prints one Markdown table (condition x setting) and writes
it, with each run's results folder, under `--out`.

Needs root (loop devices, mounts, cgroups, zram). Usage:

    sudo python3 tools/device_speeds.py --suites count,edit,append,random --out /tmp/speeds

Cleans up its mounts, loop device, zram and cgroup, also on Ctrl-C.
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CGROUP = Path("/sys/fs/cgroup/blkio/iolab-device-speeds")
NO_PROFILE = "/proc/iolab-no-profile"


def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout.strip()


def make_fs(device, mount):
    sh("mkfs.ext4", "-q", "-F", device)
    mount.mkdir(parents=True, exist_ok=True)
    sh("mount", device, str(mount))


def throttled(work, size, iops, undo):
    image = work / "throttled.img"
    with open(image, "wb") as f:
        f.truncate(size * 4 + (1 << 30))
    undo.append(lambda: image.unlink(missing_ok=True))
    loop = sh("losetup", "-f", "--show", str(image))
    undo.append(lambda: sh("losetup", "-d", loop))
    mount = work / "throttled"
    make_fs(loop, mount)
    undo.append(lambda: sh("umount", str(mount)))
    rdev = os.stat(loop).st_rdev
    majmin = f"{os.major(rdev)}:{os.minor(rdev)}"
    CGROUP.mkdir(exist_ok=True)
    undo.append(lambda: CGROUP.rmdir())
    for knob in ("read_iops_device", "write_iops_device"):
        (CGROUP / f"blkio.throttle.{knob}").write_text(f"{majmin} {iops}\n")
    return mount


def ram(work, size, undo):
    zram = Path("/sys/block/zram0")
    if not zram.exists():
        raise RuntimeError("no /dev/zram0 (modprobe zram)")
    if int((zram / "disksize").read_text()) != 0:
        raise RuntimeError("/dev/zram0 is in use")
    (zram / "disksize").write_text(str(size * 4 + (1 << 30)))
    undo.append(lambda: (zram / "reset").write_text("1"))
    mount = work / "ram"
    make_fs("/dev/zram0", mount)
    undo.append(lambda: sh("umount", str(mount)))
    return mount


def bench(iolab, suites, data, out, size, prefix=()):
    env = dict(os.environ, XDG_CACHE_HOME=NO_PROFILE)
    cmd = [*prefix, iolab, "bench", *suites, "--data", str(data), "--out", str(out)]
    if size:
        cmd += ["--size", str(size)]
    print("$", " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, env=env, check=False, stdout=subprocess.DEVNULL)
    return json.loads((out / "results.json").read_text())


def in_cgroup():
    """A `sh -c` prefix that joins the throttled cgroup, then runs the command."""
    return ["sh", "-c", f'echo $$ > {CGROUP}/cgroup.procs && exec "$@"', "sh"]


def cell(v):
    if v.get("default") is None:
        return "—"
    ratio = v.get("default_vs_winner")
    tied = " (tied)" if v.get("default_tied") else ""
    return f"{v['default']} {ratio:.2f}×{tied}" if ratio is not None else v["default"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iolab", default="target/x86_64-unknown-linux-gnu/release/iolab")
    p.add_argument("--suites", default="count,edit,append,random")
    p.add_argument("--data", default=str(Path.home() / ".cache" / "iolab"))
    p.add_argument("--out", default="/tmp/iolab-device-speeds")
    p.add_argument("--iops", type=int, default=9000)
    p.add_argument("--size", type=int, default=1 << 30, help="data set bytes")
    p.add_argument("--settings", default="throttled,ram,disk,one-cpu")
    a = p.parse_args()
    if os.geteuid() != 0:
        sys.exit("device_speeds.py: needs root (loop devices, mounts, cgroups, zram)")
    iolab = str(Path(a.iolab).resolve())
    suites = a.suites.split(",")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    work = out / "mnt"
    work.mkdir(exist_ok=True)
    results, undo = {}, []
    try:
        for setting in a.settings.split(","):
            if setting == "throttled":
                data = throttled(work, a.size, a.iops, undo) / "data"
                results[setting] = bench(iolab, suites, data, out / setting, a.size, in_cgroup())
            elif setting == "ram":
                data = ram(work, a.size, undo) / "data"
                results[setting] = bench(iolab, suites, data, out / setting, a.size)
            elif setting == "disk":
                results[setting] = bench(iolab, suites, Path(a.data), out / setting, a.size)
            elif setting == "one-cpu":
                prefix = ["taskset", "-c", "0"]
                results[setting] = bench(iolab, suites, Path(a.data), out / setting, a.size, prefix)
            else:
                sys.exit(f"device_speeds.py: unknown setting {setting}")
    finally:
        for step in reversed(undo):
            try:
                step()
            except Exception as e:  # noqa: BLE001 - clean up the rest whatever fails
                print(f"cleanup: {e}", file=sys.stderr)
    settings = list(results)
    conditions = []
    for r in results.values():
        for v in r["verdict"]:
            key = f"{v['suite']} {v['condition']}"
            if key not in conditions:
                conditions.append(key)
    lines = [
        f"| condition | {' | '.join(settings)} |",
        f"|---|{'---|' * len(settings)}",
    ]
    for c in conditions:
        cells = []
        for s in settings:
            v = next((v for v in results[s]["verdict"] if f"{v['suite']} {v['condition']}" == c), None)
            cells.append(cell(v) if v else "—")
        lines.append(f"| {c} | {' | '.join(cells)} |")
    table = "\n".join(lines)
    (out / "rules.md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
