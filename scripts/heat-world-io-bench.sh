#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# World I/O beside the disk: makes an N x N binary world file (8 N^2 bytes and a header), then
# times `cat FILE > /dev/null`, `cat FILE > COPY` (with and without `sync COPY`), and step_world
# reading the world (0 steps) from the file (< FILE, -i FILE) and from a pipe, and writing it to
# a file through standard output and through -o (the atomic writer: temporary file, fsync,
# rename); with step_world_mpi built and mpirun present, also step_world_mpi on 2 ranks through
# mpirun's forwarding of standard input and output, and with -i and -o. Prints a markdown table: seconds (best of RUNS, each
# after a sync, so that no earlier file's writeback falls in it), GB/s, and the ratio to cat's
# GB/s. step_world's read and write times are its own --stats figures (the world parsed and
# checked, or written, without the process's start); "whole run" rows are the wall time of the
# command, engine set-up included. A build without --input and --output (BUILD=... to compare
# with an older one) skips their rows.
#
# usage: scripts/heat-world-io-bench.sh [N [FOLDER]]
#   N        side of the world (default 8192: 512 MiB; the GPU machine's figure is 16384: 2 GiB)
#   FOLDER   where the files go (default ${TMPDIR:-/tmp}); they are removed at the end
# BUILD (default build/release) is the build folder with the tools; RUNS (default 3).
set -eu
n=${1:-8192}
folder=${2:-${TMPDIR:-/tmp}}
build=${BUILD:-build/release}
runs=${RUNS:-3}
tools=$build/apps/heat_world
for tool in make_world step_world; do
    [ -x "$tools/$tool" ] || { echo "no $tools/$tool: build it first (or set BUILD)" >&2; exit 2; }
done
scratch=$(mktemp -d "$folder/heat-world-io-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
world=$scratch/world.bin
out=$scratch/out.bin

now() { date +%s.%N; }
# best_of COMMAND...: the shortest wall time of RUNS runs of the shell command, in seconds.
best_of() {
    best=
    i=0
    while [ $i -lt "$runs" ]; do
        rm -f "$out" "$scratch/copy.bin"
        sync  # no other file's writeback falls in the time
        start=$(now)
        sh -c "$1"
        end=$(now)
        best=$(awk -v a="$start" -v b="$end" -v best="$best" \
            'BEGIN { t = b - a; if (best == "" || t < best) best = t; print best }')
        i=$((i + 1))
    done
    echo "$best"
}
# best_stat FIELD COMMAND: the shortest of RUNS runs' --stats "FIELD X s" (read or write).
best_stat() {
    best=
    i=0
    while [ $i -lt "$runs" ]; do
        rm -f "$out"
        sync
        seconds=$(sh -c "$2" 2>&1 >/dev/null | sed -n "s/.* $1 \([0-9.]*\) s.*/\1/p" | head -1)
        [ -n "$seconds" ] || { echo "no '$1' figure from: $2" >&2; exit 1; }
        best=$(awk -v t="$seconds" -v best="$best" \
            'BEGIN { if (best == "" || t < best) best = t; print best }')
        i=$((i + 1))
    done
    echo "$best"
}

"$tools/make_world" "$n" 0.1 1 > "$world"
bytes=$(wc -c < "$world")
cat "$world" > /dev/null  # in the page cache, as for every run after it
step="'$tools/step_world' --engine reference --stats 0.1 0 1"

cat_read=$(best_of "cat '$world' > /dev/null")
row() {  # row WHAT SECONDS
    awk -v what="$1" -v t="$2" -v b="$bytes" -v c="$cat_read" \
        'BEGIN { printf "| %s | %.3f | %.2f | %.2f |\n", what, t, b / t / 1e9, c / t }'
}

echo "World I/O: $n x $n binary world, $bytes bytes, in $folder; $(date -u +%Y-%m-%d), $(nproc) cores"
echo
echo "| what | seconds | GB/s | of cat > /dev/null |"
echo "|---|---|---|---|"
row "\`cat FILE > /dev/null\`" "$cat_read"
row "\`cat FILE > COPY\`" "$(best_of "cat '$world' > '$scratch/copy.bin'")"
row "\`cat FILE > COPY && sync COPY\`" \
    "$(best_of "cat '$world' > '$scratch/copy.bin' && sync '$scratch/copy.bin'")"
row "step_world read \`< FILE\` (--stats)" "$(best_stat read "$step < '$world' > /dev/null")"
row "step_world read from a pipe, \`cat FILE |\` (--stats)" \
    "$(best_stat read "cat '$world' | $step > /dev/null")"
row "step_world write \`> FILE\` (--stats)" "$(best_stat write "$step < '$world' > '$out'")"
# A build from before --input and --output (to compare with) skips their rows.
files=no
"$tools/step_world" --help | grep -q -- --output && files=yes
if [ $files = yes ]; then
    row "step_world read \`-i FILE\` (--stats)" "$(best_stat read "$step -i '$world' > /dev/null")"
    row "step_world write \`-o FILE\`, fsync'd (--stats)" \
        "$(best_stat write "$step -o '$out' < '$world'")"
fi
row "step_world whole run, 0 steps, \`< FILE > FILE\`" \
    "$(best_of "$step < '$world' > '$out' 2>/dev/null")"

if [ -x "$tools/step_world_mpi" ] && command -v mpirun > /dev/null; then
    mpirun="mpirun --oversubscribe --bind-to none -n 2"
    if [ "$(id -u)" = 0 ]; then
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    fi
    mpi="$mpirun '$tools/step_world_mpi' --engine threads --stats 0.1 0 1"
    row "step_world_mpi -n 2 read \`< FILE\` through mpirun (--stats)" \
        "$(best_stat read "$mpi < '$world' > /dev/null")"
    row "step_world_mpi -n 2 write \`> FILE\` through mpirun (--stats)" \
        "$(best_stat write "$mpi < '$world' > '$out'")"
    row "step_world_mpi -n 2 whole run, 0 steps, \`< FILE > FILE\` through mpirun" \
        "$(best_of "$mpi < '$world' > '$out' 2>/dev/null")"
    if [ $files = yes ]; then
        row "step_world_mpi -n 2 read \`-i FILE\` (--stats)" \
            "$(best_stat read "$mpi -i '$world' < /dev/null > /dev/null")"
        row "step_world_mpi -n 2 write \`-o FILE\`, fsync'd (--stats)" \
            "$(best_stat write "$mpi -o '$out' < '$world' > /dev/null")"
        row "step_world_mpi -n 2 whole run, 0 steps, \`-i FILE -o FILE\`" \
            "$(best_of "$mpi -i '$world' -o '$out' < /dev/null 2>/dev/null")"
    fi
fi
