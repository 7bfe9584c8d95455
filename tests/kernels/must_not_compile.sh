#!/bin/sh
# A C++ kernel mistake the compiler must refuse: CASE built with KILN_WITH_MISTAKE fails, its
# diagnostics name CASE in an error and hold the text of its `// expected COMPILER: TEXT` line
# (COMPILER is g++ or clang++, whatever its file is called); built without, it compiles.
# usage: must_not_compile.sh COMPILER INCLUDE_DIR CASE
compiler=$1
include=$2
case=$3
# Plain quotes in the diagnostics, whatever the locale.
export LC_ALL=C
if "$compiler" --version | grep -q clang; then name=clang++; else name=g++; fi
expected=$(sed -n "s|^// expected $name: ||p" "$case")
if [ -z "$expected" ]; then
    echo "$case has no '// expected $name:' line" >&2
    exit 2
fi
flags="-std=c++20 -fsyntax-only -I$include -I$(dirname "$case")"
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
