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
