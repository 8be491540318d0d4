#!/usr/bin/env bash
# jetplan's whole CPU test suite, as CI runs it (README: "Run the tests").
#   1. installs missing Debian packages and the Python venv (tests/install_deps.sh)
#   2. Release build + every ctest test (unit, kernel, converter, end-to-end, install)
#   3. the same tests again under AddressSanitizer + UBSan (leaks included)
#   4. a cross build of the runtime for Jetson (aarch64) with the toolchain file
# Kernel tests for the GPU skip visibly here; the GPU command is in README.md.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${JETPLAN_BUILD_DIR:-$root/build}
jobs=${JETPLAN_JOBS:-$(nproc)}
# The venv install_deps.sh makes (newest onnx, onnxruntime, onnxscript), named to CMake.
onnx_python=${JETPLAN_VENV:-$root/.venv}/bin/python

# Each stage's wall time, for keeping the suite within CI's budget.
stage_start=$SECONDS
stage_done() {
  echo "== $1 took $(((SECONDS - stage_start) / 60)) min $(((SECONDS - stage_start) % 60)) s"
  stage_start=$SECONDS
}
JETPLAN_CROSS_CHECK=1 "$root/tests/install_deps.sh"
stage_done "set-up"

echo "== release build and tests"
# Device code for the product's GPUs (Orin sm_87, Thor sm_110) and the one it is measured on
# (sm_90); the default list adds sm_86 and sm_89, the same source compiled for two more Ampere-
# class chips, which CI's 35 minutes leave out. The later builds embed these fatbins as they are
# (JETPLAN_PREBUILT_FATBINS: device code does not depend on the host) instead of compiling the
# kernels twice more.
archs="87;90;110"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DJETPLAN_CUDA_ARCHS="$archs" \
  -DJETPLAN_ONNX_PYTHON="$onnx_python"
cmake --build "$build" -j "$jobs"
stage_done "release build"
# models_slow (every real architecture, minutes on 2 cores) is its own command: see README.
ctest --test-dir "$build" --output-on-failure -j "$jobs" -LE models_slow
stage_done "release tests"

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build and tests"
# The code under test at -O1 with line tables (what the sanitizers need for their reports):
# -O2 -g took twice as long to build (a converter file: 21.8 s against 10.0 s).
cmake -S "$root" -B "$build-asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJETPLAN_ASAN=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DJETPLAN_EXAMPLES=OFF -DJETPLAN_CUDA_ARCHS="$archs" \
  -DJETPLAN_PREBUILT_FATBINS="$build/kernels/cuda" -DJETPLAN_ONNX_PYTHON="$onnx_python"
cmake --build "$build-asan" -j "$jobs"
stage_done "sanitizer build"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$build-asan" --output-on-failure -j "$jobs" -LE "no_asan|models"
stage_done "sanitizer tests"

echo "== aarch64 cross build of the runtime (toolchains/aarch64-jetson.cmake)"
# With the kernels for Orin (sm_87) and Thor (sm_110) embedded, as a Jetson build has them (the
# release build's fatbins, which hold sm_90 too).
cmake -S "$root" -B "$build-aarch64" -DCMAKE_TOOLCHAIN_FILE="$root/toolchains/aarch64-jetson.cmake" \
  -DJETPLAN_CONVERTER=OFF -DJETPLAN_TESTS=OFF -DJETPLAN_CUDA_ARCHS="$archs" \
  -DJETPLAN_PREBUILT_FATBINS="$build/kernels/cuda"
cmake --build "$build-aarch64" -j "$jobs"
lib=$build-aarch64/runtime/libjetplan.so
readelf -h "$lib" | grep -q AArch64
# Every fatbin is in the library, byte for byte as long as nvcc wrote it.
fatbins=("$build-aarch64"/kernels/cuda/*.fatbin)
[[ ${#fatbins[@]} -ge 10 && -f ${fatbins[0]} ]] || { echo "aarch64: no fatbins were built" >&2; exit 1; }
for f in "${fatbins[@]}"; do
  stem=$(basename "$f" .fatbin)
  read -r begin end < <(aarch64-linux-gnu-nm "$lib" |
    awk -v s="jp_fatbin_$stem" '$3 == s {b = $1} $3 == s "_end" {e = $1} END {print b, e}')
  if [[ -z $begin || -z $end || $((16#$end - 16#$begin)) -ne $(stat -c %s "$f") ]]; then
    echo "aarch64: kernel module $stem is not embedded in $lib" >&2; exit 1
  fi
done
echo "aarch64 libjetplan.so embeds ${#fatbins[@]} kernel modules (sm $archs)"
# The deploy tarball for the Jetson (README.md: "Deploy to a Jetson") holds that library.
cmake --build "$build-aarch64" --target deploy
tarball=("$build-aarch64"/jetplan-*-aarch64.tar.gz)
rm -rf "$build-aarch64/deployed" && mkdir "$build-aarch64/deployed"
tar xzf "${tarball[0]}" -C "$build-aarch64/deployed" --wildcards '*/lib/libjetplan.so.*.*'
readelf -h "$build-aarch64"/deployed/*/lib/libjetplan.so.*.* > "$build-aarch64/deployed/header"
grep -q AArch64 "$build-aarch64/deployed/header" ||
  { echo "aarch64: the deploy tarball's libjetplan.so is not an AArch64 library" >&2; exit 1; }

stage_done "aarch64 build"
echo "== all jetplan tests passed"
