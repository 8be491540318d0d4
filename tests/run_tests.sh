#!/usr/bin/env bash
# jetplan's whole CPU test suite, as CI runs it (README: "Run the tests").
#   1. installs missing Debian packages (tests/install_deps.sh)
#   2. Release build + every ctest test (unit, kernel, converter, end-to-end, install)
#   3. the same tests again under AddressSanitizer + UBSan (leaks included)
#   4. a cross build of the runtime for Jetson (aarch64) with the toolchain file
# Kernel tests for the GPU skip visibly here; the GPU command is in README.md.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${JETPLAN_BUILD_DIR:-$root/build}
jobs=${JETPLAN_JOBS:-$(nproc)}

JETPLAN_CROSS_CHECK=1 "$root/tests/install_deps.sh"

echo "== release build and tests"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$jobs"
# models_slow (every real architecture, minutes on 2 cores) is its own command: see README.
ctest --test-dir "$build" --output-on-failure -j "$jobs" -LE models_slow

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build and tests"
# The kernels' device code was compiled for every SM above; here one arch keeps CI's time down.
cmake -S "$root" -B "$build-asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJETPLAN_ASAN=ON \
  -DJETPLAN_EXAMPLES=OFF -DJETPLAN_CUDA_ARCHS=87
cmake --build "$build-asan" -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$build-asan" --output-on-failure -j "$jobs" -LE "no_asan|models"

echo "== aarch64 cross build of the runtime (toolchains/aarch64-jetson.cmake)"
cmake -S "$root" -B "$build-aarch64" -DCMAKE_TOOLCHAIN_FILE="$root/toolchains/aarch64-jetson.cmake" \
  -DJETPLAN_CONVERTER=OFF -DJETPLAN_TESTS=OFF -DJETPLAN_CUDA=OFF
cmake --build "$build-aarch64" -j "$jobs"
readelf -h "$build-aarch64/runtime/libjetplan.so" | grep -q AArch64

echo "== all jetplan tests passed"
