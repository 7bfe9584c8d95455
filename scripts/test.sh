#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds kiln and runs every test: a formatting check, the release suite (the algorithms, the
# examples and the checks of code and docs), the suite of kiln's host code (runtime, expressions,
# heat world...) under AddressSanitizer, the tests that use threads under ThreadSanitizer, an install consumed through
# find_package(kiln) by a project that builds examples copied out of the tree, the packages
# (scripts/check-packaging.sh), and bounded fuzzing runs of the world reader, of kernel-argument
# binding and launch geometry, and of kiln-prof's trace reader.
# Installs missing Debian packages first.
# KILN_TEST_SKIP_ASAN=1 / KILN_TEST_SKIP_TSAN=1 / KILN_TEST_SKIP_FUZZ=1 skip parts.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

scripts/install-deps.sh
jobs=$(nproc)
source scripts/build-env.sh

step() { printf '\n=== %s\n' "$*"; }

# Runs ctest and adds its counts to the totals printed at the end.
passed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Returns ctest's status.
run_ctest() {
    local status=0 total failed
    ctest "$@" | tee "$log" || status=$?
    total=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -1)
    failed=$(sed -n 's/.* \([0-9]*\) tests failed out of.*/\1/p' "$log" | tail -1)
    passed=$((passed + ${total:-0} - ${failed:-0}))
    return "$status"
}

step "formatting (clang-format) and licence lines"
scripts/check-format.sh
scripts/check-licence-lines.sh

# Each family of tests is built and run in one of the two builds (cmake/kilnTestFamilies.cmake):
# the algorithms' tests spend their time in the devices' kernels, which the sanitizers do not see
# (PoCL compiles and runs them uninstrumented), the others in kiln's host code. Both builds hold
# the C++ kernels' and the interop tests. Every test in both builds took the command past 60
# minutes on 2 cores.
release_tests="algo;kernels;interop;checks"
asan_tests="runtime;cuda;expr;algo_host;kernels;mpi;interop;heat_world"

step "release build and tests"
cmake --preset release -DKILN_UNITY_BUILD="$KILN_UNITY_BUILD" -DKILN_TEST_FAMILIES="$release_tests" >/dev/null
cmake --build --preset release -j "$jobs"
run_ctest --preset release -j "$jobs"

if [ "${KILN_TEST_SKIP_ASAN:-0}" != 1 ]; then
    step "AddressSanitizer + UBSan build and tests"
    # The examples' tests run in the release build (the consumer below starts from their caches).
    cmake --preset asan -DKILN_UNITY_BUILD="$KILN_UNITY_BUILD" -DKILN_TEST_FAMILIES="$asan_tests" \
        -DKILN_BUILD_EXAMPLES=OFF >/dev/null
    cmake --build --preset asan -j "$jobs"
    # The tests both builds hold compile the same kernels in both. PoCL's compiler is not
    # instrumented, so compiling them again would check nothing more: those ASan tests start from
    # the release run's kernel caches. The cache tests
    # (runtime.cache, runtime.guide) use their own empty folders, so kiln's compile-and-store path
    # still runs under the sanitizers.
    (cd build/release && find . -type d \( -name cache -o -name pocl-cache \) -prune -print) |
        while read -r dir; do
            mkdir -p "build/asan/$dir" && cp -a "build/release/$dir/." "build/asan/$dir/"
        done
    # The asan test preset turns LeakSanitizer on, with tests/lsan.supp (ASAN_OPTIONS set here
    # would not reach the tests: a test preset's environment replaces the caller's). It also
    # has PoCL compile the kernels it has no cache for with its optimizer off
    # (POCL_EXTRA_BUILD_FLAGS=-cl-opt-disable): these tests check kiln's host code, and
    # optimizing kernels was most of PoCL's compile time (tests/algo/CMakeLists.txt).
    # LeakSanitizer's tracer, which stops every thread to scan its stack at exit, now and then
    # crashes ("Tracer caught signal 11", then "LeakSanitizer has encountered a fatal error"):
    # in runtime.guide, after its tests had passed, in both runs of this script from fresh clones
    # on 2026-11-26 (2 cores), not in the two of the day before, nor in six runs of that test
    # alone. Where every failure was such a crash, the failed tests run once more; any other
    # failure fails the run.
    if ! run_ctest --preset asan -j "$jobs"; then
        failures=$(sed -n 's/.* \([0-9]*\) tests failed out of.*/\1/p' "$log" | tail -1)
        crashes=$(grep -c "LeakSanitizer has encountered a fatal error" "$log" || true)
        if [ "${failures:-0}" -eq 0 ] || [ "$crashes" -lt "$failures" ]; then exit 1; fi
        step "the $failures tests whose LeakSanitizer crashed at exit, once more"
        run_ctest --preset asan --rerun-failed
    fi
fi

