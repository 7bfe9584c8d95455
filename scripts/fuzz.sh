#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds one of kiln's libFuzzer targets (fuzz/) with clang in its own build folder and runs it
# for a bounded time over its seed corpus in fuzz/corpus/<target>.
#
# usage: scripts/fuzz.sh TARGET [SECONDS] [LIBFUZZER_FLAG...]
#        scripts/fuzz.sh --build-only TARGET...
#   TARGET    heat_world_reader, kernel_launch or kiln_prof (the executable is TARGET_fuzz)
#   SECONDS   how long to fuzz (default: $FUZZ_SECONDS, else 60)
#   --build-only builds the targets and runs nothing; FUZZ_PREBUILT=1 then runs one without
#   touching the build folder, so that several can run at once (scripts/test.sh does).
# Environment: FUZZ_BUILD_DIR (default build/fuzz), FUZZ_CXX (default clang++-15 where installed:
# kiln's headers need std::source_location, which clang 14 lacks; else clang++), FUZZ_JOBS (2),
# KILN_UNITY_BUILD (OFF; ON from scripts/test.sh: kiln a src/ folder at a time, CMakeLists.txt).
# New inputs go to $FUZZ_BUILD_DIR/corpus/TARGET, never into the committed seeds; a crashing
# input is saved in $FUZZ_BUILD_DIR/artifacts and the script exits non-zero.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build/fuzz}
configure_and_build() {  # targets...
    local compiler=${FUZZ_CXX:-$(command -v clang++-15 || echo clang++)}
    cmake -S "$root/fuzz" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
          -DCMAKE_CXX_COMPILER="$compiler" -DKILN_UNITY_BUILD="${KILN_UNITY_BUILD:-OFF}" >/dev/null
    cmake --build "$build" -j "${FUZZ_JOBS:-2}" --target "${@/%/_fuzz}"
}
if [[ ${1:-} == --build-only ]]; then
    shift
    configure_and_build "$@"
    exit 0
fi
if [[ $# -lt 1 || ! -d $root/fuzz/corpus/$1 ]]; then
    echo "usage: $0 TARGET [SECONDS] [LIBFUZZER_FLAG...]; targets: $(ls "$root/fuzz/corpus")" >&2
    exit 2
fi
target=$1
shift
seconds=${FUZZ_SECONDS:-60}
if [[ $# -gt 0 && $1 =~ ^[0-9]+$ ]]; then
    seconds=$1
    shift
fi

[[ ${FUZZ_PREBUILT:-0} == 1 ]] || configure_and_build "$target"

# Leaks inside the OpenCL stack are PoCL's own (see the file); kiln's stay visible.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/tests/lsan.supp:print_suppressions=0}
mkdir -p "$build/corpus/$target" "$build/artifacts"
exec "$build/${target}_fuzz" \
    -max_total_time="$seconds" \
    -timeout=10 \
    -rss_limit_mb=4096 \
    -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/${target}-" \
    "$@" \
    "$build/corpus/$target" "$root/fuzz/corpus/$target"
