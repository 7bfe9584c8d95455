#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the GPU machine: build everything with benchmarks, list devices, run the whole suite on every
# device, the benchmarks, and compute-sanitizer over the CUDA tests. Logs go to $OUT (or ./gpu-logs).
# Usage: scripts/gpu-check.sh [tests|bench|algo|gemm|python|profile|sanitize|all]...   (default: all)
#   algo: the algorithm benchmarks (scan, compaction, sort, SpMV, stencils, FFT) beside CUB, cuSPARSE and
#   cuFFT, on each GPU backend, into $OUT/algo.log, their ratios as rows into $OUT/algo.tsv
#   gemm: kiln::gemm's tests on every device and every strategy, its NVRTC compile, gemm_bench
#   beside cuBLAS and OpenBLAS on every device, and examples/matrix_multiply on each GPU backend,
#   into $OUT/gemm.log
#   python: the Python package's tests (python/tests) and python/bench/bench.py (beside CuPy and
#   PyTorch where installed) on each GPU backend, into $OUT/python.log
#   profile: the profiler's overhead on `y = 2*x + 3*z` on each GPU backend, and a KILN_PROFILE
#   trace of the expression benchmark drawn by kiln-prof, into $OUT/profile.log and $OUT/trace-*
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu-setup.sh "$@"

export KILN_CACHE_DIR=/tmp/kiln-cache
build=/tmp/kiln-build

{
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
    # Every option explicit: a warm machine may keep an old build directory with other settings.
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_BENCHMARKS=ON -DKILN_CUDA=ON \
        -DKILN_BUILD_TESTS=ON -DKILN_BUILD_APPS=ON -DKILN_BUILD_EXAMPLES=ON -DKILN_SANITIZE=OFF \
        -DPython_EXECUTABLE="$(command -v python3)" -DKILN_PYTHON_INSTALL_DIR=site-packages
} > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" > "$out/build.log" 2>&1 || { grep -E "error|Error" "$out/build.log" | head -40; exit 1; }
echo "build ok"

"$build/tools/kiln-info" > "$out/kiln-info.txt" 2>&1
"$build/tools/kiln-info" --json > "$out/kiln-info.json" 2>&1
grep -E "^\[|backend:|type:" "$out/kiln-info.txt"

if want tests; then
    ctest --test-dir "$build" -j 4 --output-on-failure --timeout "${KILN_CTEST_TIMEOUT:-300}" > "$out/ctest.log" 2>&1
    grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|Not Run" "$out/ctest.log" | head -40
fi

if want bench; then
    : > "$out/bench.log"
    export KILN_BENCH_TSV="$out/bench.tsv"  # every bench's ratios as rows (docs/benchmarks.md)
    for harness in "$build"/bench/*/*_bench "$build"/bench/*/*_reference; do
        [ -x "$harness" ] || continue
        [[ "$harness" == */particles_bench ]] && continue  # below, once per backend
        echo "=== $harness" | tee -a "$out/bench.log"
        timeout 240 "$harness" >> "$out/bench.log" 2>&1 || echo "(exit $?)" >> "$out/bench.log"
    done
    # The particle layouts (AoS against SoA) on both GPU backends, for docs/benchmarks.md.
    for backend in cuda opencl,gpu; do
        echo "=== particles_bench on $backend" | tee -a "$out/bench.log"
        KILN_DEVICE=$backend timeout 120 "$build/bench/expr/particles_bench" >> "$out/bench.log" 2>&1 ||
            echo "(exit $?)" >> "$out/bench.log"
    done
    tail -80 "$out/bench.log"
fi

if want algo; then
    : > "$out/algo.log"
    export KILN_BENCH_TSV="$out/algo.tsv"
    for backend in cuda opencl,gpu; do
        for harness in algo_bench spmv_bench fft_bench stencil_bench; do
            echo "=== $harness on $backend" >> "$out/algo.log"
            KILN_DEVICE=$backend timeout 150 "$build/bench/algo/$harness" >> "$out/algo.log" 2>&1 ||
                echo "(exit $?)" >> "$out/algo.log"
        done
    done
    # sort_bench measures the devices KILN_DEVICE matches (2^28 keys on GPUs).
    for backend in cuda opencl,gpu; do
        echo "=== sort_bench on $backend" >> "$out/algo.log"
        KILN_DEVICE=$backend timeout 150 "$build/bench/algo/sort_bench" >> "$out/algo.log" 2>&1 ||
            echo "(exit $?)" >> "$out/algo.log"
    done
    grep -E "^###|ratio|x CUB|x cu" "$out/algo.log" | head -120
fi

