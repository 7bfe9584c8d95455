#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Draws kiln's ratios to its references (CUB, cuBLAS, cuFFT, one host thread, FFTW...) as an SVG.

Reads tab-separated tables of figures (--tsv): docs/bench/ratios.tsv, or the rows the benches
append to the file KILN_BENCH_TSV names (bench/support/ratio_rows.hpp), in the same columns. It
also still reads the log that `scripts/gpu-check.sh algo` writes ($OUT/algo.log: `=== <harness>
on <backend>` headers, then each harness's markdown tables; --from-log), for logs of benches run
before they wrote rows. Writes the figures as one table (--write-tsv) and the chart (--svg): one
panel per device, one group of bars per work, one bar per backend, drawn on a log scale from a
line at 1.0 so that faster and slower than the reference read alike.

    KILN_BENCH_TSV=h100.tsv KILN_DEVICE=cuda build/bench/bench/algo/sort_bench 28
    scripts/bench-chart.py --tsv h100.tsv --svg h100.svg
    scripts/bench-chart.py --tsv docs/bench/ratios.tsv --svg docs/benchmarks.svg

Ratios are kept as the benches print them. `measure` says which way: `speed` is reference time
over kiln time (above 1, kiln is faster); `time` is kiln time over reference time (fft_bench,
small_ops_bench); `bandwidth` a share of the device's copy bandwidth; `bound` a multiple of the
bound the copy bandwidth sets (heat_world_bench). The chart draws every row as speed (time
ratios inverted, the printed figure kept in its label). Python 3 standard library only.
"""

import argparse
import math
import re
import sys
import textwrap
from xml.sax.saxutils import escape

COLUMNS = ["area", "work", "backend", "ratio", "measure", "reference", "device", "date"]
AREAS = {
    "algo_bench": "scan family",
    "sort_bench": "sorting",
    "spmv_bench": "SpMV",
    "stencil_bench": "stencils",
    "fft_bench": "FFT",
}
BACKEND_NAMES = {"cuda": "CUDA", "opencl,gpu": "NVIDIA OpenCL", "opencl": "OpenCL", "cpu": "PoCL"}
HARNESS = re.compile(r"^=== (\S+) on (\S+)")
# The benches' table titles: "### kiln algorithms, DEVICE (cuda), ...", "### kiln::fft, DEVICE
# (opencl), ...", "### 2026-11-23, DEVICE (cuda), n = 2^28" (sort_bench).
TITLE = re.compile(r"^### (?:(\d{4}-\d\d-\d\d), )?(?:kiln[^,]*, )?(.+?) \((cuda|opencl)\)")
RATIO = re.compile(r"^(\d+(?:\.\d+)?)x (.+?)(?: \(\d+(?:\.\d+)? ms\))?$")
COPY_SHARE = re.compile(r"(\d+(?:\.\d+)?)% of copy")
# Rows algo_bench repeats with another strategy forced, for comparison with the table's own: their
# work ends in the strategy in parentheses, "(before: direct writes)", "(tiles)", and so on.
VARIANT = re.compile(r" \([^()]*\)$")


TITLE_AREAS = [("kiln algorithms", "scan family"), ("kiln::fft", "FFT"),
               ("kiln sparse", "SpMV"), ("kiln stencils", "stencils")]


def ratio_in(cell):
    """(ratio, reference) of a cell such as "0.97x CUB DeviceScan::InclusiveSum (0.870 ms)",
    or of the part after stencil_bench's "96% of copy, "; None where there is none."""
    found = RATIO.match(re.sub(r"^\d+(?:\.\d+)?% of copy(?: bandwidth)?, ", "", cell))
    return (found.group(1), found.group(2)) if found else None


def parse_log(lines, date="", all_rows=False):
    """Rows (dicts of COLUMNS) for every table row of the log that carries a ratio."""
    rows = []
    area, harness_backend, backend, device, time_ratios = "", "", "", "", False
    for line in lines:
        line = line.rstrip("\n")
        found = HARNESS.match(line)
        if found:
            area = AREAS.get(found.group(1), found.group(1))
            harness_backend = found.group(2)
            backend, device, time_ratios = BACKEND_NAMES.get(harness_backend, harness_backend), "", False
            continue
        found = TITLE.match(line)
        if found:
            date = found.group(1) or date
            device = found.group(2)
            time_ratios = False
            if not harness_backend:
                backend = "CUDA" if found.group(3) == "cuda" else "OpenCL"
                area = next((a for t, a in TITLE_AREAS if line.startswith("### " + t)), "sorting")
            continue
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if any("kiln time / reference time" in c for c in cells):
            time_ratios = True
            continue
        work = cells[0]
        variant = area == AREAS["algo_bench"] and VARIANT.search(work)
        if len(cells) < 2 or cells[1].startswith("failed") or (variant and not all_rows):
            continue
        for cell in cells[1:]:
            found = ratio_in(cell)
            share = COPY_SHARE.search(cell)
            if found:
                (ratio, reference), measure = found, "time" if time_ratios else "speed"
            elif share:
                ratio, reference, measure = f"{float(share.group(1)) / 100:g}", "copy", "bandwidth"
            else:
                continue
            rows.append(
                {
                    "area": area or "bench",
                    "work": work,
                    "backend": backend,
                    "ratio": ratio,
                    "measure": measure,
                    "reference": reference,
                    "device": device,
                    "date": date,
                }
            )
            break
    return rows


def read_tsv(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            cells = line.rstrip("\n").split("\t")
            if cells == COLUMNS:
                continue
            if len(cells) != len(COLUMNS):
                sys.exit(f"{path}:{number}: {len(cells)} columns, expected {len(COLUMNS)}")
            row = dict(zip(COLUMNS, cells))
            float(row["ratio"])
            rows.append(row)
    return rows


def write_tsv(rows, path):
    with open(path, "w", encoding="utf-8") as f:
        f.write("\t".join(COLUMNS) + "\n")
        for row in rows:
            f.write("\t".join(row[c] for c in COLUMNS) + "\n")


def speed(row):
    """The row as kiln's speed relative to its reference: above 1, kiln is faster."""
    value = float(row["ratio"])
    return 1 / value if row["measure"] == "time" else value


def label(row):
    if row["measure"] == "time":
        return f"{speed(row):.2f} ({row['ratio']}x the time)"
    if row["measure"] == "bandwidth":
        return f"{float(row['ratio']):.0%} of copy"
    if row["measure"] == "bound":
        return f"{row['ratio']}x the bound"
    return f"{row['ratio']}x"


PALETTE = ["#1b6ca8", "#e07b1a", "#3a9a4a", "#8e44ad", "#c0392b", "#7f8c8d"]


def grouped(rows, key):
    order = []
    groups = {}
    for row in rows:
        k = key(row)
        if k not in groups:
            order.append(k)
            groups[k] = []
        groups[k].append(row)
    return [(k, groups[k]) for k in order]


def svg(rows, title):
    """The chart: panels per device, groups per (area, work), a bar per backend."""
    width, label_width, bar_height, gap = 1000, 330, 16, 10
    plot_left, plot_right = label_width + 10, width - 150
    backends = [b for b, _ in grouped(rows, lambda r: r["backend"])]
    colour = {b: PALETTE[i % len(PALETTE)] for i, b in enumerate(backends)}
    out = []
    y = 70
    for device, device_rows in grouped(rows, lambda r: r["device"]):
        values = [speed(r) for r in device_rows]
        # A factor of 2 to spare left of the slowest bar holds its printed value.
        low = 2 ** math.floor(math.log2(min(values + [1.0]) / 1.05))
        low = low / 2 if min(values) < 1 else low
        high = 2 ** math.ceil(math.log2(max(values + [1.0]) * 1.05))

        def x_of(value, low=low, high=high):
            span = math.log(high) - math.log(low)
            return plot_left + (plot_right - plot_left) * (math.log(value) - math.log(low)) / span

        dates = sorted({r["date"] for r in device_rows})
        when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
        refs = ", ".join(dict.fromkeys(r["reference"] for r in device_rows))
        out.append(f'<text x="10" y="{y}" class="panel">{escape(device)}, {escape(when)}</text>')
        for line in textwrap.wrap("against " + refs, 160):
            y += 16
            out.append(f'<text x="10" y="{y}" class="note">{escape(line)}</text>')
        y += 18
        top = y
        for (area, work), group in grouped(device_rows, lambda r: (r["area"], r["work"])):
            group_top = y
            for row in group:
                value = speed(row)
                x0, x1 = sorted((x_of(1.0), x_of(value)))
                out.append(
                    f'<rect class="bar" x="{x0:.1f}" y="{y}" width="{max(x1 - x0, 1):.1f}" '
                    f'height="{bar_height}" fill="{colour[row["backend"]]}">'
                    f"<title>{escape(row['backend'])}: {escape(label(row))}</title></rect>"
                )
                text_x = x1 + 4 if value >= 1 else x0 - 4
                anchor = "start" if value >= 1 else "end"
                out.append(
                    f'<text x="{text_x:.1f}" y="{y + bar_height - 4}" class="value" '
                    f'text-anchor="{anchor}">{escape(label(row))}</text>'
                )
                y += bar_height + 2
            middle = (group_top + y) / 2 + 4
            out.append(
                f'<text x="{label_width}" y="{middle:.1f}" class="work" text-anchor="end">'
                f"{escape(area)}: {escape(work)}</text>"
            )
            y += gap
        tick = low
        while tick <= high * 1.001:
            x = x_of(tick)
            style = "one" if abs(tick - 1) < 1e-9 else "grid"
            out.append(f'<line class="{style}" x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{y}"/>')
            out.append(f'<text x="{x:.1f}" y="{y + 14}" class="tick">{tick:g}</text>')
            tick *= 2
        y += 50
    legend_x = 10
    for backend in backends:
        out.append(
            f'<rect x="{legend_x}" y="{y - 22}" width="12" height="12" fill="{colour[backend]}"/>'
        )
        out.append(f'<text x="{legend_x + 16}" y="{y - 12}" class="work">{escape(backend)}</text>')
        legend_x += 30 + 8 * len(backend)
    height = y + 10
    head = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif">',
        "<style>.panel{font-size:15px;font-weight:bold}.note,.tick{font-size:11px;fill:#555}"
        ".tick{text-anchor:middle}.work{font-size:12px}"
        ".value{font-size:11px;paint-order:stroke;stroke:#fff;stroke-width:3px}"
        ".grid{stroke:#ddd}.one{stroke:#000;stroke-width:1.5}</style>",
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
        f'<text x="10" y="24" class="panel" font-size="18px">{escape(title)}</text>',
        '<text x="10" y="44" class="note">kiln\'s speed relative to the reference, log scale: '
        "right of the line at 1, kiln is faster (time ratios inverted, the printed figure "
        "beside)</text>",
    ]
    return "\n".join(head + out + ["</svg>", ""])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--from-log", action="append", default=[], help="bench output to parse")
    parser.add_argument("--tsv", action="append", default=[], help="figures to read (TSV)")
    parser.add_argument("--write-tsv", help="write the figures read to this TSV")
    parser.add_argument("--svg", help="write the chart here")
    parser.add_argument("--date", default="", help="date of a log's rows that print none")
    parser.add_argument("--device", help="device of a log's rows where no title names one")
    parser.add_argument("--all-rows", action="store_true", help="keep forced-strategy rows")
    parser.add_argument("--title", default="kiln against its references")
    args = parser.parse_args()
    rows = []
    for path in args.from_log:
        with open(path, encoding="utf-8", errors="replace") as f:
            parsed = parse_log(f, args.date, args.all_rows)
        for row in parsed:
            row["device"] = row["device"] or args.device or "unknown device"
        rows += parsed
    for path in args.tsv:
        rows += read_tsv(path)
    if not rows:
        sys.exit("bench-chart: no ratios found")
    if args.write_tsv:
        write_tsv(rows, args.write_tsv)
    if args.svg:
        with open(args.svg, "w", encoding="utf-8") as f:
            f.write(svg(rows, args.title))
    print(f"bench-chart: {len(rows)} rows")


if __name__ == "__main__":
    main()
