#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs test binaries under valgrind's memcheck (slow: minutes per binary on PoCL), failing on any
# error or definite leak. Usage: scripts/valgrind.sh [build-dir] [test-binary-glob]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
glob=${2:-tests/runtime/runtime_*_test}
export KILN_CACHE_DIR=${KILN_CACHE_DIR:-$PWD/$build/valgrind-cache}
status=0
for test_binary in $build/$glob; do
    [ -x "$test_binary" ] || continue
    "$test_binary" > /dev/null 2>&1  # warm kiln's and PoCL's caches: compiling under valgrind takes ages
    if valgrind --quiet --error-exitcode=9 --leak-check=full --show-leak-kinds=definite \
        --errors-for-leak-kinds=definite --suppressions=tests/valgrind.supp "$test_binary" > /dev/null; then
        echo "valgrind clean: $test_binary"
    else
        echo "valgrind FOUND ERRORS: $test_binary"
        status=1
    fi
done
exit $status
