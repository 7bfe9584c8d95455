#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds and runs the subproject consumer through add_subdirectory, then through FetchContent, in
# one binary folder: the second build compiles nothing the first did (the compiler cache of
# scripts/build-env.sh, when set). Then checks that kiln installs nothing there and brings no
# CPack configuration.
#     build_both_ways.sh <kiln source> <binary folder> <cmake> <generator>
set -eu
source=$1 build=$2 cmake=$3 generator=$4
for way in add_subdirectory FetchContent; do
    echo "--- kiln through $way"
    rm -rf "$build"
    "$cmake" -S "$source/tests/subproject_consumer" -B "$build" -G "$generator" \
        -DKILN_SOURCE="$source" -DKILN_CONSUMER_WAY="$way" -DKILN_UNITY_BUILD=ON >/dev/null
    "$cmake" --build "$build" >/dev/null
    "$build/consumer"
    if [ -n "$(find "$build" -name CPackConfig.cmake)" ]; then
        echo "kiln brought a CPack configuration"
        exit 1
    fi
    "$cmake" --install "$build" --prefix "$build/installed" >/dev/null
    if [ -n "$(find "$build/installed" -type f 2>/dev/null)" ]; then
        echo "kiln installed files:"
        find "$build/installed" -type f
        exit 1
    fi
done
