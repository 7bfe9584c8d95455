# SPDX-License-Identifier: Apache-2.0
# Sourced by demo.sh and test.sh (from the repository's root): one compiler cache setting for
# both, so that their release builds run the same compile commands and share one build tree.
# The packaging checks rebuild kiln's objects with the release build's flags in other folders:
# the cache in build/ lets them reuse the release objects instead of compiling everything again.
if command -v ccache >/dev/null; then
    export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_DIR="${CCACHE_DIR:-$PWD/build/ccache}" CCACHE_BASEDIR="$PWD"
    export CCACHE_NOHASHDIR=1
    # The tests compile with a precompiled header (tests/CMakeLists.txt), which ccache caches
    # only with these two relaxations.
    export CCACHE_SLOPPINESS=pch_defines,time_macros
fi
# Both build from scratch more often than not (CI always): kiln's sources compile one src/ folder
# at a time (KILN_UNITY_BUILD in CMakeLists.txt), each folder's headers parsed once. The scripts
# they call (check-packaging.sh, fuzz.sh) build the same way. KILN_UNITY_BUILD=OFF before them
# builds file by file, as `cmake --preset release` alone does.
export KILN_UNITY_BUILD=${KILN_UNITY_BUILD:-ON}
