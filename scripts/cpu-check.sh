#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the GPU machine's CPU (16 cores, PoCL): issue 23's CPU figures in one call. Builds the
# benchmarks (no CUDA, no tests) and runs, on KILN_DEVICE=cpu, the expression, scan-family,
# sort, FFT, SpMV, stencil, multivector, heat-world and SGEMM (beside OpenBLAS) benchmarks, and
# the first calls cold and warm.
# oneTBB (sort_bench's parallel reference) is taken from .deb files under $KILN_TBB_DEBS where
# the machine lacks libtbb-dev, made on a Debian machine with
# `apt-get download libtbb-dev libtbb12 libtbbbind-2-5 libtbbmalloc2 libhwloc15`.
# Logs go to $OUT (or ./gpu-logs) as cpu.log.
# Usage: scripts/cpu-check.sh [expr|algo|sort|fft|spmv|stencil|multivector|heat|gemm|first|all]...
#        (default: all; the build goes to $KILN_CPU_BUILD, default /tmp/kiln-cpu)
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu-setup.sh "$@"
build=${KILN_CPU_BUILD:-/tmp/kiln-cpu}
tbb_args=()
if ! dpkg -s libtbb-dev > /dev/null 2>&1 && [ -d "${KILN_TBB_DEBS:-}" ]; then
    for deb in "$KILN_TBB_DEBS"/*.deb; do dpkg -x "$deb" /tmp/tbb-root; done
    tbb_args=(-DTBB_DIR=/tmp/tbb-root/usr/lib/x86_64-linux-gnu/cmake/TBB)
    export LD_LIBRARY_PATH=/tmp/tbb-root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_BENCHMARKS=ON -DKILN_CUDA=OFF \
    -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_APPS=ON -DKILN_BUILD_EXAMPLES=OFF -DKILN_SANITIZE=OFF \
    "${tbb_args[@]}" > "$out/cpu-configure.log" 2>&1 || { tail -30 "$out/cpu-configure.log"; exit 1; }
grep -i "tbb\|fftw\|openblas" "$out/cpu-configure.log"
cmake --build "$build" -j "$(nproc)" > "$out/cpu-build.log" 2>&1 ||
    { grep -E "error|Error" "$out/cpu-build.log" | head -40; exit 1; }
echo "cpu build ok"
export KILN_DEVICE=cpu KILN_CACHE_DIR=/tmp/kiln-cpu-cache
log="$out/cpu.log"
touch "$log"
run() {  # limit harness args...
    local limit=$1 harness=$2
    shift 2
    echo "=== $harness $* on cpu ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))" >> "$log"
    timeout "$limit" "$build/bench/$harness" "$@" >> "$log" 2>&1 || echo "(exit $?)" >> "$log"
}
want expr && run 120 expr/expr_bench 24 && run 120 expr/expr_bench 26
want algo && run 150 algo/algo_bench 24 24 24
want sort && run 150 algo/sort_bench 24
want spmv && run 120 algo/spmv_bench 2048 4194304
want stencil && run 120 algo/stencil_bench 16777216 4096
want multivector && run 120 expr/multivector_bench 16777216 4096
want heat && run 200 heat_world/heat_world_bench 4096:100
# The CPU rows only (the work's name): kiln::gemm's plan and its CPU strategies beside OpenBLAS.
want gemm && run 300 linalg/gemm_bench sgemm_2048
# FFTW plans every shape with FFTW_MEASURE on 1 and on every thread, and kiln's own plan: the
# issue's three shapes fit a call.
want fft && run 400 algo/fft_bench 100000000 1d_2^24,2d_4096^2,batched_1024x16384
if want first; then
    echo "=== first calls, cold and warm" >> "$log"
    scripts/first-call-times.sh "$build" 20 >> "$log" 2>&1
fi
grep -c "^|" "$log"
