#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A C++ kernel mistake the compiler must refuse: CASE built with KILN_WITH_MISTAKE fails, its
# diagnostics name CASE in an error and hold the text of its `// expected COMPILER: TEXT` line
# (COMPILER is g++ or clang++, whatever its file is called); built without, it compiles.
# With PCH_DIR, <kiln/kernel.hpp> comes from the header that --precompile left there: parsing it
# was most of each compile (3.9 CPU-seconds with g++ 12, 1.2 from the header; clang++ 15: 3.2,
# 0.6).
# usage: must_not_compile.sh COMPILER INCLUDE_DIR CASE [PCH_DIR]
#        must_not_compile.sh --precompile COMPILER INCLUDE_DIR PCH_DIR
precompile=0
if [ "$1" = --precompile ]; then
    precompile=1
    shift
fi
compiler=$1
include=$2
# Plain quotes in the diagnostics, whatever the locale.
export LC_ALL=C
if "$compiler" --version | grep -q clang; then name=clang++; else name=g++; fi
if [ "$precompile" = 1 ]; then
    pch=$3
    # g++ takes kiln/kernel.hpp.gch from an include directory searched before the header's;
    # clang++ takes the file that -include-pch names.
    if [ "$name" = clang++ ]; then out=$pch/kernel.hpp.pch; else out=$pch/kiln/kernel.hpp.gch; fi
    mkdir -p "$(dirname "$out")"
    exec "$compiler" -std=c++20 -x c++-header -I"$include" "$include/kiln/kernel.hpp" -o "$out"
fi
case=$3
pch=${4:-}
expected=$(sed -n "s|^// expected $name: ||p" "$case")
if [ -z "$expected" ]; then
    echo "$case has no '// expected $name:' line" >&2
    exit 2
fi
flags="-std=c++20 -fsyntax-only -I$include -I$(dirname "$case")"
if [ -n "$pch" ] && [ "$name" = clang++ ]; then
    flags="-include-pch $pch/kernel.hpp.pch $flags"
elif [ -n "$pch" ]; then
    flags="-I$pch -Winvalid-pch $flags"
fi
if ! "$compiler" $flags "$case" 2>/dev/null; then
    echo "the twin without the mistake does not compile:" >&2
    "$compiler" $flags "$case"
    exit 1
fi
errors=$("$compiler" $flags -DKILN_WITH_MISTAKE "$case" 2>&1)
status=$?
failed=0
if [ "$status" -eq 0 ]; then
    echo "compiled with the mistake" >&2
    failed=1
fi
if ! printf '%s\n' "$errors" | grep -q "^$case:[0-9]*:[0-9]*: error"; then
    echo "no error names $case" >&2
    failed=1
fi
if ! printf '%s\n' "$errors" | grep -qF -- "$expected"; then
    echo "the errors lack: $expected" >&2
    failed=1
fi
if [ "$failed" -ne 0 ]; then printf '%s\n' "$errors" | head -40 >&2; fi
exit $failed
