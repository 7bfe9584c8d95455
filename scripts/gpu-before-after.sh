#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the GPU machine: the algorithm layer before and after a change, in one machine's run.
# Builds this tree ("after") and an earlier tree ("before": a source folder, e.g. made here with
# `git archive REV | tar -x -C .carry/before` and carried) side by side, then:
#   build:  both builds (release, CUDA, benchmarks; tests in "after" only)
#   tests:  the algorithm tests of "after" (or those KILN_TESTS_REGEX names) on every device
#           (CUDA, NVIDIA OpenCL, PoCL)
#   bench:  the algorithm benchmarks on CUDA and NVIDIA OpenCL, after and before alternately,
#           then scripts/compare-bench-logs.py: each row's time after / before
#           (KILN_BENCH_BACKENDS and KILN_BENCH_HARNESSES narrow them, to fit a call's time;
#           KILN_BENCH_ROUNDS repeats them, each row keeping its best time)
# Usage: scripts/gpu-before-after.sh BEFORE_SOURCE [build|tests|bench]...   (default: all)
# The builds stay in /tmp between calls while the machine is warm. Logs go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
before_source=$(realpath "${1:?usage: scripts/gpu-before-after.sh BEFORE_SOURCE [build|tests|bench]...}")
shift
source scripts/gpu-setup.sh "$@"
after_build=/tmp/kiln-after before_build=/tmp/kiln-before

configure() {  # source build tests
    cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_BENCHMARKS=ON -DKILN_CUDA=ON \
        -DKILN_BUILD_TESTS="$3" -DKILN_BUILD_APPS=OFF -DKILN_BUILD_EXAMPLES=OFF -DKILN_SANITIZE=OFF
}

if want build; then
    configure . "$after_build" ON > "$out/configure-after.log" 2>&1 &&
        configure "$before_source" "$before_build" OFF > "$out/configure-before.log" 2>&1 ||
        { tail -30 "$out"/configure-*.log; exit 1; }
    for side in after before; do
        build=/tmp/kiln-$side
        cmake --build "$build" -j "$(nproc)" > "$out/build-$side.log" 2>&1 ||
            { grep -E "error|Error" "$out/build-$side.log" | head -40; exit 1; }
        echo "build $side ok"
    done
fi

if want tests; then
    KILN_CACHE_DIR=/tmp/kiln-cache-after ctest --test-dir "$after_build" -R "${KILN_TESTS_REGEX:-^algo[.]}" -j 4 \
        --output-on-failure --timeout "${KILN_CTEST_TIMEOUT:-600}" > "$out/ctest-algo.log" 2>&1
    grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|Not Run" "$out/ctest-algo.log" | head -40
fi

if want bench; then
    : > "$out/bench-after.log"
    : > "$out/bench-before.log"
    for backend in ${KILN_BENCH_BACKENDS:-cuda opencl,gpu}; do
        for harness in ${KILN_BENCH_HARNESSES:-algo_bench sort_bench spmv_bench fft_bench stencil_bench}; do
            # Alternately, so that a drift of the machine does not land on one side only; each
            # row keeps its best time over the rounds (KILN_BENCH_ROUNDS, default 1).
            for side in $(for _ in $(seq "${KILN_BENCH_ROUNDS:-1}"); do echo after before; done); do
                echo "=== $harness on $backend" >> "$out/bench-$side.log"
                KILN_DEVICE=$backend KILN_CACHE_DIR=/tmp/kiln-cache-$side timeout 150 \
                    "/tmp/kiln-$side/bench/algo/$harness" >> "$out/bench-$side.log" 2>&1 ||
                    echo "(exit $?)" >> "$out/bench-$side.log"
            done
        done
    done
    python3 scripts/compare-bench-logs.py "$out/bench-before.log" "$out/bench-after.log" |
        tee "$out/compare.txt"
fi
