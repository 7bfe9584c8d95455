#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On a machine with several GPUs: how kiln scales over them (docs/benchmarks.md, Scale-out). Builds
# only the targets it needs, then runs split_bench on CUDA and NVIDIA OpenCL, and the heat world's
# strong scaling (16384^2 x 1000 steps) and weak scaling (8192^2 per GPU) with step_world
# --devices and with mpirun step_world_mpi (one rank, and one rank per GPU), every output compared
# byte for byte with step_world's on one GPU. Logs go to $OUT (or ./gpu-logs).
# Usage: scripts/gpu-scale.sh [split|heat|all]...   (default: all; SCALE_N, SCALE_WEAK_N and
# SCALE_STEPS shrink the worlds, SCALE_LOG2 the split vectors; SCALE_DEVICES, a comma-separated
# list of kiln device numbers, replaces every CUDA GPU, to try it on a small machine;
# SCALE_SPLIT_BACKENDS, default "cuda opencl,gpu", and SCALE_KINDS, default "strong weak", trim
# the runs to fit a short device call). The GPU counts compared are 1, 2, 4, ... and every GPU
# the machine has.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu-setup.sh "$@"
strong_n=${SCALE_N:-16384}
weak_n=${SCALE_WEAK_N:-8192}
steps=${SCALE_STEPS:-1000}
worlds=${SCALE_WORLDS:-/tmp/kiln-worlds}
mkdir -p "$worlds"

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
cmake --build "$build" -j "$(nproc)" --target ${targets[*]} > "$out/build.log" 2>&1 ||
    { grep -E "error|Error" "$out/build.log" | head -40; exit 1; }
