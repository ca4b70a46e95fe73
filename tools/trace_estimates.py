#!/usr/bin/env python3
"""Do `iolab trace`'s estimates hold? For programs whose fix can be applied from outside,
compare the saving a trace predicts with the saving measured by running the program with
and without the fix, untraced.

Nine cases (`--only NAME,…` runs those). For each, in rounds: time the slow form and the
fixed one untraced, and trace the slow form (`iolab trace --json`), adding up the
`saving_s` of its findings of the kinds the fix addresses (shown or not); the three in
turns that rotate each round. The measured saving is the difference of the untraced
medians, the predicted one the median of the traces' predictions. Prints a Markdown table:
predicted, measured, and their ratio (the issue's goal: 0.5 to 2.0); and, beside it, the
CPU time the fix saved (its processes' user and system time, medians) and the load
average when the case started and ended: on a machine others load, a CPU-bound command
waits for a CPU in proportion to its work, which stretches the wall-clock saving while the
CPU time saved stays what it is.

    python3 tools/trace_estimates.py [--iolab PATH] [--rounds N] [--only NAME,…] [--dir DIR]
        [--nice N]

Needs: dd, python3, bash, sqlite3, and root (or CAP_BPF+CAP_PERFMON) for the eBPF backend
(`--backend` passes another). Works in a scratch folder under the current folder's file
system (`--dir`), so that the syncs and O_DIRECT writes hit the disk a user's files are on.
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# Debian's interpreter, not a shim that execs another (pyenv's adds 0.3 s of noise).
PY = next(
    (p for p in ["/usr/bin/python3", "/usr/local/bin/python3"] if os.path.exists(p)),
    shutil.which("python3") or "python3",
)

# The programs run as a user's would: PYTHONUNBUFFERED in the caller's environment would
# make "default buffering" unbuffered.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def cases(d):
    """(name, the fix, prepare, slow, fixed, finding kinds the fix addresses)."""
    loop = "for i in $(seq 20000); do echo $i >> {d}/lf; done\n"
    redirect = "{{ for i in $(seq 20000); do echo $i; done; }} >> {d}/lf\n"
    with open(f"{d}/loop.sh", "w") as f:
        f.write(loop.format(d=d))
    with open(f"{d}/redirect.sh", "w") as f:
        f.write(redirect.format(d=d))
    with open(f"{d}/ins.sql", "w") as f:
        for i in range(2000):
            f.write(f"insert into t values({i}, 'row {i}');\n")
    with open(f"{d}/ins_tx.sql", "w") as f:
        f.write("BEGIN;\n")
        with open(f"{d}/ins.sql") as g:
            f.write(g.read())
        f.write("COMMIT;\n")
    fsync_every = (
        "import os\n"
        "f = open('{d}/log', 'ab')\n"
        "for i in range(3000):\n"
        "    f.write(b'record %d\\n' % i)\n"
        "    if i % {k} == {k} - 1:\n"
        "        f.flush(); os.fsync(f.fileno())\n"
        "f.flush(); os.fsync(f.fileno())\n"
    )
    for k in (1, 1000):
        with open(f"{d}/fsync{k}.py", "w") as f:
            f.write(fsync_every.format(d=d, k=k))
    printer = "for i in range(200000): print(i)"
    # Python's logging: a FileHandler flushes each record; the fix is a handler that
    # does not (docs/trace.md, "The program's own fix").
    logging_slow = (
        "import logging, sys\n"
        "h = logging.FileHandler(sys.argv[1])\n"
        "log = logging.getLogger('x'); log.addHandler(h); log.setLevel(logging.INFO)\n"
        "log.propagate = False\n"
        "for i in range(50000):\n"
        "    log.info('record %d', i)\n"
    )
    logging_fixed = logging_slow.replace(
        "h = logging.FileHandler(sys.argv[1])\n",
        "class BufferedFileHandler(logging.FileHandler):\n"
        "    def flush(self):\n"
        "        pass\n"
        "h = BufferedFileHandler(sys.argv[1])\n",
    )
    for name, text in (("log_slow", logging_slow), ("log_fixed", logging_fixed)):
        with open(f"{d}/{name}.py", "w") as f:
            f.write(text)
    for name, head, tail in (("off", "", ""), ("off_tx", "BEGIN;\n", "COMMIT;\n")):
        with open(f"{d}/ins_{name}.sql", "w") as f:
            f.write("PRAGMA synchronous=OFF;\n" + head)
            with open(f"{d}/ins.sql") as g:
                f.write(g.read())
            f.write(tail)
    return [
        (
            "dd-block-size",
            "dd bs=512 → bs=1M",
            f"rm -f {d}/out",
            ["dd", "if=/dev/zero", f"of={d}/out", "bs=512", "count=131072", "status=none"],
            ["dd", "if=/dev/zero", f"of={d}/out", "bs=1M", "count=64", "status=none"],
            {"small-writes"},
        ),
        (
            "python-unbuffered",
            "python3 -u → default buffering",
            "true",
            ["sh", "-c", f"{PY} -u -c '{printer}' | cat > /dev/null"],
            ["sh", "-c", f"{PY} -c '{printer}' | cat > /dev/null"],
            {"small-writes"},
        ),
        (
            "shell-loop-redirect",
            "`echo >> f` in a loop → one redirect of the loop",
            f"rm -f {d}/lf",
            ["bash", f"{d}/loop.sh"],
            ["bash", f"{d}/redirect.sh"],
            {"open-churn"},
        ),
        (
            "sqlite-autocommit",
            "sqlite3, 2000 INSERTs in autocommit → one transaction",
            f"rm -f {d}/t.db && sqlite3 {d}/t.db 'create table t(x integer, y text)'",
            ["sh", "-c", f"sqlite3 {d}/t.db < {d}/ins.sql"],
            ["sh", "-c", f"sqlite3 {d}/t.db < {d}/ins_tx.sql"],
            {"sync-per-record", "stat-storm"},
        ),
        (
            "fsync-per-record",
            "Python, fsync per record → per 1000 (3000 records)",
            f"rm -f {d}/log",
            [PY, f"{d}/fsync1.py"],
            [PY, f"{d}/fsync1000.py"],
            {"sync-per-record"},
        ),
        (
            "direct-block-size",
            "dd oflag=direct bs=512 → bs=1M (10 MiB)",
            f"rm -f {d}/out",
            ["dd", "if=/dev/zero", f"of={d}/out", "bs=512", "count=20480", "oflag=direct", "status=none"],
            ["dd", "if=/dev/zero", f"of={d}/out", "bs=1M", "count=10", "oflag=direct", "status=none"],
            {"small-direct-writes"},
        ),
        (
            "python-logging",
            "Python logging.FileHandler → a handler without a flush per record (50 000 records)",
            f"rm -f {d}/log",
            [PY, f"{d}/log_slow.py", f"{d}/log"],
            [PY, f"{d}/log_fixed.py", f"{d}/log"],
            {"small-writes"},
        ),
        (
            "sqlite-sync-off",
            "sqlite3 synchronous=OFF, 2000 INSERTs in autocommit → one transaction",
            f"rm -f {d}/t.db && sqlite3 {d}/t.db 'create table t(x integer, y text)'",
            ["sh", "-c", f"sqlite3 {d}/t.db < {d}/ins_off.sql"],
            ["sh", "-c", f"sqlite3 {d}/t.db < {d}/ins_off_tx.sql"],
            {"sync-per-record", "stat-storm"},
        ),
        (
            "python-unbuffered-file",
            "python3 -u → default buffering, 200 000 lines into a file",
            f"rm -f {d}/lines",
            ["sh", "-c", f"{PY} -u -c '{printer}' > {d}/lines"],
            ["sh", "-c", f"{PY} -c '{printer}' > {d}/lines"],
            {"small-writes"},
        ),
    ]


def cpu():
    """CPU time of the children waited for so far (user + system)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(prepare, cmd):
    """The command's wall time and CPU time (its processes', user and system)."""
    subprocess.run(["sh", "-c", prepare], check=True, env=ENV)
    c = cpu()
    t = time.perf_counter()
    subprocess.run(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=ENV
    )
    return time.perf_counter() - t, cpu() - c


