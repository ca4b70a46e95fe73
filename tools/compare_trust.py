#!/usr/bin/env python3
"""Whether `iolab compare` can be trusted by a CI, on runs of one binary: every ordered
pair of the given run folders is compared (no row should be REGRESSED), then a 1.5×
slowdown is injected into every judged row of B whose noise is under ±15% (its runs,
median and statistics ×1.5, in a copy of B's results.json) and each must be REGRESSED.

    for i in 1 2 3 4 5; do iolab bench count --out runs/$i; done
    python3 tools/compare_trust.py [--iolab PATH] runs/1 runs/2 runs/3 runs/4 runs/5
"""

import argparse
import json
import os
import re
import subprocess
import tempfile


def compare(iolab, a, b):
    return subprocess.run([iolab, "compare", a, b], capture_output=True, text=True).stdout


def judged_rows(text):
    """Label -> noise percent, for every judged row of a compare table."""
    rows = {}
    for line in text.split("\n"):
        m = re.match(r"^(\S.+?)\s{2,}\S+\s+\S+\s+\S+.*?±(\d+)%\s+(.*)$", line)
        if m:
            rows[m.group(1).strip()] = (int(m.group(2)), m.group(3))
    return rows


def slowed(results, index):
    doc = json.loads(json.dumps(results))
    row = doc["rows"][index]
    row["runs"] = [v * 1.5 for v in row["runs"]]
    for k in ("median_s", "user_s", "sys_s"):
        if row.get(k) is not None:
            row[k] *= 1.5
    if row.get("throughput_bytes_per_s"):
        row["throughput_bytes_per_s"] /= 1.5
    for k in ("min", "max", "median", "mean", "stddev", "mad"):
        if row.get("stats"):
            row["stats"][k] *= 1.5
    return doc


def label_of(row, labels):
    """The compare table's label of `row` among `labels`, when exactly one matches."""
    cache = f"({row.get('cache')})"
    many = "input" in row
    found = [
        l for l in labels
        if l.split(" ")[1] == row["method"] and l.endswith(cache)
        and ("files of" in l) == many
        and ("threads=" not in l or f"threads={row.get('threads')}" in l)
    ]
    return found[0] if len(found) == 1 else None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--iolab", default="target/x86_64-unknown-linux-gnu/release/iolab")
    p.add_argument("runs", nargs="+")
    args = p.parse_args()
    regressed = comparisons = 0
    tries = flagged = 0
    for a in args.runs:
        for b in args.runs:
            if a == b:
                continue
            text = compare(args.iolab, a, b)
            rows = judged_rows(text)
            comparisons += 1
            regressed += sum("REGRESSED" in c for _, c in rows.values())
            doc = json.load(open(os.path.join(b, "results.json")))
            for i, row in enumerate(doc["rows"]):
                if row.get("baseline") or len(row.get("runs", [])) < 3:
                    continue
                label = label_of(row, rows)
                if label is None or rows[label][0] >= 15:
                    continue
                with tempfile.TemporaryDirectory() as d:
                    json.dump(slowed(doc, i), open(os.path.join(d, "results.json"), "w"))
                    after = judged_rows(compare(args.iolab, a, d))
                tries += 1
                flagged += "REGRESSED" in after.get(label, (0, ""))[1]
    print(f"same binary: {regressed} REGRESSED rows in {comparisons} comparisons")
    print(f"1.5x injected into rows with noise under ±15%: flagged {flagged} of {tries}")


if __name__ == "__main__":
    main()