if want gemm; then
    export KILN_BENCH_TSV="$out/gemm.tsv"
    {
        timeout 500 "$build/tests/algo/algo_gemm_test" || echo "(exit $?)"
        timeout 300 "$build/tests/algo/algo_gemm_binary16_test" || echo "(exit $?)"
        timeout 300 "$build/tests/algo/algo_gemm_float8_test" || echo "(exit $?)"
        timeout 300 "$build/tests/algo/algo_gemm_aligned_rows_test" || echo "(exit $?)"
        timeout 120 "$build/tests/cuda/cuda_nvrtc_compile_test" --gtest_filter='*Gemm*' || echo "(exit $?)"
        timeout 400 "$build/bench/linalg/gemm_bench" || echo "(exit $?)"
        for backend in cuda opencl,gpu; do
            echo "=== matrix_multiply on $backend"
            KILN_DEVICE=$backend timeout 120 "$build/examples/matrix_multiply" || echo "(exit $?)"
        done
    } > "$out/gemm.log" 2>&1
    grep -E "^\[  (PASSED|FAILED)|^\||^===|GFLOP|exit" "$out/gemm.log" | head -80
fi

if want python; then
    {
        # A compiler that links libstdc++ into shared objects gets no Python package
        # (python/CMakeLists.txt): the package is then built apart with the system's compiler.
        python_build=$build
        if ! ninja -C "$build" -t targets all 2>/dev/null | grep -q "^_kiln:" && [ -x /usr/bin/g++ ]; then
            python_build=/tmp/kiln-build-python
            cmake -S . -B "$python_build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=/usr/bin/g++ \
                -DKILN_CUDA=ON -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_EXAMPLES=OFF -DKILN_BUILD_APPS=OFF \
                -DPython_EXECUTABLE="$(command -v python3)" -DKILN_PYTHON_INSTALL_DIR=site-packages >/dev/null &&
                cmake --build "$python_build" -j "$(nproc)" --target _kiln >/dev/null
        fi
        if cmake --install "$python_build" --component python --prefix "$build/python-prefix"; then
            for backend in cuda opencl,gpu; do
                echo "=== python/tests on $backend"
                KILN_DEVICE=$backend PYTHONPATH="$build/python-prefix/site-packages" timeout 300 \
                    python3 -m pytest -q -p no:cacheprovider python/tests || echo "(exit $?)"
                echo "=== python/bench/bench.py on $backend"
                # kiln's C++ twin of the large works, where benchmarks were built, beside them.
                twin=()
                [ -x "$build/bench/python/python_twin_bench" ] && twin=(--cpp "$build/bench/python/python_twin_bench")
                KILN_DEVICE=$backend PYTHONPATH="$build/python-prefix/site-packages" timeout 400 \
                    python3 python/bench/bench.py "${twin[@]}" || echo "(exit $?)"
            done
        else
            echo "no Python package built (configure.log says why)"
        fi
    } > "$out/python.log" 2>&1
    grep -E "^===|passed|failed|error| us | ms |exit" "$out/python.log" | head -60
fi

if want profile; then
    : > "$out/profile.log"
    for backend in cuda opencl,gpu; do
        echo "=== profile_overhead_bench on $backend" >> "$out/profile.log"
        KILN_DEVICE=$backend timeout 150 "$build/bench/expr/profile_overhead_bench" >> "$out/profile.log" 2>&1 ||
            echo "(exit $?)" >> "$out/profile.log"
        name=${backend%%,*}
        KILN_DEVICE=$backend KILN_PROFILE="$out/trace-$name.json" timeout 150 "$build/bench/expr/expr_bench" 24 \
            > /dev/null 2>> "$out/profile.log" &&
            "$build/tools/kiln-prof" "$out/trace-$name.json" -o "$out/trace-$name.html" >> "$out/profile.log" 2>&1
    done
    grep -E "^===|^###|^\||kiln-prof|exit" "$out/profile.log"
fi

if want sanitize && command -v compute-sanitizer > /dev/null; then
    for tool in memcheck racecheck; do
        for test_binary in "$build"/tests/runtime/*_test "$build"/tests/cuda/cuda_cuda_device_test; do
            # racecheck is slow and only about shared memory: the kernels with local memory live
            # in the CUDA device tests.
            [ "$tool" = racecheck ] && [[ "$test_binary" == */tests/runtime/* ]] && continue
            [ -x "$test_binary" ] || continue
            # Test names carry the device as <index>_<backend>_<name>: run only the CUDA instances.
            filter='*_cuda_*'
            [[ "$test_binary" == */tests/cuda/* ]] && filter='*'
            # API errors that kiln itself provokes and handles (probing, bad-input tests) are not
            # memory errors: only real faults count.
            timeout 240 compute-sanitizer --tool "$tool" --report-api-errors no --error-exitcode 9 \
                "$test_binary" --gtest_filter="$filter" > "$out/sanitizer-$tool-$(basename "$test_binary").log" 2>&1
            echo "compute-sanitizer $tool $(basename "$test_binary"): exit $?"
        done
    done
fi
