#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The first call of each algorithm in a new process (bench/algo/first_call_bench), on the device
# KILN_DEVICE picks: once with empty caches (kiln's KILN_CACHE_DIR and PoCL's POCL_CACHE_DIR, so
# every program is compiled, as on a user's first run), then again in a new process with the
# caches the first one filled. Prints a markdown table.
# Usage: scripts/first-call-times.sh [BUILD_DIR] [log2(n)]      (defaults build/bench, 20)
set -euo pipefail
build=${1:-build/bench}
log2_n=${2:-20}
bench="$build/bench/algo/first_call_bench"
[ -x "$bench" ] || { echo "first-call-times: no $bench (configure with -DKILN_BUILD_BENCHMARKS=ON)" >&2; exit 1; }
caches=$(mktemp -d)
trap 'rm -rf "$caches"' EXIT
echo "| work (n = 2^$log2_n) | cold: first call | cold: second call | warm: first call | device |"
echo "|---|---|---|---|---|"
for work in $("$bench" --list); do
    export KILN_CACHE_DIR="$caches/$work/kiln" POCL_CACHE_DIR="$caches/$work/pocl"
    mkdir -p "$KILN_CACHE_DIR" "$POCL_CACHE_DIR"
    cold=$("$bench" "$work" "$log2_n") || { echo "| $work | failed | | | |"; continue; }
    warm=$("$bench" "$work" "$log2_n") || { echo "| $work | $cold failed warm |"; continue; }
    # cold: "| work | first | second | device |"; warm's first call joins it.
    IFS='|' read -r _ _ first second device _ <<< "$cold"
    IFS='|' read -r _ _ warm_first _ <<< "$warm"
    echo "| $work |$first|$second|$warm_first|$device|"
done
