#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""docs.bench_chart: scripts/bench-chart.py finds every ratio of a sample of the benches' output
(algo-sample.log, in their print formats) and draws one bar per figure; the chart in docs/ is the
one its figures draw.

Usage: bench_chart_test.py SOURCE_DIR WORK_DIR
"""

import os
import subprocess
import sys
import xml.etree.ElementTree as ET

source, work = sys.argv[1], sys.argv[2]
here = os.path.join(source, "tests", "docs")
script = os.path.join(source, "scripts", "bench-chart.py")
os.makedirs(work, exist_ok=True)
failures = []


def run(*args):
    subprocess.run([sys.executable, script, *args], check=True, stdout=subprocess.DEVNULL)


def bars(svg_path):
    root = ET.parse(svg_path).getroot()
    return [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("class") == "bar"]


def data_rows(tsv_path):
    with open(tsv_path, encoding="utf-8") as f:
        return [line for line in f.read().splitlines()[1:] if line.strip()]


# The log: every row that carries a ratio, as the expected table lists them, and one bar each.
tsv, svg = os.path.join(work, "sample.tsv"), os.path.join(work, "sample.svg")
run("--from-log", os.path.join(here, "algo-sample.log"), "--date", "2026-11-23",
    "--write-tsv", tsv, "--svg", svg)
got, expected = data_rows(tsv), data_rows(os.path.join(here, "algo-sample.tsv"))
for line in expected:
    if line not in got:
        failures.append(f"missed: {line}")
for line in got:
    if line not in expected:
        failures.append(f"unexpected: {line}")
if len(bars(svg)) != len(expected):
    failures.append(f"{len(bars(svg))} bars for {len(expected)} rows of the log")

# The report's chart: drawn from docs/bench/ratios.tsv, one bar per row, and up to date.
figures = os.path.join(source, "docs", "bench", "ratios.tsv")
drawn = os.path.join(work, "benchmarks.svg")
run("--tsv", figures, "--svg", drawn, "--title",
    "kiln against CUB, cuSPARSE, cuFFT, cuBLAS, std:: and FFTW")
if len(bars(drawn)) != len(data_rows(figures)):
    failures.append(f"{len(bars(drawn))} bars for {len(data_rows(figures))} rows of ratios.tsv")
with open(drawn, encoding="utf-8") as a, open(os.path.join(source, "docs", "benchmarks.svg"),
                                              encoding="utf-8") as b:
    if a.read() != b.read():
        failures.append("docs/benchmarks.svg is not what docs/bench/ratios.tsv draws: run "
                        "scripts/bench-chart.py --tsv docs/bench/ratios.tsv --svg "
                        "docs/benchmarks.svg (title as in this test)")

for failure in failures:
    print(failure)
print("FAILED" if failures else f"passed: {len(expected)} log rows, {len(data_rows(figures))} figures")
sys.exit(1 if failures else 0)
