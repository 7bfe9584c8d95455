#!/usr/bin/env bash
# On a machine with several GPUs: how kiln scales over them (docs/benchmarks.md, Scale-out). Builds
# only the targets it needs, then runs split_bench on CUDA and NVIDIA OpenCL, and the heat world's
# strong scaling (16384^2 x 1000 steps) and weak scaling (8192^2 per GPU) with step_world
# --devices and with mpirun step_world_mpi (one rank per GPU), every output compared byte for byte
# with step_world's on one GPU. Logs go to $OUT (or ./gpu-logs).
# Usage: scripts/gpu-scale.sh [split|heat|all]...   (default: all; SCALE_N, SCALE_WEAK_N and
# SCALE_STEPS shrink the worlds, SCALE_LOG2 the split vectors, SCALE_ONE_DEVICE and SCALE_DEVICES
# pick other devices than the first CUDA GPU and every GPU, to try it on a small machine)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/gpu-logs}
mkdir -p "$out"
parts=${*:-all}
want() { [[ " $parts " == *" all "* || " $parts " == *" $1 "* ]]; }
strong_n=${SCALE_N:-16384}
weak_n=${SCALE_WEAK_N:-8192}
steps=${SCALE_STEPS:-1000}
worlds=${SCALE_WORLDS:-/tmp/kiln-worlds}
mkdir -p "$worlds"

if [ -e /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 ] || ldconfig -p | grep -q libnvidia-opencl; then
    mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
export KILN_CACHE_DIR=${KILN_CACHE_DIR:-/tmp/kiln-cache}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
build=${SCALE_BUILD:-/tmp/kiln-scale-build}

{
    command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv &&
        nvidia-smi topo -m
    echo "--- MPI"
    command -v mpirun && mpirun --version | head -2
    command -v ompi_info > /dev/null && ompi_info | grep -i cuda
} 2>&1 | tee "$out/machine.txt"

targets=(kiln-info)
want split && targets+=(split_bench)
want heat && targets+=(make_world step_world step_world_mpi)
{
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_BENCHMARKS=ON -DKILN_CUDA=ON \
        -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_APPS=ON -DKILN_BUILD_EXAMPLES=OFF -DKILN_SANITIZE=OFF
} > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
grep -E "MPI" "$out/configure.log"
have_mpi=0
grep -q "MPI part ON" "$out/configure.log" && command -v mpirun > /dev/null && have_mpi=1
[ "$have_mpi" = 1 ] || targets=("${targets[@]/step_world_mpi/}")
cmake --build "$build" -j 32 --target ${targets[*]} > "$out/build.log" 2>&1 ||
    { grep -E "error|Error" "$out/build.log" | head -40; exit 1; }
echo "build ok"
"$build/tools/kiln-info" > "$out/kiln-info.txt" 2>&1
grep -E "^\[|backend:|type:" "$out/kiln-info.txt"

if want split; then
    for backend in cuda opencl,gpu; do
        echo "=== split_bench on $backend" >> "$out/split.log"
        KILN_DEVICE=$backend timeout 150 "$build/bench/expr/split_bench" ${SCALE_LOG2:-} \
            >> "$out/split.log" 2>&1 || echo "(exit $?)" >> "$out/split.log"
    done
    cat "$out/split.log"
fi

if want heat; then
    apps=$build/apps/heat_world
    # The CUDA GPUs' numbers in kiln::devices(), for one-GPU runs of --devices.
    mapfile -t cuda_gpus < <(awk '/^\[/ {i = substr($1, 2, length($1) - 2)} /backend: cuda/ {c = 1}
        /type: gpu/ && c {print i} /^\[/ {c = 0}' "$out/kiln-info.txt")
    echo "CUDA GPUs: ${cuda_gpus[*]}"
    one_device=${SCALE_ONE_DEVICE:-${cuda_gpus[0]:-0}}
    all_devices=${SCALE_DEVICES:-gpu}
    log=$out/heat.log
    # Runs one stepper on world $1 (steps $steps), output to $2, stats to the log; then the rest.
    run_step() {
        local world=$1 output=$2
        shift 2
        echo "--- $* < $(basename "$world")" >> "$log"
        timeout 200 "$@" --stats 0.1 "$steps" 1 < "$world" > "$output" 2>> "$log" || echo "(exit $?)" >> "$log"
    }
    same() { cmp "$1" "$2" > /dev/null && echo "identical" || echo "DIFFERENT"; }

    # make_world makes square worlds; the weak-scaling world of two GPUs is the one-GPU world twice,
    # one above the other (binary format: header, '-', flags, '-', temperatures, 'End\n').
    "$apps/make_world" --stats "$strong_n" 0.1 1 > "$worlds/strong.bin"
    "$apps/make_world" --stats "$weak_n" 0.1 1 > "$worlds/weak1.bin"
    header=$(head -n 2 "$worlds/weak1.bin" | wc -c)
    cells=$((weak_n * weak_n * 4))
    {
        printf 'HPCEHeatWorldV0Binary\n%s %s 0.1\n-' "$weak_n" $((2 * weak_n))
        tail -c +$((header + 2)) "$worlds/weak1.bin" | head -c "$cells"
        tail -c +$((header + 2)) "$worlds/weak1.bin" | head -c "$cells"
        printf -- '-'
        tail -c +$((header + cells + 3)) "$worlds/weak1.bin" | head -c "$cells"
        tail -c +$((header + cells + 3)) "$worlds/weak1.bin" | head -c "$cells"
        printf 'End\n'
    } > "$worlds/weak2.bin"
    ls -l "$worlds"

    for kind in strong weak; do
        if [ $kind = strong ]; then one=$worlds/strong.bin two=$worlds/strong.bin; else
            one=$worlds/weak1.bin two=$worlds/weak2.bin; fi
        echo "=== $kind scaling" >> "$log"
        run_step "$one" "$worlds/ref1.bin" "$apps/step_world"
        [ "$one" = "$two" ] || run_step "$two" "$worlds/ref2.bin" "$apps/step_world"
        [ "$one" = "$two" ] && cp "$worlds/ref1.bin" "$worlds/ref2.bin"
        run_step "$one" "$worlds/dev1.bin" "$apps/step_world" --devices "$one_device"
        run_step "$two" "$worlds/dev2.bin" "$apps/step_world" --devices "$all_devices"
        echo "$kind --devices: 1 GPU $(same "$worlds/ref1.bin" "$worlds/dev1.bin"), 2 GPUs $(same "$worlds/ref2.bin" "$worlds/dev2.bin")" >> "$log"
        if [ "$have_mpi" = 1 ]; then
            for ranks in 1 2; do
                world=$one
                [ $ranks = 2 ] && world=$two
                run_step "$world" "$worlds/mpi$ranks.bin" mpirun --oversubscribe -n $ranks "$apps/step_world_mpi"
                echo "$kind MPI $ranks ranks: $(same "$worlds/ref$ranks.bin" "$worlds/mpi$ranks.bin")" >> "$log"
            done
        else
            echo "$kind MPI: not built (no MPI found)" >> "$log"
        fi
    done
    cat "$log"
fi
