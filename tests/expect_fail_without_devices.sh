#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs each test binary given with no OpenCL platform and no CUDA device visible. Each must fail
# and say why (a suite with no device instance is a GoogleTest failure, a fixture needing one
# asserts it), never pass having run nothing.
empty=$(mktemp -d)
trap 'rm -rf "$empty"' EXIT
status=0
for binary in "$@"; do
    name=$(basename "$binary")
    if OCL_ICD_VENDORS="$empty" OCL_ICD_FILENAMES= CUDA_VISIBLE_DEVICES= \
        "$binary" > "$empty/$name.log" 2>&1; then
        echo "$name passed with no device" >&2
        status=1
    elif ! grep -q "never instantiated\|no OpenCL or CUDA device" "$empty/$name.log"; then
        echo "$name failed with no device, but not for want of one:" >&2
        tail -5 "$empty/$name.log" >&2
        status=1
    else
        echo "$name fails with no device, as it must"
    fi
done
exit $status
