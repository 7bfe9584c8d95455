#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks kiln as the packages users install it from: the shared library (SONAME, only the public
# headers' symbols exported), a consumer built through pkg-config against it, the Debian package
# from `cpack -G DEB` (contents, and kiln-info run from the unpacked package), the licence in each
# install and package (LICENSE, the copyright file, kiln.pc's License field), the CMake package's
# backend components, a build without OpenCL, and the release build's static library (build/release,
# which scripts/test.sh builds first) used through pkg-config. Build trees under build/.
set -euo pipefail
# Checks read a command's whole output, then grep it: `cmd | grep -q` under pipefail fails at
# random when grep stops reading first and cmd dies of SIGPIPE.
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc)
fail() { echo "check-packaging: $*" >&2; exit 1; }

# KILN_UNITY_BUILD as scripts/test.sh sets it for the release build, so that the compiler cache
# hands the release build's objects to the shared one.
unity=-DKILN_UNITY_BUILD=${KILN_UNITY_BUILD:-OFF}

# The version the project declares, and the SONAME's: both numbers of a 0.x version (docs/packaging.md).
version=$(sed -n 's/^project(kiln VERSION \([0-9.]*\) .*/\1/p' CMakeLists.txt)
[ -n "$version" ] || fail "no version in CMakeLists.txt's project()"
soname_version=${version%.*}
soname_pattern=${soname_version//./\\.}

shared=build/shared
cmake -S . -B "$shared" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON "$unity" \
    -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_EXAMPLES=OFF -DKILN_BUILD_APPS=ON -DKILN_BUILD_PYTHON=OFF >/dev/null
cmake --build "$shared" -j "$jobs"

echo "--- shared library: SONAME and exported symbols"
library=$(readlink -f "$shared/libkiln.so")
grep -q "SONAME.*\\[libkiln\\.so\\.$soname_pattern\\]" <<<"$(readelf -d "$library")" ||
    fail "libkiln.so has no SONAME libkiln.so.$soname_version"
exported=$(nm -DC --defined-only "$library")
# The backends' internals are hidden; what public headers declare is exported.
leaked=$(grep -E 'kiln::detail::(cuda|opencl)::' <<<"$exported" || true)
if [ -n "$leaked" ]; then
    head -3 <<<"$leaked"
    fail "backend internals are exported from libkiln.so"
fi
for symbol in 'kiln::queue::finish()' 'kiln::default_device()' 'typeinfo for kiln::error'; do
    grep -qF "$symbol" <<<"$exported" || fail "libkiln.so does not export $symbol"
done
echo "$(wc -l <<<"$exported") symbols exported, none of the backends' internals"

echo "--- installed, and a consumer built through pkg-config"
install_dir=$root/build/shared-install
rm -rf "$install_dir"
cmake --install "$shared" --prefix "$install_dir" >/dev/null
pc_dir=$(dirname "$(find "$install_dir" -name kiln.pc)")
check_licence() {  # install prefix: the licence's text, the copyright file and kiln.pc's field
    local prefix=$1
    cmp -s LICENSE "$prefix/share/doc/kiln/LICENSE" || fail "$prefix lacks share/doc/kiln/LICENSE"
    grep -q '^License: Apache-2.0$' "$prefix/share/doc/kiln/copyright" ||
        fail "$prefix/share/doc/kiln/copyright names no Apache-2.0 licence"
    grep -q '^License: Apache-2.0$' "$(find "$prefix" -name kiln.pc)" || fail "kiln.pc in $prefix names no licence"
}
check_licence "$install_dir"
flags=$(PKG_CONFIG_PATH=$pc_dir pkg-config --cflags --libs kiln)
libdir=$(PKG_CONFIG_PATH=$pc_dir pkg-config --variable=libdir kiln)
g++ -std=c++20 tests/install_consumer/main.cpp $flags -Wl,-rpath,"$libdir" -o "$shared/pkg_config_consumer"
grep -q "$install_dir/.*libkiln\.so\.$soname_pattern" <<<"$(ldd "$shared/pkg_config_consumer")" ||
    fail "the pkg-config consumer does not use the installed libkiln.so"
"$shared/pkg_config_consumer"

echo "--- the release build's static library installed, and a consumer built through pkg-config"
# The README's line, exactly: plain --libs, no --static, against the default (static) install.
static_install=$root/build/static-install
rm -rf "$static_install"
cmake --install build/release --prefix "$static_install" >/dev/null ||
    fail "no release build to install (scripts/test.sh builds it first)"
grep -q . <<<"$(find "$static_install" -name libkiln.a)" || fail "the release install has no libkiln.a"
check_licence "$static_install"
static_pc_dir=$(dirname "$(find "$static_install" -name kiln.pc)")
g++ -std=c++20 tests/install_consumer/main.cpp $(PKG_CONFIG_PATH=$static_pc_dir pkg-config --cflags --libs kiln) \
    -o "$shared/pkg_config_static_consumer" || fail "the README's pkg-config line does not link the static library"
"$shared/pkg_config_static_consumer"

echo "--- find_package(kiln COMPONENTS ...)"
components_project=$(mktemp -d)
trap 'rm -rf "$components_project"' EXIT
find_components() {  # prefix, components...: configures a project asking for them
    local prefix=$1
    shift
    printf 'cmake_minimum_required(VERSION 3.25)\nproject(c LANGUAGES CXX)\nfind_package(kiln %s REQUIRED COMPONENTS %s)\n' "$soname_version" "$*" \
        >"$components_project/CMakeLists.txt"
    rm -rf "$components_project/build"
    cmake -S "$components_project" -B "$components_project/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null 2>&1
}
find_components "$install_dir" opencl || fail "the shared install lacks the opencl component"
if find_components "$install_dir" no_such_backend; then fail "an unknown component was found"; fi

echo "--- Debian package"
rm -f "$shared"/kiln_*.deb
(cd "$shared" && cpack -G DEB >/dev/null)
package=$(ls "$shared"/kiln_*.deb)
contents=$(dpkg-deb -c "$package")
for path in usr/bin/kiln-info usr/bin/make_world usr/bin/step_world usr/bin/render_world \
    "usr/lib/[^ ]*libkiln\\.so\\.${version//./\\.}" usr/include/kiln/kiln.hpp 'usr/lib/[^ ]*pkgconfig/kiln\.pc' \
    'usr/lib/[^ ]*cmake/kiln/kilnConfig\.cmake' usr/share/doc/kiln/copyright usr/share/doc/kiln/LICENSE; do
    grep -qE "\./$path\$" <<<"$contents" || fail "the package lacks $path"
done
grep -q libopencl <<<"$(dpkg-deb -f "$package" Depends)" || fail "the package does not depend on an OpenCL loader"
unpacked=$(mktemp -d)
trap 'rm -rf "$components_project" "$unpacked"' EXIT
dpkg-deb -x "$package" "$unpacked"
check_licence "$unpacked/usr"
grep -qx 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' \
    <<<"$(head -1 "$unpacked/usr/share/doc/kiln/copyright")" || fail "the package's copyright file is not in DEP-5 format"
LD_LIBRARY_PATH=$(dirname "$(find "$unpacked" -name "libkiln.so.$soname_version")") "$unpacked/usr/bin/kiln-info" |
    grep -q '(default)' || fail "kiln-info from the package lists no default device"
echo "$(basename "$package"): $(grep -c . <<<"$contents") entries, kiln-info runs from it"

echo "--- without OpenCL"
# kiln needs a backend: without OpenCL that is CUDA, whose toolkit headers this needs.
if ! grep -q 'KILN_CUDA_INCLUDE_DIR:PATH=/' "$shared/CMakeCache.txt"; then
    echo "skipped: no CUDA toolkit headers, so no backend but OpenCL"
    echo "packaging checks passed"
    exit 0
fi
no_opencl=build/no-opencl
cmake -S . -B "$no_opencl" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_OPENCL=OFF "$unity" \
    -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_EXAMPLES=OFF -DKILN_BUILD_APPS=OFF -DKILN_BUILD_PYTHON=OFF >/dev/null
cmake --build "$no_opencl" -j "$jobs"
if grep -q libOpenCL <<<"$(ldd "$no_opencl/tools/kiln-info")"; then fail "kiln-info without OpenCL links libOpenCL"; fi
# No OpenCL and (on CI) no NVIDIA driver: no device, said plainly.
"$no_opencl/tools/kiln-info" >/dev/null 2>&1 && status=0 || status=$?
[ "$status" -le 1 ] || fail "kiln-info without OpenCL exited with status $status"
rm -rf "$root/build/no-opencl-install"
cmake --install "$no_opencl" --prefix "$root/build/no-opencl-install" >/dev/null
if find_components "$root/build/no-opencl-install" opencl; then
    fail "a kiln built without OpenCL claims the opencl component"
fi
find_components "$root/build/no-opencl-install" cuda || fail "a kiln built with CUDA lacks the cuda component"
echo "packaging checks passed"
