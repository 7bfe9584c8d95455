#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages kiln needs to build and test, only those that are missing.
set -euo pipefail

packages=(
    cmake ninja-build g++ pkg-config dpkg-dev ccache
    ocl-icd-opencl-dev opencl-c-headers opencl-clhpp-headers pocl-opencl-icd clinfo
    libgtest-dev libgmock-dev libpng-dev libfftw3-dev libopenblas-dev nlohmann-json3-dev libxml2-dev
    clang clang-15 clang-format libclang-rt-14-dev valgrind
    libopenmpi-dev openmpi-bin python3 libtbb-dev doxygen
    python3-dev pybind11-dev python3-pybind11 python3-numpy python3-pytest
)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "kiln: installing missing Debian packages: ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