echo "build ok"
"$build/tools/kiln-info" > "$out/kiln-info.txt" 2>&1
grep -E "^\[|backend:|type:" "$out/kiln-info.txt"
# The CUDA GPUs' numbers in kiln::devices(), and the GPU counts to compare: 1, 2, 4, ... up to
# every GPU of the machine (and that count itself).
mapfile -t cuda_gpus < <(awk '/^\[/ {i = substr($1, 2, length($1) - 2)} /backend: cuda/ {c = 1}
    /type: gpu/ && c {print i} /^\[/ {c = 0}' "$out/kiln-info.txt")
[ -n "${SCALE_DEVICES:-}" ] && IFS=, read -r -a cuda_gpus <<< "$SCALE_DEVICES"
gpu_counts=()
for ((k = 1; k < ${#cuda_gpus[@]}; k *= 2)); do gpu_counts+=("$k"); done
gpu_counts+=("${#cuda_gpus[@]}")
echo "CUDA GPUs: ${cuda_gpus[*]}; GPU counts compared: ${gpu_counts[*]}"

if want split; then
    for backend in ${SCALE_SPLIT_BACKENDS:-cuda opencl,gpu}; do
        echo "=== split_bench on $backend" >> "$out/split.log"
        KILN_DEVICE=$backend timeout 150 "$build/bench/expr/split_bench" ${SCALE_LOG2:-} \
            >> "$out/split.log" 2>&1 || echo "(exit $?)" >> "$out/split.log"
    done
    cat "$out/split.log"
fi

if want heat; then
    apps=$build/apps/heat_world
    log=$out/heat.log
    # Runs one stepper on world $1 (steps $steps), output to $2, stats and the whole process's
    # wall-clock seconds (from reading the world to writing it, as the coursework times a run)
    # to the log, the seconds also in $whole; then the rest. step_world reads standard input and
    # writes standard output; MPI ranks read and write files (-i, -o), since mpirun forwards
    # standard input and output through one process at a fraction of the disk's speed. Ranks run
    # unbound: Open MPI's default binds each of two to one core, where a 2 GiB world's setup
    # took 1.3 s instead of 0.18 s (docs/heat_world.md).
    run_step() {
        local world=$1 output=$2 begin end
        shift 2
        echo "--- $* < $(basename "$world")" >> "$log"
        # Truncating a 2 GiB file that the page cache still holds took about a second: not the
        # program's time.
        rm -f "$output"
        begin=$(date +%s.%N)
        if [[ "$*" == *step_world_mpi* ]]; then
            timeout 200 "$@" --stats -i "$world" -o "$output" 0.1 "$steps" 1 2>> "$log" || echo "(exit $?)" >> "$log"
        else
            timeout 200 "$@" --stats 0.1 "$steps" 1 < "$world" > "$output" 2>> "$log" || echo "(exit $?)" >> "$log"
        fi
        end=$(date +%s.%N)
        whole=$(awk -v a="$end" -v b="$begin" 'BEGIN {printf "%.3f", a - b}')
        echo "whole process: $whole s" >> "$log"
    }
    speed_up() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2fx", a / b}'; }
    same() { cmp "$1" "$2" > /dev/null && echo "identical" || echo "DIFFERENT"; }

    # make_world makes square worlds; the weak-scaling world of k GPUs is the one-GPU world k
    # times, one above the other (binary format: header, '-', flags, '-', temperatures, 'End\n').
    "$apps/make_world" --stats "$strong_n" 0.1 1 > "$worlds/strong.bin"
    kinds=${SCALE_KINDS:-strong weak}
    if [[ " $kinds " == *" weak "* ]]; then
        "$apps/make_world" --stats "$weak_n" 0.1 1 > "$worlds/weak1.bin"
        header=$(head -n 2 "$worlds/weak1.bin" | wc -c)
        cells=$((weak_n * weak_n * 4))
        tail -c +$((header + 2)) "$worlds/weak1.bin" | head -c "$cells" > "$worlds/weak-flags"
        tail -c +$((header + cells + 3)) "$worlds/weak1.bin" | head -c "$cells" > "$worlds/weak-temperatures"
        for k in "${gpu_counts[@]}"; do
            [ "$k" = 1 ] && continue
            {
                printf 'HPCEHeatWorldV0Binary\n%s %s 0.1\n-' "$weak_n" $((k * weak_n))
                for _ in $(seq "$k"); do cat "$worlds/weak-flags"; done
                printf -- '-'
                for _ in $(seq "$k"); do cat "$worlds/weak-temperatures"; done
                printf 'End\n'
            } > "$worlds/weak$k.bin"
        done
        rm -f "$worlds/weak-flags" "$worlds/weak-temperatures"
    fi
    ls -l "$worlds"

    for kind in $kinds; do
        echo "=== $kind scaling" >> "$log"
        for k in "${gpu_counts[@]}"; do
            world=$worlds/strong.bin
            [ $kind = weak ] && world=$worlds/weak$k.bin
            # step_world on one GPU: the reference bytes (once for the strong world).
            if [ $kind = weak ] || [ "$k" = 1 ]; then
                run_step "$world" "$worlds/ref$k.bin" "$apps/step_world"
                echo "$kind step_world on one GPU: whole process $whole s" >> "$log"
            fi
            ref=$worlds/ref$k.bin
            [ $kind = strong ] && ref=$worlds/ref1.bin
            list=$(IFS=,; echo "${cuda_gpus[*]:0:$k}")
            run_step "$world" "$worlds/dev.bin" "$apps/step_world" --devices "$list"
            [ "$k" = 1 ] && devices_one=$whole
            echo "$kind --devices $list ($k GPUs): $(same "$ref" "$worlds/dev.bin"); whole process" \
                "$whole s, $(speed_up "$devices_one" "$whole") one GPU's --devices" >> "$log"
            # MPI with one rank and with one per GPU, not every count.
            if [ "$have_mpi" = 1 ] && { [ "$k" = 1 ] || [ "$k" = "${gpu_counts[-1]}" ]; }; then
                run_step "$world" "$worlds/mpi.bin" mpirun --oversubscribe --bind-to none -n "$k" "$apps/step_world_mpi"
                [ "$k" = 1 ] && mpi_one=$whole
                echo "$kind MPI $k ranks: $(same "$ref" "$worlds/mpi.bin"); whole process $whole s," \
                    "$(speed_up "$mpi_one" "$whole") one rank's" >> "$log"
            fi
        done
        [ "$have_mpi" = 1 ] || echo "$kind MPI: not built (no MPI found)" >> "$log"
        rm -f "$worlds"/ref*.bin "$worlds/dev.bin" "$worlds/mpi.bin"
    done
    cat "$log"
fi
