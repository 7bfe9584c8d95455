#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs a program that must fail: exit status 1, nothing on standard output, and exactly
# one line on standard error that contains the expected text. With --first-line, the text must
# be on the first line, and more may follow (the examples print an exception's whole message).
# usage: expect_error.sh [--first-line] EXPECTED_TEXT INPUT_FILE COMMAND [ARGUMENT...]
first_line=0
if [ "$1" = --first-line ]; then
    first_line=1
    shift
fi
expected=$1
input=$2
shift 2
scratch=$(mktemp -d) || exit 2
trap 'rm -rf "$scratch"' EXIT
"$@" <"$input" >"$scratch/out" 2>"$scratch/err"
status=$?
failed=0
if [ "$status" -ne 1 ]; then
    echo "expected exit status 1, got $status" >&2
    failed=1
fi
if [ -s "$scratch/out" ]; then
    echo "expected nothing on standard output, got $(wc -c <"$scratch/out") bytes" >&2
    failed=1
fi
lines=$(wc -l <"$scratch/err")
if [ "$first_line" = 1 ]; then
    if ! head -n 1 "$scratch/err" | grep -qF -- "$expected"; then
        echo "standard error's first line lacks: $expected" >&2
        failed=1
    fi
else
    if [ "$lines" -ne 1 ]; then
        echo "expected one line on standard error, got $lines" >&2
        failed=1
    fi
    if ! grep -qF -- "$expected" "$scratch/err"; then
        echo "standard error lacks: $expected" >&2
        failed=1
    fi
fi
echo "standard error was: $(cat "$scratch/err")" >&2
exit $failed
