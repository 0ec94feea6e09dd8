#!/usr/bin/env bash
# Builds ozz-animation's runtime libraries (Release, -march=native; samples, tests, tools off)
# from an ozz checkout given by path, then the SkinningJob driver against them.
#
#   tools/ozz-compare/build.sh /path/to/ozz-animation [build-dir]
#
# The driver lands at BUILD_DIR/ozz_skinning_bench (default build dir: /tmp/ozz-compare-build).
# MARCH (default native) sets -march: e.g. MARCH=haswell for an AVX2 + FMA build without
# AVX-512, which valgrind (callgrind) can run to count instructions. Needs cmake and a C++17
# compiler. Not run by CI.
march=${MARCH:-native}
set -euo pipefail
ozz_source=${1:?usage: build.sh OZZ_CHECKOUT [BUILD_DIR]}
build_dir=${2:-/tmp/ozz-compare-build}
here=$(cd "$(dirname "$0")" && pwd)
ozz_source=$(cd "$ozz_source" && pwd)
mkdir -p "$build_dir/ozz"
cmake -S "$ozz_source" -B "$build_dir/ozz" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS="-march=$march" \
  -Dozz_build_tools=OFF -Dozz_build_fbx=OFF -Dozz_build_gltf=OFF -Dozz_build_samples=OFF \
  -Dozz_build_howtos=OFF -Dozz_build_tests=OFF -Dozz_build_postfix=OFF >/dev/null
cmake --build "$build_dir/ozz" --target ozz_geometry ozz_base -j"$(nproc)" >/dev/null
base_lib=$(find "$build_dir/ozz" -name 'libozz_base*.a' | head -1)
geometry_lib=$(find "$build_dir/ozz" -name 'libozz_geometry*.a' | head -1)
c++ -std=c++17 -O3 -march="$march" -DNDEBUG -I"$ozz_source/include" \
  "$here/ozz_skinning_bench.cc" "$geometry_lib" "$base_lib" -lpthread \
  -o "$build_dir/ozz_skinning_bench"
echo "$build_dir/ozz_skinning_bench"
