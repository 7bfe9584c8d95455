#!/usr/bin/env bash
# Builds the heat-world reader's libFuzzer target with clang in its own build folder and runs it
# for a bounded time over the seed corpus in fuzz/corpus/heat_world_reader.
#
# usage: scripts/fuzz-heat-world.sh [SECONDS] [LIBFUZZER_FLAG...]
#   SECONDS   how long to fuzz (default: $FUZZ_SECONDS, else 60)
# Environment: FUZZ_BUILD_DIR (default build/fuzz), FUZZ_CXX (default clang++), FUZZ_JOBS (2).
# New inputs go to $FUZZ_BUILD_DIR/corpus, never into the committed seeds; a crashing input is
# saved in $FUZZ_BUILD_DIR/artifacts and the script exits non-zero.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build/fuzz}
seconds=${FUZZ_SECONDS:-60}
if [[ $# -gt 0 && $1 =~ ^[0-9]+$ ]]; then
    seconds=$1
    shift
fi

cmake -S "$root/fuzz" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_COMPILER="${FUZZ_CXX:-clang++}" >/dev/null
cmake --build "$build" --target heat_world_reader_fuzz -j "${FUZZ_JOBS:-2}"

mkdir -p "$build/corpus" "$build/artifacts"
exec "$build/heat_world_reader_fuzz" \
    -max_total_time="$seconds" \
    -timeout=10 \
    -rss_limit_mb=2048 \
    -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/" \
    "$@" \
    "$build/corpus" "$root/fuzz/corpus/heat_world_reader"
