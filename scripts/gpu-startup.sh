#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On a GPU machine: the heat world timed as the HPCE coursework times it, whole processes from
# `cat world.bin | step_world dt steps 1 > /dev/null` (docs/heat_world.md, "The coursework's
# table"; docs/benchmarks.md).
#   startup     step_world with 0, 1 and 1000 steps on CUDA and NVIDIA OpenCL beside the
#               drivers' own floor (bench/heat_world/startup_floor.cpp: read, context, upload,
#               read-back, write), median of STARTUP_REPS runs (default 9)
#   coursework  every engine on both backends with 0, 1 and 1000 steps (median of
#               COURSEWORK_REPS, default 3; the reference and naive engines' 1000 steps once),
#               and the original coursework program where HPCE_ORIGINAL names a folder holding
#               its heat.hpp, heat.cpp and step_world.cpp (the HPCE repository's include/ and
#               src/ files, fetched separately: kiln does not ship them)
# Worlds are make_world's N x N test world (STARTUP_N, default 4096) in binary. Logs go to $OUT.
# Usage: scripts/gpu-startup.sh [startup|coursework]...   (default: both)
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu-setup.sh "$@"
n=${STARTUP_N:-4096}
build=${STARTUP_BUILD:-/tmp/kiln-startup-build}
export KILN_CACHE_DIR=${KILN_CACHE_DIR:-/tmp/kiln-cache}

{
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_BENCHMARKS=ON \
        -DKILN_CUDA=ON -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_APPS=ON -DKILN_BUILD_EXAMPLES=OFF \
        -DKILN_SANITIZE=OFF
} > "$out/startup-configure.log" 2>&1 || { tail -30 "$out/startup-configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" --target kiln-info make_world step_world startup_floor_cuda \
    startup_floor_opencl > "$out/startup-build.log" 2>&1 ||
    { grep -E "error|Error" "$out/startup-build.log" | head -40; exit 1; }
apps=$build/apps/heat_world
floor=$build/bench/heat_world
world=/tmp/kiln-startup-world-$n.bin
"$apps/make_world" "$n" 0.1 1 > "$world"
log=$out/startup.log
: > "$log"

# The median of $1 runs of the shell command $2, in seconds of wall-clock time (stderr to $log).
median_seconds() {
    local runs=$1 command=$2 times=()
    for _ in $(seq "$runs"); do
        local begin end
        begin=$(date +%s.%N)
        bash -c "$command" > /dev/null 2>> "$log" || echo "(failed: $command)" >> "$log"
        end=$(date +%s.%N)
        times+=("$(awk -v a="$end" -v b="$begin" 'BEGIN {printf "%.4f", a - b}')")
    done
    printf '%s\n' "${times[@]}" | sort -n | awk '{t[NR] = $1} END {printf "%.3f", t[int((NR + 1) / 2)]}'
}

# Warm kiln's program cache and the world's pages: a user's second run, as the coursework's.
for backend in cuda opencl,gpu; do
    KILN_DEVICE=$backend "$apps/step_world" 0.1 1 1 < "$world" > /dev/null 2>> "$log"
done

if want startup; then
    reps=${STARTUP_REPS:-9}
    echo "### Start-up, ${n}^2 binary world, whole process, median of $reps ($(date +%F))"
    echo
    echo "| run | CUDA | NVIDIA OpenCL |"
    echo "| --- | ---: | ---: |"
    cuda_floor=$(median_seconds "$reps" "cat $world | $floor/startup_floor_cuda cuda")
    opencl_floor=$(median_seconds "$reps" "cat $world | $floor/startup_floor_opencl opencl")
    echo "| drivers' floor (read, context, upload, read-back, write) | $cuda_floor s | $opencl_floor s |"
    for steps in 0 1 1000; do
        cuda=$(median_seconds "$reps" "cat $world | KILN_DEVICE=cuda $apps/step_world 0.1 $steps 1")
        opencl=$(median_seconds "$reps" "cat $world | KILN_DEVICE=opencl,gpu $apps/step_world 0.1 $steps 1")
        echo "| step_world, $steps steps | $cuda s | $opencl s |"
        [ "$steps" = 0 ] && zero_cuda=$cuda zero_opencl=$opencl
    done
    echo
    milliseconds_over() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.0f", (a - b) * 1000}'; }
    echo "0 steps minus the floor: CUDA $(milliseconds_over "$zero_cuda" "$cuda_floor") ms," \
        "NVIDIA OpenCL $(milliseconds_over "$zero_opencl" "$opencl_floor") ms (goal: at most 50)"
    for backend in cuda opencl,gpu; do
        cat "$world" | KILN_DEVICE=$backend "$apps/step_world" --stats 0.1 1 1 2>&1 > /dev/null
        cat "$world" | "$floor/startup_floor_${backend%%,*}" "${backend%%,*}" 2>&1 > /dev/null
    done
    echo
fi

if want coursework; then
    reps=${COURSEWORK_REPS:-3}
    echo "### The coursework's table, ${n}^2 binary world, median of $reps ($(date +%F))"
    echo
    echo "| program | 0 steps | 1 step | 1000 steps |"
    echo "| --- | ---: | ---: | ---: |"
    row() {
        local name=$1 command=$2 slow=$3 cells=()
        for steps in 0 1 1000; do
            local runs=$reps
            [ "$steps" = 1000 ] && [ "$slow" = 1 ] && runs=1
            cells+=("$(median_seconds "$runs" "cat $world | ${command/STEPS/$steps}") s")
        done
        echo "| $name | ${cells[0]} | ${cells[1]} | ${cells[2]} |"
    }
    if [ -n "${HPCE_ORIGINAL:-}" ]; then
        g++ -O3 -std=c++11 -I"$HPCE_ORIGINAL" "$HPCE_ORIGINAL/heat.cpp" "$HPCE_ORIGINAL/step_world.cpp" \
            -o /tmp/hpce-original-step-world 2>> "$log" &&
            row "original step_world (HPCE, g++ -O3)" "/tmp/hpce-original-step-world 0.1 STEPS 1" 1
    fi
    mapfile -t engines < <("$apps/step_world" --list-engines | awk '{print $1}')
    for engine in "${engines[@]}"; do
        slow=0
        [ "$engine" = reference ] || [ "$engine" = naive ] && slow=1
        if [ "$engine" = reference ] || [ "$engine" = threads ]; then
            row "step_world --engine $engine (host)" "$apps/step_world --engine $engine 0.1 STEPS 1" $slow
            continue
        fi
        for backend in cuda opencl,gpu; do
            row "step_world --engine $engine, $backend" \
                "KILN_DEVICE=$backend $apps/step_world --engine $engine 0.1 STEPS 1" $slow
        done
    done
    echo
fi