def predicted(iolab, backend, prepare, cmd, kinds, d):
    subprocess.run(["sh", "-c", prepare], check=True, env=ENV)
    out = f"{d}/trace.json"
    subprocess.run(
        [iolab, "trace", "--backend", backend, "--json", out, "--"] + cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
        env=ENV,
    )
    with open(out) as f:
        report = json.load(f)
    found = [f for f in report["findings"] if f["kind"] in kinds]
    saving = sum(f["saving_s"] or 0.0 for f in found)
    return saving, [(f["kind"], f["path"], f["saving_s"]) for f in found]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    host = subprocess.run(
        ["rustc", "-vV"], capture_output=True, text=True
    ).stdout.split("host: ")[1].split()[0]
    p.add_argument("--iolab", default=f"{root}/target/{host}/release/iolab")
    p.add_argument("--backend", default="auto")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--only")
    p.add_argument("--dir", default=".")
    p.add_argument(
        "--nice",
        type=int,
        default=0,
        help="run everything at this niceness (-10 as root: others' load delays it less)",
    )
    a = p.parse_args()
    if a.nice:
        os.nice(a.nice)
    d = tempfile.mkdtemp(prefix="iolab-estimates-", dir=a.dir)
    rows = []
    try:
        for name, fix, prepare, slow, fixed, kinds in cases(d):
            if a.only and name not in a.only.split(","):
                continue
            times = {"slow": [], "fixed": []}
            cpus = {"slow": [], "fixed": []}
            preds = []
            load = os.getloadavg()[0]
            for r in range(a.rounds):
                order = ["slow", "fixed", "trace"]
                for v in order[r % 3 :] + order[: r % 3]:
                    if v == "trace":
                        pred, found = predicted(a.iolab, a.backend, prepare, slow, kinds, d)
                        preds.append(pred)
                    else:
                        wall, used = run(prepare, slow if v == "slow" else fixed)
                        times[v].append(wall)
                        cpus[v].append(used)
            pred = statistics.median(preds)
            slow_s = statistics.median(times["slow"])
            fixed_s = statistics.median(times["fixed"])
            measured = slow_s - fixed_s
            ratio = pred / measured if measured > 0 else float("nan")
            cpu_saving = statistics.median(cpus["slow"]) - statistics.median(cpus["fixed"])
            load = f"{load:.1f}–{os.getloadavg()[0]:.1f}"
            rows.append(
                (name, fix, slow_s, fixed_s, measured, pred, ratio, cpu_saving, load)
            )
            print(
                f"{name}: slow {slow_s:.3f} s, fixed {fixed_s:.3f} s, measured saving "
                f"{measured:.3f} s ({cpu_saving:.3f} s of CPU), predicted {pred:.3f} s, "
                f"ratio {ratio:.2f}, load {load}; {found}",
                file=sys.stderr,
            )
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print(
        "| case | fix applied | slow (median) | fixed (median) | measured saving | "
        "predicted | predicted ÷ measured | CPU time saved | predicted ÷ CPU saved | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, fix, slow_s, fixed_s, measured, pred, ratio, cpu_saving, load in rows:
        by_cpu = pred / cpu_saving if cpu_saving > 0 else float("nan")
        print(
            f"| `{name}` | {fix} | {slow_s:.3f} s | {fixed_s:.3f} s | {measured:.3f} s | "
            f"{pred:.3f} s | **{ratio:.2f}** | {cpu_saving:.3f} s | {by_cpu:.2f} | {load} |"
        )

if __name__ == "__main__":
    main()
