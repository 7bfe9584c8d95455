#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compares two logs of kiln's benchmarks row by row: each row's time after / before.

    compare-bench-logs.py BEFORE.log AFTER.log [--tolerance 0.03]

A log is the benchmarks' markdown tables under `=== <harness> on <backend>` headers (as
scripts/gpu-before-after.sh and scripts/gpu-check.sh write them). A row is named by its header
and the cells before its first time cell ("1.234 ms" or "56.7 us"); rows found in one log only
are listed apart. Prints one line per row and, last, the rows outside the tolerance; exits 0
either way (a figure, not a verdict: machines are noisy).
"""
import argparse
import re
import sys

TIME = re.compile(r"^([0-9]+(?:\.[0-9]+)?) (ms|us)$")


def rows(path):
    """{(header, name): seconds} of a log, in the order met."""
    found = {}
    header = ""
    with open(path, encoding="utf-8", errors="replace") as log:
        for line in log:
            line = line.rstrip("\n")
            if line.startswith("=== "):
                header = line[4:]
                continue
            if not line.startswith("|"):
                continue
            cells = [c.strip() for c in line.strip("|").split("|")]
            for i, cell in enumerate(cells):
                match = TIME.match(cell)
                if match:
                    scale = 1e-3 if match.group(2) == "ms" else 1e-6
                    key = (header, " | ".join(cells[:i]))
                    # A row printed twice under one header (a repeated run) keeps its best time.
                    seconds = float(match.group(1)) * scale
                    found[key] = min(found.get(key, seconds), seconds)
                    break
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--tolerance", type=float, default=0.03)
    args = parser.parse_args()
    before, after = rows(args.before), rows(args.after)
    outside = []
    for key, seconds in after.items():
        if key not in before:
            continue
        ratio = seconds / before[key] if before[key] > 0 else float("inf")
        line = f"{ratio:6.3f}  {key[0]}: {key[1]}  ({before[key] * 1e3:.4g} -> {seconds * 1e3:.4g} ms)"
        print(line)
        if abs(ratio - 1) > args.tolerance:
            outside.append(line)
    only = [k for k in after if k not in before] + [k for k in before if k not in after]
    for header, name in only:
        print(f"  only in one log: {header}: {name}")
    print(f"\n{len(outside)} of {sum(1 for k in after if k in before)} rows outside "
          f"{args.tolerance:.0%} (after / before time):")
    for line in outside:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
