#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds kiln and runs the main demo on the default device (KILN_DEVICE picks another): the device
# list, the examples, and the heat-world pipeline rendered at three moments as heat spreads
# through the world. Pictures, the stepped worlds and a profile go to build/demo/; the last lines
# say where. The run after the build takes well under a minute on two CPU cores with PoCL.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
source scripts/build-env.sh
cmake --preset release -DKILN_UNITY_BUILD="$KILN_UNITY_BUILD" >/dev/null
cmake --build --preset release -j "$(nproc)"
bin=build/release
out=build/demo
rm -rf "$out"
mkdir -p "$out"
started=$(date +%s)

printf '\n=== devices\n'
"$bin/tools/kiln-info"

printf '\n=== examples\n'
for example in quick_start vector_add reduction matrix_multiply expr/cg_poisson; do
    if [ -x "$bin/examples/$example" ]; then "$bin/examples/$example"; fi
done
if [ -x "$bin/examples/mandelbrot" ]; then "$bin/examples/mandelbrot" "$out/mandelbrot.png"; fi

hw="$bin/apps/heat_world"
if [ -x "$hw/step_world" ]; then
    # A 256 x 256 world with a hot edge: alpha 0.5 and dt 2 let heat cross a good part of it in
    # 40000 steps (each step averages a cell with its neighbours, so any dt is stable).
    printf '\n=== heat world: make_world 256 0.5 1, then step_world 2 10000 and 2 30000, rendered after each\n'
    "$hw/make_world" 256 0.5 1 >"$out/world-0.bin"
    "$hw/render_world" "$out/heat-0-steps.png" <"$out/world-0.bin"
    # The first stepping is profiled into a timeline (drawn by kiln-prof), the second into a table.
    KILN_PROFILE="$out/step_world-trace.json" "$hw/step_world" --stats 2 10000 1 \
        <"$out/world-0.bin" >"$out/world-10000.bin"
    "$hw/render_world" "$out/heat-10000-steps.png" <"$out/world-10000.bin"
    KILN_PROFILE=summary "$hw/step_world" --stats 2 30000 1 <"$out/world-10000.bin" \
        >"$out/world-40000.bin" 2>"$out/profile-summary.txt"
    cat "$out/profile-summary.txt"
    "$hw/render_world" "$out/heat-40000-steps.png" <"$out/world-40000.bin"
    if [ -x "$bin/tools/kiln-prof" ]; then
        "$bin/tools/kiln-prof" "$out/step_world-trace.json" -o "$out/timeline.html"
    fi
fi

printf '\n=== done in %d s after the build\n' $(($(date +%s) - started))
echo "pictures: $(ls "$out"/*.png | tr '\n' ' ')"
if [ -f "$out/profile-summary.txt" ]; then echo "profile summary: $out/profile-summary.txt"; fi
if [ -f "$out/timeline.html" ]; then
    echo "profile timeline: $out/timeline.html (from $out/step_world-trace.json)"
fi
