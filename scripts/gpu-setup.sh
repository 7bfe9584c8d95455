# SPDX-License-Identifier: Apache-2.0
# Sourced by the GPU machine's scripts (gpu-check.sh, gpu-scale.sh) from the repository root:
# logs in $OUT (or ./gpu-logs) as $out, the parts asked for as $parts with want(), and NVIDIA's
# OpenCL loader entry, which those machines lack.
out=${OUT:-$PWD/gpu-logs}
mkdir -p "$out"
parts=${*:-all}
want() { [[ " $parts " == *" all "* || " $parts " == *" $1 "* ]]; }
if [ -e /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 ] || ldconfig -p | grep -q libnvidia-opencl; then
    mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
