#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails when any tracked C++ file differs from what clang-format (the tree's .clang-format) makes
# of it. Run with --fix to format them in place.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh')
if [ "${1:-}" = --fix ]; then
    clang-format -i "${files[@]}"
    exit 0
fi
if ! findings=$(clang-format --dry-run "${files[@]}" 2>&1) || [ -n "$findings" ]; then
    echo "$findings" | grep -o '^[^:]*:[0-9]*' | sort -u | head -40
    echo "kiln: these files are not clang-formatted; run scripts/check-format.sh --fix" >&2
    exit 1
fi
echo "clang-format: ${#files[@]} files formatted"
