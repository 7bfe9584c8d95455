#!/usr/bin/env bash
# Builds kiln and runs the main demo on the default device (KILN_DEVICE picks another):
# the device list, the examples, and the heat-world pipeline rendered to heat.png.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
bin=build/release

printf '\n=== devices\n'
"$bin/tools/kiln-info"

printf '\n=== examples\n'
for example in vector_add reduction matrix_multiply; do
    [ -x "$bin/examples/$example" ] && "$bin/examples/$example"
done
[ -x "$bin/examples/mandelbrot" ] && "$bin/examples/mandelbrot" mandelbrot.png

hw="$bin/apps/heat_world"
if [ -x "$hw/step_world" ]; then
    printf '\n=== heat world: make_world 1000 0.1 1 | step_world 0.1 100000 1 | render_world heat.png\n'
    "$hw/make_world" 1000 0.1 1 | "$hw/step_world" --stats 0.1 100000 1 | "$hw/render_world" heat.png
    echo "wrote heat.png"
fi