if [ "${KILN_TEST_SKIP_TSAN:-0}" != 1 ]; then
    # Only the tests that use threads (tsan.*: tests/CMakeLists.txt and the heat world's --devices
    # in apps/heat_world/CMakeLists.txt), and only their targets.
    step "ThreadSanitizer build and the tests that use threads"
    cmake --preset tsan -DKILN_UNITY_BUILD="$KILN_UNITY_BUILD" >/dev/null
    cmake --build --preset tsan -j "$jobs" --target runtime_cache_test runtime_launch_test runtime_profile_test expr_threads_test \
        algo_fft_host_library_test make_world step_world
    # The tsan.* tests start from the PoCL caches of their binaries' earlier runs, release or ASan
    # (tests/CMakeLists.txt): PoCL's LLVM is not instrumented, and kiln's own caches start empty.
    # The cache's and the profile's threaded tests took 49 CPU-seconds instead of 78.
    for dir in tests/runtime/pocl-cache tests/expr/pocl-cache tests/algo/pocl-cache/algo.fft_host_library; do
        for earlier in build/release build/asan; do
            if [ -d "$earlier/$dir" ]; then
                mkdir -p "build/tsan/$dir" && cp -a "$earlier/$dir/." "build/tsan/$dir/"
            fi
        done
    done
    # Side by side: each tsan.* test has kernel caches and files of its own.
    run_ctest --preset tsan -j "$jobs"
fi

step "install, and find_package(kiln) from a consumer project that copies examples out of the tree"
rm -rf build/install build/consumer
cmake --install build/release --prefix build/install >/dev/null
cmake -S tests/install_consumer -B build/consumer -G Ninja -DCMAKE_PREFIX_PATH="$root/build/install" >/dev/null
cmake --build build/consumer
# The copied examples compile the kernels the release run's examples did: they start from the
# quick start's caches there rather than compiling them again on PoCL (13 s cold, 0.4 s warm).
KILN_CACHE_DIR=$root/build/release/examples/cache/example.quick_start \
    POCL_CACHE_DIR=$root/build/release/examples/pocl-cache/example.quick_start \
    run_ctest --test-dir build/consumer --output-on-failure

packaging_step="shared library, pkg-config consumer, Debian package, build without OpenCL"
if [ "${KILN_TEST_SKIP_FUZZ:-0}" = 1 ] || [ ! -x scripts/fuzz.sh ]; then
    step "$packaging_step"
    scripts/check-packaging.sh
else
    step "fuzzing (bounded): build"
    scripts/fuzz.sh --build-only heat_world_reader kernel_launch kiln_prof
    # A fuzzer runs on one core: the heat-world reader's and the launches' side by side, each
    # into its log, printed once both are done (the whole log where one failed).
    fuzz_beside() {  # target...
        local target pids=() failed=0
        for target in "$@"; do
            FUZZ_PREBUILT=1 scripts/fuzz.sh "$target" >"build/fuzz/$target.log" 2>&1 &
            pids+=($!)
        done
        for target in "$@"; do
            step "fuzzing $target (bounded)"
            local log="build/fuzz/$target.log" ok=0
            if wait "${pids[0]}"; then
                ok=1
            elif grep -q "Tracer caught signal" "$log"; then
                # LeakSanitizer's own thread-stopping tracer crashed during a leak check: a
                # failure of the tool (seen with PoCL's threads), not a finding. The target runs
                # once more.
                grep -B2 -A2 "Tracer caught signal" "$log"
                echo "LeakSanitizer's tracer crashed: running $target again"
                log="build/fuzz/$target.again.log"
                FUZZ_PREBUILT=1 scripts/fuzz.sh "$target" >"$log" 2>&1 && ok=1
            fi
            if [ "$ok" = 1 ]; then
                tail -n 12 "$log"
            else
                cat "$log"
                failed=1
            fi
            pids=("${pids[@]:1}")
        done
        return "$failed"
    }
    fuzz_beside heat_world_reader kernel_launch
    # kiln-prof's fuzzer keeps one core busy, and the packaging checks, mostly one command at a
    # time (configures, installs, cpack, builds the compiler cache answers), run on the other:
    # their log is printed once both are done.
    scripts/check-packaging.sh >build/packaging.log 2>&1 &
    packaging=$!
    # 30 s rather than 60: a small reader that runs no device (FUZZ_SECONDS still sets it).
    step "fuzzing kiln-prof's trace reading and drawing (bounded)"
    prof_status=0
    scripts/fuzz.sh kiln_prof "${FUZZ_SECONDS:-30}" || prof_status=$?
    step "$packaging_step"
    packaging_status=0
    wait "$packaging" || packaging_status=$?
    cat build/packaging.log
    [ "$packaging_status" = 0 ] || exit "$packaging_status"
    [ "$prof_status" = 0 ] || exit "$prof_status"
fi

step "all tests passed"
echo "$passed passed, 0 failed"
